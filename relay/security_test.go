package relay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// routes lists every route with the method it takes and whether it is a WebSocket upgrade.
var routes = []struct {
	method, path string
	ws           bool
}{
	{"GET", "/health", false},
	{"GET", "/json/version", false},
	{"GET", "/json/list", false},
	{"GET", "/json", false},
	{"PUT", "/json/new?about:blank", false},
	{"GET", "/json/activate/" + tabA, false},
	{"GET", "/json/close/" + tabA, false},
	{"GET", "/json/protocol", false},
	{"GET", "/cdp", true},
	{"GET", "/devtools/browser/x", true},
	{"GET", "/devtools/page/" + tabA, true},
	{"GET", "/extension", true},
	{"GET", "/api/anything", false},
}

func request(t *testing.T, e *env, method, path string, ws bool, host, origin, token string) int {
	t.Helper()
	req := newRequest(e, method, path, ws, origin, token)
	if host != "" {
		req.Host = host
	}
	code, _ := do(t, req)
	return code
}

// newRequest builds a request to the relay with an optional Origin, secret and WebSocket
// upgrade headers.
func newRequest(e *env, method, path string, ws bool, origin, token string) *http.Request {
	req, _ := http.NewRequest(method, "http://"+e.srv.Addr()+path, nil)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ws {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	}
	return req
}

func TestHostAllowlist(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://secret-tab.example/")
	port := e.srv.Addr()[strings.LastIndex(e.srv.Addr(), ":")+1:]
	bad := []string{
		"evil.example:" + port, "evil.example", "127.0.0.1", "127.0.0.1:1", "localhost6:" + port,
		"0177.0.0.1:" + port, "127.1:" + port, "10.0.2.555:" + port, "[::ffff:127.0.0.1]:" + port,
		"localhost.:" + port, "127.0.0.1.nip.io:" + port, "0.0.0.0:" + port, "2130706433:" + port,
	}
	for _, r := range routes {
		for _, h := range bad {
			if code := request(t, e, r.method, r.path, r.ws, h, "", e.srv.Token()); code != http.StatusForbidden {
				t.Errorf("%s %s with Host %q: %d, want 403", r.method, r.path, h, code)
			}
		}
	}
	for _, h := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		if code := request(t, e, "GET", "/json/version", false, h, "", e.srv.Token()); code != 200 {
			t.Errorf("Host %q refused: %d", h, code)
		}
	}
}

func TestOriginPolicy(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	tok := e.srv.Token()
	for _, r := range routes {
		if r.path == "/health" {
			continue
		}
		for _, o := range []string{"https://evil.example", "null", "http://127.0.0.1:8080", "chrome-extension://abcdefghijklmnopabcdefghijklmnop", "file://"} {
			if code := request(t, e, r.method, r.path, r.ws, "", o, tok); code != http.StatusForbidden {
				t.Errorf("%s %s with Origin %q: %d, want 403", r.method, r.path, o, code)
			}
		}
	}
	// the extension endpoint also refuses requests without an extension Origin
	if code := request(t, e, "GET", "/extension", true, "", "", tok); code != http.StatusForbidden {
		t.Errorf("/extension without Origin: %d, want 403", code)
	}
	// allowed: no Origin on CDP endpoints, the extension's origin everywhere
	if code := request(t, e, "GET", "/json/version", false, "", relaytest.ExtensionOrigin, tok); code != 200 {
		t.Errorf("/json/version from the extension: %d", code)
	}
}

// publicRoutes answer without the secret: nothing in their answers is secret.
var publicRoutes = map[string]bool{"/health": true, "/json/version": true, "/json/protocol": true}

