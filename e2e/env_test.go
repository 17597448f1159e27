// Package e2e holds the end-to-end tests: real Chromium with the real extension (loaded and
// paired through internal/browser), the real relay, and real third-party CDP clients. Without
// Chromium these tests fail with a clear message; `go test -short` skips them.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/relay"
)

// env is one fixture site, one relay and one headless browser paired with it.
type env struct {
	site  *fixtures.Server
	home  string
	store *secret.Store
	srv   *relay.Server
	addr  string
	b     *browser.Browser
	tmp   string
	// relayLog holds every relay log line (JSON, debug level and up) across relay restarts.
	relayLog *logBuffer
	// hub tunes the relay's hub (zero: the defaults), across relay restarts.
	hub relay.HubOptions
	// trustSameUser starts the relay with --trust-same-user (agent environments), across
	// relay restarts.
	trustSameUser bool
}

// logBuffer is a goroutine-safe zerolog sink the tests can search.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// entries returns the logged lines whose "message" starts with msg and whose string fields include
// every key/value of fields.
func (l *logBuffer) entries(msg string, fields map[string]string) []map[string]any {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	data := append([]byte(nil), l.buf.Bytes()...)
	l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) != nil || !strings.HasPrefix(fmt.Sprint(m["message"]), msg) {
			continue
		}
		ok := true
		for k, v := range fields {
			if fmt.Sprint(m[k]) != v {
				ok = false
			}
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// relayLogged reports whether the relay logged a message starting with msg, with these fields.
func (e *env) relayLogged(msg string, fields map[string]string) bool {
	return len(e.relayLog.entries(msg, fields)) > 0
}

var (
	sharedOnce sync.Once
	sharedEnv  *env
	sharedErr  error
)

func TestMain(m *testing.M) {
	runStandinIfAsked() // this binary started by a suite in a browser's place
	flag.Parse()
	if err := selectPart(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(2)
	}
	startIdleScenario()
	code := m.Run()
	if sharedEnv != nil {
		sharedEnv.close()
	}
	if cliDir != "" {
		_ = os.RemoveAll(cliDir)
	}
	os.Exit(code)
}

// requireChromium fails the test (skips it under -short) when no browser is installed.
func requireChromium(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: needs Chromium (skipped with -short)")
	}
	if _, err := browser.Find(""); err != nil {
		t.Fatal(err)
	}
}

// shared returns the environment the tests share (started on first use).
func shared(t *testing.T) *env {
	t.Helper()
	requireChromium(t)
	sharedOnce.Do(func() { sharedEnv, sharedErr = startEnv() })
	if sharedErr != nil {
		t.Fatalf("start the shared end-to-end environment: %v", sharedErr)
	}
	return sharedEnv
}

// private returns an environment of the test's own (for tests that restart or break things).
func private(t *testing.T) *env {
	t.Helper()
	requireChromium(t)
	e, err := startEnv()
	if err != nil {
		t.Fatalf("start an end-to-end environment: %v", err)
	}
	t.Cleanup(e.close)
	return e
}

// privateBrowser is private with browser options of the test's own (file access off, say).
func privateBrowser(t *testing.T, opt func(*browser.Options)) *env {
	t.Helper()
	requireChromium(t)
	e, err := startEnvWith(relay.HubOptions{}, opt)
	if err != nil {
		t.Fatalf("start an end-to-end environment: %v", err)
	}
	t.Cleanup(e.close)
	return e
}

// startEnv starts an environment; on failure it stops what it had started (e is its own
// variable, not the result, which is nil then).
func startEnv() (_ *env, err error) { return startEnvWith(relay.HubOptions{}) }

// privateWith is private with the relay's hub tuned (a short DetachAfter, say).
func privateWith(t *testing.T, hub relay.HubOptions) *env {
	t.Helper()
	requireChromium(t)
	e, err := startEnvWith(hub)
	if err != nil {
		t.Fatalf("start an end-to-end environment: %v", err)
	}
	t.Cleanup(e.close)
	return e
}

