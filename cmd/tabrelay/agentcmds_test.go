package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	sse "github.com/tmaxmax/go-sse"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// testServer starts `serve`'s server (relay + agent, no model) on a free port with the
// simulated extension sharing one tab. The end-to-end tests (e2e/agent_test.go) cover the
// same commands on real Chromium; these check the plain-words errors fast.
func testServer(t *testing.T) (f *config.Server, tab string) {
	t.Helper()
	f, tab, _ = startTestServer(t)
	return f, tab
}

// startTestServer is testServer, also returning the running server.
func startTestServer(t *testing.T) (f *config.Server, tab string, srv *server) {
	t.Helper()
	return startTestServerEnv(t, nil)
}

// startTestServerEnv is startTestServer with the environment variables env set (a model's,
// for instance: the server reads its model from the environment as `tabrelay serve` does).
func startTestServerEnv(t *testing.T, env map[string]string) (f *config.Server, tab string, srv *server) {
	t.Helper()
	t.Setenv("TABRELAY_LLM_PROVIDER", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("ANTHROPIC_API_KEY", "")
	for k, v := range env {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f = &config.Server{Common: config.Common{Addr: "127.0.0.1:0", Home: t.TempDir(), LogLevel: "warn"}}
	log := zerolog.Nop()
	srv, err := startServer(ctx, f, &log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if m, cfg, _ := srv.models.Switch.Current(); m != nil && env == nil {
		t.Fatalf("a model is configured in the test environment: %s", cfg)
	}
	ext, err := relaytest.Dial(ctx, srv.Addr(), srv.Token(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)
	tab = "AAAA1111BBBB2222CCCC3333DDDD4444"
	if err := ext.Share(tab, "https://example.com/", "Example"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(srv.Hub().Tabs()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the simulated tab was not shared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.Addr = srv.Addr()
	return f, tab, srv
}

// runCmd runs a client command in-process and returns its output and error.
func runCmd(t *testing.T, fn func(context.Context, []string, stdio) error, f *config.Server, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	all := append([]string{"--addr", f.Addr, "--home", f.Home}, args...)
	err := fn(ctx, all, stdio{in: strings.NewReader(""), out: &out, err: &errOut})
	return out.String(), errOut.String(), err
}

func TestClientCommands(t *testing.T) {
	f, tab := testServer(t)

	out, _, err := runCmd(t, runTabs, f)
	if err != nil || !strings.HasPrefix(out, "* "+tab) || !strings.Contains(out, "https://example.com/") {
		t.Fatalf("tabs: %v\n%s", err, out)
	}
	out, _, err = runCmd(t, runTabs, f, "--json")
	var listed struct {
		Tabs []struct{ TargetID string } `json:"tabs"`
	}
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Tabs) != 1 || listed.Tabs[0].TargetID != tab {
		t.Fatalf("tabs --json: %v\n%s", err, out)
	}

	errCases := []struct {
		name string
		fn   func(context.Context, []string, stdio) error
		args []string
		want string
	}{
		{"unknown tab", runAct, []string{"--tab", "NOSUCHTAB", "click", "e1"}, `tab "NOSUCHTAB" is not a shared tab`},
		{"unknown tab snapshot", runSnapshot, []string{"--tab", "NOSUCHTAB"}, `NOSUCHTAB`},
		{"bad kind", runAct, []string{"explode", "e1"}, `unknown action kind "explode": use one of back, check, click`},
		{"no action", runAct, nil, "act needs an action"},
		{"missing text", runAct, []string{"type", "e4"}, "type needs text; usage: tabrelay act type ref text…"},
		{"missing ref", runAct, []string{"click"}, "click needs ref: an element ref like e3"},
		{"missing key", runAct, []string{"press"}, "press needs key; usage: tabrelay act press [ref] key"},
		{"bad json", runAct, []string{"--json", "{nope"}, "--json is not a JSON object"},
		{"bad format", runAct, []string{"--format", "xml", "extract"}, `--format "xml": use text, csv or json`},
		{"extract bad field", runAct, []string{"extract", "=x"}, `extract: field "=x" has no name`},
		{"json missing text", runAct, []string{"--json", `{"kind":"type","ref":"e4"}`}, "type needs text"},
		{"run without goal", runRun, nil, "run needs a goal"},
		// the fake extension cannot run the page walker: the browser's error, not the missing model, is what the user must hear
		{"run on a page that cannot be read", runRun, []string{"find the cheapest kettle"}, "reading the page failed"},
		{"snapshot args", runSnapshot, []string{"e3"}, "snapshot takes no arguments"},
		{"negative max tokens", runSnapshot, []string{"--max-tokens=-5"}, "--max-tokens -5: use a number of tokens"},
		{"max tokens reach the API", runSnapshot, []string{"--max-tokens", "999999999"}, `maxTokens="999999999" must be a whole number`},
	}
	for _, c := range errCases {
		_, _, err := runCmd(t, c.fn, f, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one mentioning %q", c.name, err, c.want)
		}
	}

	// no server, wrong home
	g := *f
	g.Addr = "127.0.0.1:1"
	if _, _, err := runCmd(t, runTabs, &g); err == nil || !strings.HasPrefix(err.Error(), "tabrelay server not running at 127.0.0.1:1: start it with `tabrelay serve`") {
		t.Errorf("no server: %v", err)
	}
	g = *f
	g.Home = t.TempDir()
	if _, _, err := runCmd(t, runTabs, &g); err == nil || !strings.Contains(err.Error(), "no tabrelay secret in "+g.Home) {
		t.Errorf("home without a secret: %v", err)
	}
}

// TestAPIErrors checks the API's 4xx answers on the simulated extension.
func TestAPIErrors(t *testing.T) {
	f, _ := testServer(t)
	tok := strings.TrimSpace(mustRead(t, f.Home+"/token"))
	do := func(method, path, body string) (int, api.ErrorBody) {
		req, _ := http.NewRequest(method, "http://"+f.Addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e api.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	cases := []struct {
		method, path, body string
		status             int
		want               string
	}{
		{"GET", "/api/snapshot?tab=XYZ", "", 404, `"XYZ"`},
		{"POST", "/api/act", `{"tab":"XYZ","action":{"kind":"click","ref":"e1"}}`, 404, `"XYZ"`},
		{"POST", "/api/act", `{"kind":"fly"}`, 400, `unknown action kind "fly"`},
		{"POST", "/api/act", `{"kind":"type","ref":"e2"}`, 400, "type needs text"},
		{"POST", "/api/act", `{"action":{"kind":"click","ref":"e1"},"extra":1}`, 400, `unknown field "extra"`},
		{"POST", "/api/act", `[1,2]`, 400, "not a JSON object"},
		{"POST", "/api/command", `{"text":""}`, 400, "no text"},
		{"POST", "/api/command", `{"txt":"click"}`, 400, `unknown field "txt"`},
		{"POST", "/api/tasks", `{"goal":"buy a kettle"}`, 503, "TABRELAY_LLM_PROVIDER"},
		{"POST", "/api/tasks", `{}`, 400, "no goal"},
		{"GET", "/api/tasks/none", "", 404, `"none"`},
		{"POST", "/api/tasks/none/confirm", `{"stepId":"s1","approve":true}`, 404, `"none"`},
		{"GET", "/api/tasks/none/report?format=xls", "", 400, "json, csv or markdown"},
		{"GET", "/api/screenshot?format=gif", "", 400, "png"},
		{"GET", "/api/tasks?offset=-1", "", 400, "offset"},
	}
	for _, c := range cases {
		status, e := do(c.method, c.path, c.body)
		if status != c.status || !strings.Contains(e.Error, c.want) {
			t.Errorf("%s %s %s: HTTP %d %q, want %d mentioning %q", c.method, c.path, c.body, status, e.Error, c.status, c.want)
		}
	}
	if status, e := do("POST", "/api/tasks", `{"goal":"x"}`); !e.NeedsModel || status != http.StatusServiceUnavailable {
		t.Errorf("task without a model: %d %+v", status, e)
	}
}

func TestBuildAction(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"click", "e3"}, `{"kind":"click","ref":"e3"}`},
		{[]string{"type", "e4", "hello", "world"}, `{"kind":"type","ref":"e4","text":"hello world"}`},
		{[]string{"press", "Enter"}, `{"kind":"press","key":"Enter"}`},
		{[]string{"press", "e4", "Control+A"}, `{"kind":"press","ref":"e4","key":"Control+A"}`},
		{[]string{"navigate", "https://example.com"}, `{"kind":"navigate","url":"https://example.com"}`},
		{[]string{"select", "e5", "Blue", "Red"}, `{"kind":"select","ref":"e5","values":["Blue","Red"]}`},
		{[]string{"scroll", "down"}, `{"kind":"scroll","direction":"down"}`},
		{[]string{"scroll", "e9"}, `{"kind":"scroll","ref":"e9"}`},
		{[]string{"wait", "2"}, `{"kind":"wait","seconds":2}`},
		{[]string{"wait", "Saved", "ok"}, `{"kind":"wait","text":"Saved ok"}`},
		{[]string{"fill", "e3=Ann", "e4=true"}, `{"kind":"fill","fields":[{"ref":"e3","value":"Ann"},{"ref":"e4","value":"true"}]}`},
		{[]string{"drag", "e3", "e9"}, `{"kind":"drag","ref":"e3","to":"e9"}`},
		{[]string{"resize", "800", "600"}, `{"kind":"resize","width":800,"height":600}`},
		{[]string{"dialog", "dismiss"}, `{"kind":"dialog","accept":false}`},
		{[]string{"back"}, `{"kind":"back"}`},
		{[]string{"click", "@e7"}, `{"kind":"click","ref":"@e7"}`},
		{[]string{"check", "e6", "false"}, `{"kind":"check","ref":"e6","checked":false}`},
		{[]string{"check", "e6"}, `{"kind":"check","ref":"e6","checked":true}`},
		{[]string{"scroll", "bottom"}, `{"kind":"scroll","direction":"bottom"}`},
		{[]string{"console", "5"}, `{"kind":"console","limit":5}`},
		{[]string{"upload", "e8", "/tmp/a.pdf", "/tmp/b.pdf"}, `{"kind":"upload","ref":"e8","files":["/tmp/a.pdf","/tmp/b.pdf"]}`},
		{[]string{"dialog", "accept", "Ada", "L."}, `{"kind":"dialog","accept":true,"promptText":"Ada L."}`},
		{[]string{"open"}, `{"kind":"open"}`},
	}
	for _, c := range cases {
		a, err := buildAction(c.args[0], c.args[1:], false, false)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		b, _ := json.Marshal(a)
		if string(b) != c.want {
			t.Errorf("%v: %s, want %s", c.args, b, c.want)
		}
	}
	for _, bad := range [][]string{{"click", "submit"}, {"back", "now"}, {"drag", "e3"}, {"resize", "wide", "tall"}, {"fill", "name=Ann"}, {"navigate"}, {"dialog", "maybe"}, {"console", "many"}, {"type"}} {
		if _, err := buildAction(bad[0], bad[1:], false, false); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestReadSSE(t *testing.T) {
	in := ": hello\n\nid: 1\nevent: task\ndata: {\"a\":1}\n\nevent: answer\ndata: line1\ndata: line2\n\ndata:bare\n\n"
	var got []string
	if err := readSSE(strings.NewReader(in), func(e sse.Event) bool { got = append(got, e.Type+"="+e.Data); return true }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != `task={"a":1}|answer=line1`+"\n"+`line2|message=bare` {
		t.Fatalf("%q", got)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAPIWaitsForTabDuringRestart: right after the server starts (as after a restart), before
// the extension is back, an API request for a tab waits for it instead of answering 404.
func TestAPIWaitsForTabDuringRestart(t *testing.T) {
	t.Setenv("TABRELAY_LLM_PROVIDER", "")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	f := &config.Server{Common: config.Common{Addr: "127.0.0.1:0", Home: t.TempDir(), LogLevel: "debug"}}
	logs := &lockedBuffer{}
	log := zerolog.New(logs).Level(zerolog.DebugLevel)
	srv, err := startServer(ctx, f, &log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	const tab = "AAAA1111BBBB2222CCCC3333DDDD4444"
	type answer struct {
		status int
		body   string
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("GET", "http://"+srv.Addr()+"/api/screenshot?tab="+tab, nil)
		req.Header.Set("Authorization", "Bearer "+srv.Token())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		got <- answer{status: resp.StatusCode, body: b.String()}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "waiting for the tab to come back") {
		if time.Now().After(deadline) {
			t.Fatal("the request did not wait for the tab")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ext, err := relaytest.Dial(ctx, srv.Addr(), srv.Token(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)
	if err := ext.Share(tab, "https://example.com/", "Example"); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil || a.status != http.StatusOK {
		t.Fatalf("screenshot of a tab that came back: HTTP %d %s (%v)", a.status, a.body, a.err)
	}
}

// lockedBuffer is a log sink safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunPrintsCost: `tabrelay run` ends with what the task cost — the model calls and the
// tokens in and out the provider reported (here the scripted OpenAI-protocol server) — or
// "no model" for a simple command the fast path did alone.
func TestRunPrintsCost(t *testing.T) {
	model := llmtest.NewOpenAI(t,
		llmtest.ToolCall("update_plan", `{"steps":[{"text":"read the page","status":"active"}]}`),
		llmtest.ToolCall("finish", `{"answer":"It is an example."}`),
	)
	f, tab, _ := startTestServerEnv(t, map[string]string{
		llm.EnvProvider: "openai", llm.EnvBaseURL: model.URL, llm.EnvModel: "test-model", "OPENAI_API_KEY": "test-key",
	})
	out, errOut, err := runCmd(t, runRun, f, "--tab", tab, "what is this page about")
	if err != nil {
		t.Fatalf("run: %v\nstdout: %s\nstderr: %s", err, out, errOut)
	}
	in := 0
	for _, r := range model.Requests() {
		in += r.ApproxTokens() // what the scripted server reports as prompt_tokens
	}
	// two calls, each reply without text: completion_tokens = len("")/4 + 1 each
	want := task.Usage{LLMCalls: 2, PromptTokens: in, CompletionTokens: 2}.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if last := lines[len(lines)-1]; last != want || !regexp.MustCompile(`^model: 2 calls, [1-9][0-9]{0,2}(,[0-9]{3})* tokens in, 2 out$`).MatchString(last) {
		t.Errorf("the last line of run's output is %q, want %q; output:\n%s", last, want, out)
	}
	if !strings.Contains(out, "It is an example.") {
		t.Errorf("run's output lacks the answer:\n%s", out)
	}
}
