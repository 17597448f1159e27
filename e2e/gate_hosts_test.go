package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// hostsSite is one shop platform's server under every host name that reaches it (its tenants
// acme.myshop.localhost, evil.myshop.localhost, its sign-in host login.myshop.localhost, its
// own www host): /sso on a tenant redirects to the sign-in host's form, whose Next sends to
// /log. It keeps every request as "host/uri": the verdict is the server's own log.
type hostsSite struct {
	*httptest.Server
	port string
	mu   sync.Mutex
	log  []string
}

func startHostsSite(t *testing.T) *hostsSite {
	t.Helper()
	s := &hostsSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.log = append(s.log, r.Host+r.URL.RequestURI())
		s.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/sso":
			http.Redirect(w, r, "http://login.myshop.localhost:"+s.port+"/signin", http.StatusFound)
		case "/signin":
			fmt.Fprint(w, `<!doctype html><title>Sign in</title><h1>Sign in</h1><form action="/log"><label>Email <input name="email"></label><button>Next</button></form>`)
		default:
			fmt.Fprintf(w, `<!doctype html><title>%s</title><h1>%s on %s</h1><p>Kettles and teapots.</p>`, r.URL.Path, r.URL.Path, r.Host)
		}
	}))
	u, _ := url.Parse(s.Server.URL)
	s.port = u.Port()
	t.Cleanup(s.Close)
	return s
}

// got returns the logged requests holding sub.
func (s *hostsSite) got(sub string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.log {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// TestGateHosts: a page the agent opens by itself is judged by its host, on real Chromium with
// the real extension and the agent's model door. On a shop platform whose tenants no list
// names, a sign-in that redirects to another host of the platform, the form there, going back
// to that host and the platform's own www host ask nothing; a page on another tenant asks
// (declined: it never reaches the server) unless the person's words name it.
func TestGateHosts(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "scripted"})
	site := startHostsSite(t)
	host := func(h string) string { return "http://" + h + ".myshop.localhost:" + site.port }
	tab := ae.share(t, host("acme")+"/start")
	u := user{t: t, svc: ae.agent.Actions(), tab: tab.TargetID}
	runner := ae.agent.Runner()
	nav := func(raw string) llmtest.Reply { return llmtest.ToolCall("navigate", fmt.Sprintf(`{"url":%q}`, raw)) }
	finish := llmtest.ToolCall("finish", `{"answer":"done"}`)

	for _, c := range []struct {
		name, goal string
		replies    []llmtest.Reply
		asks       int
		reached    []string // what the server's log must show
		never      string   // what it must not
	}{
		{name: "a sign-in on another host of the platform, then its www host", goal: "sign in to my shop as ada@example.com, then read the shop's docs",
			replies: []llmtest.Reply{
				nav(host("acme") + "/sso"),
				llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
					ref := refFor(r, "Email", "textbox")
					if ref == "" {
						return llmtest.ToolCall("fail", `{"reason":"test script: no Email field after the redirect"}`)
					}
					return llmtest.ToolCall("type", fmt.Sprintf(`{"ref":%q,"text":"ada@example.com","submit":true}`, ref))
				}),
				nav(host("login") + "/signin?again=1"),
				nav(host("www") + "/docs"),
				finish,
			},
			reached: []string{"login.myshop.localhost:" + site.port + "/log?email=ada", "login.myshop.localhost:" + site.port + "/signin?again=1", "www.myshop.localhost:" + site.port + "/docs"}},
		{name: "another tenant the person names", goal: "read the docs at " + host("beta") + "/docs", replies: []llmtest.Reply{nav(host("beta") + "/docs"), finish},
			reached: []string{"beta.myshop.localhost:" + site.port + "/docs"}},
		// last: a declined task may leave its finishing move unused
		{name: "another tenant", goal: "summarise this page", replies: []llmtest.Reply{nav(host("evil") + "/log?k=x"), finish},
			asks: 1, never: "evil.myshop.localhost"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u.t = t
			u.open(host("acme") + "/start")
			site.mu.Lock()
			site.log = nil
			site.mu.Unlock()
			model.Push(c.replies...)
			tk, err := runner.Start(context.Background(), c.goal, tab.TargetID)
			if err != nil {
				t.Fatal(err)
			}
			asks, done := heldSettle(t, runner, tk.ID, nil)
			if asks != c.asks {
				t.Errorf("asked %d times, want %d", asks, c.asks)
			}
			if c.asks == 0 && done.Status != task.StatusSucceeded {
				t.Errorf("ended %s %q", done.Status, done.Error)
			}
			for _, want := range c.reached {
				if len(site.got(want)) == 0 {
					t.Errorf("%s never reached the server: %v", want, site.got(""))
				}
			}
			if c.never != "" {
				if got := site.got(c.never); len(got) != 0 {
					t.Errorf("reached %v", got)
				}
			}
		})
	}
}
