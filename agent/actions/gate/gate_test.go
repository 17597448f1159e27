package gate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// disguise turns a control's label into an element that shows or names it in another way.
type disguise struct {
	name string
	make func(label string) *Element
}

var disguises = []disguise{
	{"plain", func(l string) *Element { return &Element{Role: "button", Tag: "button", Name: l, Text: l} }},
	{"aria-label says Apply", func(l string) *Element {
		return &Element{Role: "button", Tag: "button", Name: "Apply", Text: l, Labels: []string{"Apply"}}
	}},
	{"aria-labelledby points at Refresh", func(l string) *Element {
		return &Element{Role: "button", Tag: "button", Name: "Refresh", Text: l, Labels: []string{"Refresh"}}
	}},
	{"icon with title only", func(l string) *Element {
		return &Element{Role: "button", Tag: "button", Name: "", Text: "", Labels: []string{l}}
	}},
	{"Cyrillic look-alikes", func(l string) *Element {
		c := strings.NewReplacer("e", "е", "o", "о", "a", "а", "c", "с", "p", "р").Replace(l)
		return &Element{Role: "button", Tag: "button", Name: c, Text: c}
	}},
	{"zero-width space", func(l string) *Element {
		r := []rune(l)
		z := string(r[:1]) + "\u200b" + string(r[1:])
		return &Element{Role: "button", Tag: "button", Name: z, Text: z}
	}},
	{"soft hyphen", func(l string) *Element {
		r := []rune(l)
		z := string(r[:2]) + "\u00ad" + string(r[2:])
		return &Element{Role: "button", Tag: "button", Name: z, Text: z}
	}},
	{"full-width", func(l string) *Element {
		var b strings.Builder
		for _, r := range l {
			if r >= '!' && r <= '~' {
				r += 0xFEE0
			}
			b.WriteRune(r)
		}
		return &Element{Role: "button", Tag: "button", Name: b.String(), Text: b.String()}
	}},
	{"clickable div", func(l string) *Element { return &Element{Role: "clickable", Tag: "div", Name: l, Text: l} }},
	{"submit input", func(l string) *Element {
		return &Element{Role: "button", Tag: "input", Type: "submit", Name: l, Text: l}
	}},
}

// risky are controls whose activation must ask whatever disguise they wear.
var risky = []string{
	"Delete account", "Buy now", "Pay now", "Send", "Publish", "Cancel subscription", "Empty trash", "Ship it",
	"$500", "Transfer", "Unsubscribe", "Place order", "Post", "Wire money", "Jetzt kaufen", "Supprimer", "Eliminar",
	"Kündigen", "Résilier", "Darse de baja", "購入", "删除", "Authorize", "Deploy",
}

// ways are the actions that activate a control.
var ways = []Action{{Kind: "click"}, {Kind: "press", Key: "Enter"}, {Kind: "press", Key: "Space"}}

func TestDisguiseMatrix(t *testing.T) {
	g := New(Options{UserHome: t.TempDir()})
	for _, label := range risky {
		for _, dz := range disguises {
			for _, way := range ways {
				el := dz.make(label)
				el.Ref = "e5"
				p := Proposal{Action: way, Element: el, URL: "https://shop.example/x"}
				d := g.Check(p, Request{Who: Agent, Goal: "look around the page"})
				if d.Verdict != Confirm || d.Level != Grave {
					t.Errorf("%s %q as %s: %v (%s, %s), want a grave confirm", way.Kind+" "+way.Key, label, dz.name, d.Verdict, d.Level, d.Reason)
				}
				// the user's words naming it approve ordinary risk only
				grants := NewGrants()
				grants.Name(way.Kind, "e5", Ordinary)
				if d := g.Check(p, Request{Who: Agent, Goal: "click " + label, Grants: grants}); d.Verdict != Confirm {
					t.Errorf("%s %q as %s named by the user: %v, want confirm (grave)", way.Kind, label, dz.name, d.Verdict)
				}
				// a caller's own action is recorded, not stopped
				if d := g.Check(p, Request{Who: Caller}); d.Verdict != Allow {
					t.Errorf("%s %q as %s by the caller: %v, want allow", way.Kind, label, dz.name, d.Verdict)
				}
			}
		}
	}
}

