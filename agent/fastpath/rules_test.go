package fastpath

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

func TestParseDate(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"11/23/2016", "2016-11-23"},
		{"06/03/2016", "2016-06-03"},
		{"23/11/2016", "2016-11-23"},
		{"2016-11-23", "2016-11-23"},
		{"November 23, 2016", "2016-11-23"},
		{"nov 3rd 2016", "2016-11-03"},
		{"23 November 2016", "2016-11-23"},
		{"2nd of march 2020", "2020-03-02"},
		{"02/29/2016", "2016-02-29"},
		// no date
		{"02/29/2015", ""},
		{"31/31/2016", ""},
		{"13/13/2016", ""},
		{"11/23", ""},
		{"Smarch 3, 2016", ""},
		{"tomorrow", ""},
	}
	for _, tt := range tests {
		got, ok := parseDate(tt.in)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("parseDate(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"3:45 PM", "15:45"},
		{"12:01 PM", "12:01"},
		{"12:00 AM", "00:00"},
		{"9 am", "09:00"},
		{"6:23 a.m.", "06:23"},
		{"15:45", "15:45"},
		{"12:01:30 p.m.", "12:01:30"},
		// no time
		{"13:00 PM", ""},
		{"24:00", ""},
		{"7", ""},
		{"noon", ""},
		{"3:75", ""},
	}
	for _, tt := range tests {
		got, ok := parseTime(tt.in)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("parseTime(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"11/23/2016", "November 23, 2016", "3:45 PM", "12:01:30 p.m.", "0/0/0000", "99:99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if d, ok := parseDate(s); ok && len(d) != len("2006-01-02") {
			t.Fatalf("parseDate(%q) = %q", s, d)
		}
		if v, ok := parseTime(s); ok && len(v) != len("15:04") && len(v) != len("15:04:05") {
			t.Fatalf("parseTime(%q) = %q", s, v)
		}
	})
}

// kinds is a page model with fields labelled only by the text beside them, date and time
// inputs, a list of checkboxes, a list that takes several options, a collapsed section, icon
// buttons and several widgets.
var kinds = func() *snapshot.Snapshot {
	E, T := pagetest.El, pagetest.Text
	type ref = pagetest.Ref
	fruits := E("listbox", "Fruits", ref("e20"), E("option", "Apple", ref("e21")), E("option", "Cherry", ref("e22")), E("option", "Mango", ref("e23")), E("option", "Peaches and Cream", ref("e24")))
	fruits.States = []string{"multiselectable"}
	pass := E("textbox", "", ref("e2"))
	pass.Password = true
	area := E("textbox", "Bio", ref("e9"))
	area.States = []string{"multiline"}
	return pagetest.Page("https://k.test/", "Kinds",
		E("paragraph", "", T("Username"), E("textbox", "", ref("e1"))),
		E("paragraph", "", T("Password"), pass),
		E("paragraph", "", T("Notes"), E("textbox", "", ref("e3"))),
		E("date", "", ref("e4")),
		E("time", "", ref("e5")),
		E("checkbox", "ant", ref("e6")), E("checkbox", "bee", ref("e7")), E("checkbox", "cow", ref("e8")),
		area,
		fruits,
		E("tab", "Section #4", ref("e30")),
		E("button", "Main navigation", ref("e31"), T("☰")),
		E("button", "More options", ref("e32"), T("⋮")),
		E("dialog", "Promo", ref("e33"), E("button", "Close", ref("e34"))),
		E("button", "Submit", ref("e35")))
}()

