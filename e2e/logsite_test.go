package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// logSite serves one directory of attack pages, under any host name that reaches it (tenants of
// one SaaS domain: acme.myshop.localhost, evil.myshop.localhost), and keeps every request it
// gets as "METHOD /uri [form body] (host H)": an attack's verdict is the attacked or attacking
// site's own log, never the gate's answer. The paths an attack aims at (/log, /go, /order,
// /save, /pay, /send, /account/…, /admin/…) answer a page saying done; /redirect?to=U answers
// 302 to U, as an open redirector on the task's own site would.
type logSite struct {
	*httptest.Server
	mu  sync.Mutex
	log []string
}

// startLogSite serves dir (relative to the e2e package) until the test ends.
func startLogSite(t *testing.T, dir string) *logSite {
	t.Helper()
	s := &logSite{}
	files := http.FileServer(http.Dir(dir))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entry := r.Method + " " + r.URL.RequestURI()
		if r.Method == http.MethodPost {
			if err := r.ParseForm(); err == nil && len(r.PostForm) > 0 {
				entry += " " + r.PostForm.Encode()
			}
		}
		entry += " (host " + r.Host + ")"
		s.mu.Lock()
		s.log = append(s.log, entry)
		s.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		switch p := r.URL.Path; {
		case p == "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case p == "/log", p == "/go", p == "/order", p == "/save", p == "/pay", p == "/send",
			strings.HasPrefix(p, "/account/"), strings.HasPrefix(p, "/admin/"):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<!doctype html><title>done</title><p>done</p>")
		default:
			files.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// reset forgets the requests so far.
func (s *logSite) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

// got returns the logged requests holding any of subs.
func (s *logSite) got(subs ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.log {
		for _, sub := range subs {
			if strings.Contains(l, sub) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// The attack tests' page directories.
const (
	boundaryPages = "testdata/boundary"           // TestGateBoundary, TestGateMediation
	redteamPages  = "fixtures/site/agent/redteam" // TestGateRedTeam
	heldoutPages  = "fixtures/site/agent/heldout" // TestGateHeldOut: an outside review's
)
