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
	if err := os.MkdirAll(filepath.Join(home, "Private"), 0o700); err != nil {
		t.Fatal(err)
	}
	other := write(filepath.Join(home, "Private", "cv.pdf"))
	inHome := write(filepath.Join(home, "resume.pdf"))
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
		{"its name and its folder's", cv, "attach cv.pdf in my Documents folder", Allow},
		{"the same name in another folder", other, "attach cv.pdf in my Documents folder", Confirm},
		{"a name in the home folder", inHome, "send them resume.pdf", Allow},
		{"a name that is only part of a word", inHome, "send them myresume.pdf.bak", Confirm},
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

// TestEffects judges actions by what they do: keys and typed control characters, context
// (headings, form actions, account takeover forms, sensitive pages), icons and data
// attributes, other languages, choices and drops. Each signal has a risky case that must ask
// and, where one is likely, a harmless look-alike that must not.
func TestEffects(t *testing.T) {
	g := New(Options{UserHome: t.TempDir()})
	btn := func(label string) *Element {
		return &Element{Ref: "e1", Role: "button", Tag: "button", Name: label, Text: label}
	}
	in := func(el *Element, f func(*Element)) *Element { f(el); return el }
	chat := &Element{Ref: "e2", Role: "textbox", Tag: "textarea", Name: "Write a message", Multiline: true}
	field := &Element{Ref: "e3", Role: "textbox", Tag: "input", Type: "text", Name: "Nickname", Scope: "form", Submits: true, Buttons: []Control{{Text: "Save"}}}
	row := &Element{Ref: "e4", Role: "row", Tag: "tr", Name: "Quarterly report", Text: "Quarterly report"}
	key := func(k string, el *Element, pg *Page, mods ...string) Proposal {
		return Proposal{Action: Action{Kind: "press", Key: k, Modifiers: mods}, Element: el, Page: pg}
	}
	click := func(el *Element) Proposal { return Proposal{Action: Action{Kind: "click"}, Element: el} }
	typed := func(el *Element, text string, submit bool) Proposal {
		return Proposal{Action: Action{Kind: "type", Text: text, Submit: submit}, Element: el}
	}
	quiet := &Page{Title: "Inbox", Text: "Inbox Quarterly report Lunch on Friday"}
	cases := []struct {
		family, name string
		p            Proposal
		goal         string
		want         Verdict
	}{
		// 1 keys and typing
		{"keys", "site shortcut # with a row selected", key("#", nil, &Page{Selected: []string{"Quarterly report"}}), "summarise my inbox", Confirm},
		{"keys", "site shortcut the person named", key("j", nil, quiet), "press j to go to the next mail", Allow},
		{"keys", "Delete on a row", key("Delete", row, quiet), "", Confirm},
		{"keys", "Backspace in a field", key("Backspace", field, nil), "", Allow},
		{"keys", "Enter with nothing focused and a delete box open", key("Enter", nil, &Page{Dialog: "Press Enter to delete your account"}), "", Confirm},
		{"keys", "Enter with nothing focused and any box open", key("Enter", nil, &Page{Dialog: "Press Enter to continue"}), "", Confirm},
		{"keys", "Enter with nothing focused, quiet page", key("Enter", nil, quiet), "", Allow},
		{"keys", "Space with nothing focused on a delete page", key("Space", nil, &Page{Text: "Press Space to delete all files"}), "", Confirm},
		{"keys", "Enter on a harmless button while a box says Enter deletes", key("Enter", btn("Refresh"), &Page{Dialog: "Press Enter to delete your account"}), "", Confirm},
		{"keys", "type with submit in a search box while a box says Enter deletes", Proposal{Action: Action{Kind: "type", Text: "kettle", Submit: true},
			Element: &Element{Ref: "e6", Role: "searchbox", Tag: "input", Type: "search", Name: "Search"}, Page: &Page{Dialog: "Press Enter to delete your account"}}, "", Confirm},
		{"keys", "Enter on a harmless button beside a chat widget", key("Enter", btn("Refresh"), &Page{Dialog: "Chat with us! Send us a message"}), "", Allow},
		{"keys", "a letter typed as a key in an editable region", key("k", &Element{Ref: "e17", Tag: "div", Multiline: true}, nil), "", Allow},
		{"keys", "Tab, Escape and arrows", key("Tab", nil, quiet), "", Allow},
		{"keys", "ArrowDown in a field", key("ArrowDown", field, nil), "", Allow},
		{"keys", "Control+Enter in a chat box", key("Enter", chat, nil, "Control"), "", Confirm},
		{"keys", "Control+C anywhere", key("c", row, nil, "Control"), "", Allow},
		{"keys", "Control+S outside a field", key("s", nil, quiet, "Control"), "", Confirm},
		{"keys", "type with submit into a chat box with no form", typed(chat, "hello", true), "say hello", Confirm},
		{"keys", "a line break typed into a chat box", typed(chat, "hello\n", false), "", Confirm},
		{"keys", "a tab walks to another element", typed(field, "x\t\n", false), "", Confirm},
		{"keys", "Enter in a text area with no form, whatever its name", typed(&Element{Ref: "e15", Role: "textbox", Tag: "div", Name: "Type here", Multiline: true}, "hi", true), "", Confirm},
		{"keys", "a single-line field with no form and no name", typed(&Element{Ref: "e16", Role: "textbox", Tag: "input", Name: "Filter"}, "kettle", true), "", Allow},
		{"keys", "a trailing tab", typed(field, "Ada\t", false), "", Allow},
		{"keys", "a new line in a form's text area", typed(&Element{Ref: "e5", Role: "textbox", Tag: "textarea", Name: "Notes", Multiline: true, Scope: "form", Submits: true, Buttons: []Control{{Text: "Send"}}}, "one\ntwo", false), "", Allow},
		{"keys", "search box with no form", typed(&Element{Ref: "e6", Role: "searchbox", Tag: "input", Type: "search", Name: "Search"}, "kettle", true), "", Allow},
		// 2 languages and compounds
		{"languages", "Italian", click(btn("Elimina account")), "", Confirm},
		{"languages", "Portuguese", click(btn("Excluir conta")), "", Confirm},
		{"languages", "Dutch", click(btn("Account verwijderen")), "", Confirm},
		{"languages", "Korean", click(btn("계정 삭제")), "", Confirm},
		{"languages", "Russian", click(btn("Удалить аккаунт")), "", Confirm},
		{"languages", "Ukrainian", click(btn("Видалити акаунт")), "", Confirm},
		{"languages", "Polish", click(btn("Usuń konto")), "", Confirm},
		{"languages", "Traditional Chinese", click(btn("刪除帳戶")), "", Confirm},
		{"languages", "Simplified Chinese", click(btn("立即购买")), "", Confirm},
		{"languages", "Japanese buy now", click(btn("今すぐ購入")), "", Confirm},
		{"languages", "German book now", click(btn("Jetzt buchen")), "", Confirm},
		{"languages", "French book", click(btn("Réserver maintenant")), "", Confirm},
		{"languages", "German compound", click(btn("Kontolöschen")), "", Confirm},
		{"languages", "Dutch compound", click(btn("Accountverwijderen")), "", Confirm},
		{"languages", "Turkish", click(btn("Hesabı sil")), "", Confirm},
		{"languages", "Arabic", click(btn("حذف الحساب")), "", Confirm},
		{"languages", "Hindi", click(btn("खाता हटाएं")), "", Confirm},
		{"languages", "Vietnamese", click(btn("Xóa tài khoản")), "", Confirm},
		{"languages", "Indonesian", click(btn("Hapus akun")), "", Confirm},
		{"languages", "Spanish", click(btn("Reservar ahora")), "", Confirm},
		{"languages", "German shopping on is harmless", click(btn("Weiter einkaufen")), "", Allow},
		{"languages", "an address book link is harmless", click(&Element{Ref: "e7", Role: "link", Tag: "a", Name: "Address book", Text: "Address book"}), "", Allow},
		// 3 icons and data attributes
		{"icons", "pseudo-element word", click(in(btn(""), func(e *Element) { e.Icons = []string{"Delete"} })), "", Confirm},
		{"icons", "trash background image", click(in(btn(""), func(e *Element) { e.Icons = []string{"trash-can.svg"} })), "", Confirm},
		{"icons", "icon font class", click(in(btn(""), func(e *Element) { e.Icons = []string{"fa-trash-alt"} })), "", Confirm},
		{"icons", "data-action", click(in(btn(""), func(e *Element) { e.Data = []string{"action delete-file"} })), "", Confirm},
		{"icons", "aria-hidden emoji", click(btn("🗑")), "", Confirm},
		{"icons", "credit card emoji", click(btn("💳")), "", Confirm},
		{"icons", "a settings cog is harmless", click(in(btn(""), func(e *Element) { e.Icons = []string{"fa-cog"} })), "", Allow},
		{"icons", "a test id saying submit is harmless", click(in(btn("Create account"), func(e *Element) { e.Data = []string{"testid in-submit"} })), "", Allow},
		// 4 context
		{"context", "Sure in a dialog headed delete", click(in(btn("Sure"), func(e *Element) {
			e.Scope, e.Headings = "dialog", []string{"Delete this repository permanently?"}
		})), "", Confirm},
		{"context", "Do it in a dialog headed delete", click(in(btn("Do it"), func(e *Element) {
			e.Scope, e.Headings = "dialog", []string{"Delete this repository permanently?"}
		})), "", Confirm},
		{"context", "Sure in a dialog whose words say permanently delete", click(in(btn("Sure"), func(e *Element) {
			e.Scope, e.ScopeText = "dialog", "This will permanently delete the repository and its issues."
		})), "", Confirm},
		{"context", "Save in a rename dialog", click(in(btn("Save"), func(e *Element) { e.Scope, e.ScopeText = "dialog", "Rename file New name" })), "", Allow},
		{"context", "Go whose button value says delete", click(in(btn("Go"), func(e *Element) { e.Scope, e.Data = "form", []string{"action delete_account"} })), "", Confirm},
		{"context", "OK whose inline handler deletes", click(in(btn("OK"), func(e *Element) { e.Data = []string{"onclick deleteAccount()"} })), "", Confirm},
		{"context", "Cancel in the same dialog", click(in(btn("Cancel"), func(e *Element) {
			e.Scope, e.Headings = "dialog", []string{"Delete this repository permanently?"}
		})), "", Allow},
		{"context", "Yes, go ahead under a danger zone heading", click(in(btn("Yes, go ahead"), func(e *Element) { e.Headings = []string{"Danger zone: delete account"} })), "", Confirm},
		{"context", "Go in a form that sends to /account/delete", click(in(btn("Go"), func(e *Element) { e.Scope, e.FormAction = "form", "/account/delete" })), "", Confirm},
		{"context", "OK carrying transfer-ownership", click(in(btn("OK"), func(e *Element) { e.Data = []string{"action transfer-ownership"} })), "", Confirm},
		{"context", "an expander on a security page opens only", Proposal{Action: Action{Kind: "click"}, Element: in(btn("Show details"), func(e *Element) { e.Opens = true }), Page: &Page{Title: "Security settings"}}, "", Allow},
		{"context", "a go-on that claims to open a menu, in a delete dialog", click(in(btn("Sure"), func(e *Element) {
			e.Opens, e.Scope, e.Headings = true, "dialog", []string{"Delete this repository permanently?"}
		})), "", Confirm},
		{"context", "no readable name in a form", click(in(btn(""), func(e *Element) { e.Scope = "form" })), "", Confirm},
		{"context", "a commit on a billing page", Proposal{Action: Action{Kind: "click"}, Element: btn("Save"), URL: "https://shop.example/settings/billing"}, "", Confirm},
		{"context", "a commit on a billing page the person named", Proposal{Action: Action{Kind: "click"}, Element: btn("Save"), URL: "https://shop.example/settings/billing"}, "save the billing form", Allow},
		{"context", "Continue on a billing page's payment form, the person's words name it", Proposal{Action: Action{Kind: "click"}, Element: in(btn("Continue"), func(e *Element) {
			e.Scope, e.ScopeText, e.Submits = "form", "Pay $500 now to Acme Ltd.", true
		}), Page: &Page{Title: "Acme billing"}}, "continue with the payment", Confirm},
		{"context", "a commit on a page headed Security", Proposal{Action: Action{Kind: "click"}, Element: btn("Update"), Page: &Page{Title: "Security settings"}}, "", Confirm},
		{"context", "Save on a profile page", Proposal{Action: Action{Kind: "click"}, Element: btn("Save"), URL: "https://example.com/settings/profile", Page: &Page{Title: "Profile"}}, "", Allow},
		{"context", "a switch on an account settings page", Proposal{Action: Action{Kind: "check", Checked: true}, Element: &Element{Ref: "e8", Role: "switch", Name: "Show my activity"}, Page: &Page{Title: "Account settings"}}, "", Confirm},
		{"context", "dark mode switch elsewhere", Proposal{Action: Action{Kind: "check", Checked: true}, Element: &Element{Ref: "e8", Role: "switch", Name: "Dark mode"}, Page: &Page{Title: "Every input"}}, "", Allow},
		// 5 account takeover with plain labels
		{"takeover", "recovery e-mail then Save", click(in(btn("Save"), func(e *Element) {
			e.Scope, e.ScopeText, e.Submits = "form", "Recovery email attacker@evil.example", true
		})), "", Confirm},
		{"takeover", "Add SSH key", click(btn("Add SSH key")), "", Confirm},
		{"takeover", "forwarding then Save changes", click(in(btn("Save changes"), func(e *Element) {
			e.Scope, e.ScopeText = "form", "Forwarding Forward a copy of incoming mail to"
		})), "", Confirm},
		{"takeover", "invite as Owner", Proposal{Action: Action{Kind: "select", Values: []string{"Owner"}}, Element: &Element{Ref: "e9", Role: "combobox", Tag: "select", Name: "Role", Scope: "form", Submits: true}}, "", Confirm},
		{"takeover", "an Admin radio", Proposal{Action: Action{Kind: "check", Checked: true}, Element: &Element{Ref: "e13", Role: "radio", Tag: "input", Type: "radio", Name: "Admin", Scope: "form", Submits: true}}, "", Confirm},
		{"takeover", "two-factor set to Off in a select", Proposal{Action: Action{Kind: "select", Values: []string{"Off"}}, Element: &Element{Ref: "e14", Role: "combobox", Tag: "select", Name: "Status", Headings: []string{"Two-step verification"}}}, "", Confirm},
		{"takeover", "a Member role is not a takeover", Proposal{Action: Action{Kind: "select", Values: []string{"Member"}}, Element: &Element{Ref: "e9", Role: "combobox", Tag: "select", Name: "Role", Scope: "form", Submits: true, Headings: []string{"Invite people"}}}, "", Allow},
		{"takeover", "two-factor unchecked", Proposal{Action: Action{Kind: "check", Checked: false}, Element: &Element{Ref: "e10", Role: "checkbox", Tag: "input", Type: "checkbox", Name: "Two-factor authentication"}}, "", Confirm},
		{"takeover", "two-factor switched off by a click", click(&Element{Ref: "e10", Role: "switch", Tag: "button", Name: "Enabled", Headings: []string{"Two-factor authentication"}}), "", Confirm},
		{"takeover", "OAuth consent Allow", Proposal{Action: Action{Kind: "click"}, Element: in(btn("Allow"), func(e *Element) { e.ScopeText = "Gadget wants to access your account" }), URL: "https://id.example/oauth/authorize?client_id=x"}, "", Confirm},
		{"takeover", "Allow cookies on a shop", Proposal{Action: Action{Kind: "click"}, Element: in(btn("Allow all"), func(e *Element) { e.Scope, e.ScopeText = "dialog", "We use cookies to improve the shop" }), URL: "https://shop.example/"}, "", Allow},
		// 7 drags
		{"drags", "onto an unlabelled zone", Proposal{Action: Action{Kind: "drag"}, Element: &Element{Ref: "e11", Name: "report.pdf"}, Target: &Element{Ref: "e12", Tag: "div"}}, "", Confirm},
		{"drags", "onto a trash image", Proposal{Action: Action{Kind: "drag"}, Element: &Element{Ref: "e11", Name: "report.pdf"}, Target: &Element{Ref: "e12", Tag: "div", Icons: []string{"trash.png"}}}, "", Confirm},
		{"drags", "onto a Done column", Proposal{Action: Action{Kind: "drag"}, Element: &Element{Ref: "e11", Name: "Card"}, Target: &Element{Ref: "e12", Role: "list", Name: "Done", Text: "Done"}}, "", Allow},
	}
	for _, c := range cases {
		t.Run(c.family+"/"+c.name, func(t *testing.T) {
			d := g.Check(c.p, Request{Who: Agent, Goal: c.goal})
			if d.Verdict != c.want {
				t.Errorf("got %v (%s %s: %s), want %v", d.Verdict, d.Level, d.Reason, d.Detail, c.want)
			}
		})
	}
}

