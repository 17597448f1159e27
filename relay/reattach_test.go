package relay_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// reshare announces tabA again with reattached:true, as the extension does after it attached
// the debugger anew (a target_closed detach, a service-worker or relay restart).
func (e *env) reshare() {
	e.t.Helper()
	if err := e.ext.ShareTab(wire.Tab{TabID: 1, TargetID: tabA, URL: "https://a.example/", Title: "title " + tabA, Origin: wire.OriginUser, Active: true, Reattached: true}); err != nil {
		e.t.Fatal(err)
	}
}

// runtimeEvents records the Runtime context events a client receives on one session, in order.
type runtimeEvents struct {
	mu  sync.Mutex
	got []string
}

func recordRuntime(c *cdpclient.Client, sid string) *runtimeEvents {
	r := &runtimeEvents{}
	c.Subscribe(func(ev cdpclient.Event) {
		if ev.SessionID != sid {
			return
		}
		switch ev.Method {
		case "Runtime.executionContextCreated", "Runtime.executionContextsCleared", "Runtime.executionContextDestroyed":
			r.mu.Lock()
			r.got = append(r.got, ev.Method)
			r.mu.Unlock()
		}
	})
	return r
}

func (r *runtimeEvents) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// enableGetsContext has a new client attach to tabA and enable Runtime; it must receive the
// main world's Runtime.executionContextCreated, as Playwright waits for it.
func enableGetsContext(t *testing.T, e *env, who string) {
	t.Helper()
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	w := c.Expect(sid, "Runtime.executionContextCreated", nil)
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Call(cctx, sid, "Runtime.enable", nil, nil); err != nil {
		t.Fatalf("%s: Runtime.enable: %v", who, err)
	}
	if _, err := w.Wait(cctx); err != nil {
		t.Fatalf("%s: no Runtime.executionContextCreated after Runtime.enable: %v", who, err)
	}
}

// After a tab is re-attached, the relay's cache of execution contexts is rebuilt: clients that
// had Runtime on see the old contexts cleared and the new ones created, and a client that enables
// Runtime later gets the contexts replayed (or, when nobody had Runtime on, from the tab itself).
func TestReattachRebuildsExecutionContexts(t *testing.T) {
	t.Run("a client had Runtime on", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{})
		e.share(tabA, "https://a.example/")
		a := e.client("/cdp")
		sa := attach(t, a, tabA)
		rec := recordRuntime(a, sa)
		if err := a.Call(ctx(t), sa, "Runtime.enable", nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitFor("A's first context", func() bool { return len(rec.list()) == 1 })

		before := len(e.ext.Commands())
		e.reshare()
		e.waitFor("Runtime re-enabled in the re-attached tab", func() bool { return len(e.sentSince(before, "Runtime.enable")) > 0 })
		e.waitWithin(5*time.Second, "A told of the new contexts", func() bool { return len(rec.list()) == 3 })
		want := []string{"Runtime.executionContextCreated", "Runtime.executionContextsCleared", "Runtime.executionContextCreated"}
		if got := rec.list(); !equalStrings(got, want) {
			t.Fatalf("A's context events across the re-attach: %v, want %v", got, want)
		}
		enableGetsContext(t, e, "a new client")
	})

	t.Run("a client enables Runtime while the re-enable is in flight", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{})
		e.share(tabA, "https://a.example/")
		a := e.client("/cdp")
		sa := attach(t, a, tabA)
		if err := a.Call(ctx(t), sa, "Runtime.enable", nil, nil); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		var once sync.Once
		t.Cleanup(func() { once.Do(func() { close(release) }) })
		e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
			if cmd.Method == "Runtime.enable" {
				<-release // the relay's re-enable is answered when the test says so
			}
			return nil, nil, false
		})
		before := len(e.ext.Commands())
		e.reshare()
		e.waitFor("the relay's Runtime.enable reached the re-attached tab", func() bool { return len(e.sentSince(before, "Runtime.enable")) > 0 })
		b, sent := e.hookedClient(t, "Runtime.enable")
		sb := attach(t, b, tabA)
		rec := recordRuntime(b, sb)
		errB := make(chan error, 1)
		go func() { errB <- b.Call(context.Background(), sb, "Runtime.enable", nil, nil) }()
		<-sent
		// B's commands are handled in order: once this answer is back, B's enable is parked
		if err := b.Call(ctx(t), sb, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
			t.Fatal(err)
		}
		once.Do(func() { close(release) })
		select {
		case err := <-errB:
			if err != nil {
				t.Fatalf("B's Runtime.enable: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("B's Runtime.enable, parked behind the relay's re-enable, was never answered")
		}
		// a command's answer after the enable's proves the context events were delivered
		if err := b.Call(ctx(t), sb, "Runtime.evaluate", map[string]string{"expression": "2"}, nil); err != nil {
			t.Fatal(err)
		}
		if got, want := rec.list(), []string{"Runtime.executionContextCreated"}; !equalStrings(got, want) {
			t.Fatalf("B's context events: %v, want %v (once each)", got, want)
		}
	})

	t.Run("nobody had Runtime on", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{})
		e.share(tabA, "https://a.example/")
		a := e.client("/cdp")
		sa := attach(t, a, tabA)
		for _, m := range []string{"Runtime.enable", "Runtime.disable", "Page.enable"} {
			if err := a.Call(ctx(t), sa, m, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		before := len(e.ext.Commands())
		e.reshare()
		e.waitFor("Page re-enabled", func() bool { return len(e.sentSince(before, "Page.enable")) > 0 })
		enableGetsContext(t, e, "a new client")
		if n := len(e.sentSince(before, "Runtime.enable")); n != 1 {
			t.Errorf("Runtime.enable reached the re-attached tab %d times, want 1 (the new client's, forwarded)", n)
		}
	})

	t.Run("the extension reconnects", func(t *testing.T) {
		e := newEnv(t, relay.HubOptions{Grace: 5 * time.Second})
		e.share(tabA, "https://a.example/")
		a := e.client("/cdp")
		sa := attach(t, a, tabA)
		rec := recordRuntime(a, sa)
		if err := a.Call(ctx(t), sa, "Runtime.enable", nil, nil); err != nil {
			t.Fatal(err)
		}
		e.waitFor("A's first context", func() bool { return len(rec.list()) == 1 })
		e.ext.Close()
		e.ext = e.dialExt()
		e.reshare()
		e.waitWithin(5*time.Second, "A told of the new contexts", func() bool { return len(rec.list()) == 3 })
		enableGetsContext(t, e, "a new client")
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A tab whose debugger session already has Runtime on (the clients of a relay that restarted
// left it on, and the extension kept the tab attached) announces no contexts for a new
// Runtime.enable: the relay notices and has them announced again.
func TestRuntimeEnableWhenTabHadRuntimeOn(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	e.ext.LeaveEnabled(tabA, "", "Runtime")
	enableGetsContext(t, e, "the first client")
	enableGetsContext(t, e, "a second client")
	n := countMethod(e.ext, "Runtime.enable")
	if n != 3 {
		t.Errorf("Runtime.enable reached the tab %d times, want 3 (the first client's, once more after Runtime.disable, then the second client's, answered in its order and followed by the relay's replay)", n)
	}
}