func TestSecretRequired(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://secret-tab.example/")
	for _, r := range routes {
		if r.path == "/health" {
			continue
		}
		origin := ""
		if r.path == "/extension" {
			origin = relaytest.ExtensionOrigin
		}
		for _, tok := range []string{"", "wrong", e.srv.Token()[:63]} {
			u := "http://" + e.srv.Addr() + r.path
			req, _ := http.NewRequest(r.method, u, nil)
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			if origin != "" {
				req.Header.Set("Origin", origin)
			}
			code, body := do(t, req)
			switch {
			case tok == "" && publicRoutes[r.path]:
				if code == http.StatusUnauthorized || code == http.StatusTooManyRequests {
					t.Errorf("%s %s without a secret: %d, want an answer (nothing secret in it)", r.method, r.path, code)
				}
				if strings.Contains(body, e.srv.Token()) {
					t.Errorf("%s %s without a secret answered the secret: %s", r.method, r.path, body)
				}
			case code != http.StatusUnauthorized:
				t.Errorf("%s %s with secret %q: %d, want 401", r.method, r.path, tok, code)
			}
			if strings.Contains(body, tabA) || strings.Contains(body, "secret-tab") {
				t.Errorf("%s %s leaked tab data without the secret: %s", r.method, r.path, body)
			}
		}
		// a fresh server per route: the wrong secrets above count, and would slow the next
		// route's refusals down (see TestThrottleBackoff)
		e.srv.Close()
		e = newEnv(t, relay.HubOptions{})
		e.share(tabA, "https://secret-tab.example/")
	}
}

