package snapshot_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// card is a card written as a flat run of siblings, as a grid of divs reads: a heading with a
// link, a price and a button.
func card(i int) []*snapshot.Node {
	return []*snapshot.Node{
		pagetest.El("heading", "", "level=3", pagetest.El("link", fmt.Sprintf("Item %d", i), pagetest.Ref(fmt.Sprintf("e%d", 10+2*i)), pagetest.URL("https://shop.test/p"))),
		pagetest.Text(fmt.Sprintf("$%d.00", i)),
		pagetest.El("button", "Add to cart", pagetest.Ref(fmt.Sprintf("e%d", 11+2*i))),
	}
}

func TestSummary(t *testing.T) {
	var cards []*snapshot.Node
	for i := range 4 {
		cards = append(cards, card(i)...)
	}
	header := pagetest.El("row", "", pagetest.El("columnheader", "Name"), pagetest.El("columnheader", "Price"),
		pagetest.El("columnheader", "Stock"), pagetest.El("columnheader", "Note"))
	var rows []any
	rows = append(rows, header)
	for i := range 5 {
		rows = append(rows, pagetest.El("row", "", pagetest.El("cell", fmt.Sprintf("W%d", i)), pagetest.El("cell", "$1")))
	}
	var many []*snapshot.Node
	for i := range 9 {
		many = append(many, pagetest.El("form", fmt.Sprintf("F%d", i),
			pagetest.El("textbox", "A", pagetest.Ref(fmt.Sprintf("e%d", 100+i))),
			pagetest.El("textbox", "B", pagetest.Ref(fmt.Sprintf("e%d", 200+i))),
			pagetest.El("textbox", "C", pagetest.Ref(fmt.Sprintf("e%d", 300+i))),
			pagetest.El("textbox", "D", pagetest.Ref(fmt.Sprintf("e%d", 400+i))),
			pagetest.El("textbox", "E", pagetest.Ref(fmt.Sprintf("e%d", 500+i))),
			pagetest.El("textbox", "F", pagetest.Ref(fmt.Sprintf("e%d", 600+i))),
			pagetest.El("textbox", "G", pagetest.Ref(fmt.Sprintf("e%d", 700+i))),
			pagetest.El("button", "Go", pagetest.Ref(fmt.Sprintf("e%d", 800+i)))))
	}
	cases := []struct {
		name    string
		page    *snapshot.Snapshot
		account string
		lines   []string // header lines the text holds, whole
		not     []string // what the text must not hold
	}{
		{"sign-in form", pagetest.Page("https://a.test/login", "Log in",
			pagetest.El("banner", "", pagetest.El("link", "Home", pagetest.Ref("e1")), pagetest.El("link", "Log in", pagetest.Ref("e2"))),
			pagetest.El("form", "Sign in",
				pagetest.El("textbox", "Email", pagetest.Ref("e3")),
				pagetest.El("textbox", "Password", "password", pagetest.Ref("e4")),
				pagetest.El("button", "Log in", pagetest.Ref("e5")))),
			"signed out",
			[]string{`# looks signed out (link "Log in" e2)`, `# forms: form "Sign in" (textbox "Email" e3, textbox "Password" e4; submit button "Log in" e5)`},
			[]string{"# repeats", "# main actions"}},
		{"says signed in, a sign-in link left in the header", pagetest.Page("https://a.test/login", "Log in",
			pagetest.El("banner", "", pagetest.El("link", "Sign in", pagetest.Ref("e1"))),
			pagetest.El("heading", "Welcome"),
			pagetest.Text("Signed in!")),
			"signed in", []string{`# looks signed in (text "Signed in!")`}, []string{"signed out"}},
		{"logged in as, a sign-in button", pagetest.Page("https://a.test/", "A",
			pagetest.Text("You are logged in as ada."),
			pagetest.El("button", "Sign in with another account", pagetest.Ref("e1"))),
			"signed in", []string{`# looks signed in (text "You are logged in as ada.")`}, nil},
		{"says signed in but asks for a password", pagetest.Page("https://a.test/", "A",
			pagetest.Text("Signed in users see more."),
			pagetest.El("textbox", "Password", "password", pagetest.Ref("e4"))),
			"signed out", []string{`# looks signed out (textbox "Password" e4)`}, nil},
		{"password field alone", pagetest.Page("https://a.test/", "A",
			pagetest.El("textbox", "Password", "password", pagetest.Ref("e4"))),
			"signed out", []string{`# looks signed out (textbox "Password" e4)`, `# forms: fields (textbox "Password" e4)`}, nil},
		{"fields outside a form", pagetest.Page("https://a.test/", "A",
			pagetest.El("button", "Menu", pagetest.Ref("e1")),
			pagetest.El("textbox", "User", pagetest.Ref("e2")),
			pagetest.El("textbox", "Code", pagetest.Ref("e3")),
			pagetest.Text("We will text you."),
			pagetest.El("button", "Continue", pagetest.Ref("e4")),
			pagetest.El("button", "Help", pagetest.Ref("e5"))),
			"", []string{`# forms: fields (textbox "User" e2, textbox "Code" e3; submit button "Continue" e4)`, `# main actions: button "Menu" e1, button "Help" e5`}, nil},
		{"signed in, a card grid and main actions", pagetest.Page("https://shop.test/", "Shop",
			append([]*snapshot.Node{
				pagetest.El("navigation", "", pagetest.El("link", "A", pagetest.Ref("e1")), pagetest.El("link", "B", pagetest.Ref("e2")),
					pagetest.El("link", "C", pagetest.Ref("e3")), pagetest.El("button", "Sign out", pagetest.Ref("e4"))),
				pagetest.El("heading", "Kitchen", "level=1"),
				pagetest.El("button", "Filter", pagetest.Ref("e5")),
			}, cards...)...),
			"signed in",
			[]string{`# looks signed in (button "Sign out" e4)`, `# repeats: 4 headings (first e10) — extract reads them as records`,
				`# main actions: button "Filter" e5`},
			[]string{"links in navigation", "Add to cart"}},
		{"table with a header row", pagetest.Page("https://a.test/t", "T", pagetest.El("table", "Prices", rows...)),
			"", []string{`# repeats: 5 rows in table "Prices" — extract reads them as records`}, []string{"# looks", "columnheaders"}},
		{"capped", pagetest.Page("https://a.test/f", "F", many...), "",
			[]string{`# forms: form "F0" (textbox "A" e100, textbox "B" e200, textbox "C" e300, textbox "D" e400, textbox "E" e500, textbox "F" e600, 1 more; submit button "Go" e800); 8 more forms`},
			[]string{"F3"}},
		{"nothing to say", pagetest.Page("https://a.test/", "A", pagetest.El("link", "Home", pagetest.Ref("e1"))), "", nil, []string{"# looks", "# forms", "# repeats", "# main"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			account := ""
			if c.page.Summary != nil {
				account = c.page.Summary.Account
			}
			if account != c.account {
				t.Errorf("account %q, want %q", account, c.account)
			}
			head, _, _ := strings.Cut(c.page.Text, "\n- ")
			lines := strings.Split(head, "\n")
			for _, want := range c.lines {
				found := false
				for _, l := range lines {
					found = found || l == want
				}
				if !found {
					t.Errorf("no header line %q in\n%s", want, c.page.Text)
				}
			}
			for _, bad := range c.not {
				if strings.Contains(head, bad) {
					t.Errorf("%q in\n%s", bad, c.page.Text)
				}
			}
		})
	}
}

