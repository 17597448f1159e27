package relay_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
)

// nonFlatSession speaks to a non-flat session through its parent: commands wrapped in
// Target.sendMessageToTarget, answers and events unwrapped from Target.receivedMessageFromTarget.
type nonFlatSession struct {
	t      *testing.T
	c      *cdpclient.Client
	parent string // the session the non-flat one was attached from ("" for the root)
	id     string
	msgs   chan map[string]json.RawMessage
	nextID int
}

func newNonFlatSession(t *testing.T, c *cdpclient.Client, parent, id string) *nonFlatSession {
	n := &nonFlatSession{t: t, c: c, parent: parent, id: id, msgs: make(chan map[string]json.RawMessage, 100)}
	unsub := c.Subscribe(func(ev cdpclient.Event) {
		if ev.Method != "Target.receivedMessageFromTarget" || ev.SessionID != parent {
			return
		}
		var p struct {
			SessionID string `json:"sessionId"`
			Message   string `json:"message"`
		}
		if json.Unmarshal(ev.Params, &p) != nil || p.SessionID != id {
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(p.Message), &m); err != nil {
			t.Errorf("receivedMessageFromTarget carries no JSON object: %q", p.Message)
			return
		}
		n.msgs <- m
	})
	t.Cleanup(unsub)
	return n
}

// call sends one command through sendMessageToTarget and returns its answer.
func (n *nonFlatSession) call(method string, params any) map[string]json.RawMessage {
	n.t.Helper()
	n.nextID++
	id := n.nextID
	m := map[string]any{"id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	msg, _ := json.Marshal(m)
	if err := n.c.Call(ctx(n.t), n.parent, "Target.sendMessageToTarget", map[string]any{"sessionId": n.id, "message": string(msg)}, nil); err != nil {
		n.t.Fatalf("sendMessageToTarget %s: %v", method, err)
	}
	return n.waitFor(func(m map[string]json.RawMessage) bool { return string(m["id"]) == jsonNumber(id) }, method+"'s answer")
}

// waitFor returns the first message of the session that match accepts.
func (n *nonFlatSession) waitFor(match func(map[string]json.RawMessage) bool, what string) map[string]json.RawMessage {
	n.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-n.msgs:
			if match(m) {
				return m
			}
		case <-deadline:
			n.t.Fatalf("non-flat session %s: no %s", n.id, what)
			return nil
		}
	}
}

