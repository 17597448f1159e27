package relay_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

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

// TestCloseTargetAnsweredBeforeDetach: as in Chrome, Target.closeTarget is answered before the
// closed tab's sessions are detached, and a command pending on the tab then is not answered
// before its session's Target.detachedFromTarget (chromedp's tests wait on both: a command that
// ended first with tabrelay's own error left their goroutine calling closeTarget after the test).
func TestCloseTargetAnsweredBeforeDetach(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	conn := e.rawClient()
	type msg struct {
		ID     int64           `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
		Params json.RawMessage `json:"params"`
	}
	var order []string // what arrived, in order: "answer N" or an event's method
	read := func(until func(m msg) bool) msg {
		t.Helper()
		for {
			_, b, err := conn.Read(ctx(t))
			if err != nil {
				t.Fatalf("read: %v (so far: %v)", err, order)
			}
			var m msg
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if m.Method != "" {
				order = append(order, m.Method)
			} else {
				order = append(order, fmt.Sprintf("answer %d", m.ID))
			}
			if until(m) {
				return m
			}
		}
	}
	send := func(id int64, method string, params any) msg {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
		if err := conn.Write(ctx(t), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		return read(func(m msg) bool { return m.ID == id && m.Method == "" })
	}
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := json.Unmarshal(send(1, "Target.createTarget", map[string]string{"url": "about:blank"}).Result, &created); err != nil || created.TargetID == "" {
		t.Fatalf("createTarget: %v %+v", err, created)
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(send(2, "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}).Result, &attached); err != nil || attached.SessionID == "" {
		t.Fatalf("attachToTarget: %v", err)
	}
	order = nil
	b, _ := json.Marshal(map[string]any{"id": 3, "method": "Target.closeTarget", "params": map[string]string{"targetId": created.TargetID}})
	if err := conn.Write(ctx(t), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	seenAnswer, seenDetach := false, false
	read(func(m msg) bool {
		if m.ID == 3 && m.Method == "" {
			if len(m.Error) > 0 {
				t.Errorf("closeTarget failed: %s", m.Error)
			}
			seenAnswer = true
		}
		if m.Method == "Target.detachedFromTarget" && strings.Contains(string(m.Params), attached.SessionID) {
			if !seenAnswer {
				t.Errorf("the session was detached before closeTarget was answered: %v", order)
			}
			seenDetach = true
		}
		return seenAnswer && seenDetach
	})
}

// TestClosedTargetGoneAtOnce: a tab a client asks to close is gone for every client once the
// close is answered (its sessions detached, Target.targetDestroyed, no longer listed), although
// the browser takes its time to close it: clients poll the list for it to go (chromedp for half
// a second, Stagehand for two) and then read their pages from the events.
func TestClosedTargetGoneAtOnce(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	other := e.client("/cdp")
	if err := other.Call(ctx(t), "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	other.Subscribe(func(ev cdpclient.Event) {
		if ev.Method == "Target.targetDestroyed" || ev.Method == "Target.detachedFromTarget" {
			mu.Lock()
			seen = append(seen, ev.Method)
			mu.Unlock()
		}
	})
	listed := func() []string {
		t.Helper()
		var r struct {
			TargetInfos []struct{ TargetID, Type string }
		}
		if err := other.Call(ctx(t), "", "Target.getTargets", nil, &r); err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, ti := range r.TargetInfos {
			if ti.Type == "page" {
				ids = append(ids, ti.TargetID)
			}
		}
		slices.Sort(ids)
		return ids
	}
	var created struct{ TargetID string }
	if err := c.Call(ctx(t), "", "Target.createTarget", map[string]string{"url": "about:blank"}, &created); err != nil {
		t.Fatal(err)
	}
	if err := other.Call(ctx(t), "", "Target.attachToTarget", map[string]any{"targetId": created.TargetID, "flatten": true}, nil); err != nil {
		t.Fatal(err)
	}
	if got, want := listed(), slices.Sorted(slices.Values([]string{tabA, created.TargetID})); !slices.Equal(got, want) {
		t.Fatalf("listed %v before the close, want %v", got, want)
	}
	release := e.ext.HoldCloses()
	defer release()
	if err := c.Call(ctx(t), "", "Target.closeTarget", map[string]string{"targetId": created.TargetID}, nil); err != nil {
		t.Fatal(err)
	}
	if got := listed(); !slices.Equal(got, []string{tabA}) {
		t.Errorf("listed %v while the browser closes the tab, want only %v", got, tabA)
	}
	e.waitFor("the other client told the tab is gone", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.Contains(seen, "Target.detachedFromTarget") && slices.Contains(seen, "Target.targetDestroyed")
	})
	e.waitFor("the extension asked to close the tab", func() bool { return slices.Equal(e.ext.Closes(), []string{created.TargetID}) })
}
