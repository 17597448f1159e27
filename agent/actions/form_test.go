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
