package actions

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

func TestSearchPage(t *testing.T) {
	var cards []any
	for i := range 30 {
		cards = append(cards, pagetest.El("region", fmt.Sprintf("Product %d", i),
			pagetest.El("heading", fmt.Sprintf("Product %d", i), "level=3"),
			pagetest.Text(fmt.Sprintf("Description of product %d", i)),
			pagetest.El("button", fmt.Sprintf("Add product %d to cart", i), pagetest.Ref(fmt.Sprintf("e%d", 10+i)))))
	}
	page := pagetest.Page("https://shop.test/", "Shop",
		pagetest.El("navigation", "Main", pagetest.El("link", "Home", pagetest.Ref("e1"), pagetest.URL("https://shop.test/"))),
		pagetest.El("main", "", cards...),
		pagetest.El("iframe", "Chat", pagetest.Ref("e2"),
			pagetest.El("textbox", "Message", pagetest.Ref("e3"))))
	cases := []struct {
		name    string
		p       Search
		refs    []string // the refs answered, in order
		total   int
		context string // the first match's context
	}{
		{"text any case", Search{Text: "add PRODUCT 7 "}, []string{"e17"}, 1, `region "Product 7"`},
		{"text in a frame", Search{Text: "message"}, []string{"e3"}, 1, `iframe "Chat" [ref=e2]`},
		{"role", Search{Role: "Link"}, []string{"e1"}, 1, `navigation "Main"`},
		{"regex", Search{Regex: `^Add product 2\d? `}, []string{"e12", "e30", "e31", "e32", "e33", "e34", "e35", "e36", "e37", "e38", "e39"}, 11, `region "Product 2"`},
		{"role and text", Search{Role: "button", Text: "product 3"}, []string{"e13"}, 1, ""},
		{"text answers the element around it", Search{Text: "description of product 4"}, nil, 1, `region "Product 4"`},
		{"limit", Search{Role: "button", Limit: 2}, []string{"e10", "e11"}, 30, ""},
		// the elements named exactly so first, then a few of the others (not all 44)
		{"exact names first", Search{Text: "product 1"}, []string{"e11"}, 44, ""},
		{"exact names first, with a limit", Search{Role: "button", Text: "add product 1 to cart", Limit: 3}, []string{"e11"}, 1, ""},
		{"nothing", Search{Text: "no such thing"}, nil, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.p.Validate(); err != nil {
				t.Fatal(err)
			}
			found, total := SearchPage(page, &c.p)
			var refs []string
			for _, m := range found {
				if strings.Contains(m.Line, "[ref=") {
					refs = append(refs, m.Ref)
				}
			}
			if !slices.Equal(refs, c.refs) || total != c.total {
				t.Errorf("refs %v of %d, want %v of %d (%+v)", refs, total, c.refs, c.total, found)
			}
			if c.name == "exact names first" && (len(found) != 2+nearMatches || found[0].Line != `region "Product 1"` || found[1].Line != `heading "Product 1" [level=3]`) {
				t.Errorf("found %+v, want the region and heading named so, then %d others", found, nearMatches)
			}
			if c.context != "" && (len(found) == 0 || !strings.HasPrefix(found[0].Context, c.context)) {
				t.Errorf("context %+v, want %q", found, c.context)
			}
		})
	}
}