func TestHarmlessControls(t *testing.T) {
	g := New(Options{UserHome: t.TempDir()})
	submit := &Element{Ref: "e9", Role: "button", Tag: "button", Type: "submit", Name: "Submit", Text: "Submit", Scope: "form",
		ScopeText: "Contact us Name Email Message", Submits: true}
	search := &Element{Ref: "e2", Role: "searchbox", Tag: "input", Type: "search", Name: "Search products", Scope: "form",
		Buttons: []Control{{Text: "Search"}}, Submits: true}
	cases := []struct {
		name string
		p    Proposal
		goal string
		want Verdict
	}{
		{"search button", Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e1", Role: "button", Tag: "button", Name: "Search", Text: "Search"}}, "find kettles", Allow},
		{"enter in search box", Proposal{Action: Action{Kind: "type", Text: "kettle", Submit: true}, Element: search}, "find kettles", Allow},
		{"next page link", Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e3", Role: "link", Tag: "a", Name: "Next page", Text: "Next page"}}, "show more results", Allow},
		{"enter on next page", Proposal{Action: Action{Kind: "press", Key: "Enter"}, Element: &Element{Ref: "e3", Role: "link", Tag: "a", Name: "Next page", Text: "Next page"}}, "", Allow},
		{"product link with a price", Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e4", Role: "link", Tag: "a", Name: "Steel kettle 25 EUR", Text: "Steel kettle 25 EUR"}}, "open the steel kettle", Allow},
		{"add to cart", Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e6", Role: "button", Tag: "button", Name: "Add Blue kettle to cart", Text: "Add Blue kettle to cart"}}, "add the blue kettle to the cart", Allow},
		{"close a dialog", Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e7", Role: "button", Tag: "button", Name: "Cancel", Text: "Cancel", Scope: "dialog", ScopeText: "Rename file"}}, "", Allow},
		{"submit the user asked for", Proposal{Action: Action{Kind: "click"}, Element: submit}, "fill in the contact form and submit it", Allow},
		{"submit not asked for", Proposal{Action: Action{Kind: "click"}, Element: submit}, "read the contact page", Confirm},
		{"newsletter box in a form", Proposal{Action: Action{Kind: "check", Checked: true}, Element: &Element{Ref: "e8", Role: "checkbox", Tag: "input", Type: "checkbox", Name: "Send me the monthly letter", Submits: true}}, "join", Allow},
		{"select a country", Proposal{Action: Action{Kind: "select", Values: []string{"Japan"}}, Element: &Element{Ref: "e10", Role: "combobox", Tag: "select", Name: "Country", Submits: true}}, "", Allow},
		{"typing an email", Proposal{Action: Action{Kind: "type", Text: "a@b.c"}, Element: &Element{Ref: "e11", Role: "textbox", Tag: "input", Name: "Email"}}, "", Allow},
		{"dismissing a confirm", Proposal{Action: Action{Kind: "dialog"}, DialogType: "confirm", DialogMessage: "Delete everything?"}, "", Allow},
		{"Continue on a payment form", Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e12", Role: "button", Tag: "button", Name: "Continue", Text: "Continue", Scope: "form", ScopeText: "Pay Acme Ltd Amount $500"}}, "continue", Confirm},
		{"Enter in a field of a delete form", Proposal{Action: Action{Kind: "press", Key: "Enter"}, Element: &Element{Ref: "e13", Role: "textbox", Tag: "input", Name: "Type DELETE to confirm", Scope: "form", Buttons: []Control{{Text: "Delete account"}}, Submits: true}}, "", Confirm},
		{"change-handler purchase select", Proposal{Action: Action{Kind: "select", Values: []string{"Pro – $99/month"}}, Element: &Element{Ref: "e14", Role: "combobox", Tag: "select", Name: "Plan"}}, "", Confirm},
		{"change-handler purchase checkbox", Proposal{Action: Action{Kind: "check", Checked: true}, Element: &Element{Ref: "e15", Role: "checkbox", Tag: "input", Type: "checkbox", Name: "Buy the extended warranty"}}, "", Confirm},
		{"password not given", Proposal{Action: Action{Kind: "type", Text: "hunter22"}, Element: &Element{Ref: "e16", Role: "textbox", Tag: "input", Type: "password", Password: true, Name: "Password"}}, "log in", Confirm},
		{"password given", Proposal{Action: Action{Kind: "type", Text: "hunter22"}, Element: &Element{Ref: "e16", Role: "textbox", Tag: "input", Type: "password", Password: true, Name: "Password"}}, "log in with hunter22", Allow},
		{"short password quoted", Proposal{Action: Action{Kind: "type", Text: "xq"}, Element: &Element{Ref: "e16", Role: "textbox", Tag: "input", Type: "password", Password: true, Name: "Password"}}, `enter the password "xq" and press login`, Allow},
		{"short password unquoted", Proposal{Action: Action{Kind: "type", Text: "xq"}, Element: &Element{Ref: "e16", Role: "textbox", Tag: "input", Type: "password", Password: true, Name: "Password"}}, "enter the password xq and press login", Confirm},
		{"password quoted inside another", Proposal{Action: Action{Kind: "type", Text: "xq"}, Element: &Element{Ref: "e16", Role: "textbox", Tag: "input", Type: "password", Password: true, Name: "Password"}}, `enter the password "axq" and press login`, Confirm},
		{"accepting are-you-sure", Proposal{Action: Action{Kind: "dialog", Accept: true}, DialogType: "confirm", DialogMessage: "Are you sure? This cannot be undone."}, "", Confirm},
		{"drop on the trash", Proposal{Action: Action{Kind: "drag"}, Element: &Element{Ref: "e17", Name: "report.pdf"}, Target: &Element{Ref: "e18", Role: "button", Name: "Delete", Text: "Delete"}}, "", Confirm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := g.Check(c.p, Request{Who: Agent, Goal: c.goal})
			if d.Verdict != c.want {
				t.Errorf("got %v (%s %s: %s), want %v", d.Verdict, d.Level, d.Reason, d.Detail, c.want)
			}
		})
	}
}

func TestApprovalIsOneDecisionUsedOnce(t *testing.T) {
	g := New(Options{UserHome: t.TempDir()})
	del := Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e5", Role: "button", Name: "Delete account", Text: "Delete account"}}
	other := Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e6", Role: "button", Name: "Delete photos", Text: "Delete photos"}}
	grants := NewGrants()
	d := g.Check(del, Request{Grants: grants})
	if d.Verdict != Confirm {
		t.Fatalf("first check: %v", d.Verdict)
	}
	grants.Approve(d)
	if d := g.Check(other, Request{Grants: grants}); d.Verdict != Confirm {
		t.Errorf("an approval of one element let another run: %v", d.Verdict)
	}
	// the page swaps what the same ref shows: a new decision
	swapped := del
	swapped.Element = &Element{Ref: "e5", Role: "button", Name: "Delete account", Text: "Delete everything"}
	if d := g.Check(swapped, Request{Grants: grants}); d.Verdict != Confirm {
		t.Errorf("an approval survived the element changing: %v", d.Verdict)
	}
	if d := g.Check(del, Request{Grants: grants}); d.Verdict != Allow || !d.Approved {
		t.Errorf("approved step: %v approved=%v", d.Verdict, d.Approved)
	}
	if d := g.Check(del, Request{Grants: grants}); d.Verdict != Confirm {
		t.Errorf("an approval was used twice: %v", d.Verdict)
	}
	// the user's command naming "Submit" approves that element, once
	sub := Proposal{Action: Action{Kind: "click"}, Element: &Element{Ref: "e7", Role: "button", Name: "Submit", Text: "Submit"}}
	grants.Name("click", "e7", Ordinary)
	if d := g.Check(sub, Request{Grants: grants}); d.Verdict != Allow {
		t.Errorf("named submit: %v", d.Verdict)
	}
	if d := g.Check(sub, Request{Grants: grants}); d.Verdict != Confirm {
		t.Errorf("named approval used twice: %v", d.Verdict)
	}
}

func TestUploads(t *testing.T) {
	home := t.TempDir()
	trHome := filepath.Join(t.TempDir(), "tabrelay")
	uploads := filepath.Join(home, "Uploads")
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config", "x"), trHome, uploads, filepath.Join(home, "Documents")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) string {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	key := write(filepath.Join(home, ".ssh", "id_rsa"))
	write(filepath.Join(home, ".ssh", "id_rsa.pub"))
	token := write(filepath.Join(trHome, "token"))
	cv := write(filepath.Join(home, "Documents", "cv.pdf"))
	photo := write(filepath.Join(uploads, "photo.png"))
	link := filepath.Join(home, "Documents", "notes.txt")
	if err := os.Symlink(key, link); err != nil {
		t.Fatal(err)
	}
	g := New(Options{Home: trHome, UserHome: home, UploadDirs: []string{uploads}})
	cases := []struct {
		name, file, goal string
		want             Verdict
	}{
		{"private key, public key named", key, "Add my SSH public key id_rsa.pub to my account", Block},
		{"private key named in full", key, "upload " + key, Block},
		{"tabrelay's secret", token, "log in with the token from my email", Block},
		{"a link to the key", link, "upload " + link, Block},
		{"/proc", "/proc/self/environ", "upload /proc/self/environ", Block},
		{"dot path through ..", filepath.Join(home, "Documents", "..", ".ssh", "id_rsa"), "", Block},
		{"named in full", cv, "attach " + cv + " to the application", Allow},
		{"named with ~", cv, "attach ~/Documents/cv.pdf please", Allow},
		{"only the base name", cv, "attach my cv.pdf", Confirm},
		{"under the upload folder", photo, "post a photo", Allow},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Proposal{Action: Action{Kind: "upload", Files: []string{c.file}}, Element: &Element{Ref: "e1", Role: "button", Tag: "input", Type: "file"}}
			d := g.Check(p, Request{Goal: c.goal, Grants: NewGrants()})
			if d.Verdict != c.want {
				t.Errorf("got %v (%s), want %v", d.Verdict, d.Detail, c.want)
			}
		})
	}
	// a picked file goes; a blocked one stays blocked whatever is approved
	p := Proposal{Action: Action{Kind: "upload", Files: []string{cv}}, Element: &Element{Ref: "e1"}}
	if d := g.Check(p, Request{Picked: []string{cv}}); d.Verdict != Allow {
		t.Errorf("picked file: %v", d.Verdict)
	}
	grants := NewGrants()
	bp := Proposal{Action: Action{Kind: "upload", Files: []string{key}}, Element: &Element{Ref: "e1"}}
	grants.Approve(g.Check(bp, Request{}))
	grants.Name("upload", "e1", Grave)
	if d := g.Check(bp, Request{Grants: grants}); d.Verdict != Block {
		t.Errorf("approved private key: %v", d.Verdict)
	}
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"Ｂｕｙ  Now":           "buy now",
		"Dеlеtе":             "delete",
		"Pub\u00adlish":      "publish",
		"De\u200blete\u2060": "delete",
		"ΡΑΥ":                "pay",
		"Ship\u200d it":      "ship it",
	} {
		if got := Fold(in); got != want {
			t.Errorf("Fold(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzFold(f *testing.F) {
	for _, s := range []string{"Buy", "Ｂｕｙ", "Dеlete", "\u200b", ""} {
		f.Add(s)
	}
	g := New(Options{})
	f.Fuzz(func(t *testing.T, s string) {
		out := Fold(s)
		if Fold(out) != out {
			t.Errorf("Fold is not idempotent on %q: %q then %q", s, out, Fold(out))
		}
		g.Check(Proposal{Action: Action{Kind: "click"}, Element: &Element{Role: "button", Name: s, Text: s, ScopeText: s}}, Request{Goal: s})
	})
}

// TestUnmarkedContextIsJudged: a context no door marked is judged as an agent's with no goal
// and no approvals, so a door that forgets to say who asks fails safe; only a context marked
// Caller is recorded and not judged.
func TestUnmarkedContextIsJudged(t *testing.T) {
	del := Proposal{Action: Action{Kind: "click"}, Element: &Element{Role: "button", Tag: "button", Name: "Delete account", Text: "Delete account"}}
	g := New(Options{})
	for _, c := range []struct {
		name string
		ctx  context.Context
		want Verdict
	}{
		{"unmarked", context.Background(), Confirm},
		{"agent", With(context.Background(), Request{Who: Agent}), Confirm},
		{"caller", With(context.Background(), Request{Who: Caller}), Allow},
	} {
		if got := g.Check(del, From(c.ctx)).Verdict; got != c.want {
			t.Errorf("%s context: clicking Delete account is %v, want %v", c.name, got, c.want)
		}
	}
}
