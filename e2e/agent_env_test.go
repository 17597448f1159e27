package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	sse "github.com/tmaxmax/go-sse"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/app"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

// agentEnv is an end-to-end environment whose relay runs the in-process agent and its /api,
// wired as `tabrelay serve` wires it (agent/api over a hub pipe, tasks in SQLite under home).
type agentEnv struct {
	*env
	app   *app.App
	agent *api.Agent
}

// startAgentEnv is startEnv with the agent on the relay: fixture site, relay + agent, headless
// Chromium with the real extension paired.
func startAgentEnv(t *testing.T, opts api.Options) *agentEnv {
	t.Helper()
	return startAgentEnvWith(t, opts, relay.HubOptions{})
}

// startAgentEnvWith is startAgentEnv with the relay's hub tuned and browser options of the
// test's own (a headed browser on a virtual display, say).
func startAgentEnvWith(t *testing.T, opts api.Options, hub relay.HubOptions, browserOpts ...func(*browser.Options)) *agentEnv {
	t.Helper()
	requireChromium(t)
	ae := &agentEnv{env: &env{hub: hub}}
	t.Cleanup(func() {
		if ae.app != nil {
			_ = ae.app.Close()
		}
		ae.env.close()
	})
	e := ae.env
	var err error
	if e.tmp, err = os.MkdirTemp("", "tabrelay-e2e-agent-"); err != nil {
		t.Fatal(err)
	}
	e.home = filepath.Join(e.tmp, "home")
	if e.site, err = fixtures.Start(); err != nil {
		t.Fatal(err)
	}
	if e.store, err = secret.NewStore(e.home); err != nil {
		t.Fatal(err)
	}
	if err := ae.startAgentRelay("127.0.0.1:0", opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := zerolog.Nop()
	bo := browser.Options{Headless: true, Logger: &log, ExtensionDebugging: true}
	for _, o := range browserOpts {
		o(&bo)
	}
	if e.b, err = browser.Launch(ctx, bo); err != nil {
		t.Fatal(err)
	}
	if err := e.b.Pair(ctx, e.addr, e.store.Token()); err != nil {
		t.Fatal(err)
	}
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	return ae
}

// startAgentRelay starts the server (internal/app: relay, agent, skills, voice) on addr,
// using the environment's home, exactly as `tabrelay serve` starts it; voice ignores the
// process environment (no cloud engines in tests).
func (ae *agentEnv) startAgentRelay(addr string, opts api.Options) error {
	log := zerolog.Nop()
	if os.Getenv("TABRELAY_E2E_LOG") != "" {
		log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Str("side", "relay").Logger()
	}
	opts.Home = ae.home
	running, err := app.Start(context.Background(), app.Config{
		Relay: relay.Options{Addr: addr, Secret: ae.store, Hub: ae.hubOptions(), TrustSameUser: ae.trustSameUser},
		Agent: opts,
		Voice: voice.Options{Getenv: func(string) string { return "" }},
		Log:   log,
	})
	if err != nil {
		return err
	}
	ae.app, ae.srv, ae.addr, ae.agent = running, running.Server, running.Addr(), running.Agent
	return nil
}

// restart stops the agent and the relay and starts them again on the same address and home
// with opts, then waits until the extension has reconnected and every tab in want is listed.
func (ae *agentEnv) restart(t *testing.T, opts api.Options, want ...browser.Tab) {
	t.Helper()
	addr := ae.addr
	if err := ae.app.Close(); err != nil {
		t.Fatalf("close the server: %v", err)
	}
	if err := ae.startAgentRelay(addr, opts); err != nil {
		t.Fatalf("restart the relay on %s: %v", addr, err)
	}
	start := time.Now()
	ae.waitListed(t, want...)
	t.Logf("relay + agent restarted; the extension was back after %v", time.Since(start).Round(time.Millisecond))
}

// waitListed waits until the extension is connected to the relay and has listed every tab in
// want (after a restart of the relay, say: the extension's reconnect backoff can reach seconds).
func (ae *agentEnv) waitListed(t *testing.T, want ...browser.Tab) {
	t.Helper()
	eventually(t, 15*time.Second, "the extension reconnects and the shared tabs are listed again", func() (bool, string) {
		got := map[string]bool{}
		for _, tab := range ae.srv.Hub().Tabs() {
			got[tab.TargetID] = true
		}
		why := ""
		for _, w := range want {
			if !got[w.TargetID] {
				why = "missing " + w.URL
			}
		}
		if why == "" && ae.srv.Hub().ExtensionConnected() {
			return true, ""
		}
		// say what the extension thinks, for the failure message
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := ae.b.Status(ctx)
		return false, fmt.Sprintf("%s; extension: %+v %v", why, st, err)
	})
}

// apiResp is one answer of the agent API.
type apiResp struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic map.
func (r apiResp) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("answer (HTTP %d) is not a JSON object: %v: %s", r.Status, err, r.Body)
	}
	return m
}

// call sends a request to the agent API with the secret. body may be nil, a string (sent as
// is) or a value encoded as JSON.
func (ae *agentEnv) call(t *testing.T, method, path string, body any) apiResp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, ae.httpURL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ae.token())
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the answer: %v", method, path, err)
	}
	return apiResp{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// sseEvent is one Server-Sent Event read from /api/tasks/:id/events.
type sseEvent struct {
	Type string
	Data json.RawMessage
	At   time.Time
}

// follow opens the task's event stream through the real HTTP endpoint and returns a channel
// of its events, closed when the server ends the stream.
func (ae *agentEnv) follow(t *testing.T, ctx context.Context, id string) <-chan sseEvent {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ae.httpURL()+"/api/tasks/"+id+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ae.token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("open the event stream of %s: %v", id, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("event stream of %s: HTTP %d %s: %s", id, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	ch := make(chan sseEvent, 256)
	go func() {
		defer close(ch)
		defer resp.Body.Close()
		for ev, err := range sse.Read(resp.Body, &sse.ReadConfig{MaxEventSize: 16 << 20}) {
			if err != nil {
				return
			}
			if ev.Type != "" {
				ch <- sseEvent{Type: ev.Type, Data: json.RawMessage(ev.Data), At: time.Now()}
			}
		}
	}()
	return ch
}

// refOf finds the ref of the element `role "name"` in the latest text of the request that
// mentions it (the first snapshot or a later observation).
func refOf(req llmtest.Request, role, name string) string {
	re := regexp.MustCompile(regexp.QuoteMeta(role+` "`+name+`"`) + `[^\n]*?\[ref=([a-z0-9]+)\]`)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := re.FindAllStringSubmatch(req.Messages[i].Text, -1); len(m) > 0 {
			return m[len(m)-1][1]
		}
	}
	return ""
}

// pageEval evaluates expression in the tab over the harness's own channel (ground truth).
func (ae *agentEnv) pageEval(t *testing.T, tab browser.Tab, expression string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ae.b.PageEval(ctx, tab, expression, out); err != nil {
		t.Fatalf("evaluate %q in %s: %v", expression, tab.URL, err)
	}
}
