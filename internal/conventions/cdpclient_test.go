package conventions

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
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
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		rel, _ := filepath.Rel(root, path)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, other := range otherCDPClients {
				if p == other || strings.HasPrefix(p, other+"/") {
					t.Errorf("%s imports %s: production code speaks CDP through internal/cdpclient with cdproto types (internal/cdpclient/DESIGN.md)", filepath.ToSlash(rel), p)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d Go files checked under %s: the walk is broken", checked, root)
	}
}