// TestSummaryBudget: the summary is part of the header a token budget counts, and a small
// budget gets a shorter summary.
func TestSummaryBudget(t *testing.T) {
	var cards []*snapshot.Node
	for i := range 40 {
		cards = append(cards, card(i)...)
	}
	page := pagetest.Page("https://shop.test/", "Shop", append([]*snapshot.Node{
		pagetest.El("form", "Search", pagetest.El("searchbox", "Search", pagetest.Ref("e1")), pagetest.El("button", "Go", pagetest.Ref("e2"))),
		pagetest.El("button", "Sign out", pagetest.Ref("e3"))}, cards...)...)
	for _, max := range []int{100, 300, 1000} {
		s := *page
		s.Render(snapshot.Options{MaxTokens: max})
		if len(s.Text) > max*4 {
			t.Errorf("maxTokens=%d: %d bytes", max, len(s.Text))
		}
		if !strings.Contains(s.Text, "# looks signed in") {
			t.Errorf("maxTokens=%d: no account line:\n%s", max, s.Text)
		}
		if got := strings.Contains(s.Text, "# repeats: 40 headings"); got != (max >= 300) {
			t.Errorf("maxTokens=%d: repeats line shown %v:\n%s", max, got, s.Text)
		}
	}
}

// TestCollections: repeated items are found nested (rows, list items) and flat (cards as runs
// of siblings), the last flat item ends where the items before it did, and headers are read.
func TestCollections(t *testing.T) {
	var cards []*snapshot.Node
	for i := range 3 {
		cards = append(cards, card(i)...)
	}
	cards = append(cards, pagetest.Text("Prices include VAT."), pagetest.El("link", "More", pagetest.Ref("e99")))
	page := pagetest.Page("https://shop.test/", "Shop", cards...)
	cs := snapshot.Collections(page.Root)
	if len(cs) != 1 || len(cs[0].Items) != 3 || cs[0].Role != "heading" {
		t.Fatalf("collections %+v", cs)
	}
	for i, it := range cs[0].Items {
		if len(it) != 3 || it[0].Role != "heading" || it[1].Text != fmt.Sprintf("$%d.00", i) || it[2].Role != "button" {
			t.Errorf("item %d: %+v", i, it)
		}
	}
	rows := []any{pagetest.El("row", "", pagetest.El("columnheader", "Name"), pagetest.El("columnheader", ""))}
	for i := range 3 {
		rows = append(rows, pagetest.El("row", "", pagetest.El("cell", fmt.Sprint(i)), pagetest.El("cell", "x")))
	}
	table := pagetest.Page("https://a.test/", "T", pagetest.El("table", "", rows...))
	cs = snapshot.Collections(table.Root)
	if len(cs) != 1 || len(cs[0].Items) != 3 || strings.Join(cs[0].Headers, "|") != "Name|" || cs[0].Container.Role != "table" {
		t.Fatalf("table collections %+v", cs)
	}
}

