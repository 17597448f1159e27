package gate

import (
	"strings"
	"testing"
)

// inForm is a button in a form that sends to action with fields.
func inForm(label, method, action string, fields ...Field) *Element {
	return &Element{Ref: "e1", Role: "button", Tag: "button", Type: "submit", Name: label, Text: label,
		Scope: "form", Submits: true, FormAction: action, Form: &Form{Method: method, Fields: fields}}
}

func TestFormCommit(t *testing.T) {
	csrf := Field{Name: "authenticity_token", Kind: "hidden", Value: "q8ZtV1pD3deleteXw0R5mYk2LhN7sJc9bFgA4uTeE6oI="}
	for _, c := range []struct {
		name string
		el   *Element
		ask  bool
	}{
		{"bulk action Move to Trash then Apply", inForm("Apply", "get", "/wp-admin/edit.php",
			Field{Name: "action", Kind: "select", Chosen: []string{"Move to Trash"}, Value: "trash"},
			Field{Name: "post[]", Kind: "checkbox", Label: "Hello world", Checked: true, Value: "1"}), true},
		{"bulk action Make public then Go", inForm("Go", "post", "/repos/bulk",
			Field{Name: "bulk", Kind: "select", Chosen: []string{"Make public"}, Value: "vis"}), true},
		{"ticked also delete all my data then Save changes", inForm("Save changes", "post", "/settings",
			Field{Name: "nick", Kind: "text", Label: "Nickname", Value: "bo"},
			Field{Name: "purge", Kind: "checkbox", Label: "Also delete all my data", Checked: true, Value: "on"}), true},
		{"hidden op=delete_account sent by Save", inForm("Save", "post", "/profile", csrf,
			Field{Name: "op", Kind: "hidden", Value: "delete_account"}), true},
		{"visibility Public saved", inForm("Save", "post", "/doc/7/settings",
			Field{Name: "visibility", Kind: "select", Label: "Who can see this", Chosen: []string{"Public"}, Value: "public"}), true},
		{"Anyone with the link saved", inForm("Save", "post", "/doc/7/share",
			Field{Name: "access", Kind: "radio", Label: "Restricted", Checked: false, Value: "restricted"},
			Field{Name: "access", Kind: "radio", Label: "Anyone with the link", Checked: true, Value: "link"}), true},
		{"Swahili bulk action Futa then Apply", inForm("Apply", "post", "/items",
			Field{Name: "do", Kind: "hidden", Value: "destroy"}), true},
		{"search filtered by Public", inForm("Search", "get", "/search",
			Field{Name: "q", Kind: "text", Value: "tabrelay"},
			Field{Name: "type", Kind: "select", Chosen: []string{"Public"}, Value: "public"}), false},
		{"profile saved with csrf and newsletter box", inForm("Save", "post", "/profile", csrf,
			Field{Name: "name", Kind: "text", Value: "Ada"},
			Field{Name: "news", Kind: "checkbox", Label: "Email me product news", Checked: true, Value: "1"},
			Field{Name: "lang", Kind: "select", Chosen: []string{"English"}, Value: "en"}), false},
		{"unticked delete box", inForm("Save changes", "post", "/settings",
			Field{Name: "purge", Kind: "checkbox", Label: "Also delete all my data", Checked: false, Value: "on"}), false},
		{"a toolbar's bulk action Move to Trash beside Apply", inForm("Apply", "", "",
			Field{Kind: "select", Label: "Bulk actions", Chosen: []string{"Move to Trash"}, Value: "trash"}), true},
		{"ticked rows beside a toolbar's Archive", inForm("Archive", "", "",
			Field{Kind: "checkbox", Label: "Post your review of the kettle", Checked: true},
			Field{Kind: "select", Label: "Sort", Chosen: []string{"Newest"}, Value: "new"}), false},
		{"private visibility saved", inForm("Save", "post", "/doc/7/settings",
			Field{Name: "visibility", Kind: "select", Label: "Who can see this", Chosen: []string{"Only me"}, Value: "private"}), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := New(Options{UserHome: t.TempDir()})
			d := g.Check(Proposal{Action: Action{Kind: "click"}, Element: c.el, URL: "https://app.example/x"}, Request{Goal: "tidy up my notes"})
			if got := d.Verdict == Confirm; got != c.ask {
				t.Errorf("asks=%v, want %v (%s: %s)", got, c.ask, d.Reason, d.Prompt())
			}
			// Enter in a field of the same form commits the same state
			field := *c.el
			field.Role, field.Tag, field.Type, field.Name, field.Text = "textbox", "input", "text", "Note", ""
			field.Buttons = []Control{{Text: c.el.Text}}
			d = g.Check(Proposal{Action: Action{Kind: "press", Key: "Enter"}, Element: &field, URL: "https://app.example/x"}, Request{Goal: "tidy up my notes"})
			if got := d.Verdict == Confirm; c.ask && !got {
				t.Errorf("Enter in the form did not ask (%s)", d.Prompt())
			}
		})
	}
}

