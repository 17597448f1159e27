package relay

import (
	"errors"
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

// pageFetch reports whether a request without an allowed Origin is one a web page could have
// caused. Browsers send Sec-Fetch-Site with every request (with Sec-Fetch-Mode and -Dest), and
// Origin on every CORS request; a CDP client sends neither, or, like Node's fetch (undici), only
// "Sec-Fetch-Mode: cors". So Sec-Fetch-Site decides, not the mere presence of a Sec-Fetch header:
// any value but "none" (same-origin, same-site, cross-site) is a page's. "none" is left alone:
// Chrome sends it only for requests no page initiated (an address typed by the user, and requests
// of extensions with host permissions, such as tabrelay's own fetches, which carry no Origin on
// GET).
func pageFetch(h http.Header) bool {
	for _, v := range h.Values("Sec-Fetch-Site") {
		if !strings.EqualFold(strings.TrimSpace(v), "none") {
			return true
		}
	}
	return false
}

// errConflictingTokens refuses a request whose token parameters differ from each other.
var errConflictingTokens = errors.New("the request carries several different token parameters")

// credential returns the secret a request carries, from the Authorization header (which wins)
// or ?token=, and whether it carries one at all (an empty value is none). A token parameter
// given again with the same value is one credential: a client that adds ?token= to a per-tab
// webSocketDebuggerUrl that already holds it sends "token=T&token=T" or "token=T?token=T".
// Differing values are refused with errConflictingTokens.
func credential(r *http.Request) (tok string, present bool, err error) {
	if a := strings.TrimSpace(r.Header.Get("Authorization")); a != "" {
		scheme, t, _ := strings.Cut(a, " ")
		if !strings.EqualFold(scheme, "Bearer") {
			return a, true, nil // another scheme: a credential, and not ours
		}
		t = strings.TrimSpace(t)
		return t, t != "", nil
	}
	for _, v := range r.URL.Query()["token"] {
		for _, part := range strings.Split(v, "?token=") {
			switch {
			case part == "":
			case tok == "":
				tok = part
			case part != tok:
				return "", true, errConflictingTokens
			}
		}
	}
	return tok, tok != "", nil
}

// tokenFrom returns the credential a request carries, "" for none or for conflicting ones.
func tokenFrom(r *http.Request) string {
	tok, _, err := credential(r)
	if err != nil {
		return ""
	}
	return tok
}

// throttle slows down guessing of the secret without ever slowing the user down. The secret is
// checked first and the right one never waits; a request without any credential is refused at
// once and not counted (discovery clients that send none, such as chrome-remote-interface or
// agent-browser, lock nobody out). Only a request carrying a wrong credential waits, before its
// refusal is sent, for a time that grows with the recent wrong credentials (a few are free): the
// failing client is the one that waits, whatever its address (on loopback every client shares
// one). At most maxWaiting refusals wait at a time, so waiting cannot exhaust the server; beyond
// that a wrong credential is refused at once with 429.
type throttle struct {
	mu       sync.Mutex
	failures int       // wrong credentials since the last quiet window
	last     time.Time // the last wrong credential
	waiting  int       // refusals waiting now

	free       int           // wrong credentials refused at once before waits start
	base, max  time.Duration // the first wait, doubled for each further failure up to max
	window     time.Duration // failures older than this are forgotten
	maxWaiting int
	now        func() time.Time
}

func newThrottle() *throttle {
	return &throttle{free: 5, base: 100 * time.Millisecond, max: 10 * time.Second, window: time.Minute, maxWaiting: 32, now: time.Now}
}

// fail records a wrong credential and returns how long its refusal must wait. ok is false when
// too many refusals are already waiting: refuse at once (429). When d > 0 the caller waits d
// and then calls done.
func (t *throttle) fail() (d time.Duration, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if now.Sub(t.last) > t.window {
		t.failures = 0
	}
	t.last = now
	t.failures++
	if t.failures <= t.free {
		return 0, true
	}
	if t.waiting >= t.maxWaiting {
		return 0, false
	}
	t.waiting++
	d = t.base << min(t.failures-t.free-1, 20)
	if d > t.max || d <= 0 {
		d = t.max
	}
	return d, true
}

// done ends a wait fail allowed.
func (t *throttle) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.waiting--
}
