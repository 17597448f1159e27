package fastpath

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// widgets is a page model with the shapes issue 18 names: clickable text, tabs with inner
// links, an open dialog with an "x" button named Close, a native select, result rows.
var widgets = func() *snapshot.Snapshot {
	E, T := pagetest.El, pagetest.Text
	type ref = pagetest.Ref
	sel := E("combobox", "", ref("e20"))
	sel.Options = []string{"5YmEMLz", "QkBa", "zz-Top"}
	return pagetest.Page("https://w.test/", "Widgets",
		E("paragraph", "", T("Quis"), E("clickable", "sit", ref("e1")), T("amet")),
		E("tablist", "",
			E("tab", "Tab #1", ref("e2"), E("link", "Tab #1", ref("e3"))),
			E("tab", "Tab #2", ref("e4"), E("link", "Tab #2", ref("e5")))),
		E("dialog", "Cookie preferences", ref("e6"),
			E("button", "Close", ref("e7"), T("x")),
			E("button", "Accept all", ref("e8")),
			E("button", "OK", ref("e9"))),
		E("button", "OK", ref("e10")),
		E("textbox", "", ref("e11")),
		sel,
		E("list", "",
			E("listitem", "", E("link", "Kettle, blue, 1.5 L", ref("e12")), E("button", "Delete", ref("e13"))),
			E("listitem", "", E("link", "Kettle, red, 1.7 L", ref("e14")), E("button", "Delete", ref("e15")))),
		E("link", "Next page", ref("e16")),
		E("switch", "Dark mode", ref("e17")),
		E("option", "Français", ref("e18")),
		E("button", "Save and close", ref("e19")),
		E("button", "Submit", ref("e21")))
}()

func TestMatchGrammar(t *testing.T) {
	tests := []struct {
		cmd     string
		outcome Outcome
		want    string
	}{
		{`Click on the link "sit".`, Matched, `{"kind":"click","ref":"e1"}`},
		{"click SIT", Matched, `{"kind":"click","ref":"e1"}`},
		{"Click on Tab #2.", Matched, `{"kind":"click","ref":"e4"}`},
		{"switch to tab 2", Matched, `{"kind":"click","ref":"e4"}`},
		{"go to tab #1", Matched, `{"kind":"click","ref":"e2"}`},
		{"click the second tab", Matched, `{"kind":"click","ref":"e4"}`},
		{`Close the dialog box by clicking the "x".`, Matched, `{"kind":"click","ref":"e7"}`},
		{"dismiss the cookie preferences popup", Matched, `{"kind":"click","ref":"e7"}`},
		{"click the x", Matched, `{"kind":"click","ref":"e7"}`},
		{"click ok in the dialog", Matched, `{"kind":"click","ref":"e9"}`},
		{"accept all", Matched, `{"kind":"click","ref":"e8"}`},
		{"submit", Matched, `{"kind":"click","ref":"e21"}`},
		{"Focus into the textbox.", Matched, `{"kind":"click","ref":"e11"}`},
		{`Enter "Jerald" into the text field`, Matched, `{"kind":"type","ref":"e11","text":"Jerald"}`},
		{"type Jerald", Matched, `{"kind":"type","ref":"e11","text":"Jerald"}`},
		{"select 5ymemlz", Matched, `{"kind":"select","ref":"e20","values":["5YmEMLz"]}`},
		{"pick zz top from the list", Matched, `{"kind":"select","ref":"e20","values":["zz-Top"]}`},
		{"click the red kettle", Matched, `{"kind":"click","ref":"e14"}`},
		{"open the last result", Matched, `{"kind":"click","ref":"e14"}`},
		{"delete the last one", Matched, `{"kind":"click","ref":"e15"}`},
		{"remove the first order", Matched, `{"kind":"click","ref":"e13"}`},
		{"toggle dark mode", Matched, `{"kind":"click","ref":"e17"}`},
		{"switch on dark mode", Matched, `{"kind":"check","ref":"e17","checked":true}`},
		{"choose francais", Matched, `{"kind":"click","ref":"e18"}`},
		// refusals: ambiguous, absent, or not simple
		{"click ok", Ambiguous, ``},
		{"click delete", Ambiguous, ``},
		{"click kettle", Ambiguous, ``},
		{"click the third tab", NotFound, ``},
		{"click the green kettle", NotFound, ``},
		{"click settings in the dialog", NotFound, ``},
		{"select purple", NotFound, ``},
		{"delete everything", NotSimple, ``},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := Match(tt.cmd, widgets, nil)
			if r.Outcome != tt.outcome {
				t.Fatalf("outcome %s (%s), want %s; action %+v candidates %+v", r.Outcome, r.Reason, tt.outcome, r.Action, r.Candidates)
			}
			if tt.outcome != Matched {
				if r.Action != nil {
					t.Fatalf("guessed %+v", r.Action)
				}
				return
			}
			got, _ := json.Marshal(r.Action)
			if string(got) != tt.want {
				t.Fatalf("action %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{`Enter "Jerald" into the text field and press Submit.`, []string{`Enter "Jerald" into the text field`, "press Submit"}},
		{"Select 5YmEMLz and click Submit.", []string{"Select 5YmEMLz", "click Submit"}},
		{"click tab 2, then click sit", []string{"click tab 2", "click sit"}},
		{"click file, then save", []string{"click file", "save"}},
		{"click file, then print", []string{"click file", "click print"}},
		{"focus the textbox, type Jerald, click submit", []string{"focus the textbox", "type Jerald", "click submit"}},
		{"type Ada and then click ok", []string{"type Ada", "click ok"}},
		// not split: the joint is inside a name on the page, inside quotes, or a part is no command
		{"click save and close", []string{"click save and close"}},
		{`type "salt and pepper" in the field`, []string{`type "salt and pepper" in the field`}},
		{"type Tom and Jerry in the field", []string{"type Tom and Jerry in the field"}},
		{"type Hello, world in the field", []string{"type Hello, world in the field"}},
		{"compare the kettles and buy the cheapest", []string{"compare the kettles and buy the cheapest"}},
		{"click sign in", []string{"click sign in"}},
	}
	for _, tt := range tests {
		if got := Split(tt.cmd, widgets); !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add(`Enter "Jerald" into the text field and press Submit.`)
	f.Add("click a, then b and c")
	f.Add(`"and" and`)
	f.Fuzz(func(t *testing.T, cmd string) {
		steps := Split(cmd, widgets)
		if len(steps) == 0 {
			t.Fatal("no steps")
		}
		for _, s := range steps {
			_ = Match(s, widgets, nil) // must not panic
		}
	})
}
