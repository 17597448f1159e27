package actions

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/snapshot"
)

// formPage replaces the tab's page with a settings form whose submissions are recorded in
// window.sent (and never leave the page).
const formPage = `(() => {
	document.title = 'Security settings';
	document.body.innerHTML = '<form id="f" method="post" action="/security/save">' +
		'<input type="hidden" name="csrf" value="abc123">' +
		'<label><input type="checkbox" name="alerts" value="1" checked> Login alerts</label>' +
		'<label><input type="checkbox" name="purge" value="1"> Also delete all my data</label>' +
		'<label for="vis">Who can see my profile</label><select id="vis" name="vis"><option value="me">Only me</option><option value="all">Public</option></select>' +
		'<input type="password" name="pw" value="hunter2">' +
		'<button>Save</button></form>';
	window.sent = [];
	document.getElementById('f').addEventListener('submit', e => { e.preventDefault(); window.sent.push(new URL(e.target.action).pathname); });
	return true;
})()`

// TestFormStateAtCommit: a commit in real Chromium is judged with its form's state at that
// moment, and an approval covers only the form the person saw.
func TestFormStateAtCommit(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 90*time.Second)
	defer cancel()
	id := open(t, ctx, "/index.html")
	eval(t, ctx, id, formPage, nil)
	save := refFor(t, snap(t, ctx, id, snapshot.Options{}), `button "Save"`)
	grants := gate.NewGrants()
	agent := gate.With(ctx, gate.Request{Who: gate.Agent, Goal: "turn on login alerts", Grants: grants})
	sent := func() []string {
		var s []string
		eval(t, ctx, id, "window.sent", &s)
		return s
	}
	held := func(what string) gate.Decision {
		t.Helper()
		before := len(sent())
		_, err := svc.Act(agent, id, Do(Click{Ref: save}))
		var ce *gate.ConfirmError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: not held for the person: %v", what, err)
		}
		if s := sent(); len(s) != before {
			t.Fatalf("%s: the form was sent while held: %v", what, s)
		}
		return ce.Decision
	}

	// Save on a security page asks; the person sees what the form sends (its hidden field
	// and choices), never the password
	d := held("Save on a security page")
	p := d.Prompt()
	for _, want := range []string{`"/security/save"`, `[x] "Login alerts"`, `csrf = "abc123" (hidden)`, `Who can see my profile = "Only me"`} {
		if !strings.Contains(p, want) {
			t.Errorf("the prompt lacks %s: %s", want, p)
		}
	}
	if strings.Contains(p, "hunter2") || strings.Contains(p, `"Also delete all my data"`) {
		t.Errorf("the prompt shows a password or an unticked box: %s", p)
	}
	grants.Approve(d)

	// the page then points the form at a deletion URL: the approval does not cover it
	eval(t, ctx, id, `document.getElementById('f').setAttribute('action', '/account/delete'), true`, nil)
	if d := held("the form pointed elsewhere after the approval"); d.Level != gate.Grave {
		t.Errorf("a form sending to /account/delete: %s %s", d.Level, d.Prompt())
	}
	// … or ticks the deletion box, or makes the profile public
	eval(t, ctx, id, `document.getElementById('f').setAttribute('action', '/security/save'), document.querySelector('[name=purge]').checked = true`, nil)
	if d := held("the deletion box ticked after the approval"); d.Reason != gate.ReasonDeletion {
		t.Errorf("a ticked deletion box: %s (%s)", d.Reason, d.Prompt())
	}
	eval(t, ctx, id, `document.querySelector('[name=purge]').checked = false, document.getElementById('vis').value = 'all', true`, nil)
	if d := held("the profile made public after the approval"); d.Reason != gate.ReasonPublishing {
		t.Errorf("a visibility set to Public: %s (%s)", d.Reason, d.Prompt())
	}

	// the form as the person saw it: the approval runs it, once
	eval(t, ctx, id, `document.getElementById('vis').value = 'me', true`, nil)
	res, err := svc.Act(agent, id, Do(Click{Ref: save}))
	if err != nil || res.Approved == nil {
		t.Fatalf("the approved step: %v (approved %v)", err, res)
	}
	// the click's submit event has run by the time the action returns (it is dispatched
	// synchronously with the click)
	if s := sent(); len(s) != 1 || s[0] != "/security/save" {
		t.Errorf("sent %v, want the approved form once to /security/save", s)
	}
	held("the same step again")
}

