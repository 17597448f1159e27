package snapshot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// bigPage is a page with a header in view, a table of n rows (each a name cell and a link),
// lots of prose below the fold and extra parts.
func bigPage(n int, extra ...*snapshot.Node) *snapshot.Snapshot {
	var rows []any
	for i := range n {
		below := []any{}
		if i > 5 {
			below = append(below, "below")
		}
		rows = append(rows, pagetest.El("row", "", append(below,
			pagetest.El("cell", fmt.Sprintf("Widget %d", i), pagetest.Text(fmt.Sprintf("Widget %d", i))),
			pagetest.El("link", fmt.Sprintf("Open widget %d", i), pagetest.Ref(fmt.Sprintf("e%d", 100+i)), pagetest.URL("https://shop.test/w")))...))
	}
	var prose []any
	for i := range 40 {
		prose = append(prose, pagetest.El("paragraph", "", "below", pagetest.Text(strings.Repeat(fmt.Sprintf("Long prose %d ", i), 12))))
	}
	nodes := []*snapshot.Node{
		pagetest.El("banner", "", pagetest.El("link", "Home", pagetest.Ref("e1"), pagetest.URL("https://shop.test/"))),
		pagetest.El("table", "Widgets", rows...),
		pagetest.El("contentinfo", "", prose...),
	}
	return pagetest.Page("https://shop.test/list", "Widgets", append(nodes, extra...)...)
}

func TestBudget(t *testing.T) {
	modal := pagetest.El("dialog", "Confirm delete", "modal", "below",
		pagetest.Text("Really delete it?"),
		pagetest.El("button", "Delete", pagetest.Ref("e9001")),
		pagetest.El("button", "Cancel", pagetest.Ref("e9002")))
	focused := pagetest.El("form", "Feedback", "below",
		pagetest.El("textbox", "Comment", pagetest.Ref("e9100"), "focused", "below"))
	cases := []struct {
		name      string
		page      *snapshot.Snapshot
		maxTokens int
		want      []string // lines (or parts) the text holds
		not       []string // what it must not hold
	}{
		{"fits: unchanged", pagetest.Page("https://a.test/", "A", pagetest.El("button", "OK", pagetest.Ref("e1"))), 100,
			[]string{`- button "OK" [ref=e1]`}, []string{"left out"}},
		{"repeated rows collapse", bigPage(300), 1500,
			[]string{`- link "Home" [ref=e1]`, `link "Open widget 0" [ref=e100]`, `link "Open widget 2" [ref=e102]`,
				`link "Open widget 20" [ref=e120]`, "- … 276 more rows like e100", "lines left out", "search action"},
			[]string{"Open widget 24\"", "Long prose 39"}},
		{"in view before below the fold", bigPage(300), 400,
			[]string{`- link "Home" [ref=e1]`, "more rows like e100", "lines left out", "below the fold"}, []string{"Long prose 5 "}},
		{"modal first", bigPage(300, modal), 300,
			[]string{`- button "Delete" [ref=e9001]`, `- button "Cancel" [ref=e9002]`, "Really delete it?"}, nil},
		{"focused field first", bigPage(300, focused), 200,
			[]string{`textbox "Comment" [focused] [ref=e9100]`}, nil},
		{"interactive", bigPage(300), 600,
			[]string{`- link "Home" [ref=e1]`, "lines left out"}, []string{"Long prose"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := snapshot.Options{MaxTokens: c.maxTokens, Interactive: c.name == "interactive"}
			c.page.Render(o)
			text := c.page.Text
			if got := len(text) / 4; got > c.maxTokens {
				t.Errorf("%d tokens, more than %d:\n%s", got, c.maxTokens, text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("no %q in:\n%s", w, text)
				}
			}
			for _, w := range c.not {
				if strings.Contains(text, w) {
					t.Errorf("%q is in:\n%s", w, text)
				}
			}
			if c.page.Truncated != strings.Contains(text, "left out") {
				t.Errorf("Truncated=%v but the text says %q", c.page.Truncated, text)
			}
			if got := strings.Count(text, "[ref="); got != c.page.Refs {
				t.Errorf("Refs=%d, the text shows %d", c.page.Refs, got)
			}
		})
	}
}

// TestBudgetWholeItems checks that a budget never shows part of a row: each row shown has
// both its cell and its link.
func TestBudgetWholeItems(t *testing.T) {
	for _, budget := range []int{200, 300, 400, 900, 3000} {
		page := bigPage(300)
		page.Render(snapshot.Options{MaxTokens: budget})
		lines := strings.Split(page.Text, "\n")
		for i, l := range lines {
			if strings.HasSuffix(strings.TrimSpace(l), "- row:") {
				if i+2 >= len(lines) || !strings.Contains(lines[i+1], "Widget") || !strings.Contains(lines[i+2], "link \"Open widget") {
					t.Errorf("budget %d: row cut at line %d:\n%s", budget, i, page.Text)
				}
			}
		}
		if len(page.Text)/4 > budget {
			t.Errorf("budget %d: %d tokens", budget, len(page.Text)/4)
		}
	}
}