// startEnvWith is startEnv with the relay's hub tuned and browser options.
func startEnvWith(hub relay.HubOptions, opts ...func(*browser.Options)) (_ *env, err error) {
	e := &env{relayLog: &logBuffer{}, hub: hub}
	defer func() {
		if err != nil {
			e.close()
		}
	}()
	if e.tmp, err = os.MkdirTemp("", "tabrelay-e2e-"); err != nil {
		return nil, err
	}
	e.home = filepath.Join(e.tmp, "home")
	if e.site, err = fixtures.Start(); err != nil {
		return nil, err
	}
	if e.store, err = secret.NewStore(e.home); err != nil {
		return nil, err
	}
	if err = e.startRelay("127.0.0.1:0"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(60*time.Second))
	defer cancel()
	log := zerolog.Nop()
	if os.Getenv("TABRELAY_E2E_LOG") != "" {
		log = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger()
	}
	bo := browser.Options{Headless: true, Logger: &log, ExtensionDebugging: true}
	for _, o := range opts {
		o(&bo)
	}
	if e.b, err = browser.Launch(ctx, bo); err != nil {
		return nil, err
	}
	if err = e.b.Pair(ctx, e.addr, e.store.Token()); err != nil {
		return nil, err
	}
	if err = e.b.WaitConnected(ctx); err != nil {
		return nil, err
	}
	return e, nil
}

// hubOptions is the relay's hub options for the environment: the test's own, with the limit on
// a CDP command the browser must answer scaled for the machine (testlimit.Scale of the relay's
// 30 s default) unless the test set one: a 24 MB answer through the extension can take longer on
// a busy 2-core machine.
func (e *env) hubOptions() relay.HubOptions {
	o := e.hub
	if o.CommandTimeout == 0 {
		o.CommandTimeout = testlimit.Scale(30 * time.Second)
	}
	return o
}

func (e *env) startRelay(addr string) error {
	var w io.Writer = e.relayLog
	if os.Getenv("TABRELAY_E2E_LOG") != "" {
		w = zerolog.MultiLevelWriter(e.relayLog, zerolog.ConsoleWriter{Out: os.Stderr})
	}
	log := zerolog.New(w).Level(zerolog.DebugLevel).With().Timestamp().Str("side", "relay").Logger()
	srv, err := relay.NewServer(relay.Options{Addr: addr, Secret: e.store, Logger: &log, Hub: e.hubOptions()})
	if err != nil {
		return err
	}
	if err := srv.Start(context.Background()); err != nil {
		return err
	}
	e.srv, e.addr = srv, srv.Addr()
	return nil
}

// close stops what startEnv started; nil (an environment that never started) is nothing to close.
func (e *env) close() {
	if e == nil {
		return
	}
	if e.b != nil {
		_ = e.b.Close()
	}
	if e.srv != nil {
		_ = e.srv.Close()
	}
	if e.site != nil {
		_ = e.site.Close()
	}
	if e.tmp != "" {
		_ = os.RemoveAll(e.tmp)
	}
}

func (e *env) token() string   { return e.store.Token() }
func (e *env) httpURL() string { return "http://" + e.addr }
func (e *env) cdpURL() string  { return "ws://" + e.addr + "/cdp" }

// pageURL is the fixture's main page for one test, marked so a client can find its tab, with a
// cross-origin (out-of-process) iframe.
func (e *env) pageURL(marker string) string {
	return e.site.URL("/?client=" + url.QueryEscape(marker) + "&frame=" + url.QueryEscape(e.site.CrossURL("/frame.html")))
}

