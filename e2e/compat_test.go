package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/snapshot"
)

// The compatibility suite (issue 21): ten real CDP clients, each connecting the way its own
// documentation shows and running realistic scenarios, against tabrelay (real Chromium, real
// extension, relay + agent) and against Chrome's own endpoint (a plain headless Chromium with
// --remote-debugging-port on a fresh profile) in the same test. Every scenario has its own time
// limit (compatScenarioTimeout), so a hang is reported as a hang, in the step where it happened.
//
// TestCompat writes the results to $TABRELAY_COMPAT_RESULTS when set; with -update-compat it
// writes e2e/testdata/compat-results.json and renders README.md's table from it.
// TestCompatTable (no browser needed) checks that the README's table is the one the results file
// in the repository gives.

var updateCompat = flag.Bool("update-compat", false, "TestCompat: write e2e/testdata/compat-results.json and the README's compatibility table")

// compatScenarioTimeout bounds one scenario of one client, 20 s scaled for the machine
// (testlimit.Scale: a Node client's start alone can take longer on a busy 2-core machine): a
// scenario that has not finished by then is recorded as a hang, with the step it was in.
func compatScenarioTimeout() time.Duration { return testlimit.Scale(20 * time.Second) }

// Endpoint names in the results.
const (
	endpointChrome   = "chrome"
	endpointTabrelay = "tabrelay"
)

// Scenario statuses in the results.
const (
	statusPass        = "pass"
	statusFail        = "fail"
	statusRefused     = "refused" // tabrelay refuses it on purpose (see refusedOnPurpose) and did
	statusNotRunnable = "not runnable"
)

// refusedOnPurpose lists the scenarios tabrelay refuses by design, with the reason the README
// gives. On tabrelay the client must get an error (not a hang) for them, and the user's tab stays.
var refusedOnPurpose = map[string]string{
	scenarioBrowserContext: "tabrelay shares tabs of the user's own profile: no separate browser contexts",
	scenarioCloseUserTab:   "tabrelay never closes a tab the user shared (unless started with --allow-close-user-tabs)",
	// Every socket needs the secret (SECURITY.md); these ways of connecting cannot send it.
	"connect: browserURL + headers": "every socket needs the secret and Puppeteer 24 (the last for Node 20) sends no headers on the browserURL socket (fixed in Puppeteer 25); use browserWSEndpoint with headers, or start tabrelay with --trust-same-user (rows below)",
	"connect: --cdp PORT":           "every socket needs the secret and --cdp PORT cannot send one; use --cdp \"ws://127.0.0.1:PORT/cdp?token=…\", or start tabrelay with --trust-same-user (rows below)",
}

// beyondChrome lists what tabrelay must do although Chrome's own endpoint does not (Chrome's
// result is shown, not required).
var beyondChrome = map[string]string{
	scenarioActiveAgain: "issue 21 item 6: closing a page a client opened brings back the tab that was active",
}

// Scenario names shared by the clients (each client runs the ones that apply to it).
const (
	scenarioFind           = "find the shared page"
	scenarioTitleEval      = "title + evaluate"
	scenarioForm           = "fill + click a form"
	scenarioScreenshot     = "screenshot"
	scenarioNewPage        = "open + close a page; the user's tab stays"
	scenarioActiveAgain    = "the user's tab is the active tab again after that"
	scenarioAfterAgent     = "after the agent's snapshot of the tab"
	scenarioRawBetween     = "second raw client calls DOM.getDocument between queries"
	scenarioRawLoop        = "raw client calls DOM.getDocument in a loop beside chromedp"
	scenarioBrowserContext = "separate browser context"
	scenarioCloseUserTab   = "close the user's tab"
)

