package outline

import (
	"strings"
	"testing"
	"unicode/utf8"
)

const sample = `- banner [ref=e1]:
  - heading "Sign \"in\"" [level=1] [ref=e2]
  - textbox "Email" [ref=e3]: ada@example.com
  - checkbox "Remember me" [checked] [ref=e4]
  - link "Docs" [ref=e5]:
    - /url: https://example.com/docs
- text: Some paragraph text
- button "Submit" [ref=e6] [disabled]
plain words`

func TestParse(t *testing.T) {
	nodes := Parse(sample)
	if len(nodes) != 9 {
		t.Fatalf("got %d nodes: %+v", len(nodes), nodes)
	}
	tests := []struct {
		i                      int
		role, name, ref, value string
		depth, parent          int
		attr, attrVal          string
	}{
		{0, "banner", "", "e1", "", 0, -1, "", ""},
		{1, "heading", `Sign "in"`, "e2", "", 1, 0, "level", "1"},
		{2, "textbox", "Email", "e3", "ada@example.com", 1, 0, "", ""},
		{3, "checkbox", "Remember me", "e4", "", 1, 0, "checked", ""},
		{4, "link", "Docs", "e5", "", 1, 0, "", ""},
		{5, "/url", "", "", "https://example.com/docs", 2, 4, "", ""},
		{6, "text", "", "", "Some paragraph text", 0, -1, "", ""},
		{7, "button", "Submit", "e6", "", 0, -1, "disabled", ""},
		{8, "text", "", "", "plain words", 0, -1, "", ""},
	}
	for _, tt := range tests {
		n := nodes[tt.i]
		if n.Role != tt.role || n.Name != tt.name || n.Ref != tt.ref || n.Value != tt.value || n.Depth != tt.depth || n.Parent != tt.parent {
			t.Errorf("node %d = %+v", tt.i, n)
		}
		if tt.attr != "" && (!n.Has(tt.attr) || n.Attrs[tt.attr] != tt.attrVal) {
			t.Errorf("node %d attrs %v, want %s=%s", tt.i, n.Attrs, tt.attr, tt.attrVal)
		}
	}
	if u, ok := Child(nodes, 4, "/url"); !ok || u.Value != "https://example.com/docs" {
		t.Errorf("url child %+v", u)
	}
	if got := LineFor(sample, "e4"); got != `- checkbox "Remember me" [checked] [ref=e4]` {
		t.Errorf("LineFor %q", got)
	}
	if !strings.Contains(Text(nodes), "Email: ada@example.com") {
		t.Errorf("Text:\n%s", Text(nodes))
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Add(`- button "unterminated [ref=e1`)
	f.Add("- [ref=]\n\t\t- \"\\")
	f.Add("-")
	f.Fuzz(func(t *testing.T, s string) {
		nodes := Parse(s)
		for i, n := range nodes {
			if n.Parent >= i || n.Parent < -1 {
				t.Fatalf("node %d has parent %d", i, n.Parent)
			}
			if n.Parent >= 0 && nodes[n.Parent].Depth >= n.Depth {
				t.Fatalf("node %d depth %d not below parent depth %d", i, n.Depth, nodes[n.Parent].Depth)
			}
			if utf8.ValidString(s) && !utf8.ValidString(n.Name) {
				t.Fatalf("invalid utf8 name from valid input")
			}
		}
		_ = Text(nodes)
	})
}
