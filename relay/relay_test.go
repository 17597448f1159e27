package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

const tabA = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
const tabB = "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"

// env is a relay on a free port with a simulated extension.
type env struct {
	t    *testing.T
	srv  *relay.Server
	ext  *relaytest.Extension
	logs *syncBuffer
	home string
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newEnv(t *testing.T, hub relay.HubOptions) *env {
	t.Helper()
	return newEnvWith(t, func(o *relay.Options) { o.Hub = hub })
}

func newEnvWith(t *testing.T, configure func(*relay.Options)) *env {
	t.Helper()
	home := t.TempDir()
	store, err := secret.NewStore(home)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := zerolog.New(logs).Level(zerolog.DebugLevel)
	opts := relay.Options{Addr: "127.0.0.1:0", Secret: store, Logger: &log}
	configure(&opts)
	srv, err := relay.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e := &env{t: t, srv: srv, logs: logs, home: home}
	e.ext = e.dialExt()
	return e
}

func (e *env) dialExt() *relaytest.Extension {
	e.t.Helper()
	ext, err := relaytest.Dial(ctx(e.t), e.srv.Addr(), e.srv.Token(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(ext.Close)
	e.waitFor("extension connected", func() bool { return e.srv.Hub().ExtensionConnected() })
	return ext
}

// replaceExt closes the env's extension and connects a new one with opts in its place.
func (e *env) replaceExt(opts *relaytest.Options) *relaytest.Extension {
	e.t.Helper()
	e.ext.Close()
	e.waitFor("the first extension to be gone", func() bool { return !e.srv.Hub().ExtensionConnected() })
	ext, err := relaytest.Dial(ctx(e.t), e.srv.Addr(), e.srv.Token(), opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(ext.Close)
	e.ext = ext
	e.waitFor("extension connected", func() bool { return e.srv.Hub().ExtensionConnected() })
	return ext
}

func (e *env) share(id, url string) {
	e.t.Helper()
	if err := e.ext.Share(id, url, "title "+id); err != nil {
		e.t.Fatal(err)
	}
	e.waitFor("tab "+id+" shared", func() bool { return e.hasTab(id) })
}

func (e *env) hasTab(id string) bool {
	for _, tb := range e.srv.Hub().Tabs() {
		if tb.TargetID == id {
			return true
		}
	}
	return false
}

func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	e.waitWithin(30*time.Second, what, cond)
}

// waitWithin polls cond until it holds, failing the test after d scaled for the machine
// (testlimit.Scale).
func (e *env) waitWithin(d time.Duration, what string, cond func() bool) {
	e.t.Helper()
	d = testlimit.Scale(d)
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s (%v)", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (e *env) client(path string) *cdpclient.Client {
	e.t.Helper()
	c, err := cdpclient.Dial(ctx(e.t), "ws://"+e.srv.Addr()+path+"?token="+e.srv.Token(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// rawClient is a raw WebSocket on /cdp, for tests of what the relay does with frames and
// close codes; it is closed when the test ends.
func (e *env) rawClient() *websocket.Conn {
	e.t.Helper()
	conn, _, err := websocket.Dial(ctx(e.t), "ws://"+e.srv.Addr()+"/cdp?token="+e.srv.Token(), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.CloseNow() })
	return conn
}

// attach attaches a browser-level client to a tab and returns the session id.
func attach(t *testing.T, c *cdpclient.Client, targetID string) string {
	t.Helper()
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx(t), "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}, &r); err != nil {
		t.Fatal(err)
	}
	return r.SessionID
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), testlimit.Scale(10*time.Second))
	t.Cleanup(cancel)
	return c
}

func (e *env) get(path string, header http.Header) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+e.srv.Addr()+path, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	return do(e.t, req)
}

func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

func TestDiscovery(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://example.com/")
	tok := e.srv.Token()

	code, body := e.get("/json/version", bearer(tok))
	if code != 200 {
		t.Fatalf("/json/version: %d %s", code, body)
	}
	var v map[string]string
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	wantWS := "ws://" + e.srv.Addr() + "/devtools/browser/" + e.srv.Hub().BrowserID() + "?token=" + tok
	if v["webSocketDebuggerUrl"] != wantWS || v["Browser"] != "Chrome/156.0.0.0" || v["Protocol-Version"] != "1.3" {
		t.Errorf("/json/version = %v", v)
	}

	for _, p := range []string{"/json", "/json/list", "/json/list/"} {
		code, body = e.get(p+"?token="+tok, nil)
		var list []map[string]string
		if code != 200 || json.Unmarshal([]byte(body), &list) != nil || len(list) != 1 {
			t.Fatalf("%s: %d %s", p, code, body)
		}
		if list[0]["id"] != tabA || list[0]["type"] != "page" || list[0]["url"] != "https://example.com/" ||
			list[0]["webSocketDebuggerUrl"] != "ws://"+e.srv.Addr()+"/devtools/page/"+tabA+"?token="+tok ||
			!strings.Contains(list[0]["devtoolsFrontendUrl"], tabA) {
			t.Errorf("%s entry = %v", p, list[0])
		}
	}

	if code, body = e.get("/json/new?about:blank", bearer(tok)); code != http.StatusMethodNotAllowed {
		t.Errorf("GET /json/new = %d %s, want 405", code, body)
	}
	req, _ := http.NewRequest(http.MethodPut, "http://"+e.srv.Addr()+"/json/new?https://new.example/", nil)
	req.Header = bearer(tok)
	code, body = do(t, req)
	var created map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &created) != nil || created["url"] != "https://new.example/" || !strings.HasPrefix(created["id"], "NEWTAB") {
		t.Fatalf("PUT /json/new: %d %s", code, body)
	}
	if code, body = e.get("/json/activate/"+tabA, bearer(tok)); code != 200 || body != "Target activated" {
		t.Errorf("activate: %d %s", code, body)
	}
	put, _ := http.NewRequest(http.MethodPut, "http://"+e.srv.Addr()+"/json/activate/"+tabA, nil)
	put.Header = bearer(tok)
	if code, body = do(t, put); code != 200 || body != "Target activated" {
		t.Errorf("PUT activate: %d %s", code, body)
	}
	if code, body = e.get("/json/activate/NOPE", bearer(tok)); code != 404 {
		t.Errorf("activate unknown: %d %s", code, body)
	}
	if code, body = e.get("/json/close/"+tabA, bearer(tok)); code != 403 || !strings.Contains(body, "user's own tab") {
		t.Errorf("close user tab: %d %s, want 403 refusal", code, body)
	}
	if code, body = e.get("/json/close/"+created["id"], bearer(tok)); code != 200 || body != "Target is closing" {
		t.Errorf("close client tab: %d %s", code, body)
	}
	e.waitFor("closed tab gone", func() bool { return !e.hasTab(created["id"]) })
	if code, body = e.get("/health", nil); code != 200 || !strings.Contains(body, `"extensionConnected":true`) {
		t.Errorf("health: %d %s", code, body)
	}
}