// compatResult is one scenario of one client on one endpoint.
type compatResult struct {
	Client   string `json:"client"`
	Scenario string `json:"scenario"`
	Endpoint string `json:"endpoint"`
	Status   string `json:"status"`
	// Error is what failed (the client's error or "timed out after 20s in step …"), or why the
	// client is not runnable here, or the refusal tabrelay answered.
	Error string `json:"error,omitempty"`
}

// compatResults is the results file.
type compatResults struct {
	Browser string         `json:"browser"`
	Results []compatResult `json:"results"`
}

// compatEndpoint is one side of the comparison: where clients connect and how the harness plays
// the user (opens the user's tab) and tabrelay's agent (takes a snapshot of a tab).
type compatEndpoint struct {
	name  string
	http  string // http://127.0.0.1:PORT (no secret)
	token string // the secret clients must present; "" for Chrome
	// browserWS is the browser-level WebSocket endpoint a client reaches through /json/version
	// (without the secret).
	browserWS string
	site      interface{ URL(string) string }

	openUserTab  func(t *testing.T, url string) userTab
	agentSnap    func(ctx context.Context, targetID string) error
	closeUserTab func(t *testing.T, tab userTab)
}

// userTab is the tab a client is given as "the user's tab".
type userTab struct {
	TargetID string
	URL      string
	tab      browser.Tab // tabrelay only
	// closeExtra closes the bystander tab opened next to it.
	closeExtra func()
}

func (ep *compatEndpoint) port() string {
	u, _ := url.Parse(ep.http)
	return u.Port()
}

// TestCompat runs every client on both endpoints and compares (see the comment at the top).
// TABRELAY_COMPAT_CLIENTS=name,name runs only those clients (while working on one).
func TestCompat(t *testing.T) {
	requireChromium(t)
	ae := startAgentEnv(t, api.Options{})
	relayEP := tabrelayEndpoint(t, ae)
	chromeEP := startChromeEndpoint(t, ae.site)
	hook := startCompatHook(t, map[string]*compatEndpoint{endpointChrome: chromeEP, endpointTabrelay: relayEP})

	var results []compatResult
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("TABRELAY_COMPAT_CLIENTS"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			only[n] = true
		}
	}
	if len(only) > 0 && *updateCompat {
		t.Fatal("-update-compat needs every client: unset TABRELAY_COMPAT_CLIENTS")
	}
	for _, c := range compatClients() {
		if len(only) > 0 && !only[c.name] {
			continue
		}
		results = append(results, runCompatClient(t, c, hook, relayEP.token, chromeEP, relayEP)...)
	}
	results = append(results, runSameUserCompat(t, ae, relayEP, chromeEP, hook, only)...)
	res := compatResults{Browser: chromiumVersion(t, chromeEP), Results: results}
	checkCompat(t, res)
	writeCompatResults(t, res)
}

var (
	reHostPort  = regexp.MustCompile(`(127\.0\.0\.1|localhost):\d+`)
	reTargetID  = regexp.MustCompile(`\b[0-9A-F]{32}\b`)
	reSessionID = regexp.MustCompile(`(tabrelay-compat-[a-z]+)-\d+`)
)

// normalizeCompatError keeps what changes from run to run (ports, target ids, process ids) and
// the secret out of the results, so the README's table changes only when a result does.
func normalizeCompatError(msg, token string) string {
	if token != "" {
		msg = strings.ReplaceAll(msg, token, "TOKEN")
	}
	msg = reHostPort.ReplaceAllString(msg, "$1:PORT")
	msg = reTargetID.ReplaceAllString(msg, "<targetId>")
	return reSessionID.ReplaceAllString(msg, "$1-PID")
}

// compatClient is one client of the suite: run returns its scenarios' results on ep.
type compatClient struct {
	name string
	run  func(t *testing.T, ep *compatEndpoint, hook string) []compatResult
}

