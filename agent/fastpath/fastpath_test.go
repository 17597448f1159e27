package fastpath

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// page is a sign-in page with look-alike controls, written as a page model.
var page = func() *snapshot.Snapshot {
	E, T := pagetest.El, pagetest.Text
	type ref = pagetest.Ref
	return pagetest.Page("https://acme.test/", "Acme",
		E("banner", "", ref("e1"),
			E("link", "Home", ref("e2")),
			E("link", "Sign in", ref("e3")),
			E("button", "Sign in with Google", ref("e4"))),
		E("heading", "Welcome to Acme", "level=1", ref("e5")),
		E("searchbox", "Search", ref("e6")),
		E("textbox", "Email", ref("e7")),
		E("textbox", "Password", ref("e8")),
		E("checkbox", "Remember me", ref("e9")),
		E("checkbox", "Subscribe to newsletter", "checked", ref("e10")),
		E("combobox", "Color", ref("e11"),
			E("option", "Red", ref("e12")),
			E("option", "Blue", ref("e13"))),
		E("button", "Submit", ref("e14")),
		E("button", "Delete", ref("e15")),
		E("button", "Delete", ref("e16")),
		E("link", "Read more", ref("e17")),
		E("link", "Read more about pricing", ref("e18")),
		E("button", "Save draft", "disabled", ref("e19")),
		E("button", "Add to cart", ref("e20")),
		E("button", "Add to wishlist", ref("e21")),
		E("button", "First item", ref("e22")),
		T("Fast shipping worldwide."))
}()

var tabs = []Tab{
	{ID: "t1", Title: "Inbox (3) - ada@example.com - Example Mail", URL: "https://mail.example.com/inbox"},
	{ID: "t2", Title: "GitHub", URL: "https://github.com/"},
	{ID: "t3", Title: "Calendar", URL: "https://calendar.example.com/"},
}