func TestTwoClientsIndependentIDsAndEvents(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	e.share(tabB, "https://b.example/")
	c1, c2 := e.client("/cdp"), e.client("/cdp")
	s1, s2 := attach(t, c1, tabA), attach(t, c2, tabA)
	if s1 == s2 {
		t.Fatal("two clients got the same session id")
	}
	// each client's session id is unknown to the other
	if err := c2.Call(ctx(t), s1, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err == nil || !strings.Contains(err.Error(), "Session with given id not found") {
		t.Fatalf("c2 using c1's session: %v", err)
	}
	// both clients use the same message ids concurrently; each gets its own answer
	var wg sync.WaitGroup
	for i, c := range []*cdpclient.Client{c1, c2} {
		sid := []string{s1, s2}[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				expr := strings.Repeat("x", i+1) + string(rune('a'+j%26))
				var r struct {
					Result struct{ Value string } `json:"result"`
				}
				if err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": expr}, &r); err != nil {
					t.Error(err)
					return
				}
				if r.Result.Value != "evaluated:"+expr {
					t.Errorf("client %d got %q for %q", i, r.Result.Value, expr)
				}
			}
		}()
	}
	wg.Wait()

	// events: only to sessions attached to the tab that used the domain
	got1, got2 := make(chan cdpclient.Event, 10), make(chan cdpclient.Event, 10)
	c1.Subscribe(func(ev cdpclient.Event) {
		if ev.Method == "Page.loadEventFired" {
			got1 <- ev
		}
	})
	c2.Subscribe(func(ev cdpclient.Event) {
		if ev.Method == "Page.loadEventFired" {
			got2 <- ev
		}
	})
	if err := c1.Call(ctx(t), s1, "Page.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.ext.Event(tabA, "", "Page.loadEventFired", map[string]any{"timestamp": 1}); err != nil {
		t.Fatal(err)
	}
	if err := e.ext.Event(tabB, "", "Page.loadEventFired", map[string]any{"timestamp": 2}); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-got1:
		if ev.SessionID != s1 || !strings.Contains(string(ev.Params), `"timestamp":1`) {
			t.Errorf("c1 event = %+v", ev)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("c1 did not get its Page event")
	}
	// c2 never enabled Page: a Runtime event sent after proves ordering, then check nothing came
	time.Sleep(100 * time.Millisecond)
	select {
	case ev := <-got2:
		t.Errorf("c2 got an event of a domain it never used: %+v", ev)
	case ev := <-got1:
		t.Errorf("c1 got a second event (from the tab it is not attached to?): %+v", ev)
	default:
	}
}