func compatClients() []compatClient {
	return []compatClient{
		nodeCompatClient("Puppeteer", "puppeteer.mjs"),
		nodeCompatClient("Playwright", "playwright.mjs"),
		{name: "go-rod", run: runRodCompat},
		{name: "chromedp", run: runChromedpCompat},
		nodeCompatClient("chrome-remote-interface", "cri.mjs"),
		nodeCompatClient("Playwright MCP", "playwright-mcp.mjs"),
		nodeCompatClient("chrome-devtools-mcp", "chrome-devtools-mcp.mjs"),
		nodeCompatClient("agent-browser", "agent-browser.mjs"),
		{name: "raw WebSocket", run: runRawCompat},
		// last: a client that ends its session by closing the browser would take Chrome's
		// reference endpoint with it
		nodeCompatClient("Stagehand", "stagehand.mjs"),
	}
}

// sameUserClients connect as their docs show for a browser started with a debugging port,
// with no secret: tabrelay lets them in only with --trust-same-user.
func sameUserClients() []compatClient {
	return []compatClient{
		nodeCompatClient("Puppeteer browserURL (--trust-same-user)", "puppeteer-browserurl.mjs"),
		nodeCompatClient("agent-browser --cdp PORT (--trust-same-user)", "agent-browser-port.mjs"),
		nodeCompatClient("Node fetch + WebSocket without headers (--trust-same-user)", "no-headers.mjs"),
	}
}

// runSameUserCompat runs sameUserClients: first on tabrelay without --trust-same-user, where
// each must be refused with 401 at its first step (not in the results: Chrome has no secret to
// compare with), then with the relay restarted with --trust-same-user (same address, same
// browser and extension) beside Chrome's endpoint, for the results. The relay keeps the flag
// afterwards: run it last.
func runSameUserCompat(t *testing.T, ae *agentEnv, relayEP, chromeEP *compatEndpoint, hook string, only map[string]bool) []compatResult {
	t.Helper()
	var clients []compatClient
	for _, c := range sameUserClients() {
		if len(only) == 0 || only[c.name] {
			clients = append(clients, c)
		}
	}
	if len(clients) == 0 {
		return nil
	}
	noSecret := *relayEP
	noSecret.token = ""
	for _, c := range clients {
		rs := c.run(t, &noSecret, hook)
		for i, r := range rs {
			switch {
			case r.Status == statusNotRunnable:
			case r.Status == statusPass:
				t.Errorf("%s / %s passes on tabrelay without --trust-same-user and without the secret", c.name, r.Scenario)
			case i == 0 && !strings.Contains(r.Error, "401"):
				t.Errorf("%s / %s without --trust-same-user: %s, want a 401", c.name, r.Scenario, r.Error)
			case i == 0:
				t.Logf("%s without --trust-same-user: refused: %s", c.name, normalizeCompatError(r.Error, relayEP.token))
			}
		}
	}
	ae.trustSameUser = true
	ae.restart(t, api.Options{})
	var out []compatResult
	for _, c := range clients {
		out = append(out, runCompatClient(t, c, hook, relayEP.token, chromeEP, &noSecret)...)
	}
	return out
}

// runCompatClient runs c on each endpoint and returns its results, named and with token (the
// secret) and what changes from run to run taken out of the errors.
func runCompatClient(t *testing.T, c compatClient, hook, token string, eps ...*compatEndpoint) []compatResult {
	t.Helper()
	var out []compatResult
	for _, ep := range eps {
		start := time.Now()
		rs := c.run(t, ep, hook)
		t.Logf("%s on %s: %d scenarios in %v", c.name, ep.name, len(rs), time.Since(start).Round(time.Millisecond))
		for _, r := range rs {
			r.Client, r.Endpoint = c.name, ep.name
			r.Error = normalizeCompatError(r.Error, token)
			out = append(out, r)
		}
	}
	return out
}

