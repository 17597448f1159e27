package relaytest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/tabrelay/tabrelay/relay"
)

// Impostor is a fake server on a tabrelay port for the impostor tests: a plain HTTP and
// WebSocket server that records everything it receives and answers like tabrelay as far as it
// can without the secret (/health says ok, /auth/challenge answers a made-up proof, WebSockets
// are accepted and read). With Target set it relays every request to the real server instead,
// the way a process holding [::1] while the real server holds 127.0.0.1 would.
type Impostor struct {
	// Addr is where it listens (host:port).
	Addr string

	srv *http.Server
	mu  sync.Mutex
	got []string
}

// StartImpostor listens on addr ("127.0.0.1:0", "[::1]:PORT"…); target, when not "", is the
// real server's host:port to relay to. Close stops it.
func StartImpostor(addr, target string) (*Impostor, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	im := &Impostor{Addr: ln.Addr().String()}
	var h http.Handler = http.HandlerFunc(im.answer)
	if target != "" {
		to := &url.URL{Scheme: "http", Host: target}
		h = &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)      // also sets Host to target
			pr.SetXForwarded() // as the Director-based proxy did, say who the client is
		}}
	}
	im.srv = &http.Server{Handler: im.record(h), ReadHeaderTimeout: 10 * time.Second}
	go im.srv.Serve(ln) //nolint:errcheck
	return im, nil
}

// Close stops the impostor.
func (im *Impostor) Close() { _ = im.srv.Close() }

// Received is everything the impostor received, one string per item: each request line with
// its query, each header value, each body and each WebSocket message.
func (im *Impostor) Received() []string {
	im.mu.Lock()
	defer im.mu.Unlock()
	return append([]string(nil), im.got...)
}

// Requests is how many requests (WebSocket upgrades included) reached the impostor.
func (im *Impostor) Requests() int {
	n := 0
	for _, s := range im.Received() {
		if strings.HasPrefix(s, "request ") {
			n++
		}
	}
	return n
}

// Candidates are the values in what the impostor received that a thief would try as a secret
// or credential on the real server: bearer values, query values, JSON string values of bodies
// and messages, and whole bodies and messages.
func (im *Impostor) Candidates() []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			add(x)
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, s := range im.Received() {
		kind, val, _ := strings.Cut(s, " ")
		switch kind {
		case "request":
			if u, err := url.Parse(strings.Fields(val + " x")[1]); err == nil {
				for _, vs := range u.Query() {
					for _, v := range vs {
						add(v)
					}
				}
			}
		case "header":
			_, v, _ := strings.Cut(val, ": ")
			add(v)
			if b, ok := strings.CutPrefix(v, "Bearer "); ok {
				add(b)
			}
		case "body", "message":
			add(val)
			var v any
			if json.Unmarshal([]byte(val), &v) == nil {
				walk(v)
			}
		}
	}
	return out
}

func (im *Impostor) note(s string) {
	im.mu.Lock()
	im.got = append(im.got, s)
	im.mu.Unlock()
}

// record notes the request, its headers and body before passing it on.
func (im *Impostor) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		im.note("request " + r.Method + " " + r.URL.RequestURI())
		for k, vs := range r.Header {
			for _, v := range vs {
				im.note("header " + k + ": " + v)
			}
		}
		if r.Body != nil {
			b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if len(b) > 0 {
				im.note("body " + string(b))
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		next.ServeHTTP(w, r)
	})
}

// answer plays tabrelay without the secret.
func (im *Impostor) answer(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/health":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ok","version":"0.1.0","extensionConnected":false}`)
	case r.URL.Path == "/auth/challenge":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"serverNonce":"`+strings.Repeat("9", 10)+`.`+strings.Repeat("ab", 16)+`","proof":"`+strings.Repeat("0", 64)+`"}`)
	case strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		for {
			_, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			im.note("message " + string(msg))
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"Browser":"Chrome/156.0.0.0","tabs":[]}`)
	}
}

// AssertNothingUsable fails the test if the impostor received the secret of real, or anything
// real accepts: each candidate is tried on real, which must answer 401 (or 429 once the wrong
// tries throttle it), and real.Accepts must say no. It also fails when the impostor received no
// request at all (the client did not go through it). The candidates are tried all at once: the
// server makes each wrong try wait longer than the one before (up to its maximum), so one after
// the other they would wait that sum, side by side only the longest wait.
func (im *Impostor) AssertNothingUsable(t testing.TB, real *relay.Server) {
	t.Helper()
	if im.Requests() == 0 {
		t.Fatal("the impostor received no request: the client did not go through it")
	}
	for _, s := range im.Received() {
		if strings.Contains(s, real.Token()) {
			t.Errorf("the impostor received the secret: %q", s)
		}
	}
	var wg sync.WaitGroup
	for _, c := range im.Candidates() {
		if real.Accepts(c) {
			t.Errorf("the impostor received %q, which the real server accepts", c)
		}
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodGet, real.HTTPURL()+"/json/version", nil)
			if err != nil {
				t.Errorf("try %q on the real server: %v", c, err)
				return
			}
			req.Header.Set("Authorization", "Bearer "+c)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("try %q on the real server: %v", c, err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusTooManyRequests {
				t.Errorf("the real server answered %q from the impostor with HTTP %d", c, resp.StatusCode)
			}
		})
	}
	wg.Wait()
}
