package relay_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// onDemandEnv is newEnv with an extension whose hello says "onDemand" (or not).
func onDemandEnv(t *testing.T, onDemand bool, detachAfter time.Duration) *env {
	e := newEnv(t, relay.HubOptions{DetachAfter: detachAfter})
	e.ext.Close()
	e.waitFor("the first extension to be gone", func() bool { return !e.srv.Hub().ExtensionConnected() })
	ext, err := relaytest.Dial(ctx(t), e.srv.Addr(), e.srv.Token(), &relaytest.Options{OnDemand: onDemand})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)
	e.ext = ext
	e.waitFor("extension connected", func() bool { return e.srv.Hub().ExtensionConnected() })
	return e
}

// TestDebuggerOnDemand: with an extension that attaches on demand, the first client session on
// a tab (of any client, the page endpoint too) asks it to attach; a client that only lists or
// discovers tabs does not; DetachAfter after the last session ended the hub asks it to detach
// and forgets the tab's child targets, the tab staying listed.
func TestDebuggerOnDemand(t *testing.T) {
	e := onDemandEnv(t, true, 50*time.Millisecond)
	if err := e.ext.ShareTab(wire.Tab{TabID: 1, TargetID: tabA, URL: "https://a.example/", Title: "A", Detached: true}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("tab A shared", func() bool { return e.hasTab(tabA) })

	watcher := e.client("/cdp")
	if err := watcher.Call(ctx(t), "", "Target.setDiscoverTargets", map[string]bool{"discover": true}, nil); err != nil {
		t.Fatal(err)
	}
	if err := watcher.Call(ctx(t), "", "Target.getTargets", nil, nil); err != nil {
		t.Fatal(err)
	}

	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	page := e.client("/devtools/page/" + tabA) // a second session on the tab: no second attach
	if err := evaluate(page, "", "1"); err != nil {
		t.Fatal(err)
	}
	if err := e.ext.AttachChild(tabA, "child-1", "FRAME1", "https://frame.example/"); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the iframe listed", func() bool { return len(e.srv.Hub().DebugTargets()) == 2 })
	want := []string{"attachTab " + tabA}
	if got := e.ext.Debugger(); !slices.Equal(got, want) {
		t.Fatalf("with two sessions on the tab the extension got %q, want %q", got, want)
	}

	if err := c.Call(ctx(t), "", "Target.detachFromTarget", map[string]string{"sessionId": sid}, nil); err != nil {
		t.Fatal(err)
	}
	page.Close()
	want = append(want, "detachTab "+tabA)
	e.waitFor("detachTab after the last session ended", func() bool { return slices.Equal(e.ext.Debugger(), want) })
	if d := e.srv.Hub().DebugTargets(); len(d) != 1 || d[0].TargetID != tabA {
		t.Fatalf("after the detach /json/list has %+v, want the tab alone (its iframe went with the debugger)", d)
	}

	c2 := e.client("/cdp")
	attach(t, c2, tabA)
	want = append(want, "attachTab "+tabA)
	e.waitFor("attachTab when a client comes back", func() bool { return slices.Equal(e.ext.Debugger(), want) })
}

// TestDebuggerAlwaysAttachedWithoutOnDemand: an extension whose hello does not say "onDemand"
// never gets attachTab or detachTab.
func TestDebuggerAlwaysAttachedWithoutOnDemand(t *testing.T) {
	e := onDemandEnv(t, false, 10*time.Millisecond)
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	if err := c.Call(ctx(t), "", "Target.detachFromTarget", map[string]string{"sessionId": sid}, nil); err != nil {
		t.Fatal(err)
	}
	// an absence: give the hub many DetachAfter periods, then a round trip through the extension
	time.Sleep(100 * time.Millisecond)
	sid = attach(t, c, tabA)
	if err := evaluate(c, sid, "1"); err != nil {
		t.Fatal(err)
	}
	if got := e.ext.Debugger(); len(got) != 0 {
		t.Fatalf("an extension without onDemand got %s", fmt.Sprint(got))
	}
}

// TestInProcessClientLetsGo: the in-process client (the agent) holds a tab only while it acts.
// DetachAfter after its last command the hub ends its session, telling it with
// Target.detachedFromTarget, and detaches the debugger, exactly as when an outside client
// leaves; commands keep it attached meanwhile, an outside client's session holds the tab while
// it exists, a binding (a recording) holds it too, and attaching again wakes the debugger.
func TestInProcessClientLetsGo(t *testing.T) {
	const detachAfter = 300 * time.Millisecond
	e := onDemandEnv(t, true, detachAfter)
	if err := e.ext.ShareTab(wire.Tab{TabID: 1, TargetID: tabA, URL: "https://a.example/", Title: "A", Detached: true}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("tab A shared", func() bool { return e.hasTab(tabA) })
	pipe, err := e.srv.Hub().Pipe("agent")
	if err != nil {
		t.Fatal(err)
	}
	agent := cdpclient.New(pipe)
	t.Cleanup(func() { agent.Close() })

	var want []string
	for round := 1; round <= 2; round++ {
		sid := attach(t, agent, tabA)
		detached := agent.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool {
			return strings.Contains(string(ev.Params), sid)
		})
		want = append(want, "attachTab "+tabA)
		// acting for longer than DetachAfter keeps the tab attached
		start := time.Now()
		var last time.Time
		for time.Since(start) < 2*detachAfter {
			// when the last command was sent: the hub counts from its answer, a moment later
			// (counting from its arrival here would be later still)
			sent := time.Now()
			if err := evaluate(agent, sid, "1"); err != nil {
				t.Fatalf("round %d: while acting: %v", round, err)
			}
			last = sent
			time.Sleep(detachAfter / 5)
		}
		if got := e.ext.Debugger(); !slices.Equal(got, want) {
			t.Fatalf("round %d: while the agent acts the extension got %q, want %q", round, got, want)
		}
		if _, err := detached.Wait(ctx(t)); err != nil {
			t.Fatalf("round %d: the agent was not told its session ended: %v", round, err)
		}
		if waited := time.Since(last); waited < detachAfter {
			t.Fatalf("round %d: the agent's session ended %v after its last command, before DetachAfter (%v)", round, waited, detachAfter)
		}
		want = append(want, "detachTab "+tabA)
		e.waitFor("detachTab after the agent's last command", func() bool { return slices.Equal(e.ext.Debugger(), want) })
		if err := evaluate(agent, sid, "1"); err == nil {
			t.Fatalf("round %d: the ended session still answers", round)
		}
	}

	// An outside client's session holds the tab past the agent's DetachAfter.
	c := e.client("/cdp")
	held := attach(t, c, tabA)
	sid := attach(t, agent, tabA)
	want = append(want, "attachTab "+tabA)
	if err := evaluate(agent, sid, "1"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * detachAfter)
	if got := e.ext.Debugger(); !slices.Equal(got, want) {
		t.Fatalf("with an outside client attached the extension got %q, want %q", got, want)
	}
	if err := c.Call(ctx(t), "", "Target.detachFromTarget", map[string]string{"sessionId": held}, nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, "detachTab "+tabA)
	e.waitFor("detachTab after the outside client left", func() bool { return slices.Equal(e.ext.Debugger(), want) })

	// A binding (the recorder's) holds the tab until it is removed.
	sid = attach(t, agent, tabA)
	want = append(want, "attachTab "+tabA)
	if err := agent.Call(ctx(t), sid, "Runtime.addBinding", map[string]string{"name": "rec"}, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * detachAfter)
	if got := e.ext.Debugger(); !slices.Equal(got, want) {
		t.Fatalf("with a binding the extension got %q, want %q", got, want)
	}
	if err := agent.Call(ctx(t), sid, "Runtime.removeBinding", map[string]string{"name": "rec"}, nil); err != nil {
		t.Fatal(err)
	}
	want = append(want, "detachTab "+tabA)
	e.waitFor("detachTab after the binding was removed", func() bool { return slices.Equal(e.ext.Debugger(), want) })

	// A task that holds the tab (waiting for its model or the person) keeps the agent's
	// session, and so its refs, until the task ends.
	sid = attach(t, agent, tabA)
	want = append(want, "attachTab "+tabA)
	task, endTask := context.WithCancel(ctx(t))
	defer endTask()
	e.srv.Hub().HoldWhile(task, tabA)
	e.srv.Hub().HoldWhile(task, "NO-SUCH-TARGET") // holds nothing, harms nothing
	time.Sleep(3 * detachAfter)
	if got := e.ext.Debugger(); !slices.Equal(got, want) {
		t.Fatalf("while a task holds the tab the extension got %q, want %q", got, want)
	}
	if err := evaluate(agent, sid, "1"); err != nil {
		t.Fatalf("the held session no longer answers: %v", err)
	}
	endTask()
	want = append(want, "detachTab "+tabA)
	e.waitFor("detachTab after the task ended", func() bool { return slices.Equal(e.ext.Debugger(), want) })
}
