package relay_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// addScript adds a script to evaluate on new documents and returns the identifier the client got.
func addScript(t *testing.T, c *cdpclient.Client, sid string, params map[string]any) string {
	t.Helper()
	var r struct {
		Identifier string `json:"identifier"`
	}
	if err := c.Call(ctx(t), sid, "Page.addScriptToEvaluateOnNewDocument", params, &r); err != nil {
		t.Fatal(err)
	}
	if r.Identifier == "" {
		t.Fatal("Page.addScriptToEvaluateOnNewDocument answered without identifier")
	}
	return r.Identifier
}

func call(t *testing.T, c *cdpclient.Client, sid, method string, params any) {
	t.Helper()
	if err := c.Call(ctx(t), sid, method, params, nil); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

func identifierOf(cmd relaytest.Command) string {
	var p struct {
		Identifier string `json:"identifier"`
	}
	_ = json.Unmarshal(cmd.Params, &p)
	return p.Identifier
}

// A re-attached tab has forgotten its scripts to evaluate on new documents and its bindings:
// the relay adds again those its clients still have, with the params they sent, and goes on
// translating the identifiers the clients know into the tab's new ones.
func TestReattachRestoresScriptsAndBindings(t *testing.T) {
	script := map[string]any{"source": "window.__s3 = 1", "worldName": "utility", "runImmediately": true}
	// setup has a client add three scripts and two bindings and remove the first two scripts and
	// one binding, then re-attaches the tab; it returns the client, its session, the identifier
	// of its live script and the command count before the re-attach.
	setup := func(t *testing.T, e *env) (*cdpclient.Client, string, string, int) {
		t.Helper()
		e.share(tabA, "https://a.example/")
		c := e.client("/cdp")
		sid := attach(t, c, tabA)
		id1 := addScript(t, c, sid, map[string]any{"source": "window.__s1 = 1"})
		id2 := addScript(t, c, sid, map[string]any{"source": "window.__s2 = 1"})
		id3 := addScript(t, c, sid, script)
		call(t, c, sid, "Runtime.addBinding", map[string]any{"name": "keep", "executionContextName": "utility"})
		call(t, c, sid, "Runtime.addBinding", map[string]any{"name": "drop"})
		call(t, c, sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": id1})
		call(t, c, sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": id2})
		call(t, c, sid, "Runtime.removeBinding", map[string]string{"name": "drop"})
		if got := e.ext.Scripts(tabA); len(got) != 1 || got[id3] != "window.__s3 = 1" {
			t.Fatalf("scripts in the tab before the re-attach: %v", got)
		}
		before := len(e.ext.Commands())
		e.reshare()
		// the tab numbers scripts afresh: the live one is "1" now, where the client knows "3"
		e.waitWithin(5*time.Second, "the script added again", func() bool { return len(e.ext.Scripts(tabA)) == 1 })
		e.waitWithin(5*time.Second, "the binding added again", func() bool { return e.ext.Bindings(tabA, "keep") })
		return c, sid, id3, before
	}

	t.Run("added again with the client's params", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{})
		c, sid, _, before := setup(t, e)
		// a command's answer after the re-attach: anything the relay sent for it went out before
		call(t, c, sid, "Runtime.evaluate", map[string]string{"expression": "1"})
		adds := e.sentSince(before, "Page.addScriptToEvaluateOnNewDocument")
		if len(adds) != 1 || !jsonEqual(adds[0].Params, script) || adds[0].SessionID != "" {
			t.Fatalf("scripts added again: %+v, want only %v", adds, script)
		}
		binds := e.sentSince(before, "Runtime.addBinding")
		if len(binds) != 1 || !jsonEqual(binds[0].Params, map[string]any{"name": "keep", "executionContextName": "utility"}) {
			t.Fatalf("bindings added again: %+v, want only \"keep\" as the client added it", binds)
		}
		if e.ext.Bindings(tabA, "drop") {
			t.Fatal("a binding the client removed came back")
		}
	})

	t.Run("remove with the client's identifier", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{})
		c, sid, id3, before := setup(t, e)
		var newID string
		for id := range e.ext.Scripts(tabA) {
			newID = id
		}
		if newID == id3 {
			t.Fatalf("the simulated tab reused identifier %q: the test proves nothing", id3)
		}
		call(t, c, sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": id3})
		// if the relay had not yet seen the re-add's answer, it answered at once and removes the
		// script when that answer comes: wait for the effect either way
		e.waitFor("the script removed from the tab", func() bool { return len(e.ext.Scripts(tabA)) == 0 })
		rm := e.sentSince(before, "Page.removeScriptToEvaluateOnNewDocument")
		if len(rm) != 1 || identifierOf(rm[0]) != newID {
			t.Fatalf("removals after the re-attach: %+v, want one of the tab's identifier %q", rm, newID)
		}
	})

	t.Run("leaving removes the tab's identifiers", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{})
		c, _, _, before := setup(t, e)
		c.Close()
		e.waitFor("the client's script removed", func() bool { return len(e.ext.Scripts(tabA)) == 0 })
		e.waitFor("the client's binding removed", func() bool { return !e.ext.Bindings(tabA, "keep") })
		if rm := e.sentSince(before, "Page.removeScriptToEvaluateOnNewDocument"); len(rm) != 1 {
			t.Fatalf("removals on leave: %+v, want exactly one", rm)
		}
	})

	t.Run("a new identifier equal to one the client knows", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{})
		c, sid, id3, before := setup(t, e)
		// the tab hands out "2", then "3": the client knows "3" already
		a := addScript(t, c, sid, map[string]any{"source": "window.__a = 1"})
		b := addScript(t, c, sid, map[string]any{"source": "window.__b = 1"})
		if a == id3 || b == id3 || a == b {
			t.Fatalf("identifiers %q and %q after the re-attach; the client already has %q", a, b, id3)
		}
		call(t, c, sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": b})
		if got := e.ext.Scripts(tabA); len(got) != 2 || got["1"] != "window.__s3 = 1" || got["2"] != "window.__a = 1" {
			t.Fatalf("scripts in the tab after removing %q: %v", b, got)
		}
		call(t, c, sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": id3})
		call(t, c, sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": a})
		if got := e.ext.Scripts(tabA); len(got) != 0 {
			t.Fatalf("scripts left in the tab: %v", got)
		}
		_ = before
	})

	t.Run("removed while being added again", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{})
		e.share(tabA, "https://a.example/")
		c := e.client("/cdp")
		sid := attach(t, c, tabA)
		id := addScript(t, c, sid, script)
		release := make(chan struct{})
		var once sync.Once
		t.Cleanup(func() { once.Do(func() { close(release) }) })
		held := make(chan struct{}, 1)
		e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
			if cmd.Method == "Page.addScriptToEvaluateOnNewDocument" {
				select {
				case held <- struct{}{}:
				default:
				}
				<-release // the re-add is answered when the test says so
			}
			return nil, nil, false
		})
		e.reshare()
		select {
		case <-held:
		case <-time.After(5 * time.Second):
			t.Fatal("the script was not added again in the re-attached tab")
		}
		call(t, c, sid, "Page.removeScriptToEvaluateOnNewDocument", map[string]string{"identifier": id})
		once.Do(func() { close(release) })
		e.waitFor("the script added again, then removed", func() bool {
			return e.ext.Received(tabA, "Page.removeScriptToEvaluateOnNewDocument") && len(e.ext.Scripts(tabA)) == 0
		})
	})
}