// TestToolbarBulkAction: a button in no form is judged with the list beside it (a toolbar's
// bulk action chosen earlier, carried out by Apply), in real Chromium.
func TestToolbarBulkAction(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/index.html")
	eval(t, ctx, id, `(() => {
		document.body.innerHTML = '<div class="toolbar"><label><input type="checkbox" checked> Kettle review by Ada</label>' +
			'<select aria-label="Bulk actions"><option value="">Bulk actions</option><option value="archive">Archive</option><option value="trash">Move to Trash</option></select>' +
			'<button onclick="window.applied = (window.applied || 0) + 1">Apply</button></div>';
		return true;
	})()`, nil)
	apply := refFor(t, snap(t, ctx, id, snapshot.Options{}), `button "Apply"`)
	agent := gate.With(ctx, gate.Request{Who: gate.Agent, Goal: "archive the selected reviews", Grants: gate.NewGrants()})
	applied := func() int {
		var n int
		eval(t, ctx, id, "window.applied || 0", &n)
		return n
	}
	eval(t, ctx, id, `document.querySelector('select').value = 'archive', true`, nil)
	if _, err := svc.Act(agent, id, Do(Click{Ref: apply})); err != nil || applied() != 1 {
		t.Fatalf("Apply with Archive chosen: %v (applied %d)", err, applied())
	}
	eval(t, ctx, id, `document.querySelector('select').value = 'trash', true`, nil)
	_, err := svc.Act(agent, id, Do(Click{Ref: apply}))
	var ce *gate.ConfirmError
	if !errors.As(err, &ce) || applied() != 1 {
		t.Fatalf("Apply with Move to Trash chosen: %v (applied %d)", err, applied())
	}
	if p := ce.Decision.Prompt(); !strings.Contains(p, `Bulk actions = "Move to Trash"`) {
		t.Errorf("the person is not shown the chosen action: %s", p)
	}
}

// pressedPage replaces the tab's page with a form whose hidden field the page changes as the
// input lands (on pointerdown, or on keydown in the button or the field), and a form that
// changes nothing; submissions are recorded in window.sent as "form:op" (they never leave the
// page) and clicks on the buttons in window.clicked.
const pressedPage = `(() => {
	document.title = 'Folders';
	document.body.innerHTML = '<form id="f" action="/folders/apply">' +
		'<input type="hidden" name="op" value="archive">' +
		'<label>Folder <input id="folder" name="folder" value="Newsletters"></label>' +
		'<button id="done" aria-label="Done">✓</button></form>' +
		'<form id="g" action="/folders/apply"><input type="hidden" name="op" value="archive">' +
		'<label>Other folder <input id="other" name="folder" value="Receipts"></label>' +
		'<button id="keep" aria-label="Archive it">✓</button></form>' +
		'<form id="c"><textarea id="chat" aria-label="Message"></textarea></form><a href="#page2">Next page</a>' +
		'<form id="t" action="/folders/apply"><input type="hidden" name="op" value="archive"><input type="hidden" name="at" value="0">' +
		'<label>Notes folder <input name="folder" value="Notes"></label><button id="stamp" aria-label="Archive notes">✓</button></form>';
	window.sent = []; window.clicked = [];
	const purge = () => { document.querySelector('#f [name=op]').value = 'purge'; };
	document.getElementById('done').addEventListener('pointerdown', purge);
	document.getElementById('done').addEventListener('keydown', purge);
	document.getElementById('folder').addEventListener('keydown', e => { if (e.key === 'Enter') purge(); });
	for (const b of document.querySelectorAll('button')) b.addEventListener('click', e => window.clicked.push(e.target.id));
	window.downs = 0;
	document.getElementById('stamp').addEventListener('pointerdown', () => { window.downs++; document.querySelector('#t [name=at]').value = String(Date.now()); });
	const chat = document.getElementById('chat');
	chat.addEventListener('keydown', e => { if (e.key === 'Enter') { e.preventDefault(); window.sent.push('chat:' + chat.value); chat.value = ''; } });
	for (const f of document.forms) f.addEventListener('submit', e => { e.preventDefault(); window.sent.push(f.id + ':' + f.op.value); });
	return true;
})()`

