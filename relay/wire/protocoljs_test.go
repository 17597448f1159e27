package wire_test

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	chromeextension "github.com/tabrelay/tabrelay/chrome-extension"
)

// protocolGroups are the prefixes of relay/wire's grouped constants; protocol.js spells each
// group as a frozen object of the same name (TypeTabShared = "tabShared" is Type.TAB_SHARED).
var protocolGroups = []string{"Close", "Type", "Reason", "Origin", "DownloadState", "ContentType", "Setting"}

// TestProtocolJSMatchesWire keeps the extension's protocol.js and this package in step: every
// exported constant of relay/wire (message types, close codes, reasons, origins, version, chunk
// framing) must be in protocol.js with the same value, and protocol.js must have nothing the Go
// side lacks. Names are compared without case and underscores, within their group.
func TestProtocolJSMatchesWire(t *testing.T) {
	goConsts := wireConstants(t)
	src, err := fs.ReadFile(chromeextension.FS(), "protocol.js")
	if err != nil {
		t.Fatalf("read the extension's protocol.js: %v", err)
	}
	jsConsts := protocolJSConstants(t, string(src))
	if len(goConsts) == 0 || len(jsConsts) == 0 {
		t.Fatalf("found %d constants in relay/wire and %d in protocol.js: the parsers no longer understand the sources", len(goConsts), len(jsConsts))
	}
	for _, k := range sortedKeys(goConsts) {
		js, ok := jsConsts[k]
		switch {
		case !ok:
			t.Errorf("relay/wire has %s = %s but chrome-extension/protocol.js does not: add it there (and to PROTOCOL.md)", goConsts[k].name, goConsts[k].value)
		case js.value != goConsts[k].value:
			t.Errorf("%s is %s in relay/wire but protocol.js has %s = %s: change them together", goConsts[k].name, goConsts[k].value, js.name, js.value)
		}
	}
	for _, k := range sortedKeys(jsConsts) {
		if _, ok := goConsts[k]; !ok {
			t.Errorf("protocol.js has %s = %s but relay/wire has no such constant: add it there (and to PROTOCOL.md)", jsConsts[k].name, jsConsts[k].value)
		}
	}
}

// namedValue is one constant: its name as written and its value as Go would print it.
type namedValue struct{ name, value string }

// normalize turns a constant's name into its comparison key: "group.name", lower case, no
// underscores ("Type.TAB_SHARED" and TypeTabShared both become "type.tabshared").
func normalize(group, name string) string {
	return strings.ToLower(group + "." + strings.ReplaceAll(name, "_", ""))
}

// wireConstants reads the exported constants of this package's non-test Go files.
func wireConstants(t *testing.T) map[string]namedValue {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]namedValue{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatalf("parse %s: %v", f, err)
		}
		for _, d := range file.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !n.IsExported() {
						continue
					}
					if i >= len(vs.Values) {
						t.Fatalf("%s: constant %s has no explicit value (iota?): teach this test to read it", fset.Position(n.Pos()), n.Name)
					}
					v := goValue(t, fset, vs.Values[i])
					group, name := "", n.Name
					for _, g := range protocolGroups {
						if rest, ok := strings.CutPrefix(n.Name, g); ok && rest != "" {
							group, name = g, rest
							break
						}
					}
					out[normalize(group, name)] = namedValue{n.Name, v.ExactString()}
				}
			}
		}
	}
	return out
}

// goValue evaluates a constant expression of the forms wire.go uses: literals and shifts.
func goValue(t *testing.T, fset *token.FileSet, e ast.Expr) constant.Value {
	t.Helper()
	switch e := e.(type) {
	case *ast.BasicLit:
		return constant.MakeFromLiteral(e.Value, e.Kind, 0)
	case *ast.ParenExpr:
		return goValue(t, fset, e.X)
	case *ast.BinaryExpr:
		x, y := goValue(t, fset, e.X), goValue(t, fset, e.Y)
		if e.Op == token.SHL || e.Op == token.SHR {
			s, ok := constant.Uint64Val(y)
			if !ok {
				t.Fatalf("%s: shift count is not a small integer", fset.Position(e.Pos()))
			}
			return constant.Shift(x, e.Op, uint(s))
		}
		return constant.BinaryOp(x, e.Op, y)
	}
	t.Fatalf("%s: a constant expression this test cannot evaluate: teach goValue to read it", fset.Position(e.Pos()))
	return nil
}

var (
	// export const NAME = <scalar>;
	jsScalar = regexp.MustCompile(`(?m)^export const (\w+) = ([^;{]+);`)
	// export const Group = Object.freeze({ ... });
	jsGroup = regexp.MustCompile(`(?s)export const (\w+) = Object\.freeze\(\{(.*?)\}\);`)
	// KEY: <value>, (one per line, comments allowed around)
	jsMember = regexp.MustCompile(`(?m)^\s*(\w+):\s*([^,\n]+),?\s*$`)
)

// protocolJSConstants reads protocol.js's exported scalar constants and frozen groups.
func protocolJSConstants(t *testing.T, src string) map[string]namedValue {
	t.Helper()
	out := map[string]namedValue{}
	for _, m := range jsScalar.FindAllStringSubmatch(src, -1) {
		out[normalize("", m[1])] = namedValue{m[1], jsValue(t, m[1], m[2])}
	}
	for _, m := range jsGroup.FindAllStringSubmatch(src, -1) {
		body := regexp.MustCompile(`(?s)/\*.*?\*/|//[^\n]*`).ReplaceAllString(m[2], "")
		members := jsMember.FindAllStringSubmatch(body, -1)
		if len(members) == 0 {
			t.Fatalf("protocol.js: the group %s has no members this test can read", m[1])
		}
		for _, mm := range members {
			out[normalize(m[1], mm[1])] = namedValue{m[1] + "." + mm[1], jsValue(t, m[1]+"."+mm[1], mm[2])}
		}
	}
	return out
}

// jsValue turns a JavaScript literal of the forms protocol.js uses ('text', 42, 1 << 20) into
// the string Go's constant.Value.ExactString would give for the same value.
func jsValue(t *testing.T, name, lit string) string {
	t.Helper()
	lit = strings.TrimSpace(lit)
	if len(lit) >= 2 && (lit[0] == '\'' || lit[0] == '"') && lit[len(lit)-1] == lit[0] {
		inner := lit[1 : len(lit)-1]
		if strings.ContainsAny(inner, `\"`) {
			t.Fatalf("protocol.js %s = %s: escapes and double quotes are not supported by this test", name, lit)
		}
		return strconv.Quote(inner)
	}
	if a, b, ok := strings.Cut(lit, "<<"); ok {
		x, err1 := strconv.ParseInt(strings.TrimSpace(a), 0, 64)
		y, err2 := strconv.ParseUint(strings.TrimSpace(b), 0, 6)
		if err1 == nil && err2 == nil {
			return strconv.FormatInt(x<<y, 10)
		}
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(lit, "_", ""), 0, 64)
	if err != nil {
		t.Fatalf("protocol.js %s = %s: not a string or integer literal this test can read", name, lit)
	}
	return strconv.FormatInt(n, 10)
}

func sortedKeys(m map[string]namedValue) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