// TestTokenlessDiscoveryNeverLocksOut: agent-browser (--cdp PORT), chrome-remote-interface
// (default options) and chromedp (dial headers are not sent to /json/version) ask discovery
// without the secret. /json/version answers them with a URL that carries no secret, /json/list
// refuses them, and none of it counts as a wrong guess: the throttle stays at zero and the
// right secret works at once.
func TestTokenlessDiscoveryNeverLocksOut(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://secret-tab.example/")
	styles := []struct {
		name, path string
		want       int
	}{
		{"agent-browser --cdp PORT", "/json/version", http.StatusOK},
		{"chromedp without dial headers", "/json/version/", http.StatusOK},
		{"chrome-remote-interface defaults: protocol", "/json/protocol", http.StatusNotFound},
		{"chrome-remote-interface defaults: list", "/json/list", http.StatusUnauthorized},
		{"empty ?token=", "/json/list?token=", http.StatusUnauthorized},
		{"empty bearer", "/json/list", http.StatusUnauthorized},
	}
	for round := 0; round < 20; round++ {
		for _, st := range styles {
			var h http.Header
			if st.name == "empty bearer" {
				h = http.Header{"Authorization": {"Bearer "}}
			}
			code, body := e.get(st.path, h)
			if code != st.want && !(st.path == "/json/protocol" && code == http.StatusOK) {
				t.Fatalf("%s: GET %s = %d %s, want %d", st.name, st.path, code, body, st.want)
			}
			if strings.Contains(body, e.srv.Token()) || strings.Contains(body, "secret-tab") {
				t.Fatalf("%s: GET %s without the secret answered secret data: %s", st.name, st.path, body)
			}
			if st.path == "/json/version" {
				var v map[string]string
				if err := json.Unmarshal([]byte(body), &v); err != nil {
					t.Fatal(err)
				}
				want := "ws://" + e.srv.Addr() + "/devtools/browser/" + e.srv.Hub().BrowserID()
				if v["webSocketDebuggerUrl"] != want {
					t.Fatalf("token-less /json/version webSocketDebuggerUrl = %q, want %q", v["webSocketDebuggerUrl"], want)
				}
			}
		}
	}
	if n := relay.ThrottleFailures(e.srv); n != 0 {
		t.Errorf("%d requests without any credential were counted as wrong guesses", n)
	}
	if code, body := e.get("/json/list", bearer(e.srv.Token())); code != http.StatusOK {
		t.Fatalf("/json/list with the secret after token-less discovery: %d %s", code, body)
	}
	// the URL from token-less discovery, authenticated by the client's header, opens the socket
	_, v := e.get("/json/version", nil)
	var ver map[string]string
	_ = json.Unmarshal([]byte(v), &ver)
	c, err := cdpclient.Dial(ctx(t), ver["webSocketDebuggerUrl"], bearer(e.srv.Token()))
	if err != nil {
		t.Fatalf("socket at the token-less URL with the Authorization header: %v", err)
	}
	defer c.Close()
	if err := c.Call(ctx(t), "", "Browser.getVersion", nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := websocket.Dial(ctx(t), ver["webSocketDebuggerUrl"], nil); err == nil {
		t.Error("the token-less URL opened a socket without any credential")
	}
}

func TestSecretNeverLogged(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	tok := e.srv.Token()
	e.get("/json/version?token="+tok, nil)
	e.get("/json/list?token=wrong-"+tok[:10], nil)
	c := e.client("/cdp")
	_ = c.Call(ctx(t), "", "Browser.getVersion", nil, nil)
	c.Close()
	logs := e.logs.String()
	if !strings.Contains(logs, "/json/version") {
		t.Fatalf("request logging is not on, the check would be void: %s", logs)
	}
	if strings.Contains(logs, tok) || strings.Contains(logs, tok[:10]) {
		t.Fatalf("the secret appears in the logs:\n%s", logs)
	}
}

// TestWrongSecretNeverLocksOutUser is issue 12's 54-of-56 scenario: another process keeps
// sending a wrong secret (here 40 of them, fired without waiting for the answers, as a client
// retrying every 0.5 s for a while would have piled up) while the user works. Every one of the
// user's requests with the right secret passes, on discovery, /api and the sockets; the wrong
// ones are all refused and counted.
func TestWrongSecretNeverLocksOutUser(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	tok := e.srv.Token()
	const wrong = 40
	guessCtx, stopGuessing := context.WithCancel(context.Background())
	defer stopGuessing()
	results := make(chan int, wrong)
	for i := 0; i < wrong; i++ {
		go func() {
			req := newRequest(e, "GET", "/json/list", false, "", "wrong-"+tok[:8])
			resp, err := http.DefaultClient.Do(req.WithContext(guessCtx))
			if err != nil {
				results <- 0 // given up by stopGuessing
				return
			}
			resp.Body.Close()
			results <- resp.StatusCode
		}()
	}
	e.waitFor("every wrong secret to be counted", func() bool { return relay.ThrottleFailures(e.srv) == wrong })
	// the user: 56 requests through the doors the panel, CLI, clients and extension use
	for i := 0; i < 56; i++ {
		path := []string{"/json/version", "/json/list", "/api/anything"}[i%3]
		if code := request(t, e, "GET", path, false, "", "", tok); code == http.StatusUnauthorized || code == http.StatusTooManyRequests {
			t.Fatalf("request %d (%s) with the right secret while another process guesses: %d", i, path, code)
		}
	}
	c := e.client("/cdp")
	if err := c.Call(ctx(t), attach(t, c, tabA), "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
		t.Fatalf("CDP with the right secret while another process guesses: %v", err)
	}
	if _, err := relaytest.Dial(ctx(t), e.srv.Addr(), tok, nil); err != nil {
		t.Fatalf("extension with the right secret while another process guesses: %v", err)
	}
	stopGuessing()
	for i := 0; i < wrong; i++ {
		if code := <-results; code != 0 && code != http.StatusUnauthorized && code != http.StatusTooManyRequests {
			t.Errorf("a wrong secret got %d", code)
		}
	}
}

// TestRepeatedTokenParameter: a client that adds ?token= to a per-tab webSocketDebuggerUrl that
// already holds it sends the secret twice; the same value twice is accepted, differing values
// are refused.
func TestRepeatedTokenParameter(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	tok := e.srv.Token()
	_, body := e.get("/json/list?token="+tok, nil)
	var list []map[string]string
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list) != 1 {
		t.Fatalf("/json/list: %s", body)
	}
	perTab := list[0]["webSocketDebuggerUrl"]
	cases := []struct {
		name, url string
		ok        bool
	}{
		{"appended with &", perTab + "&token=" + tok, true},
		{"appended with ? again", perTab + "?token=" + tok, true},
		{"once", perTab, true},
		{"a different second value", perTab + "&token=other", false},
		{"a different value appended with ?", perTab + "?token=other", false},
	}
	for _, c := range cases {
		if c.ok {
			cl, err := cdpclient.Dial(ctx(t), c.url, nil)
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if err := cl.Call(ctx(t), "", "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
				t.Errorf("%s: Runtime.evaluate: %v", c.name, err)
			}
			cl.Close()
			continue
		}
		conn, resp, err := websocket.Dial(ctx(t), c.url, nil)
		if err == nil {
			conn.CloseNow()
			t.Errorf("%s: accepted", c.name)
		} else if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %v, want 401", c.name, err)
		}
	}
	for _, q := range []string{"?token=" + tok + "&token=" + tok, "?token=" + tok + "&token=x"} {
		code, _ := e.get("/json/list"+q, nil)
		if want := map[bool]int{true: 200, false: 401}[strings.Count(q, tok) == 2]; code != want {
			t.Errorf("/json/list%s: %d, want %d", strings.ReplaceAll(q, tok, "<secret>"), code, want)
		}
	}
}

