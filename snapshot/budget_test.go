package snapshot_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

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
				`link "Open widget 8" [ref=e108]`, "more rows like e100", "lines left out", "find searches them, snapshot with scope=<ref> shows a part"},
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
			if got := snapshot.Tokens(text); got > c.maxTokens {
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
		if got := snapshot.Tokens(page.Text); got > budget {
			t.Errorf("budget %d: %d tokens", budget, got)
		}
	}
}

// newsPage is a news front page in the words of lang: a navigation of links, n stories (each
// a heading link, a summary and a row of tag links) and a footer, most of it below the fold.
func newsPage(lang string, n int) *snapshot.Snapshot {
	words := map[string][]string{
		"en":    {"Markets rally as inflation cools", "The central bank held rates steady on Tuesday, and analysts expect two cuts next year.", "Economy"},
		"zh":    {"北京市发布新的交通管理办法", "市政府周二宣布，从下个月起，中心城区将实行新的停车收费标准，以缓解交通拥堵。", "经济"},
		"ja":    {"東京で新しい美術館が開館", "来月から、上野公園の近くに現代美術を中心とした新しい美術館が一般公開されます。", "文化"},
		"mixed": {"Apple 发布 iPhone 17 Pro：售价 8999 元起", "The A19 chip 采用 3nm 工艺, 电池续航 improved by 20% según el fabricante.", "Tech 科技"},
	}[lang]
	var nav []any
	for i := range 30 {
		nav = append(nav, pagetest.El("link", fmt.Sprintf("%s %d", words[2], i), pagetest.Ref(fmt.Sprintf("e%d", i+1)), pagetest.URL(fmt.Sprintf("https://news.test/s/%d", i))))
	}
	var stories []any
	for i := range n {
		below := []any{}
		if i > 3 {
			below = append(below, "below")
		}
		var tags []any
		for j := range 3 {
			tags = append(tags, pagetest.El("link", fmt.Sprintf("%s %d", words[2], j), pagetest.Ref(fmt.Sprintf("e%d", 1000+10*i+j)), pagetest.URL(fmt.Sprintf("https://news.test/t/%d", j))))
		}
		stories = append(stories, pagetest.El("article", "", append(below,
			pagetest.El("heading", "", "level=2", pagetest.El("link", fmt.Sprintf("%s (%d)", words[0], i), pagetest.Ref(fmt.Sprintf("e%d", 500+i)), pagetest.URL(fmt.Sprintf("https://news.test/a/%d", i)))),
			pagetest.El("paragraph", "", pagetest.Text(strings.Repeat(words[1]+" ", 1+i%3))),
			pagetest.El("list", "", tags...))...))
	}
	return pagetest.Page("https://news.test/", words[0],
		pagetest.El("navigation", "Sections", nav...),
		pagetest.El("main", "", stories...),
		pagetest.El("contentinfo", "", "below", pagetest.Text(strings.Repeat(words[1], 5))))
}

// TestBudgetTokens checks that a budget holds in real tokens, on English, CJK and mixed
// pages: never over, and at least three quarters full when the page is larger than the
// budget (repeated items show a few examples, more while they fill less than that).
func TestBudgetTokens(t *testing.T) {
	for _, lang := range []string{"en", "zh", "ja", "mixed"} {
		for _, budget := range []int{300, 700, 2000, 4000} {
			for _, interactive := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/interactive=%v", lang, budget, interactive), func(t *testing.T) {
					page := newsPage(lang, 200)
					page.Render(snapshot.Options{MaxTokens: budget, Interactive: interactive})
					got := snapshot.Tokens(page.Text)
					if got > budget {
						t.Errorf("%d tokens, over the budget of %d", got, budget)
					}
					if got < budget*3/4 {
						t.Errorf("%d tokens: the budget of %d is not three quarters full", got, budget)
					}
					if !page.Truncated || !strings.Contains(page.Text, "lines left out") {
						t.Errorf("a 200-story page in %d tokens says nothing is left out:\n%s", budget, page.Text)
					}
				})
			}
		}
	}
}

// TestTokens checks the count against cl100k_base counts given in tiktoken's documentation.
func TestTokens(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"tiktoken is great!", 6},
	} {
		if got := snapshot.Tokens(c.text); got != c.want {
			t.Errorf("Tokens(%q) = %d, want %d", c.text, got, c.want)
		}
	}
}

// BenchmarkBudget renders a 20,000-row page whole and within 2,000 tokens: the budget's cost
// over the plain render is what counting tokens adds.
func BenchmarkBudget(b *testing.B) {
	for _, o := range []snapshot.Options{{}, {MaxTokens: 2000}, {MaxTokens: 2000, Interactive: true}} {
		b.Run(fmt.Sprintf("maxTokens=%d/interactive=%v", o.MaxTokens, o.Interactive), func(b *testing.B) {
			page := bigPage(20000)
			snapshot.Tokens("warm up") // load the encoding outside the timing
			for b.Loop() {
				page.Render(o)
			}
		})
	}
}

// FuzzBudgetTokens renders pages made of arbitrary text (any script, emoji, long runs of
// spaces or digits) within arbitrary budgets: whenever the header leaves room, the text never
// takes more tokens than the budget.
func FuzzBudgetTokens(f *testing.F) {
	f.Add("Markets rally as inflation cools", uint16(300))
	f.Add("北京市发布新的交通管理办法，从下个月起实行", uint16(700))
	f.Add("Apple 发布 iPhone 17：售价 8999 元起 según 🎉🎉", uint16(150))
	f.Add("                                        1234567890123", uint16(90))
	f.Fuzz(func(t *testing.T, words string, budget uint16) {
		if !utf8.ValidString(words) || strings.TrimSpace(words) == "" {
			return
		}
		var items []any
		for i := range 60 {
			items = append(items, pagetest.El("listitem", "",
				pagetest.El("link", fmt.Sprintf("%s %d", words, i), pagetest.Ref(fmt.Sprintf("e%d", i+1)), pagetest.URL("https://f.test/"+strconv.Itoa(i))),
				pagetest.Text(strings.Repeat(words+" ", 1+i%4))))
		}
		page := pagetest.Page("https://f.test/", "Fuzz", pagetest.El("list", "", items...))
		limit := int(budget)
		page.Render(snapshot.Options{MaxTokens: limit})
		if head := snapshot.Tokens(page.Header()); head+80 > limit {
			return // the header alone takes the budget
		}
		if got := snapshot.Tokens(page.Text); got > limit {
			t.Errorf("%d tokens within a budget of %d:\n%s", got, limit, page.Text)
		}
	})
}
