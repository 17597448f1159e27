package snapshot_test

import (
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

func TestCompare(t *testing.T) {
	const u = "https://shop.test/search"
	el, txt := pagetest.El, pagetest.Text
	type R = pagetest.Ref
	form := func(status string, extra ...*snapshot.Node) *snapshot.Snapshot {
		kids := []*snapshot.Node{
			el("heading", "Search", "level=1"),
			el("textbox", "Query", R("e1"), pagetest.Value("shoes")),
			el("button", "Search", R("e2")),
			el("status", "", txt(status)),
		}
		return pagetest.Page(u, "Search", append(kids, extra...)...)
	}
	results := el("list", "Results", R("e5"),
		el("listitem", "", el("link", "Red shoes", R("e6"), pagetest.URL(u+"/red"))),
		el("listitem", "", el("link", "Blue shoes", R("e7"), pagetest.URL(u+"/blue"))))
	for _, tc := range []struct {
		name  string
		a, b  *snapshot.Snapshot
		want  string   // the rendered diff, exactly
		kinds []string // the changes' marks, in order
	}{
		{name: "same", a: form("Idle"), b: form("Idle"), want: "no changes"},
		{name: "results arrive", a: form("Idle"), b: form("2 results", results),
			want: "~ text: 2 results (was: \"Idle\")\n" +
				"+ list \"Results\" [ref=e5]\n" +
				"+   listitem\n" +
				"+     link \"Red shoes\" [ref=e6] [url=/search/red]\n" +
				"+   listitem\n" +
				"+     link \"Blue shoes\" [ref=e7] [url=/search/blue]",
			kinds: []string{"~", "+", "+", "+", "+", "+"}},
		{name: "results go", a: form("2 results", results), b: form("Idle"),
			want: "~ text: Idle (was: \"2 results\")\n" +
				"- list \"Results\" [ref=e5] (and 4 nodes inside)",
			kinds: []string{"~", "-"}},
		{name: "value and states change, refs hold",
			a: pagetest.Page(u, "Search",
				el("textbox", "Query", R("e1"), pagetest.Value("shoes")),
				el("checkbox", "In stock", R("e3")),
				el("button", "Search", R("e2"))),
			b: pagetest.Page(u, "Search",
				el("textbox", "Query", R("e1"), pagetest.Value("boots"), "focused"),
				el("checkbox", "In stock", R("e3"), "checked"),
				el("button", "Search", R("e2"), "disabled")),
			want: "~ textbox \"Query\" [focused] [ref=e1]: boots (was: value \"shoes\")\n" +
				"~ checkbox \"In stock\" [checked] [ref=e3] (was: no states)\n" +
				"~ button \"Search\" [disabled] [ref=e2] (was: no states)",
			kinds: []string{"~", "~", "~"}},
		{name: "renamed by ref",
			a:    pagetest.Page(u, "Cart", el("button", "Add to cart", R("e4"))),
			b:    pagetest.Page(u, "Cart", el("button", "In cart (1)", R("e4"))),
			want: "~ button \"In cart (1)\" [ref=e4] (was: name \"Add to cart\")", kinds: []string{"~"}},
		{name: "only focus moves, nothing to say",
			a:    pagetest.Page(u, "Cart", el("button", "Buy", R("e4"))),
			b:    pagetest.Page(u, "Cart", el("button", "Buy", R("e4"), "focused")),
			want: "no changes"},
		{name: "twin rows: the extra one is added, in its place",
			a:    pagetest.Page(u, "Todo", el("list", "", el("listitem", "", txt("Milk")), el("listitem", "", txt("Eggs")))),
			b:    pagetest.Page(u, "Todo", el("list", "", el("listitem", "", txt("Milk")), el("listitem", "", txt("Bread")), el("listitem", "", txt("Eggs")))),
			want: "+ listitem\n+   text: Bread", kinds: []string{"+", "+"}},
		{name: "a dialog blocked the page before", a: pagetest.Blocked(u, "Cart", snapshot.Dialog{Type: "alert", Message: "Hi"}),
			b: pagetest.Page(u, "Cart", el("button", "Buy", R("e4"))), want: "+ button \"Buy\" [ref=e4]", kinds: []string{"+"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := snapshot.Compare(tc.a, tc.b)
			if got := d.String(); got != tc.want {
				t.Errorf("diff:\n%s\nwant:\n%s", got, tc.want)
			}
			var kinds []string
			for _, c := range d.Changes {
				kinds = append(kinds, c.Kind.String())
			}
			if strings.Join(kinds, " ") != strings.Join(tc.kinds, " ") {
				t.Errorf("kinds %v, want %v", kinds, tc.kinds)
			}
			if d.Empty() != (len(tc.kinds) == 0) {
				t.Errorf("Empty() = %v with %d changes", d.Empty(), len(d.Changes))
			}
		})
	}
}

func TestDiffRenderBound(t *testing.T) {
	var items []*snapshot.Node
	for range 10 {
		items = append(items, pagetest.El("button", "Go"))
	}
	d := snapshot.Compare(pagetest.Page("https://a.test/", "A"), pagetest.Page("https://a.test/", "A", items...))
	got := d.Render(3)
	if want := "+ button \"Go\"\n+ button \"Go\"\n+ button \"Go\"\n… 7 more changes: take a snapshot to see the page"; got != want {
		t.Fatalf("Render(3):\n%s\nwant:\n%s", got, want)
	}
}

// TestCompareTicking: a clock or a countdown that changes on every snapshot is named in one
// line after two diffs in a row, as it is now; a change of words is always a change.
func TestCompareTicking(t *testing.T) {
	el, txt := pagetest.El, pagetest.Text
	type R = pagetest.Ref
	page := func(clock, status, cart string) *snapshot.Snapshot {
		return pagetest.Page("https://shop.test/", "Shop",
			el("status", "", txt("Sale ends in "+clock)),
			el("paragraph", "", txt(status)),
			el("button", cart, R("e3")))
	}
	seq := []*snapshot.Snapshot{
		page("10:00", "Idle", "Cart (0)"),
		page("09:59", "Idle", "Cart (1)"),
		page("09:58", "Saving", "Cart (1)"),
		page("09:57", "Saved", "Cart (2)"),
		page("09:56", "Saved", "Cart (2)"),
	}
	want := []struct {
		changes, ticking int
		text             string
	}{
		{2, 0, "~ text: Sale ends in 09:59 (was: \"Sale ends in 10:00\")\n~ button \"Cart (1)\" [ref=e3] (was: name \"Cart (0)\")"},
		{1, 1, "~ text: Saving (was: \"Idle\")\n~ ticking (counters and clocks that change on every snapshot, as they are now): text: Sale ends in 09:58"},
		{2, 1, "~ text: Saved (was: \"Saving\")\n~ button \"Cart (2)\" [ref=e3] (was: name \"Cart (1)\")\n~ ticking (counters and clocks that change on every snapshot, as they are now): text: Sale ends in 09:57"},
		{0, 1, "no changes but ticking (counters and clocks that change on every snapshot, as they are now): text: Sale ends in 09:56"},
	}
	for i, w := range want {
		d := snapshot.Compare(seq[i], seq[i+1])
		if len(d.Changes) != w.changes || len(d.Ticking) != w.ticking || d.Render(0) != w.text {
			t.Errorf("diff %d: %d changes, %d ticking:\n%s\nwant %d, %d:\n%s", i+1, len(d.Changes), len(d.Ticking), d.Render(0), w.changes, w.ticking, w.text)
		}
		if d.Empty() != (w.changes == 0) {
			t.Errorf("diff %d: Empty() = %v with %d changes", i+1, d.Empty(), w.changes)
		}
	}
}

func TestSamePage(t *testing.T) {
	p := func(u string) *snapshot.Snapshot { return pagetest.Page(u, "T") }
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"https://a.test/doc", "https://a.test/doc#comments", true},
		{"https://a.test/doc#top", "https://a.test/doc#comments", true},
		{"https://a.test/doc", "https://a.test/doc", true},
		{"https://a.test/doc", "https://a.test/doc?page=2", false},
		{"https://a.test/doc", "https://a.test/other#doc", false},
	} {
		if got := snapshot.SamePage(p(c.a), p(c.b)); got != c.same {
			t.Errorf("SamePage(%s, %s) = %v, want %v", c.a, c.b, got, c.same)
		}
	}
	if snapshot.SamePage(nil, p("https://a.test/")) {
		t.Error("SamePage with no snapshot before says it is the same page")
	}
}