func TestSearchValidate(t *testing.T) {
	for _, c := range []struct {
		p    Search
		want string
	}{
		{Search{}, "needs text, role or regex"},
		{Search{Regex: "a("}, "bad regex"},
		{Search{Text: "x", Limit: -1}, "limit"},
	} {
		err := c.p.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	var syn *syntax.Error
	if err := (&Search{Regex: "a("}).Validate(); !errors.As(err, &syn) {
		t.Errorf("a bad regex's error does not wrap the regexp.Error: %v", err)
	}
	if a, err := Default().FromTool("find", []byte(`{"text":"Home"}`)); err != nil || a.Kind != "search" {
		t.Errorf("the find tool gives %+v, %v", a, err)
	}
}

// TestSearchTextContext: a text match shows the sentence that holds it (not the start of a long
// paragraph, which may not hold it at all), and text in no named element is placed under the
// heading before it.
func TestSearchTextContext(t *testing.T) {
	long := strings.Repeat("The council met on Tuesday to discuss the budget for the coming year. ", 8) +
		"Mayor Ana Ruiz said the new bridge will open in May 2027. " +
		strings.Repeat("Residents asked about parking near the station and the library. ", 8)
	page := pagetest.Page("https://news.test/a", "News",
		pagetest.El("heading", "Bridge to open next spring", "level=1"),
		pagetest.El("generic", "", pagetest.Text(long)),
		pagetest.El("heading", "Weather", "level=2"),
		pagetest.Text("Rain all week. Über 20 mm expected."))
	cases := []struct {
		p            Search
		line, inLine string
		context      string
	}{
		{Search{Text: "new BRIDGE"}, "text: …Mayor Ana Ruiz said the new bridge will open in May 2027.…", "", `heading "Bridge to open next spring" [level=1]`},
		{Search{Regex: `May \d{4}`}, "text: …Mayor Ana Ruiz said the new bridge will open in May 2027.…", "", `heading "Bridge to open next spring" [level=1]`},
		{Search{Text: "über 20"}, "text: Rain all week. Über 20 mm expected.", "", `heading "Weather" [level=2]`},
	}
	for _, c := range cases {
		if err := c.p.Validate(); err != nil {
			t.Fatal(err)
		}
		found, _ := SearchPage(page, &c.p)
		if len(found) != 1 {
			t.Fatalf("%+v: found %+v", c.p, found)
		}
		if found[0].Line != c.line || found[0].Context != c.context {
			t.Errorf("%+v: line %q, context %q; want %q, %q", c.p, found[0].Line, found[0].Context, c.line, c.context)
		}
		if len([]rune(found[0].Line)) > excerptMax+10 {
			t.Errorf("%+v: the excerpt is %d characters", c.p, len(found[0].Line))
		}
	}
}

// FuzzSearchExcerpt: an excerpt of any text is valid UTF-8, bounded, and holds the words
// searched for whenever the text does.
func FuzzSearchExcerpt(f *testing.F) {
	f.Add(strings.Repeat("a. ", 200)+"needle in the hay. "+strings.Repeat("b! ", 200), "needle")
	f.Add("Über ÄÖÜ straße", "straße")
	f.Add(strings.Repeat("é", 900), "é")
	f.Fuzz(func(t *testing.T, text, words string) {
		p := Search{Text: words}
		if p.Validate() != nil {
			return
		}
		got := p.excerpt(text)
		if !utf8.ValidString(got) && utf8.ValidString(text) {
			t.Fatalf("excerpt of valid text is not UTF-8: %q", got)
		}
		if n := len([]rune(got)); n > excerptMax+2 && len([]rune(text)) > excerptMax {
			t.Fatalf("excerpt of %d runes", n)
		}
		norm := strings.Join(strings.Fields(words), " ")
		if utf8.ValidString(text) && norm != "" && strings.Contains(strings.Join(strings.Fields(text), " "), norm) &&
			len([]rune(norm)) < excerptMax/2 && !strings.Contains(strings.ToLower(got), strings.ToLower(norm)) {
			t.Fatalf("excerpt %q lacks %q", got, norm)
		}
	})
}

// TestSearchPageInferred: an unnamed control is found by the name the outline gives it, and
// answered as the outline shows it.
func TestSearchPageInferred(t *testing.T) {
	trash := pagetest.El("button", "", pagetest.Ref("e4"))
	trash.Inferred, trash.InferredBy = "trash", snapshot.ByIcon
	page := pagetest.Page("https://mail.test/", "Inbox", pagetest.El("button", "Archive", pagetest.Ref("e3")), trash)
	p := Search{Text: "Trash"}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	found, total := SearchPage(page, &p)
	if total != 1 || len(found) != 1 || found[0].Ref != "e4" || found[0].Line != `button "trash" [icon] [ref=e4]` {
		t.Errorf("found %+v of %d, want the trash button as the outline shows it", found, total)
	}
}