func TestSecondRuntimeEnableGetsContexts(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	for i := 0; i < 2; i++ {
		c := e.client("/cdp")
		sid := attach(t, c, tabA)
		w := c.Expect(sid, "Runtime.executionContextCreated", nil)
		if err := c.Call(ctx(t), sid, "Runtime.enable", nil, nil); err != nil {
			t.Fatal(err)
		}
		ev, err := w.Wait(ctx(t))
		if err != nil {
			t.Fatalf("client %d: no Runtime.executionContextCreated: %v", i+1, err)
		}
		if !strings.Contains(string(ev.Params), `"isDefault":true`) {
			t.Errorf("client %d: context event %s", i+1, ev.Params)
		}
	}
}

func TestCleanupWhenClientLeaves(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	a, b := e.client("/cdp"), e.client("/cdp")
	sa, sb := attach(t, a, tabA), attach(t, b, tabA)
	for _, c := range []struct {
		c   *cdpclient.Client
		sid string
	}{{a, sa}, {b, sb}} {
		if err := c.c.Call(ctx(t), c.sid, "Fetch.enable", map[string]any{"patterns": []any{map[string]string{"urlPattern": "*"}}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Call(ctx(t), sa, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 100, "height": 100, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		t.Fatal(err)
	}
	if !e.ext.Enabled(tabA, "", "Fetch") || !e.ext.Override(tabA, "deviceMetrics") {
		t.Fatal("setup did not reach the tab")
	}
	// a leaves: its override is undone, Fetch stays on for b
	a.Close()
	e.waitFor("device metrics cleared", func() bool { return !e.ext.Override(tabA, "deviceMetrics") })
	time.Sleep(50 * time.Millisecond)
	if !e.ext.Enabled(tabA, "", "Fetch") {
		t.Fatal("Fetch was disabled while another client still intercepts")
	}
	// b's explicit Fetch.disable is forwarded now that it is the last user... but first b leaves
	b.Close()
	e.waitFor("Fetch disabled after the last interceptor left", func() bool { return !e.ext.Enabled(tabA, "", "Fetch") })
}

func TestDisableKeptForOtherClient(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	a, b := e.client("/cdp"), e.client("/cdp")
	sa, sb := attach(t, a, tabA), attach(t, b, tabA)
	for _, p := range [][2]any{{a, sa}, {b, sb}} {
		if err := p[0].(*cdpclient.Client).Call(ctx(t), p[1].(string), "Network.enable", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.Call(ctx(t), sa, "Network.disable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !e.ext.Enabled(tabA, "", "Network") {
		t.Fatal("a's Network.disable switched Network off under b")
	}
	if err := b.Call(ctx(t), sb, "Network.disable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if e.ext.Enabled(tabA, "", "Network") {
		t.Fatal("the last Network.disable did not reach the tab")
	}
}

func TestExtensionDisconnectFailsPendingAndTabsResume(t *testing.T) {
	// the grace is long enough for the steps below on a loaded machine, and much longer than "at once"
	e := newEnv(t, relay.HubOptions{Grace: 10 * time.Second})
	e.share(tabA, "https://a.example/")
	e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
		return nil, nil, cmd.Method == "Test.hang" // never answered
	})
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), sid, "Test.hang", nil, nil) }()
	e.waitFor("command reached the extension", func() bool { return e.ext.Received(tabA, "Test.hang") })
	start := time.Now()
	e.ext.Close()
	select {
	case err := <-errc:
		if err == nil || !strings.Contains(err.Error(), "extension disconnected") {
			t.Fatalf("pending command: %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("pending command failed after %v; want at once, not at the end of the grace", d)
		}
	case <-time.After(8 * time.Second):
		t.Fatal("pending command did not fail when the extension went away")
	}
	// during the grace period the client stays connected; a command waits for the tab
	type answer struct {
		err   error
		value string
	}
	during := make(chan answer, 1)
	go func() {
		var r struct {
			Result struct{ Value string } `json:"result"`
		}
		err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": "during"}, &r)
		during <- answer{err, r.Result.Value}
	}()
	e.waitFor("the command to wait in the relay", func() bool { return strings.Contains(e.logs.String(), `"parked"`) })
	// the extension comes back with the same tab: the session resumes, the waiting command runs
	e.ext = e.dialExt()
	e.share(tabA, "https://a.example/")
	if a := <-during; a.err != nil || a.value != "evaluated:during" {
		t.Fatalf("command sent while the extension was away: %v %q", a.err, a.value)
	}
	var r struct {
		Result struct{ Value string } `json:"result"`
	}
	if err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": "back"}, &r); err != nil || r.Result.Value != "evaluated:back" {
		t.Fatalf("after resume: %v %+v", err, r)
	}
}

