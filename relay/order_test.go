package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// traceClient is a raw /cdp client that records, in arrival order, what it receives: "#N" for
// the answer to its command N (with " error" when it failed) and the method of each event.
type traceClient struct {
	t    *testing.T
	conn *websocket.Conn
	mu   sync.Mutex
	got  []string
	msgs []map[string]json.RawMessage
	next int64
}

func (e *env) traceClient() *traceClient {
	tc := &traceClient{t: e.t, conn: e.rawClient()}
	tc.conn.SetReadLimit(-1)
	go func() {
		for {
			_, b, err := tc.conn.Read(context.Background())
			if err != nil {
				return
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) != nil {
				continue
			}
			item := ""
			if id, ok := m["id"]; ok {
				item = "#" + string(id)
				if _, failed := m["error"]; failed {
					item += " error"
				}
			} else {
				var method string
				_ = json.Unmarshal(m["method"], &method)
				item = method
			}
			tc.mu.Lock()
			tc.got = append(tc.got, item)
			tc.msgs = append(tc.msgs, m)
			tc.mu.Unlock()
		}
	}()
	return tc
}

// send writes a command and returns its id.
func (tc *traceClient) send(sid, method string, params any) int64 {
	tc.t.Helper()
	tc.next++
	m := map[string]any{"id": tc.next, "method": method}
	if params != nil {
		m["params"] = params
	}
	if sid != "" {
		m["sessionId"] = sid
	}
	b, _ := json.Marshal(m)
	if err := tc.conn.Write(ctx(tc.t), websocket.MessageText, b); err != nil {
		tc.t.Fatal(err)
	}
	return tc.next
}

