package relay_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

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
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 4096)
			n, _ := resp.Body.Read(buf)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("%s %s with secret %q: %d, want 401", r.method, r.path, tok, resp.StatusCode)
			}
			if body := string(buf[:n]); strings.Contains(body, tabA) || strings.Contains(body, "secret-tab") {
				t.Errorf("%s %s leaked tab data without the secret: %s", r.method, r.path, body)
			}
		}
		// let the throttle calm down between routes
		time.Sleep(10 * time.Millisecond)
		e.srv.Close()
		e = newEnv(t, relay.HubOptions{})
		e.share(tabA, "https://secret-tab.example/")
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

func TestThrottlesWrongSecrets(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	codes := map[int]int{}
	start := time.Now()
	for time.Since(start) < time.Second {
		codes[request(t, e, "GET", "/json/version", false, "", "", "guess")]++
	}
	if codes[http.StatusUnauthorized] > 10 {
		t.Errorf("%d wrong secrets were checked in one second; the throttle should allow only a handful", codes[http.StatusUnauthorized])
	}
	if codes[http.StatusTooManyRequests] == 0 {
		t.Errorf("no 429 while guessing: %v", codes)
	}
	// while blocked, even the right secret waits
	if code := request(t, e, "GET", "/json/version", false, "", "", e.srv.Token()); code != http.StatusTooManyRequests {
		t.Errorf("right secret during the block: %d, want 429", code)
	}
	t.Logf("guessing for 1s: %v", codes)
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