// TestCommitJudgedAsItLands: in real Chromium, a commit is judged as its input lands. A page
// that changes what the form sends in its pointerdown or keydown handlers, after the gate read
// it, gets no click and no submit: the new state is judged (here: the person is asked, and sees
// it), and the approval of that state lets it through. A change the gate allows (a time stamp)
// is clicked with the same press. A form nobody changes, text typed into a field before Enter,
// a chat box that sends on keydown and a link followed by Enter go through as before.
func TestCommitJudgedAsItLands(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 120*time.Second)
	defer cancel()
	id := open(t, ctx, "/index.html")
	grants := gate.NewGrants()
	agent := gate.With(ctx, gate.Request{Who: gate.Agent, Goal: "archive my Newsletters and Receipts folders and send hello in the chat", Grants: grants})
	var done, keep, folder, other string
	reset := func() {
		t.Helper()
		eval(t, ctx, id, pressedPage, nil)
		s := snap(t, ctx, id, snapshot.Options{})
		done, keep = refFor(t, s, `button "Done"`), refFor(t, s, `button "Archive it"`)
		folder, other = refFor(t, s, `textbox "Folder"`), refFor(t, s, `textbox "Other folder"`)
	}
	state := func() (sent, clicked []string) {
		eval(t, ctx, id, "window.sent", &sent)
		eval(t, ctx, id, "window.clicked", &clicked)
		return sent, clicked
	}
	held := func(what string, a Action) gate.Decision {
		t.Helper()
		_, err := svc.Act(agent, id, a)
		var ce *gate.ConfirmError
		if !errors.As(err, &ce) {
			t.Fatalf("%s: not held for the person: %v", what, err)
		}
		if sent, clicked := state(); len(sent) != 0 || len(clicked) != 0 {
			t.Fatalf("%s: committed while held: sent %v, clicked %v", what, sent, clicked)
		}
		if p := ce.Decision.Prompt(); !strings.Contains(p, `op = "purge" (hidden)`) {
			t.Errorf("%s: the person is not shown the state the page changed to: %s", what, p)
		}
		return ce.Decision
	}
	ran := func(what string, a Action, want string) {
		t.Helper()
		if _, err := svc.Act(agent, id, a); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if sent, _ := state(); len(sent) != 1 || sent[0] != want {
			t.Fatalf("%s: sent %v, want [%s]", what, sent, want)
		}
	}

	reset()
	d := held("a click whose pointerdown sets op=purge", Do(Click{Ref: done}))
	// approved as the person saw it (op=purge), the same click runs, once
	grants.Approve(d)
	ran("the approved click", Do(Click{Ref: done}), "f:purge")

	reset()
	held("Enter on the button whose keydown sets op=purge", Do(Press{Ref: done, Key: "Enter"}))
	reset()
	held("Space on the button whose keydown sets op=purge", Do(Press{Ref: done, Key: "Space"}))
	reset()
	held("typing then Enter in a field whose keydown sets op=purge", Do(Type{Ref: folder, Text: "Newsletters 2024", Submit: true}))

	// controls: nothing changes as the input lands
	reset()
	ran("a click on an unchanged form", Do(Click{Ref: keep}), "g:archive")
	reset()
	ran("Enter on an unchanged form's button", Do(Press{Ref: keep, Key: "Enter"}), "g:archive")
	reset()
	ran("typing then Enter in an unchanged form", Do(Type{Ref: other, Text: "Receipts 2024", Submit: true}), "g:archive")
	// a page that stamps a hidden field on pointerdown: the stamped state is judged, allowed,
	// and clicked with that one press
	reset()
	ran("a click whose pointerdown stamps a hidden field", Do(Click{Ref: refFor(t, snap(t, ctx, id, snapshot.Options{}), `button "Archive notes"`)}), "t:archive")
	var downs int
	if eval(t, ctx, id, "window.downs", &downs); downs != 1 {
		t.Errorf("the stamped form's button went down %d times, want 1", downs)
	}
	// a chat box whose keydown handler sends and clears it: sent once, no line break left in it
	reset()
	eval(t, ctx, id, `document.getElementById('chat').value = 'hello', true`, nil)
	chat := refFor(t, snap(t, ctx, id, snapshot.Options{}), `textbox "Message"`)
	if _, err := svc.Act(agent, id, Do(Press{Ref: chat, Key: "Enter"})); err != nil {
		var ce *gate.ConfirmError
		if !errors.As(err, &ce) {
			t.Fatalf("Enter in the chat box: %v", err)
		}
		grants.Approve(ce.Decision) // a chat's Enter sends: the person approves it
	}
	ran("Enter in a chat box that sends on keydown", Do(Press{Ref: chat, Key: "Enter"}), "chat:hello")
	var left string
	if eval(t, ctx, id, `document.getElementById('chat').value`, &left); left != "" {
		t.Errorf("the chat box holds %q after Enter: the key's character went in after its keydown was handled", left)
	}
	// Enter on a link follows it (on keydown, as Chrome does)
	next := refFor(t, snap(t, ctx, id, snapshot.Options{}), `link "Next page"`)
	if _, err := svc.Act(agent, id, Do(Press{Ref: next, Key: "Enter"})); err != nil {
		t.Fatalf("Enter on a link: %v", err)
	}
	var hash string
	if eval(t, ctx, id, `location.hash`, &hash); hash != "#page2" {
		t.Errorf("Enter on a link: at %q, want #page2", hash)
	}
	// the caller's own click is not judged: it runs as before
	reset()
	if _, err := svc.Act(ctx, id, Do(Click{Ref: done})); err != nil {
		t.Fatal(err)
	}
	if sent, _ := state(); len(sent) != 1 || sent[0] != "f:purge" {
		t.Fatalf("the caller's click: sent %v", sent)
	}
}