// wait returns what was received once cond holds on it.
func (tc *traceClient) wait(what string, cond func(got []string) bool) []string {
	tc.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		tc.mu.Lock()
		got := append([]string(nil), tc.got...)
		tc.mu.Unlock()
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			tc.t.Fatalf("%s: never happened; received %v", what, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// call sends a command and waits for its answer; it returns everything received since the
// command was sent, the answer last.
func (tc *traceClient) call(sid, method string, params any) []string {
	tc.t.Helper()
	tc.mu.Lock()
	from := len(tc.got)
	tc.mu.Unlock()
	id := tc.send(sid, method, params)
	got := tc.wait(method+" answered", func(got []string) bool { return has(got[min(from, len(got)):], fmt.Sprintf("#%d", id)) })
	return got[from:]
}

// attach attaches to a tab and returns the session id.
func (tc *traceClient) attach(targetID string) string {
	tc.t.Helper()
	id := tc.send("", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	tc.wait("attached", func(got []string) bool { return has(got, fmt.Sprintf("#%d", id)) })
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, m := range tc.msgs {
		if string(m["id"]) == fmt.Sprint(id) {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(m["result"], &r)
			return r.SessionID
		}
	}
	tc.t.Fatal("no attach answer")
	return ""
}

// since returns what was received after the first n items.
func (tc *traceClient) since(n int) []string {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return append([]string(nil), tc.got[min(n, len(tc.got)):]...)
}

func (tc *traceClient) count() int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return len(tc.got)
}

func has(list []string, item string) bool {
	for _, s := range list {
		if s == item {
			return true
		}
	}
	return false
}

// events keeps only the events of a trace.
func events(got []string) []string {
	var out []string
	for _, s := range got {
		if !strings.HasPrefix(s, "#") {
			out = append(out, s)
		}
	}
	return out
}

// TestSessionOrderAcrossClients: the answers and replays the relay makes itself never overtake
// the same session's earlier commands that wait on the tab, even when the extension answers
// out of order. Chrome's order for Playwright's page setup is Page.enable, Page.getFrameTree,
// executionContextCreated, Runtime.enable; Playwright ignores a context of a frame it does not
// know yet and then waits forever for its main world.
func TestSessionOrderAcrossClients(t *testing.T) {
	cases := []struct {
		name string
		cmds []string // sent back to back by B, the getFrameTree held in the tab
		// last names the last of them to reach the tab, and how many of it the tab then has
		last  string
		lastN int
		want  []string
	}{
		{
			name: "Runtime.enable after a slow getFrameTree",
			cmds: []string{"Page.enable", "Page.getFrameTree", "Runtime.enable"},
			last: "Runtime.enable", lastN: 2,
			want: []string{"#2", "#3", "Runtime.executionContextCreated", "Runtime.consoleAPICalled", "#4"},
		},
		{
			name: "Runtime.disable kept on for the other client",
			cmds: []string{"Runtime.enable", "Page.getFrameTree", "Runtime.disable"},
			last: "Page.getFrameTree", lastN: 1,
			want: []string{"Runtime.executionContextCreated", "Runtime.consoleAPICalled", "#2", "#3", "#4"},
		},
		{
			name: "Log.enable replays its entries after the earlier commands",
			cmds: []string{"Page.getFrameTree", "Log.enable"},
			last: "Log.enable", lastN: 2,
			want: []string{"#2", "Log.entryAdded", "#3"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{})
			e.share(tabA, "https://a.example/")
			// A, another client (the agent, say), has Runtime and Log on and saw a console message
			a := e.traceClient()
			sa := a.attach(tabA)
			a.call(sa, "Runtime.enable", nil)
			a.call(sa, "Log.enable", nil)
			if err := e.ext.Event(tabA, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}, "executionContextId": 1, "timestamp": 1}); err != nil {
				t.Fatal(err)
			}
			if err := e.ext.Event(tabA, "", "Log.entryAdded", map[string]any{"entry": map[string]any{"source": "network", "level": "error", "text": "x", "timestamp": 1}}); err != nil {
				t.Fatal(err)
			}
			a.wait("A saw both", func(got []string) bool {
				return has(got, "Runtime.consoleAPICalled") && has(got, "Log.entryAdded")
			})

			release := make(chan struct{})
			var once sync.Once
			t.Cleanup(func() { once.Do(func() { close(release) }) })
			e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
				if cmd.Method == "Page.getFrameTree" {
					<-release
				}
				return nil, nil, false
			})
			b := e.traceClient()
			sb := b.attach(tabA)
			from := b.count()
			for _, m := range tc.cmds {
				b.send(sb, m, nil)
			}
			last := fmt.Sprintf("#%d", b.next)
			// every command reached the tab (the extension answers all but getFrameTree at once)
			e.waitFor("B's commands reached the tab", func() bool { return countMethod(e.ext, tc.last) >= tc.lastN })
			// an answer on another session proves the relay handled the tab's answers
			a.call(sa, "Runtime.evaluate", map[string]string{"expression": "1"})
			before := b.since(from)
			once.Do(func() { close(release) })
			got := b.wait("B's last answer", func(got []string) bool { return has(got, last) })[from:]
			if !equalStrings(got, tc.want) {
				t.Fatalf("B received %v, want %v (before the getFrameTree answer: %v)", got, tc.want, before)
			}
		})
	}
}