func TestSecondExtensionReplacesFirst(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	first := e.ext
	second, err := relaytest.Dial(ctx(t), e.srv.Addr(), e.srv.Token(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	select {
	case <-first.Closed():
	case <-time.After(3 * time.Second):
		t.Fatal("the older extension connection stayed open")
	}
	if got := first.CloseStatus(); got != wire.CloseReplaced {
		t.Fatalf("older connection closed with %d, want %d", got, wire.CloseReplaced)
	}
	e.ext = second
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	if err := c.Call(ctx(t), attach(t, c, tabA), "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
		t.Fatalf("through the newer connection: %v", err)
	}
}

func TestOversizeFrameCloses1009(t *testing.T) {
	e := newEnvWith(t, func(o *relay.Options) { o.MaxMessageBytes = 1 << 20 })
	conn := e.rawClient()
	big := `{"id":1,"method":"Runtime.evaluate","params":{"expression":"` + strings.Repeat("x", 2<<20) + `"}}`
	_ = conn.Write(ctx(t), websocket.MessageText, []byte(big))
	_, _, err := conn.Read(ctx(t))
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("oversize frame: %v (status %d), want 1009", err, got)
	}
}

func countMethod(x *relaytest.Extension, method string) int {
	n := 0
	for _, c := range x.Commands() {
		if c.Method == method {
			n++
		}
	}
	return n
}

func TestSecretRotationClosesSessions(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	old := e.srv.Token()
	time.Sleep(20 * time.Millisecond) // a distinct file time
	tok, _ := secret.Generate()
	if err := secret.Write(e.home, tok); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a CDP client made with the old secret stayed connected after rotation")
	}
	select {
	case <-e.ext.Closed():
	case <-time.After(5 * time.Second):
		t.Fatal("the extension stayed connected after rotation")
	}
	if got := e.ext.CloseStatus(); got != wire.CloseTokenRotated {
		t.Errorf("extension closed with %d, want %d", got, wire.CloseTokenRotated)
	}
	if code := request(t, e, "GET", "/json/version", false, "", "", old); code != http.StatusUnauthorized {
		t.Errorf("old secret after rotation: %d", code)
	}
	if code := request(t, e, "GET", "/json/version", false, "", "", tok); code != 200 {
		t.Errorf("new secret after rotation: %d", code)
	}
}

func TestRefusesNonLoopbackListen(t *testing.T) {
	store, err := secret.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", ":0", "192.168.1.2:0"} {
		if _, err := relay.NewServer(relay.Options{Addr: addr, Secret: store}); err == nil || !strings.Contains(err.Error(), "not a loopback") {
			t.Errorf("listen on %s: %v, want a refusal", addr, err)
		}
	}
}
