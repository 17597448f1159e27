package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// hostsPages are TestGateHosts' pages: a tenant's shop linking to its platform's sign-in host.
const hostsPages = "testdata/hosts"

// TestGateHosts: a page the agent opens by itself is judged by its host, on real Chromium with
// the real extension and the agent's model door. On a shop platform whose tenants no list
// names (acme.myshop.localhost, evil.myshop.localhost), following the tenant's link to the
// platform's sign-in host, the form there, going back to that host and the platform's own www
// host ask nothing; a page on another tenant asks (declined: it never reaches the server)
// unless the person's words name it.
func TestGateHosts(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "scripted"})
	site := startLogSite(t, hostsPages)
	su, _ := url.Parse(site.URL)
	port := su.Port()
	host := func(h string) string { return "http://" + h + ".myshop.localhost:" + port }
	// reached reports whether the server got uri on host h
	reached := func(h, uri string) bool {
		for _, l := range site.got(" (host " + h + ".myshop.localhost:" + port + ")") {
			if strings.Contains(l, " "+uri) {
				return true
			}
		}
		return false
	}
	tab := ae.share(t, host("acme")+"/start.html")
	u := user{t: t, svc: ae.agent.Actions(), tab: tab.TargetID}
	runner := ae.agent.Runner()
	nav := func(raw string) llmtest.Reply { return llmtest.ToolCall("navigate", fmt.Sprintf(`{"url":%q}`, raw)) }
	finish := llmtest.ToolCall("finish", `{"answer":"done"}`)

	for _, c := range []struct {
		name, goal string
		replies    []llmtest.Reply
		asks       int
		reached    [][2]string // what the server's log must show: host (its first label) and URI
		never      string      // a host (its first label) the server must never hear from
	}{
		{name: "a sign-in on the platform's sign-in host, then its www host", goal: "sign in to my shop as ada@example.com, then read the shop's docs",
			replies: []llmtest.Reply{
				llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
					ref := refFor(r, "Sign in", "link")
					if ref == "" {
						return llmtest.ToolCall("fail", `{"reason":"test script: no Sign in link on the shop"}`)
					}
					return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, ref))
				}),
				llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
					ref := refFor(r, "Email", "textbox")
					if ref == "" {
						return llmtest.ToolCall("fail", `{"reason":"test script: no Email field on the sign-in host"}`)
					}
					return llmtest.ToolCall("type", fmt.Sprintf(`{"ref":%q,"text":"ada@example.com","submit":true}`, ref))
				}),
				nav(host("login") + "/signin.html?again=1"),
				nav(host("www") + "/docs.html"),
				finish,
			},
			reached: [][2]string{{"login", "/log?email=ada"}, {"login", "/signin.html?again=1"}, {"www", "/docs.html"}}},
		{name: "another tenant the person names", goal: "read the docs at " + host("beta") + "/docs.html", replies: []llmtest.Reply{nav(host("beta") + "/docs.html"), finish},
			reached: [][2]string{{"beta", "/docs.html"}}},
		// last: a declined task may leave its finishing move unused
		{name: "another tenant", goal: "summarise this page", replies: []llmtest.Reply{nav(host("evil") + "/log?k=x"), finish},
			asks: 1, never: "evil"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u.t = t
			u.open(host("acme") + "/start.html")
			site.reset()
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
				if !reached(want[0], want[1]) {
					t.Errorf("%s never reached %s: %v", want[1], want[0], site.got(""))
				}
			}
			if c.never != "" {
				if got := site.got("(host " + c.never + "."); len(got) != 0 {
					t.Errorf("reached %v", got)
				}
			}
		})
	}
}
