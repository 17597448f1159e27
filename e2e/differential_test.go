package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// The differential isolation suite: the same scripted multi-client scenario runs against
// Chrome's own DevTools endpoint (a separate headless Chromium on a fresh profile) and against
// tabrelay (the real extension), with raw CDP over WebSocket, and each client must receive the
// same events from both, step by step.

// diffClient is a raw CDP client attached to one page with a flat session; it records the
// events of that session.
type diffClient struct {
	conn *websocket.Conn
	sid  string

	mu      sync.Mutex
	raw     [][]byte // every message that is not an event
	events  []diffEvent
	answers map[int64]json.RawMessage
	next    int64
}

type diffEvent struct {
	method string
	params json.RawMessage
}

func dialDiff(t *testing.T, ctx context.Context, wsURL string, header http.Header, targetID string) *diffClient {
	t.Helper()
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		t.Fatalf("dial %s: %v", wsURL, err)
	}
	conn.SetReadLimit(-1)
	t.Cleanup(func() { conn.CloseNow() })
	c := &diffClient{conn: conn, answers: map[int64]json.RawMessage{}}
	go func() {
		for {
			_, b, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				ID        *int64          `json:"id"`
				Method    string          `json:"method"`
				SessionID string          `json:"sessionId"`
				Params    json.RawMessage `json:"params"`
			}
			if json.Unmarshal(b, &m) != nil {
				continue
			}
			c.mu.Lock()
			if m.Method == "" {
				c.raw = append(c.raw, b)
			}
			switch {
			case m.ID != nil:
				c.answers[*m.ID] = b
			case m.SessionID != "" && m.SessionID == c.sid:
				c.events = append(c.events, diffEvent{m.Method, m.Params})
			}
			c.mu.Unlock()
		}
	}()
	var r struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if err := json.Unmarshal(c.call(t, ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}), &r); err != nil || r.Result.SessionID == "" {
		t.Fatalf("attach to %s: %v", targetID, err)
	}
	c.mu.Lock()
	c.sid = r.Result.SessionID
	c.mu.Unlock()
	return c
}

// call sends a command (on the page session unless sid is "-" … or "" for the browser) and
// returns the whole answer message.
func (c *diffClient) call(t *testing.T, ctx context.Context, sid, method string, params any) []byte {
	t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	c.mu.Unlock()
	m := map[string]any{"id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	if sid != "" {
		m["sessionId"] = sid
	}
	b, _ := json.Marshal(m)
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	for {
		c.mu.Lock()
		a, ok := c.answers[id]
		c.mu.Unlock()
		if ok {
			if strings.Contains(string(a), `"error":`) {
				t.Fatalf("%s: %s", method, a)
			}
			return a
		}
		if ctx.Err() != nil {
			t.Fatalf("%s: no answer: %v", method, ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (c *diffClient) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.events)
}

func (c *diffClient) since(n int) []diffEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]diffEvent(nil), c.events[n:]...)
}

// diffStep is one command of a scenario: client (index) sends method; the step ends when the
// client received the until events (in any order) and every client made a round trip after.
type diffStep struct {
	client int
	method string
	params any
	until  []string
}

// normalize turns a step's events into what is compared: the method names in order, except
// the Network domain's, whose order and number Chrome does not fix (the *ExtraInfo events come
// from the network service on their own; a body arrives in any number of dataReceived): for
// each request the page started in the step, the set of its events' names, sorted and
// appended. Requests for /favicon.ico (and their Log entries) are the browser's, not the
// page's, made at a time of its choosing, and left out, as are
// the last events of requests started before the step. Page.frameResized is left out (see
// below).
func normalize(evs []diffEvent) string {
	type netParams struct {
		RequestID string `json:"requestId"`
		Request   struct {
			URL string `json:"url"`
		} `json:"request"`
	}
	started := map[string]bool{}
	for _, ev := range evs {
		var p netParams
		if ev.method == "Network.requestWillBeSent" && json.Unmarshal(ev.params, &p) == nil && !strings.HasSuffix(p.Request.URL, "/favicon.ico") {
			started[p.RequestID] = true
		}
	}
	var ordered, network []string
	seen := map[string]bool{}
	for _, ev := range evs {
		if ev.method == "Page.frameResized" {
			// the bar Chrome shows on a tab an extension debugs ("… started debugging this
			// browser") resizes the page when it comes and goes; Chrome's own endpoint has none
			continue
		}
		if ev.method == "Log.entryAdded" {
			var p struct {
				Entry struct {
					URL string `json:"url"`
				} `json:"entry"`
			}
			if json.Unmarshal(ev.params, &p) == nil && strings.HasSuffix(p.Entry.URL, "/favicon.ico") {
				continue // the browser's favicon request failed, whenever it was made
			}
		}
		if !strings.HasPrefix(ev.method, "Network.") {
			ordered = append(ordered, ev.method)
			continue
		}
		var p netParams
		_ = json.Unmarshal(ev.params, &p)
		if p.RequestID != "" && !started[p.RequestID] {
			continue
		}
		if key := p.RequestID + " " + ev.method; p.RequestID == "" || !seen[key] {
			seen[key] = true
			network = append(network, ev.method)
		}
	}
	sort.Strings(network)
	return strings.Join(ordered, " ") + " | " + strings.Join(network, " ")
}

