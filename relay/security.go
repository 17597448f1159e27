package relay

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// hostAllowed reports whether a Host header names this server by a loopback name, or one of
// extra (the non-loopback addresses it was explicitly allowed to listen on), with the server's
// own port. Anything else (a rebinding attacker's name, odd IP spellings) is refused.
func hostAllowed(host string, port int, extra []string) bool {
	name, p, err := net.SplitHostPort(host)
	if err != nil {
		return false
	}
	if p != strconv.Itoa(port) {
		return false
	}
	switch strings.ToLower(name) {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	for _, e := range extra {
		if strings.EqualFold(name, e) { // canonical IP spellings only (IPv6 hex in any case)
			return true
		}
	}
	return false
}

// originPolicy decides which browser origins may use an endpoint.
type originPolicy struct {
	extensionIDs []string
}

// extensionOrigin reports whether origin is chrome-extension://<allowed id>.
func (o originPolicy) extensionOrigin(origin string) bool {
	id, ok := strings.CutPrefix(origin, "chrome-extension://")
	if !ok {
		return false
	}
	for _, a := range o.extensionIDs {
		if id == a {
			return true
		}
	}
	return false
}

// cdpOrigin reports whether a CDP or discovery request with this Origin may proceed: real CDP
// clients send none; browser pages always send theirs and are refused, "null" included; the
// allowed extensions and Chrome's own DevTools front end may.
func (o originPolicy) cdpOrigin(origin string) bool {
	return origin == "" || o.extensionOrigin(origin) || origin == "devtools://devtools"
}

// pageFetch reports whether a request carries the Sec-Fetch-* metadata headers that browsers
// add to every request (and CDP clients never send), for a request a web page could have caused.
// "Sec-Fetch-Site: none" is left alone: Chrome sends it only for requests no page initiated (an
// address typed by the user, and requests of extensions with host permissions, such as
// tabrelay's own fetches, which carry no Origin on GET). A lone "Sec-Fetch-Mode: cors" is left
// alone too: it is what Node's fetch (undici) sends on every request — the MCP clients of Claude
// Code, Cursor and VS Code among them —, while a browser always sends Sec-Fetch-Site with it
// (and an Origin with every cors request).
func pageFetch(h http.Header) bool {
	if v := h.Values("Sec-Fetch-Site"); len(v) == 1 && strings.EqualFold(v[0], "none") {
		return false
	}
	if v := h.Values("Sec-Fetch-Mode"); len(v) == 1 && strings.EqualFold(v[0], "cors") && len(secFetch(h)) == 1 {
		return false
	}
	return len(secFetch(h)) > 0
}

// secFetch returns the names of h's Sec-Fetch-* headers.
func secFetch(h http.Header) []string {
	var out []string
	for k := range h {
		if len(k) > len("Sec-Fetch-") && strings.EqualFold(k[:len("Sec-Fetch-")], "Sec-Fetch-") {
			out = append(out, k)
		}
	}
	return out
}

// tokenFrom returns the secret a request carries, from the Authorization header or ?token=.
func tokenFrom(r *http.Request) string {
	if a := r.Header.Get("Authorization"); a != "" {
		if t, ok := strings.CutPrefix(a, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
	}
	return r.URL.Query().Get("token")
}

// throttle slows down guessing of the secret: a few failures are free, then each further
// failure doubles the wait before the next attempt is even checked (loopback included).
type throttle struct {
	mu       sync.Mutex
	failures int
	until    time.Time
	last     time.Time
	free     int
	base     time.Duration
	max      time.Duration
	now      func() time.Time
}

func newThrottle() *throttle {
	return &throttle{free: 5, base: 200 * time.Millisecond, max: 30 * time.Second, now: time.Now}
}

// blocked returns how long callers must still wait, or 0.
func (t *throttle) blocked() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if d := t.until.Sub(t.now()); d > 0 {
		return d
	}
	return 0
}

func (t *throttle) fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if now.Sub(t.last) > 5*time.Minute {
		t.failures = 0
	}
	t.last = now
	t.failures++
	if t.failures <= t.free {
		return
	}
	d := t.base << min(t.failures-t.free-1, 20)
	if d > t.max || d <= 0 {
		d = t.max
	}
	t.until = now.Add(d)
}

func (t *throttle) succeed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.now().Sub(t.last) > time.Minute {
		t.failures = 0
	}
}