// BenchmarkSummarize: the summary of a page of 2,000 cards (about 10,000 nodes) in 20 regions,
// as every snapshot computes it.
func BenchmarkSummarize(b *testing.B) {
	var regions []*snapshot.Node
	for r := range 20 {
		var cards []*snapshot.Node
		for i := range 100 {
			cards = append(cards, card(r*100+i)...)
		}
		regions = append(regions, pagetest.El("region", fmt.Sprintf("Shelf %d", r), toAny(cards)...))
	}
	page := pagetest.Page("https://shop.test/", "Shop", regions...)
	b.ResetTimer()
	for range b.N {
		if s := snapshot.Summarize(page.Root); s == nil || len(s.Collections) != 1 || s.Collections[0].Count != 20 {
			b.Fatalf("summary %+v", s)
		}
	}
}

func toAny(ns []*snapshot.Node) []any {
	out := make([]any, len(ns))
	for i, n := range ns {
		out[i] = n
	}
	return out
}

// TestHeaderOutline: a rendered snapshot's text is its header (title, URL, summary) followed by
// its outline, each available alone; the summary names the form's fields, the outline does
// not repeat the header.
func TestHeaderOutline(t *testing.T) {
	s := pagetest.Page("https://a.test/join", "Join",
		pagetest.El("form", "Join", pagetest.El("textbox", "Name", pagetest.Ref("e1")), pagetest.El("button", "Join", pagetest.Ref("e2"))))
	h, o := s.Header(), s.Outline()
	if h+o != s.Text || !strings.HasPrefix(h, "# Join — https://a.test/join\n") || !strings.Contains(h, `textbox "Name" e1`) {
		t.Errorf("header %q + outline %q != text %q", h, o, s.Text)
	}
	if strings.Contains(o, "# ") || !strings.Contains(o, `- textbox "Name" [ref=e1]`) {
		t.Errorf("outline %q", o)
	}
}

// TestHeaderNamesTools: the header points to the tools the client has, by the names it gives.
func TestHeaderNamesTools(t *testing.T) {
	rows := []any{pagetest.El("row", "", pagetest.El("columnheader", "Item"), pagetest.El("columnheader", "Price"))}
	for i := range 5 {
		rows = append(rows, pagetest.El("row", "", pagetest.El("cell", fmt.Sprintf("Mug %d", i)), pagetest.El("cell", "$3")))
	}
	for _, c := range []struct {
		tools snapshot.Tools
		want  string
	}{
		{snapshot.Tools{}, `# repeats: 5 rows in table "Prices" — extract reads them as records`},
		{snapshot.Tools{Records: "extract (offered by more_tools)"}, `# repeats: 5 rows in table "Prices" — extract (offered by more_tools) reads them as records`},
	} {
		page := pagetest.Page("https://a.test/t", "T", pagetest.El("table", "Prices", rows...))
		page.Render(snapshot.Options{Tools: c.tools})
		if !strings.Contains(page.Header(), c.want+"\n") {
			t.Errorf("tools %+v: header\n%s\nlacks %q", c.tools, page.Header(), c.want)
		}
	}
}
