package relay_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

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