// checkCompat fails the test for every scenario that passes on Chrome and not on tabrelay (a
// refusal on purpose aside), and for every scenario that fails on Chrome (the scenario itself is
// then broken: it proves nothing about tabrelay).
func checkCompat(t *testing.T, res compatResults) {
	t.Helper()
	type key struct{ client, scenario string }
	by := map[key]map[string]compatResult{}
	var order []key
	for _, r := range res.Results {
		k := key{r.Client, r.Scenario}
		if by[k] == nil {
			by[k] = map[string]compatResult{}
			order = append(order, k)
		}
		by[k][r.Endpoint] = r
	}
	for _, k := range order {
		c, tr := by[k][endpointChrome], by[k][endpointTabrelay]
		switch {
		case c.Status == statusNotRunnable && tr.Status == statusNotRunnable:
			t.Logf("%s / %s: not runnable here: %s", k.client, k.scenario, c.Error)
		case beyondChrome[k.scenario] != "" && tr.Status != statusPass:
			t.Errorf("%s / %s (%s) %s on tabrelay: %s", k.client, k.scenario, beyondChrome[k.scenario], tr.Status, tr.Error)
		case beyondChrome[k.scenario] != "":
		case c.Status != statusPass:
			t.Errorf("%s / %s fails on Chrome's own endpoint (the scenario is wrong): %s", k.client, k.scenario, c.Error)
		case tr.Status == statusPass:
		case tr.Status == statusRefused && refusedOnPurpose[k.scenario] != "":
		case tr.Status == "":
			t.Errorf("%s / %s passes on Chrome but did not run on tabrelay", k.client, k.scenario)
		default:
			t.Errorf("%s / %s passes on Chrome, %s on tabrelay: %s", k.client, k.scenario, tr.Status, tr.Error)
		}
	}
}

// writeCompatResults writes the results where asked: $TABRELAY_COMPAT_RESULTS, and with
// -update-compat the repository's results file and README table.
func writeCompatResults(t *testing.T, res compatResults) {
	t.Helper()
	data, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	if p := os.Getenv("TABRELAY_COMPAT_RESULTS"); p != "" {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Errorf("write the compatibility results to %s: %v", p, err)
		}
	}
	if !*updateCompat {
		return
	}
	if err := os.WriteFile(compatResultsPath(), data, 0o644); err != nil {
		t.Fatalf("write %s: %v", compatResultsPath(), err)
	}
	readme, err := os.ReadFile(readmePath())
	if err != nil {
		t.Fatal(err)
	}
	out, err := replaceCompatTable(string(readme), renderCompatTable(res))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(readmePath(), []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

func compatResultsPath() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "testdata", "compat-results.json")
}

func readmePath() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "README.md")
}

