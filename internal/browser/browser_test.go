package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/relay/wire"
)

func TestExtensionIDFromDir(t *testing.T) {
	id, err := ExtensionIDFromDir("../../chrome-extension")
	if err != nil {
		t.Fatal(err)
	}
	if id != config.DefaultExtensionID {
		t.Fatalf("manifest key gives id %s, want %s", id, config.DefaultExtensionID)
	}
}

func TestFindOverride(t *testing.T) {
	if _, err := Find("/nonexistent/chrome"); err == nil || !strings.Contains(err.Error(), "--chrome") {
		t.Fatalf("Find with a bad override: err = %v, want one naming --chrome", err)
	}
	t.Setenv(EnvChrome, "/nonexistent/chrome2")
	if _, err := Find(""); err == nil || !strings.Contains(err.Error(), EnvChrome) {
		t.Fatalf("Find with a bad %s: err = %v", EnvChrome, err)
	}
}

// launch starts a headless browser for a test, with the real toolbar click available (test
// option ExtensionDebugging); without Chromium the test fails (skips under -short).
func launch(t *testing.T) *Browser {
	t.Helper()
	return launchWith(t, Options{Headless: true, ExtensionDebugging: true})
}

// launchWith is launch with opts.
func launchWith(t *testing.T, opts Options) *Browser {
	t.Helper()
	if testing.Short() {
		t.Skip("needs Chromium (skipped with -short)")
	}
	if _, err := Find(""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := Launch(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// fakeRelay is a throwaway /extension endpoint speaking wire protocol v1, to test the extension
// on its own.
type fakeRelay struct {
	t      *testing.T
	addr   string
	token  string
	mu     sync.Mutex
	conns  []*fakeConn
	listed map[string]bool // target ids shared and not unshared, for /json/list
	connCh chan *fakeConn
	srv    *http.Server
}

type fakeConn struct {
	c      *websocket.Conn
	origin string
	hello  wire.Envelope
	msgs   chan wire.Envelope
	nextID int64
	seen   []wire.Envelope // received but not yet asked for
}

func newFakeRelay(t *testing.T, token string) *fakeRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &fakeRelay{t: t, addr: ln.Addr().String(), token: token, listed: map[string]bool{}, connCh: make(chan *fakeConn, 8)}
	mux := http.NewServeMux()
	// the extension proves the secret first (internal/proof) and then sends a credential
	// derived from it, never the secret itself
	key := proof.Secret(token)
	authorized := func(tok string) bool { return tok == r.token || key.Verify(tok, time.Now()) == nil }
	mux.HandleFunc("/auth/challenge", func(w http.ResponseWriter, req *http.Request) {
		var cr proof.ChallengeRequest
		if json.NewDecoder(req.Body).Decode(&cr) != nil {
			http.Error(w, "bad challenge", http.StatusBadRequest)
			return
		}
		local, _ := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
		ans, err := key.Answer(cr.ClientNonce, local, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(ans)
	})
	mux.HandleFunc("/json/version", func(w http.ResponseWriter, req *http.Request) {
		if !authorized(strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"Browser":"tabrelay"}`)
	})
	mux.HandleFunc("/json/list", func(w http.ResponseWriter, req *http.Request) { // what Browser.Share waits for
		if !authorized(strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		list := []map[string]string{}
		r.mu.Lock()
		for id := range r.listed {
			list = append(list, map[string]string{"id": id, "type": "page"})
		}
		r.mu.Unlock()
		_ = json.NewEncoder(w).Encode(list)
	})
	mux.HandleFunc("/extension", func(w http.ResponseWriter, req *http.Request) {
		if !authorized(req.URL.Query().Get("token")) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, req, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		c.SetReadLimit(64 << 20)
		fc := &fakeConn{c: c, origin: req.Header.Get("Origin"), msgs: make(chan wire.Envelope, 1024)}
		ctx := context.Background()
		_, b, err := c.Read(ctx)
		if err != nil || json.Unmarshal(b, &fc.hello) != nil {
			return
		}
		welcome, _ := json.Marshal(wire.Welcome{Type: wire.TypeWelcome, Protocol: wire.Version, RelayVersion: "test", BrowserID: "b1"})
		if c.Write(ctx, websocket.MessageText, welcome) != nil {
			return
		}
		r.mu.Lock()
		r.conns = append(r.conns, fc)
		r.mu.Unlock()
		r.connCh <- fc
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				close(fc.msgs)
				return
			}
			var e wire.Envelope
			if json.Unmarshal(b, &e) == nil {
				if e.Type == wire.TypePing {
					_ = c.Write(ctx, websocket.MessageText, []byte(`{"type":"pong"}`))
					continue
				}
				r.mu.Lock()
				if e.Type == wire.TypeTabShared && e.Tab != nil {
					r.listed[e.Tab.TargetID] = true
				} else if e.Type == wire.TypeTabUnshared {
					delete(r.listed, e.TargetID)
				}
				r.mu.Unlock()
				fc.msgs <- e
			}
		}
	})
	r.srv = &http.Server{Handler: mux}
	go r.srv.Serve(ln) //nolint:errcheck
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

func (r *fakeRelay) accept(ctx context.Context) *fakeConn {
	r.t.Helper()
	select {
	case c := <-r.connCh:
		return c
	case <-ctx.Done():
		r.t.Fatalf("the extension did not connect to the fake relay at %s: %v", r.addr, ctx.Err())
		return nil
	}
}

// next returns the oldest message of type typ not returned yet; events are dropped once
// passed over, other messages are kept for later calls.
func (c *fakeConn) next(t *testing.T, ctx context.Context, typ string) wire.Envelope {
	t.Helper()
	for i, e := range c.seen {
		if e.Type == typ {
			c.seen = append(c.seen[:i:i], c.seen[i+1:]...)
			return e
		}
	}
	for {
		select {
		case e, ok := <-c.msgs:
			if !ok {
				t.Fatalf("extension connection closed while waiting for %q", typ)
			}
			if e.Type == typ {
				return e
			}
			if e.Type != wire.TypeEvent {
				c.seen = append(c.seen, e)
			}
		case <-ctx.Done():
			t.Fatalf("no %q message from the extension: %v", typ, ctx.Err())
		}
	}
}

func (c *fakeConn) request(t *testing.T, ctx context.Context, msg map[string]any) wire.Envelope {
	t.Helper()
	c.nextID++
	msg["id"] = c.nextID
	b, _ := json.Marshal(msg)
	if err := c.c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
	for {
		e := c.next(t, ctx, wire.TypeResponse)
		if e.ID == c.nextID {
			return e
		}
	}
}

// The product path (`tabrelay browser`): a browser launched without the test options pairs and
// shares from the extension's own page over the pipe; the real click is refused in words; the
// helper page is closed again.
func TestShareFromExtensionWithoutTestOptions(t *testing.T) {
	b := launchWith(t, Options{Headless: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if b.ControlURL != "" {
		t.Fatalf("ControlURL = %q without DebuggingPort", b.ControlURL)
	}
	relay := newFakeRelay(t, "secret-2")
	if err := b.Pair(ctx, relay.addr, relay.token); err != nil {
		t.Fatal(err)
	}
	conn := relay.accept(ctx)
	if err := b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	fix := serveFixture(t)
	tab, err := b.NewTab(ctx, fix+"/page.html")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Click(ctx, tab); !errors.Is(err, ErrNoExtensionDebugging) {
		t.Fatalf("Click without ExtensionDebugging: %v, want ErrNoExtensionDebugging", err)
	}
	if err := b.ShareFromExtension(ctx, tab); err != nil {
		t.Fatal(err)
	}
	shared := conn.next(t, ctx, wire.TypeTabShared)
	if shared.Tab == nil || shared.Tab.TargetID != tab.TargetID || shared.Tab.Origin != wire.OriginUser {
		t.Fatalf("tabShared = %+v, want target %s shared by the user", shared.Tab, tab.TargetID)
	}
	// sharing twice leaves it shared (the side panel's message is not a toggle)
	if err := b.ShareFromExtension(ctx, tab); err != nil {
		t.Fatal(err)
	}
	if badge, err := b.Badge(ctx, tab); err != nil || badge != "ON" {
		t.Fatalf("badge after a second share = %q, %v; want ON", badge, err)
	}
	ts, err := b.targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, ti := range ts {
		if strings.HasSuffix(ti.URL, "/options.html") {
			t.Errorf("the helper options page is still open: %+v", ti)
		}
	}
}

func TestExtensionAgainstFakeRelay(t *testing.T) {
	b := launch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if b.ExtensionID != config.DefaultExtensionID {
		t.Fatalf("extension id %s, want %s", b.ExtensionID, config.DefaultExtensionID)
	}

	// Not paired yet: the tooltip says so in plain words.
	waitFor(t, ctx, func() (bool, string) {
		st, err := b.Status(ctx)
		return err == nil && st.Status == "unpaired" && strings.Contains(st.Text, "not paired"), fmt.Sprintf("%+v %v", st, err)
	})

	relay := newFakeRelay(t, "secret-1")
	if err := b.Pair(ctx, relay.addr, relay.token); err != nil {
		t.Fatal(err)
	}
	conn := relay.accept(ctx)
	if conn.origin != "chrome-extension://"+config.DefaultExtensionID {
		t.Errorf("upgrade Origin = %q", conn.origin)
	}
	if conn.hello.Type != wire.TypeHello || conn.hello.Protocol != wire.Version || !strings.HasPrefix(conn.hello.Product, "Chrome/156.") || conn.hello.UserAgent == "" || conn.hello.ExtensionVersion != "0.1.0" {
		t.Fatalf("hello = %+v", conn.hello)
	}
	if err := b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}

	fix := serveFixture(t)
	tab, err := b.NewTab(ctx, fix+"/page.html")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Share(ctx, tab); err != nil {
		t.Fatal(err)
	}
	shared := conn.next(t, ctx, wire.TypeTabShared)
	if shared.Tab == nil || shared.Tab.TargetID != tab.TargetID || shared.Tab.TabID != int64(tab.TabID) || shared.Tab.Origin != wire.OriginUser || shared.Tab.Title != "fake page" {
		t.Fatalf("tabShared = %+v, want target %s tab %d", shared.Tab, tab.TargetID, tab.TabID)
	}

	// A CDP command goes to the tab and its result comes back.
	resp := conn.request(t, ctx, map[string]any{"type": "cdp", "targetId": tab.TargetID, "method": "Runtime.evaluate",
		"params": map[string]any{"expression": "document.title + ' ' + (6*7)", "returnByValue": true}})
	if !strings.Contains(string(resp.Result), `"fake page 42"`) {
		t.Fatalf("Runtime.evaluate response = %s / %s", resp.Result, resp.Error)
	}
	// A CDP error keeps its code and message.
	resp = conn.request(t, ctx, map[string]any{"type": "cdp", "targetId": tab.TargetID, "method": "Nope.nothing"})
	var cerr wire.Error
	if err := json.Unmarshal(resp.Error, &cerr); err != nil || cerr.Code != -32601 || !strings.Contains(cerr.Message, "Nope.nothing") {
		t.Fatalf("unknown method error = %s (%v)", resp.Error, err)
	}
	// Unknown targets are refused in words.
	resp = conn.request(t, ctx, map[string]any{"type": "cdp", "targetId": "NOPE", "method": "Runtime.evaluate"})
	if !strings.Contains(string(resp.Error), "not a shared tab") {
		t.Fatalf("cdp to unknown target: %s", resp.Error)
	}
	// Events are forwarded with the tab's targetId.
	conn.request(t, ctx, map[string]any{"type": "cdp", "targetId": tab.TargetID, "method": "Page.enable"})
	conn.request(t, ctx, map[string]any{"type": "cdp", "targetId": tab.TargetID, "method": "Page.reload"})
	for {
		e := conn.next(t, ctx, wire.TypeEvent)
		if e.Method == "Page.loadEventFired" {
			if e.TargetID != tab.TargetID || e.SessionID != "" {
				t.Fatalf("event routing: %+v", e)
			}
			break
		}
	}

	// createTab: tabShared (origin client) arrives before the response.
	c2 := conn.request(t, ctx, map[string]any{"type": "createTab", "url": fix + "/page.html?two"})
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := json.Unmarshal(c2.Result, &created); err != nil || created.TargetID == "" {
		t.Fatalf("createTab response: %s %s", c2.Result, c2.Error)
	}
	announcedFirst := false
	for _, e := range conn.seen {
		if e.Type == wire.TypeTabShared && e.Tab != nil && e.Tab.TargetID == created.TargetID && e.Tab.Origin == wire.OriginClient {
			announcedFirst = true
		}
	}
	if !announcedFirst {
		t.Fatalf("no tabShared for created tab %s before the createTab response", created.TargetID)
	}
	st, _ := b.Status(ctx)
	found := false
	for _, s := range st.SharedTabs {
		if s.TargetID == created.TargetID && s.Origin == wire.OriginClient {
			found = true
		}
	}
	if !found {
		t.Fatalf("created tab %s not shared as client tab: %+v", created.TargetID, st.SharedTabs)
	}
	// closeTab closes it and reports it closed.
	conn.request(t, ctx, map[string]any{"type": "closeTab", "targetId": created.TargetID})
	un := conn.next(t, ctx, wire.TypeTabUnshared)
	if un.TargetID != created.TargetID || un.Reason != wire.ReasonClosed {
		t.Fatalf("after closeTab: %+v", un)
	}

	// A second connection replaces the first with 4001: the extension stops and says why.
	_ = conn.c.Close(wire.CloseReplaced, "replaced by a newer extension connection")
	waitFor(t, ctx, func() (bool, string) {
		badge, _ := b.Badge(ctx, tab)
		title, _ := b.Tooltip(ctx, tab)
		return badge == "!" && strings.Contains(title, "replaced by another browser's connection"), badge + " / " + title
	})
	select {
	case <-relay.connCh:
		t.Fatal("the extension reconnected on its own after 4001")
	case <-time.After(1500 * time.Millisecond):
	}
	// A click reconnects (without unsharing) and re-announces the shared tab.
	if err := b.Click(ctx, tab); err != nil {
		t.Fatal(err)
	}
	conn = relay.accept(ctx)
	again := conn.next(t, ctx, wire.TypeTabShared)
	if again.Tab.TargetID != tab.TargetID {
		t.Fatalf("re-announced %+v", again.Tab)
	}
	if err := b.WaitBadge(ctx, tab, "ON"); err != nil {
		t.Fatal(err)
	}

	// 4003: token rejected, no reconnect, tooltip says so.
	_ = conn.c.Close(wire.CloseTokenRotated, "secret rotated")
	waitFor(t, ctx, func() (bool, string) {
		title, _ := b.Tooltip(ctx, tab)
		return strings.Contains(title, "pairing token rejected"), title
	})

	// Wrong token on connect: the server's proof does not match the extension's secret, which
	// the extension cannot tell from an impostor on the port; it says both, sends nothing usable
	// and stays stopped. (The tooltip before this said "pairing token rejected" too, so the
	// wait is for the new words.)
	if err := b.Pair(ctx, relay.addr, "wrong"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() (bool, string) {
		title, _ := b.Tooltip(ctx, tab)
		badge, _ := b.Badge(ctx, tab)
		return badge == "!" && strings.Contains(title, "does not know this secret") && strings.Contains(title, "pair again"), badge + " / " + title
	})

	// Nothing listening: "tabrelay server not running at …".
	dead := deadAddr(t)
	if err := b.Pair(ctx, dead, "x"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() (bool, string) {
		title, _ := b.Tooltip(ctx, tab)
		return strings.Contains(title, "tabrelay server not running at "+dead), title
	})

	// Back to the right settings: reconnects and re-announces; unshare by click sends tabUnshared.
	if err := b.Pair(ctx, relay.addr, relay.token); err != nil {
		t.Fatal(err)
	}
	conn = relay.accept(ctx)
	conn.next(t, ctx, wire.TypeTabShared)
	if err := b.WaitBadge(ctx, tab, "ON"); err != nil {
		t.Fatal(err)
	}
	if err := b.Unshare(ctx, tab); err != nil {
		t.Fatal(err)
	}
	un = conn.next(t, ctx, wire.TypeTabUnshared)
	if un.TargetID != tab.TargetID || un.Reason != wire.ReasonUser {
		t.Fatalf("after click on a shared tab: %+v", un)
	}
}

func waitFor(t *testing.T, ctx context.Context, cond func() (bool, string)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	last := ""
	for {
		ok, s := cond()
		if ok {
			return
		}
		last = s
		select {
		case <-ctx.Done():
			t.Fatalf("condition not met; last state: %s", last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func serveFixture(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>fake page</title><p>hello</p>`)
	})}
	go srv.Serve(ln) //nolint:errcheck
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestNeedNoSandbox: Options.NoSandbox decides when set, whatever the environment says;
// unset, only root on Linux runs without the sandbox.
func TestNeedNoSandbox(t *testing.T) {
	t.Setenv("TABRELAY_CHROME_NO_SANDBOX", "1") // no longer read here: cmd/tabrelay reads it
	yes, no := true, false
	auto := runtime.GOOS == "linux" && os.Geteuid() == 0
	cases := []struct {
		name string
		set  *bool
		want bool
	}{{"forced on", &yes, true}, {"forced off", &no, false}, {"unset", nil, auto}}
	for _, c := range cases {
		if got := needNoSandbox(c.set); got != c.want {
			t.Errorf("%s: needNoSandbox = %v, want %v", c.name, got, c.want)
		}
	}
}
