package relay_test

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// TestDiscoveryOnPageSession: as in Chrome, Target.setDiscoverTargets on a page session makes
// that session (and not the browser session, which did not ask) get the discovery events, and
// a target no client has a session on is announced with attached false (chromedp's
// WaitNewTarget, on the page session, waits for a tab the page opened that nobody attached to).
func TestDiscoveryOnPageSession(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sid := attach(t, c, tabA)

	type seen struct{ session, targetID string }
	var mu sync.Mutex
	var events []seen
	unsub := c.Subscribe(func(ev cdpclient.Event) {
		if ev.Method != "Target.targetCreated" {
			return
		}
		var p struct {
			TargetInfo struct {
				TargetID string `json:"targetId"`
			} `json:"targetInfo"`
		}
		_ = json.Unmarshal(ev.Params, &p)
		mu.Lock()
		events = append(events, seen{ev.SessionID, p.TargetInfo.TargetID})
		mu.Unlock()
	})
	defer unsub()

	mine := c.Expect(sid, "Target.targetCreated", func(ev cdpclient.Event) bool { return targetOf(t, ev).TargetID == tabA })
	if err := c.Call(ctx(t), sid, "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		t.Fatal(err)
	}
	ev, err := mine.Wait(ctx(t))
	if err != nil {
		t.Fatalf("the page session's discovery did not announce its own tab: %v", err)
	}
	if info := targetOf(t, ev); !info.Attached {
		t.Errorf("tab A, which this client is attached to, announced with attached false: %+v", info)
	}

	opened := c.Expect(sid, "Target.targetCreated", func(ev cdpclient.Event) bool { return targetOf(t, ev).TargetID == tabB })
	if err := e.ext.ShareTab(wire.Tab{TabID: 77, TargetID: tabB, URL: "https://a.example/popup", Title: "popup", Origin: wire.OriginUser, OpenerTargetID: tabA}); err != nil {
		t.Fatal(err)
	}
	ev, err = opened.Wait(ctx(t))
	if err != nil {
		t.Fatalf("the page session was not told of the tab its page opened: %v", err)
	}
	if info := targetOf(t, ev); info.Attached || info.OpenerID != tabA {
		t.Errorf("the opened tab, which nobody attached to, announced as %+v; want attached false, openerId %s", info, tabA)
	}
	// The browser session did not ask: an answer on it comes after any event sent before it.
	if err := c.Call(ctx(t), "", "Browser.getVersion", nil, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, s := range events {
		if s.session != sid {
			t.Errorf("Target.targetCreated for %s on session %q, which did not ask for discovery", s.targetID, s.session)
		}
	}
}

// announced is the part of a TargetInfo the discovery tests check.
type announced struct {
	TargetID string `json:"targetId"`
	Attached bool   `json:"attached"`
	OpenerID string `json:"openerId"`
}

func targetOf(t *testing.T, ev cdpclient.Event) announced {
	t.Helper()
	var p struct {
		TargetInfo announced `json:"targetInfo"`
	}
	if err := json.Unmarshal(ev.Params, &p); err != nil {
		t.Errorf("%s: %v", ev.Method, err)
	}
	return p.TargetInfo
}