func jsonNumber(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestNonFlatSessions: Target.attachToTarget without flatten gives a session reached through
// Target.sendMessageToTarget, answering through Target.receivedMessageFromTarget; it mixes with a
// flat session on the same connection, gets only its own events, is refused as a flat
// sessionId (as Chrome does), and detachFromTarget by its id ends it and undoes what it enabled.
func TestNonFlatSessions(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	e.share(tabB, "https://b.example/")
	c := e.client("/cdp")
	attached := c.Expect("", "Target.attachedToTarget", nil)
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx(t), "", "Target.attachToTarget", map[string]any{"targetId": tabA}, &res); err != nil {
		t.Fatal(err)
	}
	ev, err := attached.Wait(ctx(t))
	if err != nil || !strings.Contains(string(ev.Params), res.SessionID) || !strings.Contains(string(ev.Params), tabA) {
		t.Fatalf("attachedToTarget for the non-flat session: %+v %v", ev, err)
	}
	nf := newNonFlatSession(t, c, "", res.SessionID)
	flat := attach(t, c, tabB)

	ans := nf.call("Runtime.evaluate", map[string]string{"expression": "40+2"})
	if !strings.Contains(string(ans["result"]), "evaluated:40+2") || ans["sessionId"] != nil {
		t.Errorf("evaluate through sendMessageToTarget = %s", mustMarshal(ans))
	}
	var r struct {
		Result struct{ Value string } `json:"result"`
	}
	if err := c.Call(ctx(t), flat, "Runtime.evaluate", map[string]string{"expression": "flat"}, &r); err != nil || r.Result.Value != "evaluated:flat" {
		t.Errorf("flat session beside the non-flat one: %+v %v", r, err)
	}
	// a non-flat session is no flat session id
	if err := c.Call(ctx(t), res.SessionID, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err == nil || !strings.Contains(err.Error(), "Session with given id not found") {
		t.Errorf("the non-flat session's id used as a flat sessionId: %v", err)
	}
	// unknown session
	if err := c.Call(ctx(t), "", "Target.sendMessageToTarget", map[string]any{"sessionId": "NOPE", "message": `{"id":1,"method":"Runtime.evaluate"}`}, nil); err == nil || !strings.Contains(err.Error(), "No session with given id") {
		t.Errorf("sendMessageToTarget to an unknown session: %v", err)
	}

	// events: the non-flat session enabled Page; they come wrapped, only to it
	if ans := nf.call("Page.enable", nil); ans["error"] != nil {
		t.Fatalf("Page.enable: %s", ans["error"])
	}
	if err := e.ext.Event(tabA, "", "Page.loadEventFired", map[string]any{"timestamp": 7}); err != nil {
		t.Fatal(err)
	}
	nf.waitFor(func(m map[string]json.RawMessage) bool { return string(m["method"]) == `"Page.loadEventFired"` }, "Page.loadEventFired")

	// detach by session id: the parent is told, the tab gets Page.disable, the session is gone
	detached := c.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool { return strings.Contains(string(ev.Params), res.SessionID) })
	if err := c.Call(ctx(t), "", "Target.detachFromTarget", map[string]any{"sessionId": res.SessionID}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := detached.Wait(ctx(t)); err != nil {
		t.Fatalf("no detachedFromTarget for the non-flat session: %v", err)
	}
	e.waitFor("Page.disable after the non-flat session left", func() bool { return !e.ext.Enabled(tabA, "", "Page") })
	if err := c.Call(ctx(t), "", "Target.sendMessageToTarget", map[string]any{"sessionId": res.SessionID, "message": `{"id":1,"method":"Runtime.evaluate"}`}, nil); err == nil {
		t.Error("sendMessageToTarget to a detached session succeeded")
	}
}

// TestNonFlatAutoAttachAndNesting: setAutoAttach without flatten on a tab session announces its
// page as a non-flat session; a non-flat session attaches flat sessions of its own (their
// messages carry their sessionId inside the wrapper); the browser session refuses non-flat
// auto-attach as Chrome does; another client never sees any of it; the tab going away detaches
// the session.
func TestNonFlatAutoAttachAndNesting(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c, other := e.client("/cdp"), e.client("/cdp")
	otherSaw := make(chan string, 10)
	other.Subscribe(func(ev cdpclient.Event) { otherSaw <- ev.Method })

	err := c.Call(ctx(t), "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false}, nil)
	if err == nil || !strings.Contains(err.Error(), "Only flatten protocol is supported with browser level auto-attach") {
		t.Errorf("browser-level non-flat auto-attach: %v, want Chrome's refusal", err)
	}
	// a tab session, auto-attaching its page without flatten
	var res struct {
		SessionID string `json:"sessionId"`
	}
	var tabs struct {
		TargetInfos []struct{ TargetID, Type string } `json:"targetInfos"`
	}
	if err := c.Call(ctx(t), "", "Target.getTargets", map[string]any{"filter": []map[string]any{{"type": "tab"}}}, &tabs); err != nil || len(tabs.TargetInfos) != 1 {
		t.Fatalf("tab targets: %+v %v", tabs, err)
	}
	if err := c.Call(ctx(t), "", "Target.attachToTarget", map[string]any{"targetId": tabs.TargetInfos[0].TargetID, "flatten": true}, &res); err != nil {
		t.Fatal(err)
	}
	tabSession := res.SessionID
	attached := c.Expect(tabSession, "Target.attachedToTarget", nil)
	if err := c.Call(ctx(t), tabSession, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": false}, nil); err != nil {
		t.Fatal(err)
	}
	ev, err := attached.Wait(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	var att struct {
		SessionID  string `json:"sessionId"`
		TargetInfo struct{ TargetID, Type string }
	}
	_ = json.Unmarshal(ev.Params, &att)
	if att.TargetInfo.TargetID != tabA || att.TargetInfo.Type != "page" {
		t.Fatalf("auto-attached %+v, want the page", att)
	}
	page := newNonFlatSession(t, c, tabSession, att.SessionID)
	if ans := page.call("Runtime.evaluate", map[string]string{"expression": "auto"}); !strings.Contains(string(ans["result"]), "evaluated:auto") {
		t.Errorf("evaluate in the auto-attached non-flat page: %s", mustMarshal(ans))
	}
	// inside it, a flat session of its own, to the browser: its messages carry its sessionId
	ans := page.call("Target.attachToBrowserTarget", nil)
	var inner struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(ans["result"], &inner); err != nil || inner.SessionID == "" {
		t.Fatalf("attachToBrowserTarget inside the non-flat session: %s", mustMarshal(ans))
	}
	msg, _ := json.Marshal(map[string]any{"id": 99, "method": "Browser.getVersion", "sessionId": inner.SessionID})
	if err := c.Call(ctx(t), tabSession, "Target.sendMessageToTarget", map[string]any{"sessionId": att.SessionID, "message": string(msg)}, nil); err != nil {
		t.Fatal(err)
	}
	got := page.waitFor(func(m map[string]json.RawMessage) bool { return string(m["id"]) == "99" }, "Browser.getVersion's answer")
	if string(got["sessionId"]) != `"`+inner.SessionID+`"` || !strings.Contains(string(got["result"]), "product") {
		t.Errorf("answer of the nested flat session = %s", mustMarshal(got))
	}

	// the tab goes: the non-flat page session is detached on the tab session
	detached := c.Expect(tabSession, "Target.detachedFromTarget", func(ev cdpclient.Event) bool { return strings.Contains(string(ev.Params), att.SessionID) })
	if err := e.ext.Unshare(tabA, "closed"); err != nil {
		t.Fatal(err)
	}
	if _, err := detached.Wait(ctx(t)); err != nil {
		t.Errorf("no detachedFromTarget for the non-flat page when its tab went: %v", err)
	}
	for {
		select {
		case m := <-otherSaw:
			if strings.HasPrefix(m, "Target.") && m != "Target.targetDestroyed" {
				t.Errorf("the other client got %s", m)
			}
			continue
		default:
		}
		break
	}
}

func mustMarshal(v any) string { b, _ := json.Marshal(v); return string(b) }