// chromiumVersion is Chrome's product string (e.g. "Chrome/156.0.…").
func chromiumVersion(t *testing.T, ep *compatEndpoint) string {
	var v struct {
		Browser string `json:"Browser"`
	}
	resp, err := http.Get(ep.http + "/json/version")
	if err != nil {
		t.Errorf("Chrome's /json/version: %v", err)
		return ""
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v.Browser
}

// tabrelayEndpoint is the tabrelay side: the relay + agent of ae, its extension sharing a tab per
// client (through the toolbar button), the agent's snapshot through the HTTP API.
func tabrelayEndpoint(t *testing.T, ae *agentEnv) *compatEndpoint {
	e := ae.env
	return &compatEndpoint{
		name: endpointTabrelay, http: e.httpURL(), token: e.token(), browserWS: e.cdpURL(), site: e.site,
		openUserTab: func(t *testing.T, u string) userTab {
			tab := e.share(t, u)
			// A tab to its right that the user did not share, then the user's tab in front again:
			// closing a page a client opened must bring back the user's tab, not this neighbour.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			by, err := e.b.NewTab(ctx, e.site.URL("/other.html?bystander"))
			if err != nil {
				t.Fatalf("open the bystander tab: %v", err)
			}
			var ok bool
			if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.update(%d, {active: true}).then(() => true)`, tab.TabID), &ok); err != nil {
				t.Fatalf("bring the user's tab to the front: %v", err)
			}
			return userTab{TargetID: tab.TargetID, URL: u, tab: tab, closeExtra: func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = e.b.CloseTab(ctx, by)
			}}
		},
		closeUserTab: func(t *testing.T, tab userTab) {
			tab.closeExtra()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if e.tabOpen(t, tab.tab) {
				_ = e.b.CloseTab(ctx, tab.tab)
			}
		},
		agentSnap: func(ctx context.Context, targetID string) error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.httpURL()+"/api/snapshot?tab="+url.QueryEscape(targetID), nil)
			if err != nil {
				return err
			}
			req.Header.Set("Authorization", "Bearer "+e.token())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("GET /api/snapshot: %w", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("GET /api/snapshot: HTTP %d: %s", resp.StatusCode, body)
			}
			if !bytes.Contains(body, []byte("[ref=")) {
				return fmt.Errorf("GET /api/snapshot: no refs in the snapshot: %.300s", body)
			}
			return nil
		},
	}
}

// startChromeEndpoint starts a plain headless Chromium (no extension) with its own DevTools
// endpoint on a fresh profile: the reference every scenario is compared with.
func startChromeEndpoint(t *testing.T, site interface{ URL(string) string }) *compatEndpoint {
	t.Helper()
	chrome, err := browser.Find("")
	if err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	args := []string{
		"--headless=new", "--disable-gpu", "--window-size=1280,900",
		"--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-features=Translate,MediaRouter,OptimizationHints",
		"--user-data-dir=" + profile, "--remote-debugging-port=0",
	}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(chrome, append(args, "about:blank")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Chrome: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	var port int
	eventually(t, 30*time.Second, "Chrome writes DevToolsActivePort", func() (bool, string) {
		data, err := os.ReadFile(filepath.Join(profile, "DevToolsActivePort"))
		if err != nil {
			return false, err.Error()
		}
		port, err = strconv.Atoi(strings.SplitN(string(data), "\n", 2)[0])
		return err == nil && port > 0, string(data)
	})
	ep := &compatEndpoint{name: endpointChrome, http: fmt.Sprintf("http://127.0.0.1:%d", port), site: site}
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	resp, err := http.Get(ep.http + "/json/version")
	if err != nil {
		t.Fatalf("Chrome's /json/version: %v", err)
	}
	_ = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	ep.browserWS = v.WS
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctl, err := cdpclient.Dial(ctx, v.WS, nil)
	if err != nil {
		t.Fatalf("the harness's connection to Chrome: %v", err)
	}
	t.Cleanup(func() { _ = ctl.Close() })
	call := func(method string, params any, res any) error {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		return ctl.Call(ctx, "", method, params, res)
	}
	var snapMu sync.Mutex
	var snaps []*snapshot.Tab
	t.Cleanup(func() {
		for _, s := range snaps {
			_ = s.Close(context.Background())
		}
	})
	ep.openUserTab = func(t *testing.T, u string) userTab {
		var user, by struct {
			TargetID string `json:"targetId"`
		}
		if err := call("Target.createTarget", map[string]any{"url": u}, &user); err != nil {
			t.Fatalf("Chrome: open the user's tab: %v", err)
		}
		if err := call("Target.createTarget", map[string]any{"url": site.URL("/other.html?bystander")}, &by); err != nil {
			t.Fatalf("Chrome: open the bystander tab: %v", err)
		}
		if err := call("Target.activateTarget", map[string]any{"targetId": user.TargetID}, nil); err != nil {
			t.Fatalf("Chrome: bring the user's tab to the front: %v", err)
		}
		waitChromeLoaded(t, ep.http, user.TargetID)
		return userTab{TargetID: user.TargetID, URL: u, closeExtra: func() {
			_ = call("Target.closeTarget", map[string]any{"targetId": by.TargetID}, nil)
		}}
	}
	ep.closeUserTab = func(t *testing.T, tab userTab) {
		tab.closeExtra()
		_ = call("Target.closeTarget", map[string]any{"targetId": tab.TargetID}, nil)
	}
	// What tabrelay's agent does for a snapshot, with the same package, on Chrome's endpoint.
	ep.agentSnap = func(ctx context.Context, targetID string) error {
		st, err := snapshot.Attach(ctx, ctl, targetID)
		if err != nil {
			return err
		}
		snapMu.Lock()
		snaps = append(snaps, st)
		snapMu.Unlock()
		s, err := st.Snapshot(ctx, snapshot.Options{})
		if err != nil {
			return err
		}
		if !strings.Contains(s.Text, "[ref=") {
			return fmt.Errorf("no refs in the snapshot: %.300s", s.Text)
		}
		return nil
	}
	return ep
}

// waitChromeLoaded waits until Chrome's /json/list shows the target with its title (loaded).
func waitChromeLoaded(t *testing.T, base, id string) {
	eventually(t, 20*time.Second, "Chrome loads the user's tab", func() (bool, string) {
		resp, err := http.Get(base + "/json/list")
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var l []listed
		_ = json.NewDecoder(resp.Body).Decode(&l)
		for _, x := range l {
			if x.ID == id {
				return x.Title != "" && !strings.HasPrefix(x.Title, "127.0.0.1"), x.Title
			}
		}
		return false, "not listed"
	})
}

// startCompatHook serves what a client script asks of the harness in the middle of a scenario:
// POST /snapshot?endpoint=E&target=ID makes "the agent" (tabrelay's, or the same snapshot code on
// Chrome) take a snapshot of that tab.
func startCompatHook(t *testing.T, eps map[string]*compatEndpoint) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ep := eps[r.URL.Query().Get("endpoint")]
		if r.URL.Path != "/snapshot" || ep == nil {
			http.Error(w, "unknown hook", http.StatusNotFound)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
		defer cancel()
		if err := ep.agentSnap(ctx, r.URL.Query().Get("target")); err != nil {
			http.Error(w, "the agent's snapshot failed: "+err.Error(), http.StatusBadGateway)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// compatMarker is the query marker of one client's user tab on one endpoint.
func compatMarker(client, endpoint string) string {
	return "compat=" + url.QueryEscape(strings.ReplaceAll(strings.ToLower(client), " ", "-")+"-"+endpoint)
}

// nodeCompatClient runs e2e/clients/compat/<script> on an endpoint: the script runs its
// scenarios in order, each bounded by compatScenarioTimeout, and prints one JSON line per
// scenario ({scenario, status, error}).
func nodeCompatClient(name, script string) compatClient {
	return compatClient{name: name, run: func(t *testing.T, ep *compatEndpoint, hook string) []compatResult {
		marker := compatMarker(name, ep.name)
		tab := ep.openUserTab(t, ep.site.URL("/hard/form.html?"+marker))
		defer ep.closeUserTab(t, tab)
		dir := clientsDir(t)
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "compat", script))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(),
			"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "PUPPETEER_SKIP_DOWNLOAD=1",
			"COMPAT_ENDPOINT="+ep.name,
			"COMPAT_HTTP="+ep.http,
			"COMPAT_PORT="+ep.port(),
			"COMPAT_WS="+ep.browserWS,
			"COMPAT_TOKEN="+ep.token,
			"COMPAT_MARKER="+marker,
			"COMPAT_TARGET="+tab.TargetID,
			"COMPAT_OTHER_URL="+ep.site.URL("/other.html"),
			"COMPAT_HOOK="+hook,
			"COMPAT_TIMEOUT_MS="+strconv.Itoa(int(compatScenarioTimeout()/time.Millisecond)),
			"CHROME_PATH=/usr/bin/chromium",
		)
		if p, err := browser.Find(""); err == nil {
			cmd.Env = append(cmd.Env, "CHROME_PATH="+p)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatalf("%s: start node: %v", name, err)
		}
		var rs []compatResult
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var r compatResult
			if json.Unmarshal(sc.Bytes(), &r) == nil && r.Scenario != "" {
				rs = append(rs, r)
			}
		}
		waitErr := cmd.Wait()
		if dir := os.Getenv("TABRELAY_E2E_CLIENT_LOG"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "compat-"+strings.TrimSuffix(script, ".mjs")+"-"+ep.name+".stderr"), stderr.Bytes(), 0o644)
		}
		if waitErr != nil && !errors.As(waitErr, new(*exec.ExitError)) || len(rs) == 0 {
			rs = append(rs, compatResult{Scenario: "run the client", Status: statusFail,
				Error: fmt.Sprintf("%s: %v: %s", script, waitErr, tail(stderr.String(), 1500))})
		}
		return rs
	}}
}

// compatScenarios runs Go scenarios in order, each bounded by compatScenarioTimeout; a scenario
// reports its current step through step() so a hang names where it hung.
type compatScenarios struct {
	results []compatResult
	ep      string
}

// run runs fn as scenario name. fn gets a context that ends at the time limit. A scenario that
// does not return within the limit (plus a grace period for the client to notice the context)
// is recorded as a hang; its goroutine is left behind, and must not touch the results.
func (s *compatScenarios) run(name string, fn func(ctx context.Context, step func(string)) error) bool {
	ctx, cancel := context.WithTimeout(context.Background(), compatScenarioTimeout())
	defer cancel()
	var mu sync.Mutex
	current := "start"
	step := func(st string) { mu.Lock(); current = st; mu.Unlock() }
	done := make(chan error, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("panic: %v", p)
			}
		}()
		done <- fn(ctx, step)
	}()
	var err error
	select {
	case err = <-done:
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			mu.Lock()
			err = fmt.Errorf("timed out after %v in step %q: %w", compatScenarioTimeout(), current, err)
			mu.Unlock()
		} else if err != nil {
			mu.Lock()
			err = fmt.Errorf("%s: %w", current, err)
			mu.Unlock()
		}
	case <-time.After(compatScenarioTimeout() + 5*time.Second):
		mu.Lock()
		err = fmt.Errorf("timed out after %v in step %q (hung)", compatScenarioTimeout(), current)
		mu.Unlock()
	}
	r := compatResult{Scenario: name, Status: statusPass}
	if err != nil {
		r.Status, r.Error = statusFail, err.Error()
	}
	s.results = append(s.results, r)
	return err == nil
}

//lint:ignore U1000 the scenarios in refusedOnPurpose are run through it (the compatibility suite is still being filled in).

// refused runs a scenario tabrelay refuses on purpose: on Chrome fn must succeed; on tabrelay it
// must fail with an error (recorded as the refusal), not hang.
func (s *compatScenarios) refused(name string, fn func(ctx context.Context, step func(string)) error) {
	if s.ep == endpointChrome {
		s.run(name, fn)
		return
	}
	ok := s.run(name, fn)
	r := &s.results[len(s.results)-1]
	switch {
	case ok:
		r.Status, r.Error = statusFail, "tabrelay allowed what it refuses on purpose ("+refusedOnPurpose[name]+")"
	case strings.Contains(r.Error, "timed out after"):
		// a hang is not a refusal
	default:
		r.Status = statusRefused
	}
}

// renderCompatTable renders the README table from results: one row per client and scenario,
// one column per endpoint.
func renderCompatTable(res compatResults) string {
	type row struct{ client, scenario string }
	cells := map[row]map[string]compatResult{}
	var rows []row
	for _, r := range res.Results {
		k := row{r.Client, r.Scenario}
		if cells[k] == nil {
			cells[k] = map[string]compatResult{}
			rows = append(rows, k)
		}
		cells[k][r.Endpoint] = r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Generated by `go test ./e2e -run TestCompat -update-compat` against %s; do not edit by hand.\n\n", res.Browser)
	b.WriteString("\"the user's tab is the active tab again\" is required of tabrelay even where Chrome's own endpoint leaves a neighbouring tab in front (issue 21 item 6).\n\n")
	b.WriteString("| client | scenario | Chrome's endpoint | tabrelay |\n|---|---|---|---|\n")
	cell := func(r compatResult) string {
		switch r.Status {
		case statusPass:
			return "pass"
		case statusRefused:
			return "refused on purpose: " + refusedOnPurpose[r.Scenario]
		case "":
			return "did not run"
		}
		msg := strings.Join(strings.Fields(r.Error), " ")
		if len(msg) > 160 {
			msg = msg[:160] + "…"
		}
		msg = strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace(msg)
		if r.Status == statusNotRunnable {
			return "not runnable here: " + msg
		}
		return "**FAIL**: " + msg
	}
	for _, k := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", k.client, k.scenario, cell(cells[k][endpointChrome]), cell(cells[k][endpointTabrelay]))
	}
	return b.String()
}

const (
	compatTableStart = "<!-- compat-table -->"
	compatTableEnd   = "<!-- /compat-table -->"
)

// replaceCompatTable puts table between the README's compat-table markers.
func replaceCompatTable(readme, table string) (string, error) {
	i, j := strings.Index(readme, compatTableStart), strings.Index(readme, compatTableEnd)
	if i < 0 || j < i {
		return "", fmt.Errorf("README.md has no %s … %s markers", compatTableStart, compatTableEnd)
	}
	return readme[:i+len(compatTableStart)] + "\n" + table + readme[j:], nil
}

// TestCompatTable checks that the README's compatibility table is the one the repository's
// results file (e2e/testdata/compat-results.json) gives. Regenerate both with
// `go test ./e2e -run TestCompat -update-compat`; `-run TestCompatTable -update-compat` renders
// the README's table from the file alone.
func TestCompatTable(t *testing.T) {
	data, err := os.ReadFile(compatResultsPath())
	if err != nil {
		t.Fatalf("read the compatibility results: %v", err)
	}
	var res compatResults
	if err := json.Unmarshal(data, &res); err != nil {
		t.Fatalf("%s: %v", compatResultsPath(), err)
	}
	if len(res.Results) == 0 {
		t.Fatalf("%s holds no results", compatResultsPath())
	}
	readme, err := os.ReadFile(readmePath())
	if err != nil {
		t.Fatal(err)
	}
	want, err := replaceCompatTable(string(readme), renderCompatTable(res))
	if err != nil {
		t.Fatal(err)
	}
	if *updateCompat && want != string(readme) {
		if err := os.WriteFile(readmePath(), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		readme = []byte(want)
	}
	if want != string(readme) {
		t.Errorf("README.md's compatibility table is not the one %s gives: run `go test ./e2e -run TestCompat -update-compat` (or render it from the file)", compatResultsPath())
	}
	// every client of the suite appears, on both endpoints
	seen := map[string]bool{}
	for _, r := range res.Results {
		seen[r.Client+"/"+r.Endpoint] = true
	}
	var missing []string
	only := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("TABRELAY_COMPAT_CLIENTS"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			only[n] = true
		}
	}
	if len(only) > 0 && *updateCompat {
		t.Fatal("-update-compat needs every client: unset TABRELAY_COMPAT_CLIENTS")
	}
	for _, c := range compatClients() {
		if len(only) > 0 && !only[c.name] {
			continue
		}
		for _, ep := range []string{endpointChrome, endpointTabrelay} {
			if !seen[c.name+"/"+ep] {
				missing = append(missing, c.name+" on "+ep)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the results file lacks %s", strings.Join(missing, ", "))
	}
}