// An approval covers the step the person saw: the same Save once the page points its form at
// another URL, or changes what it sends, is a new step.
func TestApprovalBoundToForm(t *testing.T) {
	g := New(Options{UserHome: t.TempDir()})
	save := func(action string, fields ...Field) Proposal {
		return Proposal{Action: Action{Kind: "click"}, Element: inForm("Save", "post", action, fields...), URL: "https://app.example/security"}
	}
	grants := NewGrants()
	req := Request{Goal: "turn on login alerts", Grants: grants}
	alerts := Field{Name: "alerts", Kind: "checkbox", Label: "Login alerts", Checked: true, Value: "1"}
	d := g.Check(save("/security/save", alerts), req)
	if d.Verdict != Confirm {
		t.Fatalf("Save on a security page: %v (%s)", d.Verdict, d.Prompt())
	}
	if !strings.Contains(d.Prompt(), `"/security/save"`) || !strings.Contains(d.Prompt(), `[x] "Login alerts"`) {
		t.Errorf("the person is not shown what the approval covers: %s", d.Prompt())
	}
	grants.Approve(d)
	for _, c := range []struct {
		name string
		p    Proposal
	}{
		{"form pointed at a deletion URL", save("/account/delete", alerts)},
		{"form pointed at a harmless-looking URL", save("/security/save2", alerts)},
		{"a hidden field added", save("/security/save", alerts, Field{Name: "x", Kind: "hidden", Value: "1"})},
		{"the box unticked", save("/security/save", Field{Name: "alerts", Kind: "checkbox", Label: "Login alerts", Value: "1"})},
		{"another page", func() Proposal { p := save("/security/save", alerts); p.URL = "https://app.example/billing"; return p }()},
	} {
		if d := g.Check(c.p, req); d.Verdict != Confirm {
			t.Errorf("%s: the approval still covered it (%v)", c.name, d.Verdict)
		}
	}
	if d := g.Check(save("/security/save", alerts), req); d.Verdict != Allow || !d.Approved {
		t.Errorf("the approved step itself: %v approved=%v", d.Verdict, d.Approved)
	}
	if d := g.Check(save("/security/save", alerts), req); d.Verdict != Confirm {
		t.Errorf("the approval was used twice: %v", d.Verdict)
	}
}

// A click on a link is a navigation to its href: the step the person and the critic see names
// it, its words are judged as a URL's to open, the boundary judges its site, and an approval
// covers that destination only.
func TestLinkDestination(t *testing.T) {
	const page = "https://app.example/subscription"
	link := func(text, href string) Proposal {
		return Proposal{Action: Action{Kind: "click"}, URL: page,
			Element: &Element{Ref: "e3", Role: "link", Tag: "a", Name: text, Text: text, URL: page, Href: href}}
	}
	for _, c := range []struct {
		name, goal, href string
		reason           string // "" when allowed
	}{
		{"Learn more to an erasing URL", "read about my plan", "https://app.example/account/erase?now=1", ReasonDeletion},
		{"Learn more to a help page", "read about my plan", "https://app.example/help/plans", ""},
		{"a link to another site", "read about my plan", "https://elsewhere.example/plans", ReasonSite},
		{"a next-page link", "read about my plan", "https://app.example/subscription?page=2", ""},
		{"the person named the erasing URL", "open https://app.example/account/erase?now=1", "https://app.example/account/erase?now=1", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := New(Options{UserHome: t.TempDir()})
			tk := NewTask(c.goal, nil)
			tk.Begin(page)
			p := link("Learn more", c.href)
			d := g.Check(p, Request{Goal: c.goal, Task: tk})
			if c.reason == "" {
				if d.Verdict != Allow {
					t.Fatalf("asked: %s (%s)", d.Reason, d.Prompt())
				}
				return
			}
			if d.Verdict != Confirm || d.Reason != c.reason {
				t.Fatalf("verdict %v reason %q, want to ask for %q (%s)", d.Verdict, d.Reason, c.reason, d.Prompt())
			}
			if !strings.Contains(d.Prompt(), c.href) {
				t.Errorf("the person is not shown where the link goes: %s", d.Prompt())
			}
			if r := ReviewOf(p, c.goal); r.Destination != c.href || r.DestinationSite != string(SiteOf(c.href)) {
				t.Errorf("the critic's destination is %q (%q), want the link's href %q", r.Destination, r.DestinationSite, c.href)
			}
		})
	}

	// an approval of one destination does not cover the same link once it points elsewhere
	g := New(Options{UserHome: t.TempDir()})
	grants := NewGrants()
	req := Request{Goal: "read about my plan", Grants: grants}
	d := g.Check(link("Learn more", "https://app.example/account/erase"), req)
	if d.Verdict != Confirm {
		t.Fatalf("the erasing link: %v", d.Verdict)
	}
	grants.Approve(d)
	if d := g.Check(link("Learn more", "https://app.example/account/delete"), req); d.Verdict != Confirm {
		t.Errorf("the approval covered another destination: %v", d.Verdict)
	}
	if d := g.Check(link("Learn more", "https://app.example/account/erase"), req); d.Verdict != Allow || !d.Approved {
		t.Errorf("the approved destination: %v approved=%v", d.Verdict, d.Approved)
	}
}