func TestGraceExpiryDetaches(t *testing.T) {
	e := newEnv(t, relay.HubOptions{Grace: 200 * time.Millisecond})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	w := c.Expect("", "Target.detachedFromTarget", nil)
	e.ext.Close()
	ev, err := w.Wait(ctx(t))
	if err != nil || !strings.Contains(string(ev.Params), sid) {
		t.Fatalf("no detachedFromTarget after grace: %v %s", err, ev.Params)
	}
}

func TestCommandTimeout(t *testing.T) {
	e := newEnv(t, relay.HubOptions{CommandTimeout: time.Second})
	e.share(tabA, "https://a.example/")
	e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) { return nil, nil, cmd.Method == "Test.hang" })
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	err := c.Call(ctx(t), sid, "Test.hang", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "did not answer Test.hang in time") {
		t.Fatalf("hung command: %v", err)
	}
	// the connection still works
	if err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestChildSessions(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	if err := e.ext.AttachChild(tabA, "EXTCHILD1", "FRAMETARGET1", "https://other.example/frame"); err != nil {
		t.Fatal(err)
	}
	w := c.Expect(sid, "Target.attachedToTarget", nil)
	if err := c.Call(ctx(t), sid, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}, nil); err != nil {
		t.Fatal(err)
	}
	ev, err := w.Wait(ctx(t))
	if err != nil {
		t.Fatal("existing child not announced on setAutoAttach")
	}
	var a struct {
		SessionID  string `json:"sessionId"`
		TargetInfo struct {
			TargetID, Type string
		} `json:"targetInfo"`
	}
	_ = json.Unmarshal(ev.Params, &a)
	if a.SessionID == "" || a.SessionID == "EXTCHILD1" || a.TargetInfo.TargetID != "FRAMETARGET1" || a.TargetInfo.Type != "iframe" {
		t.Fatalf("child announcement: %s", ev.Params)
	}
	// commands on the child session reach the extension's child session
	if err := c.Call(ctx(t), a.SessionID, "Runtime.evaluate", map[string]string{"expression": "inframe"}, nil); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cmd := range e.ext.Commands() {
		if cmd.Method == "Runtime.evaluate" && cmd.SessionID == "EXTCHILD1" && cmd.TargetID == tabA {
			found = true
		}
	}
	if !found {
		t.Fatal("child command did not reach the extension's child session")
	}
	// events of the child are routed to the child session
	if err := c.Call(ctx(t), a.SessionID, "Page.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	w2 := c.Expect(a.SessionID, "Page.frameNavigated", nil)
	if err := e.ext.Event(tabA, "EXTCHILD1", "Page.frameNavigated", map[string]any{"frame": map[string]string{"id": "f"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w2.Wait(ctx(t)); err != nil {
		t.Fatal("child event not routed")
	}
	// a new child later is announced to the auto-attaching session; its detach too
	w3 := c.Expect(sid, "Target.attachedToTarget", nil)
	if err := e.ext.AttachChild(tabA, "EXTCHILD2", "FRAMETARGET2", "https://third.example/"); err != nil {
		t.Fatal(err)
	}
	if _, err := w3.Wait(ctx(t)); err != nil {
		t.Fatal("new child not announced")
	}
	w4 := c.Expect(sid, "Target.detachedFromTarget", nil)
	if err := e.ext.Event(tabA, "", "Target.detachedFromTarget", map[string]string{"sessionId": "EXTCHILD1"}); err != nil {
		t.Fatal(err)
	}
	ev4, err := w4.Wait(ctx(t))
	if err != nil || !strings.Contains(string(ev4.Params), a.SessionID) {
		t.Fatalf("child detach not reported: %v %s", err, ev4.Params)
	}
	// a second client's setAutoAttach also sees the existing child
	c2 := e.client("/cdp")
	sid2 := attach(t, c2, tabA)
	w5 := c2.Expect(sid2, "Target.attachedToTarget", nil)
	if err := c2.Call(ctx(t), sid2, "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true}, nil); err != nil {
		t.Fatal(err)
	}
	if ev, err := w5.Wait(ctx(t)); err != nil || !strings.Contains(string(ev.Params), "FRAMETARGET2") {
		t.Fatalf("second client not told of existing child: %v", err)
	}
}

func TestPuppeteerTabTargetsAndPlaywrightRoot(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	// Puppeteer: discovery, then tab targets at the root and pages under them
	c := e.client("/cdp")
	var created []string
	var mu sync.Mutex
	c.Subscribe(func(ev cdpclient.Event) {
		if ev.Method == "Target.targetCreated" {
			mu.Lock()
			created = append(created, string(ev.Params))
			mu.Unlock()
		}
	})
	if err := c.Call(ctx(t), "", "Target.setDiscoverTargets", map[string]any{"discover": true, "filter": []any{map[string]any{}}}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(created) != 2 || !strings.Contains(strings.Join(created, ""), `"type":"tab"`) || !strings.Contains(strings.Join(created, ""), `"type":"page"`) {
		t.Errorf("targetCreated before the reply: %v", created)
	}
	mu.Unlock()
	w := c.Expect("", "Target.attachedToTarget", nil)
	if err := c.Call(ctx(t), "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true,
		"filter": []any{map[string]any{"type": "page", "exclude": true}, map[string]any{}}}, nil); err != nil {
		t.Fatal(err)
	}
	ev, err := w.Wait(ctx(t))
	if err != nil || !strings.Contains(string(ev.Params), `"type":"tab"`) {
		t.Fatalf("tab target not attached at the root: %v %s", err, ev.Params)
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(ev.Params, &a)
	w2 := c.Expect(a.SessionID, "Target.attachedToTarget", nil)
	if err := c.Call(ctx(t), a.SessionID, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true, "filter": []any{map[string]any{}}}, nil); err != nil {
		t.Fatal(err)
	}
	ev2, err := w2.Wait(ctx(t))
	if err != nil || !strings.Contains(string(ev2.Params), `"targetId":"`+tabA+`"`) || !strings.Contains(string(ev2.Params), `"browserContextId"`) {
		t.Fatalf("page not attached under its tab: %v %s", err, ev2.Params)
	}
	if err := c.Call(ctx(t), a.SessionID, "Runtime.runIfWaitingForDebugger", nil, nil); err != nil {
		t.Errorf("runIfWaitingForDebugger on a tab session: %v", err)
	}

	// Playwright: no filter, pages directly at the root, announced before the reply
	p := e.client("/cdp")
	var pages []string
	p.Subscribe(func(ev cdpclient.Event) {
		if ev.Method == "Target.attachedToTarget" {
			mu.Lock()
			pages = append(pages, string(ev.Params))
			mu.Unlock()
		}
	})
	var ver map[string]string
	if err := p.Call(ctx(t), "", "Browser.getVersion", nil, &ver); err != nil || ver["product"] != "Chrome/156.0.0.0" || !strings.Contains(ver["userAgent"], "Chrome/156") {
		t.Fatalf("Browser.getVersion: %v %v", err, ver)
	}
	if err := p.Call(ctx(t), "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(pages) != 1 || !strings.Contains(pages[0], `"type":"page"`) {
		t.Errorf("Playwright-style root auto-attach announced %v", pages)
	}
	mu.Unlock()
	// a page created through the relay is attached before createTarget answers
	var res struct {
		TargetID string `json:"targetId"`
	}
	if err := p.Call(ctx(t), "", "Target.createTarget", map[string]string{"url": "about:blank"}, &res); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(pages) != 2 || !strings.Contains(pages[1], res.TargetID) {
		t.Errorf("created page not announced before the reply: %v", pages)
	}
	mu.Unlock()
	if err := p.Call(ctx(t), "", "Target.closeTarget", map[string]string{"targetId": res.TargetID}, nil); err != nil {
		t.Errorf("closing a client-created page: %v", err)
	}
	if err := p.Call(ctx(t), "", "Target.closeTarget", map[string]string{"targetId": tabA}, nil); err == nil || !strings.Contains(err.Error(), "user's own tab") {
		t.Errorf("closing the user's tab: %v, want a refusal", err)
	}
	for _, m := range []string{"Browser.getWindowForTarget", "Target.getBrowserContexts", "Target.getTargetInfo"} {
		if err := p.Call(ctx(t), "", m, nil, nil); err != nil {
			t.Errorf("%s: %v", m, err)
		}
	}
	if err := p.Call(ctx(t), "", "Browser.setDownloadBehavior", map[string]string{"behavior": "default"}, nil); err != nil {
		t.Errorf("Browser.setDownloadBehavior: %v", err)
	}
	var targets struct {
		TargetInfos []map[string]any `json:"targetInfos"`
	}
	if err := p.Call(ctx(t), "", "Target.getTargets", nil, &targets); err != nil || len(targets.TargetInfos) != 1 || targets.TargetInfos[0]["targetId"] != tabA {
		t.Errorf("getTargets: %v %v", err, targets)
	}
	if err := p.Call(ctx(t), "", "Memory.getDOMCounters", nil, nil); err == nil || !strings.Contains(err.Error(), "wasn't found") {
		t.Errorf("unknown root method: %v", err)
	}
}

func TestPageEndpoint(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/devtools/page/" + tabA)
	var r struct {
		Result struct{ Value string } `json:"result"`
	}
	if err := c.Call(ctx(t), "", "Runtime.evaluate", map[string]string{"expression": "x"}, &r); err != nil || r.Result.Value != "evaluated:x" {
		t.Fatalf("page endpoint evaluate: %v %+v", err, r)
	}
	var info struct {
		TargetInfo map[string]any `json:"targetInfo"`
	}
	if err := c.Call(ctx(t), "", "Target.getTargetInfo", nil, &info); err != nil || info.TargetInfo["targetId"] != tabA {
		t.Fatalf("getTargetInfo on page endpoint: %v %v", err, info)
	}
	if err := c.Call(ctx(t), "", "Page.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	w := c.Expect("", "Page.loadEventFired", nil)
	_ = e.ext.Event(tabA, "", "Page.loadEventFired", map[string]any{"timestamp": 3})
	if _, err := w.Wait(ctx(t)); err != nil {
		t.Fatal("page endpoint got no event without sessionId")
	}
	// unsharing the tab detaches the page endpoint client and closes it
	w2 := c.Expect("", "Inspector.detached", nil)
	_ = e.ext.Unshare(tabA, wire.ReasonUser)
	if _, err := w2.Wait(ctx(t)); err != nil {
		t.Fatal("no Inspector.detached")
	}
	select {
	case <-c.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("page endpoint connection stays open after its tab was unshared")
	}
	if err := c.Call(ctx(t), "", "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err == nil || !strings.Contains(err.Error(), "no longer shared") {
		t.Fatalf("after unsharing: %v, want the close reason", err)
	}
	// unshared tabs are unreachable
	_, resp, err := websocket.Dial(ctx(t), "ws://"+e.srv.Addr()+"/devtools/page/"+tabA+"?token="+e.srv.Token(), nil)
	if err == nil || resp == nil || resp.StatusCode != 404 {
		t.Fatalf("dial unshared tab: %v", err)
	}
	b := e.client("/cdp")
	if err := b.Call(ctx(t), "", "Target.attachToTarget", map[string]any{"targetId": tabA, "flatten": true}, nil); err == nil {
		t.Fatal("attached to an unshared tab")
	}
}

func TestUnshareDetachesClients(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	if err := c.Call(ctx(t), "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		t.Fatal(err)
	}
	sid := attach(t, c, tabA)
	wd := c.Expect("", "Target.detachedFromTarget", nil)
	wt := c.Expect("", "Target.targetDestroyed", nil)
	_ = e.ext.Unshare(tabA, wire.ReasonUser)
	if ev, err := wd.Wait(ctx(t)); err != nil || !strings.Contains(string(ev.Params), sid) {
		t.Fatalf("detachedFromTarget: %v", err)
	}
	if ev, err := wt.Wait(ctx(t)); err != nil || !strings.Contains(string(ev.Params), tabA) {
		t.Fatalf("targetDestroyed: %v", err)
	}
	if err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err == nil {
		t.Fatal("command to an unshared tab's session succeeded")
	}
}

func TestBrowserCloseEndsOnlyThatClient(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	a, b := e.client("/cdp"), e.client("/cdp")
	if err := a.Call(ctx(t), "", "Browser.close", nil, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("Browser.close did not end the client's connection")
	}
	if err := a.Call(ctx(t), "", "Browser.getVersion", nil, nil); err == nil || !strings.Contains(err.Error(), "leaves the user's browser open") {
		t.Fatalf("after Browser.close: %v, want the close reason", err)
	}
	if err := b.Call(ctx(t), "", "Browser.getVersion", nil, nil); err != nil {
		t.Fatalf("other client affected: %v", err)
	}
	if !e.srv.Hub().ExtensionConnected() || len(e.srv.Hub().Tabs()) != 1 {
		t.Fatal("Browser.close affected the browser")
	}
}

// Shutting the server down tells every client and the extension that it is going away (1001),
// with the same reason, rather than one or the other at random.
func TestShutdownClosesWithGoingAway(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	conn := e.rawClient()
	e.srv.Close()
	_, _, err := conn.Read(ctx(t))
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || !strings.Contains(ce.Reason, "shutting down") {
		t.Fatalf("CDP client after shutdown: %v, want 1001 shutting down", err)
	}
	select {
	case <-e.ext.Closed():
	case <-time.After(10 * time.Second):
		t.Fatal("the extension connection stayed open after shutdown")
	}
	if got := e.ext.CloseStatus(); got != websocket.StatusGoingAway {
		t.Fatalf("extension after shutdown: close status %d, want 1001", got)
	}
}

func TestMalformedMessagesAndErrors(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	conn := e.rawClient()
	cases := []struct{ in, want string }{
		// as Chrome answers them: a message whose integer id cannot be read gets no id
		{`{"id":7,"method":`, `{"error":{"code":-32700`},
		{`{"id":7.5,"method":"Browser.getVersion"}`, `{"error":{"code":-32600,"message":"Message must have integer 'id' property"}}`},
		{`[1,2]`, `{"error":{"code":-32600,"message":"Message must be an object"}}`},
		{`{"id":13,"method":"Target.getTargets","params":"x"}`, `{"id":13,"error":{"code":-32600,"message":"Message may have object 'params' property"}}`},
		{`not json`, `"error":{"code":-32700`},
		{`{"id":8}`, `"id":8,"error":{"code":-32600`},
		{`{"method":"Browser.getVersion"}`, `"error":{"code":-32600`},
		{`{"id":9,"method":"Runtime.evaluate","sessionId":"nope"}`, `"id":9,"error":{"code":-32001,"message":"Session with given id not found."}`},
		{`{"id":10,"method":"Nope.nope"}`, `"id":10,"error":{"code":-32601`},
		{`{"id":11,"method":"Target.attachToTarget","params":{"targetId":5}}`, `"id":11,"error":{"code":-32602`},
		{`{"id":12,"method":"Browser.getVersion"}`, `"id":12,"result":{`},
	}
	for _, c := range cases {
		if err := conn.Write(ctx(t), websocket.MessageText, []byte(c.in)); err != nil {
			t.Fatal(err)
		}
		_, got, err := conn.Read(ctx(t))
		if err != nil {
			t.Fatalf("%s: connection dropped: %v", c.in, err)
		}
		if !strings.Contains(string(got), c.want) {
			t.Errorf("%s -> %s, want %s", c.in, got, c.want)
		}
	}
	// the extension's malformed frames are ignored and its connection survives too
	if err := e.ext.SendRaw([]byte(`{"type":"response","id":`)); err != nil {
		t.Fatal(err)
	}
	cl := e.client("/cdp")
	if err := cl.Call(ctx(t), attach(t, cl, tabA), "Runtime.evaluate", map[string]string{"expression": "ok"}, nil); err != nil {
		t.Fatalf("after a malformed extension frame: %v", err)
	}
}

func TestCDPErrorsPassThrough(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	err := c.Call(ctx(t), sid, "Test.fail", nil, nil)
	var ce *cdpclient.Error
	if !errors.As(err, &ce) || ce.Code != -32000 || ce.Message != "test failure" {
		t.Fatalf("error from the tab: %v", err)
	}
}

func TestInProcessPipe(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	p, err := e.srv.Hub().Pipe("agent")
	if err != nil {
		t.Fatal(err)
	}
	c := cdpclient.New(p)
	defer c.Close()
	var targets struct {
		TargetInfos []map[string]any `json:"targetInfos"`
	}
	if err := c.Call(ctx(t), "", "Target.getTargets", nil, &targets); err != nil || len(targets.TargetInfos) != 1 {
		t.Fatalf("getTargets over the pipe: %v %v", err, targets)
	}
	sid := attach(t, c, tabA)
	var r struct {
		Result struct{ Value string } `json:"result"`
	}
	if err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": "pipe"}, &r); err != nil || r.Result.Value != "evaluated:pipe" {
		t.Fatalf("evaluate over the pipe: %v %+v", err, r)
	}
}

func TestLargeMessagesPassThrough(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	var r struct {
		Data string `json:"data"`
	}
	// the fake returns quality KiB of data: 6 MiB here
	if err := c.Call(ctx(t), sid, "Page.captureScreenshot", map[string]int{"quality": 6 * 1024}, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Data) != 6<<20 {
		t.Fatalf("screenshot of %d bytes, want %d", len(r.Data), 6<<20)
	}
}

func TestReattachedTabGetsDomainsBack(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	for _, m := range []string{"Page.enable", "Network.enable"} {
		if err := c.Call(ctx(t), sid, m, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	// the extension attached the debugger anew (e.g. after a target_closed detach): Chrome forgot
	// the enabled domains, the relay switches on again what its clients had on
	before := len(e.ext.Commands())
	if err := e.ext.ShareTab(wire.Tab{TabID: 1, TargetID: tabA, URL: "https://a.example/", Origin: wire.OriginUser, Reattached: true}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("domains re-enabled", func() bool {
		seen := map[string]bool{}
		for _, cmd := range e.ext.Commands()[before:] {
			seen[cmd.Method] = true
		}
		return seen["Page.enable"] && seen["Network.enable"]
	})
	if err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
		t.Fatalf("session after re-attach: %v", err)
	}
}

// A page attached under a tab target (Puppeteer's model) is reported detached on the tab
// session when its tab goes, whatever order the relay visits the sessions in.
func TestUnsharePageUnderTabSession(t *testing.T) {
	for i := 0; i < 20; i++ {
		e := newEnv(t, relay.HubOptions{})
		e.share(tabA, "https://a.example/")
		c := e.client("/cdp")
		var tabSess struct {
			SessionID string `json:"sessionId"`
		}
		if err := c.Call(ctx(t), "", "Target.attachToTarget", map[string]any{"targetId": tabTargetIDOf(t, c), "flatten": true}, &tabSess); err != nil {
			t.Fatal(err)
		}
		w := c.Expect(tabSess.SessionID, "Target.attachedToTarget", nil)
		if err := c.Call(ctx(t), tabSess.SessionID, "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true, "filter": []any{map[string]any{}}}, nil); err != nil {
			t.Fatal(err)
		}
		ev, err := w.Wait(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(ev.Params, &page)
		wd := c.Expect(tabSess.SessionID, "Target.detachedFromTarget", nil)
		_ = e.ext.Unshare(tabA, wire.ReasonClosed)
		ev, err = wd.Wait(ctx(t))
		if err != nil || !strings.Contains(string(ev.Params), page.SessionID) {
			t.Fatalf("run %d: page session not reported detached on its tab session: %v %s", i, err, ev.Params)
		}
		e.srv.Close()
	}
}

func tabTargetIDOf(t *testing.T, c *cdpclient.Client) string {
	var targets struct {
		TargetInfos []struct{ TargetID, Type string } `json:"targetInfos"`
	}
	if err := c.Call(ctx(t), "", "Target.getTargets", map[string]any{"filter": []any{map[string]any{"type": "tab"}}}, &targets); err != nil || len(targets.TargetInfos) == 0 {
		t.Fatalf("no tab target: %v", err)
	}
	return targets.TargetInfos[0].TargetID
}

// Clients that attach to an iframe by its target id (chromedp does) find it in getTargets.
func TestAttachToChildTargetByID(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	if err := e.ext.AttachChild(tabA, "EXTCHILD1", "FRAMETARGET1", "https://other.example/frame"); err != nil {
		t.Fatal(err)
	}
	c := e.client("/cdp")
	var targets struct {
		TargetInfos []struct{ TargetID, Type string } `json:"targetInfos"`
	}
	e.waitFor("iframe listed", func() bool {
		_ = c.Call(ctx(t), "", "Target.getTargets", nil, &targets)
		return len(targets.TargetInfos) == 2
	})
	if targets.TargetInfos[1].TargetID != "FRAMETARGET1" || targets.TargetInfos[1].Type != "iframe" {
		t.Fatalf("getTargets: %+v", targets.TargetInfos)
	}
	sid := attach(t, c, "FRAMETARGET1")
	if err := c.Call(ctx(t), sid, "Runtime.evaluate", map[string]string{"expression": "inframe"}, nil); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, cmd := range e.ext.Commands() {
		found = found || (cmd.SessionID == "EXTCHILD1" && cmd.Method == "Runtime.evaluate")
	}
	if !found {
		t.Fatal("command on the iframe session did not reach the extension's child session")
	}
	w := c.Expect("", "Target.detachedFromTarget", nil)
	_ = e.ext.Event(tabA, "", "Target.detachedFromTarget", map[string]string{"sessionId": "EXTCHILD1"})
	if ev, err := w.Wait(ctx(t)); err != nil || !strings.Contains(string(ev.Params), sid) {
		t.Fatalf("iframe detach not reported: %v", err)
	}
}

// sentSince returns the commands with method the extension received after the first `before`.
func (e *env) sentSince(before int, method string) []relaytest.Command {
	var out []relaytest.Command
	for _, cmd := range e.ext.Commands()[before:] {
		if cmd.Method == method {
			out = append(out, cmd)
		}
	}
	return out
}

// jsonEqual reports whether got holds the same JSON value as want, given as JSON text (a
// string) or as a value to encode. Empty params count as {}.
func jsonEqual(got json.RawMessage, want any) bool {
	if len(got) == 0 {
		got = json.RawMessage(`{}`)
	}
	w, ok := want.(string)
	if !ok {
		b, err := json.Marshal(want)
		if err != nil {
			return false
		}
		w = string(b)
	}
	var x, y any
	if json.Unmarshal(got, &x) != nil || json.Unmarshal([]byte(w), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
