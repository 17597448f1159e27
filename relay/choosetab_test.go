package relay_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/relay"
)

// TestChooseTabWhenNothingShared: a CDP client connecting to the browser endpoint while no tab
// is shared makes the relay tell the extension (chooseTab, client "cdp"), once per client; with
// a tab shared, or for a page endpoint, nothing is sent; OfferTab (the agent's door) does the
// same and says whether it asked.
func TestChooseTabWhenNothingShared(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.client("/cdp")
	e.waitFor("a chooseTab notice", func() bool { return len(e.ext.ChooseTabs()) == 1 })
	if got := e.ext.ChooseTabs(); got[0] != "cdp" {
		t.Fatalf("chooseTab notices: %q, want [cdp]", got)
	}
	if !e.srv.Hub().OfferTab("agent") {
		t.Fatal("OfferTab with nothing shared did not ask")
	}
	e.waitFor("the agent's chooseTab notice", func() bool { return len(e.ext.ChooseTabs()) == 2 })

	e.share("AAAA1111BBBB2222CCCC3333DDDD4444", "https://example.com/")
	e.client("/cdp")
	e.client("/devtools/page/AAAA1111BBBB2222CCCC3333DDDD4444")
	if e.srv.Hub().OfferTab("agent") {
		t.Fatal("OfferTab with a tab shared asked")
	}
	// the notice is queued while the client registers, and logged then: the log is exact
	if n := strings.Count(e.logs.String(), "asked the extension to offer a choice of tab"); n != 2 {
		t.Fatalf("the relay asked for a tab %d times, want 2 (none with a tab shared)", n)
	}
}

// TestChooseTabWhenExtensionComesLater: a CDP client connects while no extension is connected
// (the server started first, the browser comes up later); when the extension connects and
// announces no tab, the relay offers the choice then. An extension that comes back still
// sharing a tab is not asked.
func TestChooseTabWhenExtensionComesLater(t *testing.T) {
	tests := []struct {
		name   string
		shares bool
		want   int
	}{
		{"nothing shared", false, 1},
		{"a tab shared again", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvNoExt(t, relay.HubOptions{Grace: time.Second})
			e.client("/cdp")
			e.ext = e.dialExt()
			if tt.shares {
				e.share("AAAA1111BBBB2222CCCC3333DDDD4444", "https://example.com/")
			}
			// the offer comes once the extension has had time to announce its tabs (the settle
			// after its hello): the hub logs that moment
			e.waitWithin(30*time.Second, "the extension's tabs announced", func() bool {
				return strings.Contains(e.logs.String(), "the extension has announced its tabs")
			})
			if tt.want > 0 {
				e.waitFor("a chooseTab notice", func() bool { return len(e.ext.ChooseTabs()) >= tt.want })
			}
			if got := len(e.ext.ChooseTabs()); got != tt.want {
				t.Fatalf("chooseTab notices: %d, want %d", got, tt.want)
			}
		})
	}
}

// TestChooseTabEndsWhenNobodyWaits: the extension is told that nobody waits for a tab any more
// (chooseTabEnded) once the last one that caused a chooseTab stops waiting with no tab shared:
// a CDP client that disconnects, a wait held through OfferTabWhile whose context ends. While
// another one still waits, or once a tab is shared, nothing is sent.
func TestChooseTabEndsWhenNobodyWaits(t *testing.T) {
	tests := []struct {
		name string
		// run makes the waits and ends them one by one; before each end but the last, one still waits
		run func(e *env) []func()
		// shareFirst shares a tab before the last wait ends (no notice then)
		shareFirst bool
	}{
		{"a CDP client disconnects", func(e *env) []func() {
			c := e.client("/cdp")
			return []func(){func() { c.Close() }}
		}, false},
		{"the agent's wait ends", func(e *env) []func() {
			ctx, cancel := context.WithCancel(context.Background())
			if !e.srv.Hub().OfferTabWhile(ctx, "agent") {
				e.t.Fatal("OfferTabWhile with nothing shared did not ask")
			}
			return []func(){cancel}
		}, false},
		{"a client and the agent, one after the other", func(e *env) []func() {
			c := e.client("/cdp")
			ctx, cancel := context.WithCancel(context.Background())
			if !e.srv.Hub().OfferTabWhile(ctx, "agent") {
				e.t.Fatal("OfferTabWhile with nothing shared did not ask")
			}
			return []func(){cancel, func() { c.Close() }}
		}, false},
		{"a tab was shared before the client left", func(e *env) []func() {
			c := e.client("/cdp")
			return []func(){func() { c.Close() }}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{})
			ends := tt.run(e)
			e.waitFor("the chooseTab notices", func() bool { return len(e.ext.ChooseTabs()) == len(ends) })
			// each end is logged (a client's leaving, an agent's wait), after the hub counted it out
			ended := func() int {
				return strings.Count(e.logs.String(), "client left") + strings.Count(e.logs.String(), "a wait for a tab ended")
			}
			for i, end := range ends {
				if i == len(ends)-1 && tt.shareFirst {
					e.share("AAAA1111BBBB2222CCCC3333DDDD4444", "https://example.com/")
				}
				end()
				e.waitFor("the wait counted out", func() bool { return ended() == i+1 })
			}
			want := 1
			if tt.shareFirst {
				want = 0
				if err := e.ext.Unshare("AAAA1111BBBB2222CCCC3333DDDD4444", "closed"); err != nil {
					t.Fatal(err)
				}
				e.waitFor("the tab gone", func() bool { return !e.hasTab("AAAA1111BBBB2222CCCC3333DDDD4444") })
			}
			// the relay's notices reach the extension in order: once a later chooseTab arrived,
			// every notice sent before it has too
			e.client("/cdp")
			e.waitFor("a later chooseTab notice", func() bool { return len(e.ext.ChooseTabs()) == len(ends)+1 })
			if n := e.ext.ChooseTabEnds(); n != want {
				t.Fatalf("chooseTabEnded notices: %d, want %d", n, want)
			}
		})
	}
}

// TestOfferTabWhileCountsNothingUnasked: with a tab shared OfferTabWhile asks nothing and counts
// no wait, so no chooseTabEnded follows its end.
func TestOfferTabWhileCountsNothingUnasked(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share("AAAA1111BBBB2222CCCC3333DDDD4444", "https://example.com/")
	ctx, cancel := context.WithCancel(context.Background())
	if e.srv.Hub().OfferTabWhile(ctx, "agent") {
		t.Fatal("OfferTabWhile with a tab shared asked")
	}
	cancel()
	if err := e.ext.Unshare("AAAA1111BBBB2222CCCC3333DDDD4444", "closed"); err != nil {
		t.Fatal(err)
	}
	e.waitFor("the tab gone", func() bool { return !e.hasTab("AAAA1111BBBB2222CCCC3333DDDD4444") })
	c := e.client("/cdp") // a later offer and its end: exactly one notice
	e.waitFor("the chooseTab notice", func() bool { return len(e.ext.ChooseTabs()) == 1 })
	c.Close()
	e.waitFor("a chooseTabEnded notice", func() bool { return e.ext.ChooseTabEnds() == 1 })
	if got := e.ext.ChooseTabs(); got[0] != "cdp" {
		t.Fatalf("chooseTab notices: %q", got)
	}
}