// share opens url in a new tab and shares it by clicking the toolbar button.
func (e *env) share(t *testing.T, url string) browser.Tab {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(30*time.Second))
	defer cancel()
	tab, err := e.b.ShareURL(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// listed is one entry of the relay's /json/list.
type listed struct {
	ID                   string `json:"id"`
	Type                 string `json:"type"`
	URL                  string `json:"url"`
	Title                string `json:"title"`
	WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
}

// list reads the relay's /json/list.
func (e *env) list(t *testing.T) []listed {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.httpURL()+"/json/list", nil)
	req.Header.Set("Authorization", "Bearer "+e.token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /json/list: %v", err)
	}
	defer resp.Body.Close()
	var l []listed
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
		t.Fatalf("GET /json/list: %v", err)
	}
	return l
}

func (e *env) listedIDs(t *testing.T) map[string]listed {
	m := map[string]listed{}
	for _, l := range e.list(t) {
		m[l.ID] = l
	}
	return m
}

// tabOpen reports whether the browser still has the tab (over the harness's control channel).
func (e *env) tabOpen(t *testing.T, tab browser.Tab) bool {
	t.Helper()
	var ok bool
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(10*time.Second))
	defer cancel()
	if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(() => true, () => false)`, tab.TabID), &ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// eventually is testlimit.Eventually.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	testlimit.Eventually(t, timeout, what, cond)
}

// poll is testlimit.Poll.
func poll(timeout time.Duration, cond func() (bool, string)) (bool, string) {
	return testlimit.Poll(timeout, cond)
}

// clientsDir is e2e/clients, where the Node client scripts and their node_modules live.
func clientsDir(t *testing.T) string {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "clients")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core")); err != nil {
		t.Fatalf("the Node clients are not installed: `go tool task setup` installs them (npm ci in %s): %v", dir, err)
	}
	return dir
}

// runNode runs e2e/clients/<script> with env and decodes the JSON object it prints last; any
// failure fails the test.
func runNode(t *testing.T, ctx context.Context, script string, env map[string]string) map[string]any {
	t.Helper()
	out, err := runNodeErr(t, ctx, script, env)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// runNodeNoFatal is runNode for goroutines: failures are reported with t.Errorf.
func runNodeNoFatal(t *testing.T, ctx context.Context, script string, env map[string]string) map[string]any {
	out, err := runNodeErr(t, ctx, script, env)
	if err != nil {
		t.Error(err)
	}
	return out
}

func runNodeErr(t *testing.T, ctx context.Context, script string, env map[string]string) (map[string]any, error) {
	dir := clientsDir(t)
	if _, err := exec.LookPath("node"); err != nil {
		return nil, fmt.Errorf("the client tests need Node.js 20+: %w", err)
	}
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PUPPETEER_SKIP_DOWNLOAD=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if dir := os.Getenv("TABRELAY_E2E_CLIENT_LOG"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, strings.TrimSuffix(script, ".mjs")+".stderr"), stderr.Bytes(), 0o644)
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var out map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		return nil, fmt.Errorf("%s printed no JSON result (exit: %v)\nstdout:\n%s\nstderr:\n%s", script, runErr, stdout.String(), tail(stderr.String(), 4000))
	}
	if msg, ok := out["error"]; ok {
		return out, fmt.Errorf("%s failed: %v\nstderr:\n%s", script, msg, tail(stderr.String(), 4000))
	}
	if runErr != nil {
		return out, fmt.Errorf("%s: %w\nstderr:\n%s", script, runErr, tail(stderr.String(), 4000))
	}
	return out, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// clientEnv is what every client script gets: where the relay is and which pages to use.
func (e *env) clientEnv(marker string) map[string]string {
	return map[string]string{
		"TABRELAY_HTTP":  e.httpURL(),
		"TABRELAY_CDP":   e.cdpURL(),
		"TABRELAY_TOKEN": e.token(),
		"PAGE_MARKER":    "client=" + url.QueryEscape(marker),
		"BIG_URL":        e.site.URL("/noise.html"),
		"OTHER_URL":      e.site.URL("/other.html"),
	}
}