func TestMatchKinds(t *testing.T) {
	tests := []struct {
		cmd     string
		outcome Outcome
		want    string
	}{
		{"Focus into the 3rd input textbox", Matched, `{"kind":"click","ref":"e3"}`},
		{"click the second text field from the bottom", Matched, `{"kind":"click","ref":"e3"}`},
		{"click the second to last checkbox", Matched, `{"kind":"click","ref":"e7"}`},
		{`Click on a "text" widget`, Matched, `{"kind":"click","ref":"e1"}`},
		{`Click on a "textarea" widget`, Matched, `{"kind":"click","ref":"e9"}`},
		{`Click on a "checkbox" widget`, Matched, `{"kind":"click","ref":"e6"}`},
		{`type "ada" into the username`, Matched, `{"kind":"type","ref":"e1","text":"ada"}`},
		{`Enter the password "x1" into the password field`, Matched, `{"kind":"type","ref":"e2","text":"x1"}`},
		{`Type "TEODORO" in all lower case letters in the text input`, Ambiguous, ``},
		{`Type "TEODORO" in all lower case letters in the notes box`, Matched, `{"kind":"type","ref":"e3","text":"teodoro"}`},
		{"Enter 11/23/2016 as the date", Matched, `{"kind":"fill","fields":[{"ref":"e4","value":"2016-11-23"}]}`},
		{"Enter 12:01 PM as the time", Matched, `{"kind":"fill","fields":[{"ref":"e5","value":"12:01"}]}`},
		{"select bee", Matched, `{"kind":"check","ref":"e7","checked":true}`},
		{"select Apple, Mango from the list", Matched, `{"kind":"select","ref":"e20","values":["Apple","Mango"]}`},
		{"select Mango, Peaches and Cream from the list", Matched, `{"kind":"select","ref":"e20","values":["Mango","Peaches and Cream"]}`},
		{"select Peaches and Cream and Apple from the list", Matched, `{"kind":"select","ref":"e20","values":["Peaches and Cream","Apple"]}`},
		{"Expand the section below", Matched, `{"kind":"click","ref":"e30"}`},
		{"click the ☰", Matched, `{"kind":"click","ref":"e31"}`},
		{"open the hamburger menu", Matched, `{"kind":"click","ref":"e31"}`},
		{"click ⋮", Matched, `{"kind":"click","ref":"e32"}`},
		{`Close the dialog box by clicking the "x"`, Matched, `{"kind":"click","ref":"e34"}`},
		{"click the ✕", Matched, `{"kind":"click","ref":"e34"}`},
		{"press Submit", Matched, `{"kind":"click","ref":"e35"}`},
		{`Click the button in the dialog box labeled "x".`, Matched, `{"kind":"click","ref":"e34"}`},
		{`click the button labeled "Submit"`, Matched, `{"kind":"click","ref":"e35"}`},
		{"click the second item", Matched, `{"kind":"click","ref":"e22"}`},
		// refusals
		{"Enter the value of Notes into the notes field", NotSimple, ``},
		{"type your answer into the notes field", NotSimple, ``},
		{"Enter 31/31/2016 as the date", NotFound, ``},
		{"Enter 25:00 as the time", NotFound, ``},
		{`Click on a "slider" widget`, NotFound, ``},
		{"select Apple, Kiwi from the list", NotFound, ``},
		{"click the fifth checkbox", NotFound, ``},
		{`Click on the "★" button`, NotFound, ``},
		{`Click the button in the dialog box labeled "OK".`, NotFound, ``},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := Match(tt.cmd, kinds, nil)
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

func TestSplitKinds(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{`Enter the username "ada" and the password "x1" into the text fields and press login.`,
			[]string{`type "ada" into the username`, `type "x1" into the password`, "press login"}},
		{"Select ant, bee, cow and click Submit.", []string{"Select ant", "select bee", "select cow", "click Submit"}},
		{"Select Apple, Mango from the scroll list and click Submit.", []string{"Select Apple, Mango from the scroll list", "click Submit"}},
		{"Select nothing and click Submit.", []string{"click Submit"}},
		{"Select Mango, Peaches and Cream from the scroll list and click Submit.", []string{"Select Mango, Peaches and Cream from the scroll list", "click Submit"}},
		{"Expand the section below and click submit.", []string{"Expand the section below", "click submit"}},
		{"Select File>Export>PDF", []string{"hover over the menu item File", "hover over the menu item Export", "click the menu item PDF"}},
		{"Enter 3:45 PM as the time and press submit.", []string{"Enter 3:45 PM as the time", "press submit"}},
	}
	for _, tt := range tests {
		if got := Split(tt.cmd, kinds); !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.cmd, got, tt.want)
		}
	}
	// "both": a step per field when the page has exactly two of the kind
	two := pagetest.Page("https://p.test/", "Password",
		pagetest.El("textbox", "", pagetest.Ref("e1")), pagetest.El("textbox", "", pagetest.Ref("e2")))
	cmd := `Enter the password "Lq" into both text fields and press submit.`
	want := []string{`Enter the password "Lq" into the first text field`, `Enter the password "Lq" into the second text field`, "press submit"}
	if got := Split(cmd, two); !slices.Equal(got, want) {
		t.Errorf("Split(%q) = %q, want %q", cmd, got, want)
	}
	if got := Split(cmd, kinds); len(got) != 1 {
		t.Errorf("Split(%q) on a page with three text fields = %q, want it whole (refused)", cmd, got)
	}
}
