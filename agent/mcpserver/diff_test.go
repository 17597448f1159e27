package mcpserver

import (
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

func TestChanges(t *testing.T) {
	el, txt := pagetest.El, pagetest.Text
	type R = pagetest.Ref
	named := func(name, status string) *snapshot.Snapshot {
		return pagetest.Page("https://a.test/signup", "Sign up",
			el("heading", "Sign up", "level=1"),
			el("textbox", "Name", R("e1"), pagetest.Value(name)),
			el("button", "Send", R("e2")),
			el("status", "", txt(status)),
			el("link", "Other page", R("e3"), pagetest.URL("https://a.test/other")))
	}
	page := func(status string) *snapshot.Snapshot { return named("", status) }
	other := pagetest.Page("https://a.test/other", "Other", el("heading", "Other", "level=1"), el("button", "Save", R("e9")))
	for _, tc := range []struct {
		name          string
		before, after *snapshot.Snapshot
		want          []string
		not           []string
		set           []string
	}{
		{name: "same", before: page("Ready"), after: page("Ready"), not: []string{"Sign up", "change"}},
		{name: "status reworded", before: page("Ready"), after: page("Hello, Ada"),
			want: []string{"Changes:\n~ text: Hello, Ada (was: \"Ready\")"},
			not:  []string{"Sign up", "Other page", "[ref=e2]"}},
		// the value typed is in the action's message: not again in the changes
		{name: "typed", before: page("Ready"), after: named("Ada", "Hello, Ada"), set: []string{"e1"},
			want: []string{`~ text: Hello, Ada (was: "Ready")`}, not: []string{`textbox "Name"`}},
		{name: "typed, nothing else", before: page("Ready"), after: named("Ada", "Ready"), set: []string{"e1"},
			not: []string{"Ada", "change"}},
		// a page the client has not seen: its summary, not its outline (snapshot reads that)
		{name: "new page", before: page("Ready"), after: other, want: []string{"# Other — https://a.test/other\n", `# main actions: button "Save" e9`},
			not: []string{`- heading "Other"`, "[ref=e9]"}},
		// going to an anchor of the same page is no new page: what changed, not its summary
		{name: "anchor", before: page("Ready"), after: func() *snapshot.Snapshot {
			p := page("At the top")
			p.URL += "#top"
			return p
		}(), want: []string{"Changes:\n~ text: At the top (was: \"Ready\")"}, not: []string{"# Sign up"}},
		{name: "first look", before: nil, after: page("Ready"), want: []string{"# Sign up — https://a.test/signup"}, not: []string{`- textbox "Name"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := changes(tc.before, tc.after, tc.set)
			if tc.want == nil && got != "" {
				t.Errorf("changes %q, want none (nothing changed)", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("changes lack %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("changes show the unchanged %q:\n%s", n, got)
				}
			}
		})
	}
}

// TestNewPage: a page just reached is its summary, with its URL only when the result did not
// name it already.
func TestNewPage(t *testing.T) {
	p := pagetest.Page("https://a.test/other", "Other", pagetest.El("button", "Save", pagetest.Ref("e9")))
	if got := newPage(p, false); !strings.HasPrefix(got, "# Other — https://a.test/other\n") || !strings.Contains(got, `button "Save" e9`) {
		t.Errorf("newPage, not told:\n%s", got)
	}
	if got := newPage(p, true); !strings.HasPrefix(got, "# Other\n") || strings.Contains(got, "https://") || !strings.Contains(got, `button "Save" e9`) {
		t.Errorf("newPage, told the URL:\n%s", got)
	}
}