// TestEventsOnlyForWhatTheSessionEnabled: a session gets a domain's events only once it
// enabled the domain, whatever other clients of the tab enabled, and the events it switched on
// with a command; a later enable replays what Chrome replays.
func TestEventsOnlyForWhatTheSessionEnabled(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	a, b := e.traceClient(), e.traceClient()
	sa, sb := a.attach(tabA), b.attach(tabA)
	for _, m := range []string{"Runtime.enable", "Page.enable", "Network.enable", "Log.enable"} {
		a.call(sa, m, nil)
	}
	a.call(sa, "Page.setLifecycleEventsEnabled", map[string]bool{"enabled": true})
	a.call(sa, "Runtime.addBinding", map[string]string{"name": "fromA"})
	// B uses the domains without enabling them
	b.call(sb, "Runtime.evaluate", map[string]string{"expression": "1"})
	b.call(sb, "Page.getFrameTree", nil)
	b.call(sb, "Network.getCookies", nil)
	b.call(sb, "Page.enable", nil)

	fire := func() {
		t.Helper()
		for _, ev := range []struct {
			method string
			params any
		}{
			{"Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}, "executionContextId": 1, "timestamp": 1}},
			{"Network.requestWillBeSent", map[string]any{"requestId": "1"}},
			{"Page.lifecycleEvent", map[string]any{"name": "load"}},
			{"Page.loadEventFired", map[string]any{"timestamp": 1}},
			{"Runtime.bindingCalled", map[string]any{"name": "fromA", "payload": "x", "executionContextId": 1}},
			{"Log.entryAdded", map[string]any{"entry": map[string]any{"source": "network", "level": "error", "text": "x", "timestamp": 1}}},
		} {
			if err := e.ext.Event(tabA, "", ev.method, ev.params); err != nil {
				t.Fatal(err)
			}
		}
	}
	fromA, fromB := a.count(), b.count()
	fire()
	a.wait("A got all", func(got []string) bool { return len(events(got[fromA:])) == 6 })
	// a round trip on B after the events proves any event for it has arrived
	b.call(sb, "Runtime.evaluate", map[string]string{"expression": "2"})
	if got, want := events(b.since(fromB)), []string{"Page.loadEventFired"}; !equalStrings(got, want) {
		t.Fatalf("B, which enabled Page only, received %v, want %v", got, want)
	}

	// B enables Runtime: the context and the stored console message are replayed, before the answer
	got := b.call(sb, "Runtime.enable", nil)
	if want := []string{"Runtime.executionContextCreated", "Runtime.consoleAPICalled", got[len(got)-1]}; !equalStrings(got, want) {
		t.Fatalf("B's Runtime.enable: %v, want %v", got, want)
	}
	// now B gets Runtime events (and still not A's binding calls nor its lifecycle events)
	fromA, fromB = a.count(), b.count()
	fire()
	b.call(sb, "Runtime.evaluate", map[string]string{"expression": "3"})
	if got, want := events(b.since(fromB)), []string{"Runtime.consoleAPICalled", "Page.loadEventFired"}; !equalStrings(got, want) {
		t.Fatalf("B after its Runtime.enable received %v, want %v", got, want)
	}
	// A's share of that round, before the next round is counted
	a.wait("A got all", func(got []string) bool { return len(events(got[fromA:])) == 6 })
	// a disable stops them for B only
	b.call(sb, "Runtime.disable", nil)
	fromA, fromB = a.count(), b.count()
	fire()
	a.wait("A got all", func(got []string) bool { return len(events(got[fromA:])) == 6 })
	b.call(sb, "Runtime.evaluate", map[string]string{"expression": "4"})
	if got, want := events(b.since(fromB)), []string{"Page.loadEventFired"}; !equalStrings(got, want) {
		t.Fatalf("B after its Runtime.disable received %v, want %v", got, want)
	}
}

// TestBrowserContextsAsChrome: Target.getBrowserContexts names the default context, and an
// iframe target reports the same browserContextId as its page.
func TestBrowserContextsAsChrome(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	if err := e.ext.AttachChild(tabA, "CHILD1", "FRAME1", "https://b.example/"); err != nil {
		t.Fatal(err)
	}
	c := e.client("/cdp")
	var ctxs struct {
		IDs     []string `json:"browserContextIds"`
		Default string   `json:"defaultBrowserContextId"`
	}
	if err := c.Call(ctx(t), "", "Target.getBrowserContexts", nil, &ctxs); err != nil || ctxs.Default == "" || ctxs.IDs == nil {
		t.Fatalf("Target.getBrowserContexts: %+v %v", ctxs, err)
	}
	var infos struct {
		TargetInfos []struct {
			Type             string `json:"type"`
			BrowserContextID string `json:"browserContextId"`
		} `json:"targetInfos"`
	}
	e.waitFor("the iframe listed", func() bool {
		if err := c.Call(ctx(t), "", "Target.getTargets", nil, &infos); err != nil {
			t.Fatal(err)
		}
		for _, ti := range infos.TargetInfos {
			if ti.Type == "iframe" {
				return true
			}
		}
		return false
	})
	for _, ti := range infos.TargetInfos {
		if ti.Type != "browser" && ti.BrowserContextID != ctxs.Default {
			t.Errorf("%s target in browser context %q, want the default %q", ti.Type, ti.BrowserContextID, ctxs.Default)
		}
	}
}
