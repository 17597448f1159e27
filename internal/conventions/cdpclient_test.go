package conventions

import (
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// otherCDPClients are CDP client libraries production code must not import: it speaks CDP
// through internal/cdpclient with github.com/chromedp/cdproto types, one client style (why:
// internal/cdpclient/DESIGN.md). Tests use them as the outside clients they stand for.
var otherCDPClients = []string{"github.com/mafredri/cdp", "github.com/chromedp/chromedp", "github.com/go-rod/rod"}

// TestOneCDPClient fails when a non-test Go file imports another CDP client library.
func TestOneCDPClient(t *testing.T) {
	walkSources(t, func(rel, path string) error {
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, other := range otherCDPClients {
				if p == other || strings.HasPrefix(p, other+"/") {
					t.Errorf("%s imports %s: production code speaks CDP through internal/cdpclient with cdproto types (internal/cdpclient/DESIGN.md)", rel, p)
				}
			}
		}
		return nil
	})
}