func TestMatch(t *testing.T) {
	tests := []struct {
		cmd     string
		outcome Outcome
		want    string // JSON of the action, compared as a subset by fields listed
	}{
		{"click sign in", Matched, `{"kind":"click","ref":"e3"}`},
		{"Click Sign In.", Matched, `{"kind":"click","ref":"e3"}`},
		{"please click the google button", Matched, `{"kind":"click","ref":"e4"}`},
		{"press the submit button", Matched, `{"kind":"click","ref":"e14"}`},
		{"tap submit", Matched, `{"kind":"click","ref":"e14"}`},
		{"open sign in", Matched, `{"kind":"click","ref":"e3"}`},
		{"click the home link", Matched, `{"kind":"click","ref":"e2"}`},
		{"click read more", Matched, `{"kind":"click","ref":"e17"}`},
		{"click e14", Matched, `{"kind":"click","ref":"e14"}`},
		{"click the email field", Matched, `{"kind":"click","ref":"e7"}`},
		{"type hello in the search box", Matched, `{"kind":"type","ref":"e6","text":"hello"}`},
		{"Type Hello World into email", Matched, `{"kind":"type","ref":"e7","text":"Hello World"}`},
		{"enter ada@example.com in the email field", Matched, `{"kind":"type","ref":"e7","text":"ada@example.com"}`},
		{`type "two words" in search`, Matched, `{"kind":"type","ref":"e6","text":"two words"}`},
		{"fill email with bob@example.org", Matched, `{"kind":"type","ref":"e7","text":"bob@example.org"}`},
		{"search for Blue kettles", Matched, `{"kind":"type","ref":"e6","text":"Blue kettles","submit":true}`},
		{"search for salt and pepper", Matched, `{"kind":"type","ref":"e6","text":"salt and pepper","submit":true}`},
		{"search the site for Blue kettles", Matched, `{"kind":"type","ref":"e6","text":"Blue kettles","submit":true}`},
		{`search for "kettles and add one to the cart"`, Matched, `{"kind":"type","ref":"e6","text":"kettles and add one to the cart","submit":true}`},
		// a second request after the text is not part of it: the model (or the user) decides
		{"Search for kettles and add the cheapest one to the cart", NotSimple, ""},
		{"Search the contacts for grace and tell me who matches", NotSimple, ""},
		{"press enter", Matched, `{"kind":"press","key":"Enter"}`},
		{"hit escape", Matched, `{"kind":"press","key":"Escape"}`},
		{"press the tab key", Matched, `{"kind":"press","key":"Tab"}`},
		{"press ctrl+a", Matched, `{"kind":"press","key":"Control+a"}`},
		{"page down", Matched, `{"kind":"press","key":"PageDown"}`},
		{"scroll down", Matched, `{"kind":"scroll","direction":"down"}`},
		{"scroll up a bit", Matched, `{"kind":"scroll","direction":"up"}`},
		{"scroll", Matched, `{"kind":"scroll","direction":"down"}`},
		{"scroll to the bottom of the page", Matched, `{"kind":"scroll","direction":"bottom"}`},
		{"go back", Matched, `{"kind":"back"}`},
		{"Back!", Matched, `{"kind":"back"}`},
		{"go forward", Matched, `{"kind":"forward"}`},
		{"refresh the page", Matched, `{"kind":"reload"}`},
		{"open github.com", Matched, `{"kind":"navigate","url":"https://github.com"}`},
		{"go to https://Example.org/A?b=1", Matched, `{"kind":"navigate","url":"https://Example.org/A?b=1"}`},
		{"visit localhost:8080/admin", Matched, `{"kind":"navigate","url":"https://localhost:8080/admin"}`},
		{"open news.ycombinator.com in a new tab", Matched, `{"kind":"open","url":"https://news.ycombinator.com"}`},
		{"switch to the mail tab", Matched, `{"kind":"focus","tab":"t1"}`},
		{"switch to github", Matched, `{"kind":"focus","tab":"t2"}`},
		{"go to the calendar tab", Matched, `{"kind":"focus","tab":"t3"}`},
		{"close this tab", Matched, `{"kind":"close"}`},
		{"close the github tab", Matched, `{"kind":"close","tab":"t2"}`},
		{"what is on this page?", Matched, `null`},
		{"What's on the page", Matched, `null`},
		{"check remember me", Matched, `{"kind":"check","ref":"e9","checked":true}`},
		{"tick the newsletter box", Matched, `{"kind":"check","ref":"e10","checked":true}`},
		{"uncheck subscribe to newsletter", Matched, `{"kind":"check","ref":"e10","checked":false}`},
		{"select Blue in color", Matched, `{"kind":"select","ref":"e11","values":["Blue"]}`},
		{"choose red from the color dropdown", Matched, `{"kind":"select","ref":"e11","values":["Red"]}`},
		{"hover over home", Matched, `{"kind":"hover","ref":"e2"}`},
		{"click the second delete button", Matched, `{"kind":"click","ref":"e16"}`},
		{"click the first delete button", Matched, `{"kind":"click","ref":"e15"}`},
		{"click the last delete button", Matched, `{"kind":"click","ref":"e16"}`},
		{"click the 2nd delete", Matched, `{"kind":"click","ref":"e16"}`},
		{"click the second read more link", Matched, `{"kind":"click","ref":"e18"}`},
		{"type hi in the second text field", Matched, `{"kind":"type","ref":"e7","text":"hi"}`}, // after the searchbox
		{"click first item", Matched, `{"kind":"click","ref":"e22"}`},
		{"click the third delete button", NotFound, ``},

		// Ambiguous or unknown: must not be guessed.
		{"click delete", Ambiguous, ``},
		{"click add", Ambiguous, ``},
		{"type hello", Ambiguous, ``},
		{"switch to example", Ambiguous, ``},
		{"click sign", Ambiguous, ``},
		{"choose Green from the color dropdown", NotFound, ``},
		{"click save draft", NotFound, ``},
		{"click the purple button", NotFound, ``},
		{"check the terms box", NotFound, ``},
		{"switch to the slack tab", NotFound, ``},
		{"open the pod bay doors", NotFound, ``},
		{"click e99", NotFound, ``},
		{"book a flight to Paris and pay with my card", NotSimple, ``},
		{"find the cheapest kettle and add it to my cart", NotSimple, ``},
		{"how much is shipping?", NotSimple, ``},
		{"", NotSimple, ``},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := Match(tt.cmd, page, tabs)
			if r.Outcome != tt.outcome {
				t.Fatalf("outcome %s (%s), want %s; action %+v candidates %+v", r.Outcome, r.Reason, tt.outcome, r.Action, r.Candidates)
			}
			if tt.outcome != Matched {
				if r.Action != nil {
					t.Fatalf("guessed %+v", r.Action)
				}
				if r.Reason == "" {
					t.Error("no reason given")
				}
				if tt.outcome == Ambiguous && len(r.Candidates) < 2 {
					t.Errorf("ambiguous with candidates %+v", r.Candidates)
				}
				return
			}
			got, _ := json.Marshal(r.Action)
			if string(got) != tt.want {
				t.Fatalf("action %s, want %s", got, tt.want)
			}
		})
	}
	if len(tests) < 40 {
		t.Fatalf("only %d phrasings", len(tests))
	}
}

func TestDescribe(t *testing.T) {
	r := Match("what is on this page", page, nil)
	for _, want := range []string{"Welcome to Acme", "4 links", "text field", "Fast shipping"} {
		if !strings.Contains(r.Answer, want) {
			t.Errorf("answer %q lacks %q", r.Answer, want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("click sign in")
	f.Add("type \"x\" in e6")
	f.Add("select  in ")
	f.Add("select red in color")
	f.Add("open http://")
	empty := pagetest.Page("about:blank", "")
	f.Fuzz(func(t *testing.T, cmd string) {
		for _, snap := range []*snapshot.Snapshot{page, empty, nil} {
			r := Match(cmd, snap, tabs)
			switch r.Outcome {
			case Matched:
				if !r.OK() || r.Action != nil && r.Action.Validate() != nil {
					t.Fatalf("matched without a valid action: %+v", r)
				}
				var a struct{ Ref string }
				if r.Action != nil {
					b, _ := json.Marshal(r.Action)
					_ = json.Unmarshal(b, &a)
				}
				if a.Ref != "" && snap.Find(a.Ref) == nil {
					t.Fatalf("ref %q not in the snapshot", a.Ref)
				}
			case Ambiguous, NotFound, NotSimple:
				if r.Action != nil {
					t.Fatalf("%s with an action", r.Outcome)
				}
			default:
				t.Fatalf("outcome %q", r.Outcome)
			}
		}
	})
}