// runDiff runs steps with nClients clients on targetID and returns, per client, the
// normalized events of each step.
func runDiff(t *testing.T, ctx context.Context, wsURL string, header http.Header, targetID string, nClients int, steps []diffStep) [][]string {
	t.Helper()
	clients := make([]*diffClient, nClients)
	for i := range clients {
		clients[i] = dialDiff(t, ctx, wsURL, header, targetID)
	}
	out := make([][]string, nClients)
	for i, st := range steps {
		from := make([]int, nClients)
		for j, c := range clients {
			from[j] = c.count()
		}
		c := clients[st.client]
		c.call(t, ctx, c.sid, st.method, st.params)
		for _, want := range st.until {
			for !hasEvent(c.since(from[st.client]), want) {
				if ctx.Err() != nil {
					t.Fatalf("step %d (%s): client %d never got %s", i, st.method, st.client, want)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
		// a round trip on every session after the step: the events the step caused are in
		for _, c := range clients {
			c.call(t, ctx, c.sid, "Runtime.evaluate", map[string]any{"expression": "0"})
		}
		for j, c := range clients {
			out[j] = append(out[j], fmt.Sprintf("%d %s: %s", i, st.method, normalize(c.since(from[j]))))
		}
	}
	return out
}

func hasEvent(evs []diffEvent, method string) bool {
	for _, ev := range evs {
		if ev.method == method {
			return true
		}
	}
	return false
}

// TestDifferentialEventIsolation: two clients on one tab (A enables Runtime, Page, Network and
// Log and makes the page log, fetch and navigate; B only evaluates, reads the frame tree and
// cookies, then enables Runtime and Log late, then disables Runtime) and a third that enables
// Runtime after the navigation receive, each, the same events from tabrelay as from Chrome's
// own endpoint.
func TestDifferentialEventIsolation(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nonce := fmt.Sprint(time.Now().UnixNano())
	start := e.site.URL("/other.html?diff=start-" + nonce)
	eval := func(client int, expr string, until ...string) diffStep {
		return diffStep{client: client, method: "Runtime.evaluate", params: map[string]any{"expression": expr, "awaitPromise": true}, until: until}
	}
	steps := []diffStep{
		{client: 0, method: "Runtime.enable"},
		{client: 0, method: "Page.enable"},
		{client: 0, method: "Network.enable"},
		{client: 0, method: "Log.enable"},
		eval(1, "1+1"),
		{client: 1, method: "Page.getFrameTree"},
		{client: 1, method: "Network.getCookies"},
		eval(0, "console.log('one'); console.warn('two')", "Runtime.consoleAPICalled"),
		eval(0, "fetch('/other.html?diff=fetch-"+nonce+"').then(r => r.text()).then(t => t.length)", "Network.loadingFinished"),
		eval(0, "fetch('/missing-"+nonce+"').then(r => r.status)", "Network.loadingFinished", "Log.entryAdded"),
		{client: 1, method: "Runtime.enable"},
		{client: 1, method: "Log.enable"},
		{client: 0, method: "Page.navigate", params: map[string]any{"url": e.site.URL("/other.html?diff=nav-" + nonce)}, until: []string{"Page.loadEventFired", "Page.frameStoppedLoading"}},
		eval(0, "console.log('three')", "Runtime.consoleAPICalled"),
		{client: 1, method: "Runtime.disable"},
		eval(0, "console.log('four')", "Runtime.consoleAPICalled"),
		{client: 2, method: "Runtime.enable"},
	}

	chrome, err := snapshottest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer chrome.Close()
	chromeTarget, err := chrome.NewTab(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	waitLoaded(t, ctx, chrome.WSURL, nil, chromeTarget, start)
	want := runDiff(t, ctx, chrome.WSURL, nil, chromeTarget, 3, steps)

	tab := e.share(t, start)
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck // other tests look for their tabs by URL
	auth := http.Header{"Authorization": {"Bearer " + e.token()}}
	waitLoaded(t, ctx, e.cdpURL(), auth, tab.TargetID, start)
	got := runDiff(t, ctx, e.cdpURL(), auth, tab.TargetID, 3, steps)

	for c := range want {
		for i := range want[c] {
			if got[c][i] != want[c][i] {
				t.Errorf("client %c, step %s\n  tabrelay: %s\n  chrome:   %s", 'A'+c, want[c][i][:strings.Index(want[c][i], ":")], got[c][i], want[c][i])
			}
		}
	}
	if t.Failed() {
		for c := range want {
			t.Logf("client %c from Chrome:\n  %s", 'A'+c, strings.Join(want[c], "\n  "))
		}
	}
}

// waitLoaded waits until the page shows url and its document finished loading, so both runs
// start alike (a new tab of Chrome's own endpoint starts on about:blank).
func waitLoaded(t *testing.T, ctx context.Context, wsURL string, header http.Header, targetID, url string) {
	t.Helper()
	c := dialDiff(t, ctx, wsURL, header, targetID)
	defer c.conn.Close(websocket.StatusNormalClosure, "")
	expr := fmt.Sprintf("location.href === %q && document.readyState === 'complete'", url)
	for {
		var r struct {
			Result struct {
				Result struct {
					Value bool `json:"value"`
				} `json:"result"`
			} `json:"result"`
		}
		if json.Unmarshal(c.call(t, ctx, c.sid, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}), &r) == nil && r.Result.Result.Value {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never finished loading %s", targetID, url)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