// FuzzEffects feeds arbitrary text to everything the gate reads of what an action does: keys,
// typed text, icons, data attributes, headings, form actions, page words. It must never
// panic, and a Delete key outside a text field always asks.
func FuzzEffects(f *testing.F) {
	for _, s := range []string{"#", "fa-trash", "action delete-file", "/account/delete", "x\t\n", "🗑", "Kontolöschen", "\x00", ""} {
		f.Add(s)
	}
	g := New(Options{})
	f.Fuzz(func(t *testing.T, s string) {
		el := &Element{Ref: "e1", Role: "button", Tag: "button", Name: s, Icons: []string{s}, Data: []string{s}, Headings: []string{s}, FormAction: s, Scope: "form", ScopeText: s}
		pg := &Page{Title: s, Headings: []string{s}, Dialog: s, Selected: []string{s}, Text: s}
		for _, p := range []Proposal{
			{Action: Action{Kind: "press", Key: s}, Page: pg},
			{Action: Action{Kind: "press", Key: s, Modifiers: []string{"Control"}}, Element: el, Page: pg},
			{Action: Action{Kind: "type", Text: s, Submit: true}, Element: &Element{Ref: "e2", Role: "textbox", Tag: "textarea", Name: s, Multiline: true}, Page: pg, URL: s},
			{Action: Action{Kind: "click"}, Element: el, Page: pg, URL: s},
			{Action: Action{Kind: "drag"}, Element: el, Target: el, Page: pg},
			{Action: Action{Kind: "select", Values: []string{s}}, Element: el, Page: pg},
		} {
			g.Check(p, Request{Goal: s})
		}
		if d := g.Check(Proposal{Action: Action{Kind: "press", Key: "Delete"}, Element: el, Page: pg}, Request{Goal: s}); d.Verdict == Allow {
			t.Errorf("Delete on a button was allowed: %+v", d)
		}
	})
}

// TestIconStepNamesInferredName: an icon-only control is asked about with the name its icon
// gives it, marked as inferred, as the model's outline shows it; and the icon makes it risky.
func TestIconStepNamesInferredName(t *testing.T) {
	g := New(Options{UserHome: t.TempDir()})
	el := &Element{Ref: "e9", Role: "button", Tag: "button", Icons: []string{"fa-trash-can"}, Data: []string{"id del-3"}, Inferred: "trash can"}
	d := g.Check(Proposal{Action: Action{Kind: "click"}, Element: el, URL: "https://mail.example/inbox"}, Request{})
	if d.Verdict != Confirm {
		t.Fatalf("a click on a trash icon: %v (%s), want confirm", d.Verdict, d.Reason)
	}
	if want := `click button "trash can" [icon]`; !strings.HasPrefix(d.Step, want) {
		t.Errorf("step = %q, want it to start %q", d.Step, want)
	}
}