// Landed: the step read again as its input lands commits the same only when nothing but the
// text of its own field changed.
func TestLanded(t *testing.T) {
	judged := func() Proposal {
		el := inForm("Done", "get", "/folders/apply",
			Field{Name: "op", Kind: "hidden", Value: "archive"},
			Field{Name: "folder", Kind: "text", Label: "Folder", Value: "Newsletters"},
			Field{Name: "note", Kind: "text", Label: "Note", Value: "", Self: true},
			Field{Name: "purge", Kind: "checkbox", Label: "Also delete", Value: "1"})
		return Proposal{Action: Action{Kind: "click"}, Element: el, URL: "https://app.example/folders"}
	}
	for _, c := range []struct {
		name   string
		change func(p *Proposal)
		same   bool
	}{
		{"nothing changed", func(p *Proposal) {}, true},
		{"its own field emptied (a chat box that sends)", func(p *Proposal) { p.Element.Form.Fields[2].Value = "" }, true},
		{"its own field set by the page", func(p *Proposal) { p.Element.Form.Fields[2].Value = "delete_account" }, false},
		{"a hidden field set to purge", func(p *Proposal) { p.Element.Form.Fields[0].Value = "purge" }, false},
		{"another field's text", func(p *Proposal) { p.Element.Form.Fields[1].Value = "Everything" }, false},
		{"a box ticked", func(p *Proposal) { p.Element.Form.Fields[3].Checked = true }, false},
		{"a field added", func(p *Proposal) {
			p.Element.Form.Fields = append(p.Element.Form.Fields, Field{Name: "x", Kind: "hidden", Value: "1"})
		}, false},
		{"the form pointed elsewhere", func(p *Proposal) { p.Element.FormAction = "/account/delete" }, false},
		{"the method changed", func(p *Proposal) { p.Element.Form.Method = "post" }, false},
		{"a link pointed elsewhere", func(p *Proposal) { p.Element.Href = "https://app.example/account/erase" }, false},
		{"its label changed", func(p *Proposal) { p.Element.Labels = []string{"Delete"} }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, now := judged(), judged()
			c.change(&now)
			if got := j.Landed(now); got != c.same {
				t.Errorf("Landed = %v, want %v", got, c.same)
			}
			if j.Element.Form.Fields[0].Value != "archive" || j.Element.Form.Fields[2].Value != "" {
				t.Errorf("Landed changed the judged step: %+v", j.Element.Form.Fields)
			}
		})
	}
	// a type step's own text in its field is its own doing
	typed := judged()
	typed.Action = Action{Kind: "type", Text: "for 2024", Submit: true}
	now := judged()
	now.Action = typed.Action
	now.Element.Form.Fields[2].Value = "notes for 2024"
	if !typed.Landed(now) {
		t.Errorf("the text a type step typed counts as a change")
	}
	now.Element.Form.Fields[2].Value = "delete_account"
	if typed.Landed(now) {
		t.Errorf("text the page put in the typed field instead of the step's is not a change")
	}
}
