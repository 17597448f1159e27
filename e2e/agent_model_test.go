package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/testlimit"
)

// shopState is the shop fixture's own record of what happened (window.state).
type shopState struct {
	Searched []string `json:"searched"`
	Cart     []string `json:"cart"`
	Ordered  bool     `json:"ordered"`
}

func (ae *agentEnv) shopState(t *testing.T, shop browser.Tab) shopState {
	t.Helper()
	var s shopState
	ae.pageEval(t, shop, "window.state", &s)
	return s
}

// resetShop reloads the shop page and waits for a fresh state.
func (ae *agentEnv) resetShop(t *testing.T, shop browser.Tab) {
	t.Helper()
	ae.pageEval(t, shop, "window.__stale = true; setTimeout(() => location.reload(), 0); true", nil)
	eventually(t, 10*time.Second, "the shop reloads", func() (bool, string) {
		var fresh bool
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		err := ae.b.PageEval(ctx, shop, "document.readyState === 'complete' && !window.__stale && !!window.state && state.searched.length === 0", &fresh)
		return err == nil && fresh, fmt.Sprint(err)
	})
}

// startTask starts a task through the API and returns its id.
func (ae *agentEnv) startTask(t *testing.T, goal string) string {
	t.Helper()
	r := ae.call(t, http.MethodPost, "/api/tasks", map[string]any{"goal": goal})
	res := r.JSON(t)
	id, _ := res["id"].(string)
	if r.Status != http.StatusAccepted || id == "" || r.Header.Get("Location") != "/api/tasks/"+id {
		t.Fatalf("POST /api/tasks: HTTP %d %s (Location %q)", r.Status, r.Body, r.Header.Get("Location"))
	}
	return id
}

// collect reads the stream until it ends (or the timeout passes).
func collect(t *testing.T, ch <-chan sseEvent, timeout time.Duration) []sseEvent {
	t.Helper()
	var evs []sseEvent
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return evs
			}
			evs = append(evs, ev)
		case <-deadline:
			t.Fatalf("the event stream did not end within %v (got %d events)", timeout, len(evs))
		}
	}
}

// getTask reads a task through the API.
func (ae *agentEnv) getTask(t *testing.T, id string) *task.Task {
	t.Helper()
	r := ae.call(t, http.MethodGet, "/api/tasks/"+id, nil)
	var tk task.Task
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &tk) != nil {
		t.Fatalf("GET /api/tasks/%s: HTTP %d %s", id, r.Status, r.Body)
	}
	return &tk
}

// refFor finds the first of the roles that names the element in the request.
func refFor(r llmtest.Request, name string, roles ...string) string {
	for _, role := range roles {
		if ref := refOf(r, role, name); ref != "" {
			return ref
		}
	}
	return ""
}

// shopScript is the model's side of a multi-step task on the shop: plan, search, add the
// cheapest kettle to the cart, update the plan, finish. Refs come from what the agent sent.
func shopScript() []llmtest.Reply {
	return []llmtest.Reply{
		llmtest.ToolCall("update_plan", `{"steps":[{"text":"search for kettles","status":"active"},{"text":"add the cheapest to the cart","status":"pending"},{"text":"tell the user","status":"pending"}]}`),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			ref := refFor(r, "Search products", "searchbox", "textbox")
			if ref == "" {
				return llmtest.ToolCall("fail", `{"reason":"test script: no ref for the search box in the request"}`)
			}
			return llmtest.ToolCall("type", fmt.Sprintf(`{"ref":%q,"text":"kettle","submit":true}`, ref)).WithText("I'll search for kettles.")
		}),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			ref := refFor(r, "Add Steel kettle to cart", "button")
			if ref == "" {
				return llmtest.ToolCall("fail", `{"reason":"test script: the observation after the search shows no Add Steel kettle button"}`)
			}
			return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, ref))
		}),
		llmtest.ToolCall("update_plan", `{"steps":[{"text":"search for kettles","status":"done"},{"text":"add the cheapest to the cart","status":"done"},{"text":"tell the user","status":"active"}]}`),
		llmtest.ToolCall("finish", `{"answer":"The cheapest kettle is the Steel kettle at 25 EUR; it is in your cart."}`),
	}
}

// testMultiStep runs the shop script end to end and checks the page, the steps, the plan
// updates, the SSE events read through the HTTP endpoint (with the model's prose as text events
// when streamed), the stored rows, the requests the model received and the reports.
func testMultiStep(t *testing.T, ae *agentEnv, model *llmtest.Server, shop browser.Tab, streamed bool) string {
	ae.resetShop(t, shop)
	calls := model.Calls()
	model.Push(shopScript()...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id := ae.startTask(t, "Find the cheapest kettle and add it to my cart")
	evs := collect(t, ae.follow(t, ctx, id), 45*time.Second)

	// the page itself
	st := ae.shopState(t, shop)
	if !slices.Equal(st.Searched, []string{"kettle"}) || !slices.Equal(st.Cart, []string{"Steel kettle"}) || st.Ordered {
		t.Fatalf("shop state after the task: %+v", st)
	}
	// the task
	tk := ae.getTask(t, id)
	if tk.Status != task.StatusSucceeded || !strings.Contains(tk.Answer, "Steel kettle") {
		t.Fatalf("task %s: %s %q %q", id, tk.Status, tk.Answer, tk.Error)
	}
	var tools []string
	for _, s := range tk.Steps {
		tools = append(tools, s.Tool)
		if s.Status != task.StepOK {
			t.Errorf("step %s %s: %s %s", s.ID, s.Tool, s.Status, s.Error)
		}
	}
	if strings.Join(tools, ",") != "update_plan,type,click,update_plan,finish" {
		t.Errorf("steps %v", tools)
	}
	if typ := tk.Steps[1]; !strings.Contains(typ.URLBefore, "/agent/shop.html") || typ.URLAfter == "" || typ.TabID != shop.TargetID || typ.Thought == "" {
		t.Errorf("type step record: %+v", typ)
	}
	if len(tk.Plan) != 3 || tk.Plan[0].Status != task.PlanDone || tk.Plan[2].Status != task.PlanDone {
		t.Errorf("final plan %+v", tk.Plan)
	}
	if tk.Usage.LLMCalls != 5 {
		t.Errorf("usage %+v, want 5 model calls", tk.Usage)
	}
	// the live events, as a client of /api/tasks/:id/events saw them
	var types []string
	plans := 0
	for _, ev := range evs {
		types = append(types, ev.Type)
		if ev.Type == "plan" {
			plans++
		}
	}
	if len(evs) == 0 || evs[0].Type != api.EventTask || evs[len(evs)-1].Type != "answer" || plans != 2 ||
		count(types, "step_started") != 5 || count(types, "step_finished") != 5 || !slices.Contains(types, "status") {
		t.Errorf("event stream: %v", types)
	} else if streamed != slices.Contains(types, "text") {
		t.Errorf("streaming %v, but the event stream has text events: %v", streamed, slices.Contains(types, "text"))
	} else {
		var last task.Event
		_ = json.Unmarshal(evs[len(evs)-1].Data, &last)
		if last.Status != task.StatusSucceeded || last.Answer != tk.Answer {
			t.Errorf("last event %+v", last)
		}
	}
	// the stored rows
	stored, err := ae.agent.Store().GetTask(ctx, id)
	if err != nil {
		t.Fatalf("the task is not in the database: %v", err)
	}
	if stored.Status != task.StatusSucceeded || len(stored.Steps) != 5 || len(stored.Plan) != 3 || stored.Steps[2].Tool != "click" ||
		stored.Steps[2].Status != task.StepOK || !bytes.Contains(stored.Steps[2].Args, []byte(`"ref"`)) || stored.Plan[1].Status != task.PlanDone {
		t.Errorf("stored task: %s, %d steps, plan %+v", stored.Status, len(stored.Steps), stored.Plan)
	}
	// what the model received
	reqs := model.Requests()[calls:]
	if len(reqs) != 5 {
		t.Fatalf("the model got %d requests, want 5", len(reqs))
	}
	first := reqs[0]
	for _, tool := range []string{"snapshot", "find", "click", "type", "scroll", "finish", "fail", "more_tools"} {
		if !first.HasTool(tool) {
			t.Errorf("the first request does not offer %s (tools %v)", tool, first.Tools)
		}
	}
	if len(first.Messages) == 0 || !strings.Contains(first.Messages[0].Text, "Find the cheapest kettle") ||
		!strings.Contains(first.Messages[0].Text, "Kettle shop") || first.System == "" || strings.Contains(first.System, "Kettle shop") {
		t.Errorf("first request: system %d chars, first message %q", len(first.System), first.Last().Text)
	}
	if res := reqs[2].ToolResults(); len(res) != 2 || !strings.Contains(res[1].Text, "Add Steel kettle to cart") {
		t.Errorf("the observation after the search does not show the results: %+v", res)
	}
	if res := reqs[4].ToolResults(); len(res) != 4 {
		t.Errorf("the last request has %d tool results, want 4", len(res))
	}
	checkReports(t, ae, id, tk)
	return id
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// checkReports downloads the task's report in each format.
func checkReports(t *testing.T, ae *agentEnv, id string, tk *task.Task) {
	for _, f := range []struct{ format, mime, ext string }{
		{"json", "application/json", "json"}, {"csv", "text/csv", "csv"}, {"markdown", "text/markdown", "md"},
	} {
		r := ae.call(t, http.MethodGet, "/api/tasks/"+id+"/report?format="+f.format, nil)
		cd := r.Header.Get("Content-Disposition")
		if r.Status != http.StatusOK || !strings.HasPrefix(r.Header.Get("Content-Type"), f.mime) ||
			!strings.HasPrefix(cd, "attachment;") || !strings.Contains(cd, id+"."+f.ext) {
			t.Errorf("report %s: HTTP %d %s %q", f.format, r.Status, r.Header.Get("Content-Type"), cd)
			continue
		}
		switch f.format {
		case "json":
			var got task.Task
			if err := json.Unmarshal(r.Body, &got); err != nil || got.ID != id || len(got.Steps) != len(tk.Steps) {
				t.Errorf("JSON report: %v %s", err, r.Body)
			}
		case "csv":
			rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
			if err != nil || len(rows) != len(tk.Steps)+1 || rows[0][0] != "task_id" {
				t.Errorf("CSV report: %v, %d rows", err, len(rows))
			}
		case "markdown":
			if !strings.Contains(string(r.Body), tk.Goal) {
				t.Errorf("Markdown report does not name the goal:\n%s", r.Body)
			}
		}
	}
}

// testToolError: a step fails in the browser, the error goes back to the model, the next step
// recovers.
func testToolError(t *testing.T, ae *agentEnv, model *llmtest.Server, shop browser.Tab) {
	ae.resetShop(t, shop)
	calls := model.Calls()
	model.Push(
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			ref := refFor(r, "Search", "button")
			return llmtest.ToolCall("select", fmt.Sprintf(`{"ref":%q,"values":["glass"]}`, ref))
		}),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			res := r.ToolResults()
			if len(res) != 1 || !strings.HasPrefix(res[0].Text, "error:") {
				return llmtest.ToolCall("fail", `{"reason":"test script: the tool error did not come back to the model"}`)
			}
			ref := refFor(r, "Search products", "searchbox", "textbox")
			return llmtest.ToolCall("type", fmt.Sprintf(`{"ref":%q,"text":"glass","submit":true}`, ref)).WithText("That was not a select; I'll type instead.")
		}),
		llmtest.ToolCall("finish", `{"answer":"The glass kettle costs 54 EUR."}`),
	)
	id := ae.startTask(t, "How much is the glass kettle?")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tk, err := ae.agent.Runner().Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != task.StatusSucceeded || len(tk.Steps) != 3 || tk.Steps[0].Status != task.StepError || tk.Steps[0].Error == "" || tk.Steps[1].Status != task.StepOK {
		t.Fatalf("task %s %q: steps %+v", tk.Status, tk.Error, tk.Steps)
	}
	t.Logf("tool error sent back to the model: %s", tk.Steps[0].Error)
	if st := ae.shopState(t, shop); !slices.Equal(st.Searched, []string{"glass"}) {
		t.Errorf("shop state %+v", st)
	}
	if got := model.Calls() - calls; got != 3 {
		t.Errorf("%d model calls, want 3", got)
	}
}

// testCancel: cancelling a task while the model is thinking stops it at once, without waiting
// for the model's 30 s answer (the time is in the benchmarks: Stop → cancelled).
func testCancel(t *testing.T, ae *agentEnv, model *llmtest.Server) {
	model.Push(llmtest.ToolCall("snapshot", `{}`).After(30 * time.Second))
	calls := model.Calls()
	id := ae.startTask(t, "Compare every kettle in detail")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	evs := ae.follow(t, ctx, id)
	eventually(t, 10*time.Second, "the model call is in flight (the model server holds the request)", func() (bool, string) {
		tk := ae.getTask(t, id)
		n := model.Calls() - calls
		return n > 0 && (tk.Status == task.StatusRunning || tk.Status == task.StatusPlanning), fmt.Sprintf("status %s, %d requests to the model", tk.Status, n)
	})
	start := time.Now()
	r := ae.call(t, http.MethodPost, "/api/tasks/"+id+"/cancel", nil)
	took := time.Since(start)
	var tk task.Task
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &tk) != nil || tk.Status != task.StatusCancelled {
		t.Fatalf("cancel: HTTP %d %s", r.Status, r.Body)
	}
	if took > 10*time.Second {
		t.Errorf("cancel took %v: it waited for the model's answer", took)
	}
	got := collect(t, evs, 5*time.Second)
	var last task.Event
	if len(got) == 0 || json.Unmarshal(got[len(got)-1].Data, &last) != nil || last.Status != task.StatusCancelled {
		t.Errorf("the event stream did not end with the cancellation: %v", got)
	}
	t.Logf("cancel: the task was cancelled %v after the request", took.Round(time.Millisecond))
	if r := ae.call(t, http.MethodPost, "/api/tasks/"+id+"/cancel", nil); r.Status != http.StatusConflict {
		t.Errorf("cancelling an ended task: HTTP %d %s, want 409", r.Status, r.Body)
	}
}

// testRefuse: a purchase waits for confirmation; refusing it through the API stops the task
// and nothing is bought.
func testRefuse(t *testing.T, ae *agentEnv, model *llmtest.Server, shop browser.Tab) {
	ae.resetShop(t, shop)
	calls := model.Calls()
	model.Push(llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
		return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, refFor(r, "Buy now", "button")))
	}))
	id := ae.startTask(t, "Buy the kettle")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	evs := ae.follow(t, ctx, id)
	var step *task.Step
	for ev := range evs {
		if ev.Type == "confirmation_needed" {
			var e task.Event
			if err := json.Unmarshal(ev.Data, &e); err != nil || e.Step == nil || e.Step.Confirmation == nil {
				t.Fatalf("confirmation event %s", ev.Data)
			}
			step = e.Step
			break
		}
	}
	if step == nil {
		t.Fatal("no confirmation_needed event")
	}
	if tk := ae.getTask(t, id); tk.Status != task.StatusWaitingConfirmation {
		t.Fatalf("task status %s while waiting", tk.Status)
	}
	time.Sleep(300 * time.Millisecond)
	if ae.shopState(t, shop).Ordered {
		t.Fatal("the order was placed before the user answered")
	}
	if r := ae.call(t, http.MethodPost, "/api/tasks/"+id+"/confirm", map[string]any{"stepId": step.ID}); r.Status != http.StatusBadRequest {
		t.Errorf("confirm without approve: HTTP %d, want 400", r.Status)
	}
	if r := ae.call(t, http.MethodPost, "/api/tasks/"+id+"/confirm", map[string]any{"stepId": "s99", "approve": true}); r.Status != http.StatusConflict {
		t.Errorf("confirm of a step that does not wait: HTTP %d, want 409", r.Status)
	}
	if r := ae.call(t, http.MethodPost, "/api/tasks/"+id+"/confirm", map[string]any{"stepId": step.ID, "approve": false}); r.Status != http.StatusOK {
		t.Fatalf("refuse: HTTP %d %s", r.Status, r.Body)
	}
	for range evs {
	}
	tk, err := ae.agent.Runner().Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	last := tk.Steps[len(tk.Steps)-1]
	if tk.Status != task.StatusCancelled || last.Status != task.StepDeclined || last.Confirmation == nil || last.Confirmation.Approved == nil || *last.Confirmation.Approved {
		t.Fatalf("after refusing: task %s %q, step %+v", tk.Status, tk.Error, last)
	}
	if ae.shopState(t, shop).Ordered {
		t.Fatal("the order was placed although the user refused")
	}
	if got := model.Calls() - calls; got != 1 {
		t.Errorf("%d model calls, want 1 (refusing stops the task)", got)
	}
	t.Logf("confirmation: %q (%s), refused: %s", last.Confirmation.Prompt, last.Confirmation.Reason, tk.Error)
}

// testPromptSize measures the request the agent sends for one step on the largest fixture page.
func testPromptSize(t *testing.T, ae *agentEnv, model *llmtest.Server, tab browser.Tab) {
	_, self, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(self), "fixtures", "site")
	var pages []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".html") && !strings.HasSuffix(p, "alert.html") {
			rel, _ := filepath.Rel(root, p)
			pages = append(pages, "/"+filepath.ToSlash(rel))
		}
		return nil
	})
	type size struct {
		page  string
		chars int
	}
	// The pages are measured in a few shared tabs side by side (each navigation waits for its
	// page to settle, idle time that overlaps), the given tab among them.
	tabs := []browser.Tab{tab}
	for range 3 {
		extra := ae.share(t, ae.site.URL("/agent/shop.html"))
		tabs = append(tabs, extra)
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(10*time.Second))
			defer cancel()
			if err := ae.b.CloseTab(ctx, extra); err != nil {
				t.Errorf("close a measuring tab: %v", err)
			}
		}()
	}
	todo := make(chan string, len(pages))
	for _, p := range pages {
		todo <- p
	}
	close(todo)
	var mu sync.Mutex
	var sizes []size
	var wg sync.WaitGroup
	for i, tab := range tabs {
		// not t.Parallel, which runs as many at once as the machine has cores
		wg.Go(func() {
			t.Run(fmt.Sprint("measure/tab", i), func(t *testing.T) {
				for p := range todo {
					r := ae.call(t, http.MethodPost, "/api/act", map[string]any{"tab": tab.TargetID, "action": map[string]any{"kind": "navigate", "url": ae.site.URL(p)}})
					if r.Status != http.StatusOK {
						t.Errorf("navigate to %s: HTTP %d %s", p, r.Status, r.Body)
						continue
					}
					s := ae.call(t, http.MethodGet, "/api/snapshot?tab="+tab.TargetID, nil)
					mu.Lock()
					sizes = append(sizes, size{p, len(s.Body)})
					mu.Unlock()
				}
			})
		})
	}
	wg.Wait()
	if len(sizes) != len(pages) {
		t.Fatalf("measured %d of %d fixture pages", len(sizes), len(pages))
	}
	sort.Slice(sizes, func(i, j int) bool { return sizes[i].chars > sizes[j].chars })
	largest := sizes[0]
	r := ae.call(t, http.MethodPost, "/api/act", map[string]any{"tab": tab.TargetID, "action": map[string]any{"kind": "navigate", "url": ae.site.URL(largest.page)}})
	if r.Status != http.StatusOK {
		t.Fatalf("navigate: %s", r.Body)
	}
	model.Push(llmtest.ToolCall("finish", `{"answer":"seen"}`))
	r = ae.call(t, http.MethodPost, "/api/tasks", map[string]any{"goal": "What is on this page?", "tab": tab.TargetID})
	id, _ := r.JSON(t)["id"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if tk, err := ae.agent.Runner().Wait(ctx, id); err != nil || tk.Status != task.StatusSucceeded {
		t.Fatalf("task on %s: %v %+v", largest.page, err, tk)
	}
	req := model.LastRequest()
	const budget = 12000 // tokens: the 30,000-character snapshot cap plus the system prompt and tools
	t.Logf("largest fixture page %s: snapshot %d chars; one step's request %d bytes ≈ %d tokens (budget %d); system prompt %d chars, %d tools; next: %v",
		largest.page, largest.chars, len(req.Body), req.ApproxTokens(), budget, len(req.System), len(req.Tools), sizes[1:min(4, len(sizes))])
	if req.ApproxTokens() > budget {
		t.Errorf("one step costs ≈%d tokens, over the %d budget", req.ApproxTokens(), budget)
	}
	ae.call(t, http.MethodPost, "/api/act", map[string]any{"tab": tab.TargetID, "action": map[string]any{"kind": "navigate", "url": ae.site.URL("/agent/shop.html")}})
}

// The tabrelay binary the CLI tests run, built once per test process (go build links the whole
// server: seconds each time on a small machine, minutes on a fresh one, where it compiles every
// dependency without -race first); TestMain removes its folder.
var (
	cliOnce sync.Once
	cliBin  string
	cliDir  string
	cliErr  error
)

// buildCLI builds cmd/tabrelay into a temporary directory, once for the test process, and
// returns the binary's path.
func buildCLI(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		_, self, _, _ := runtime.Caller(0)
		repo := filepath.Dir(filepath.Dir(self))
		if cliDir, cliErr = os.MkdirTemp("", "tabrelay-e2e-cli-"); cliErr != nil {
			return
		}
		cliBin = filepath.Join(cliDir, "tabrelay")
		build := exec.Command("go", "build", "-o", cliBin, "./cmd/tabrelay")
		build.Dir = repo
		if out, err := build.CombinedOutput(); err != nil {
			cliErr = fmt.Errorf("go build ./cmd/tabrelay: %w\n%s", err, out)
		}
	})
	if cliErr != nil {
		t.Fatal(cliErr)
	}
	return cliBin
}

// cliRunner runs the built CLI binary against the agent environment's server and home, each
// run bounded by a minute.
func cliRunner(t *testing.T, ae *agentEnv, bin string) func(args ...string) (stdout, stderr string, code int) {
	return cliRunnerWithin(t, ae, bin, time.Minute)
}

// cliRunnerWithin is cliRunner with each run bounded by limit.
func cliRunnerWithin(t *testing.T, ae *agentEnv, bin string, limit time.Duration) func(args ...string) (stdout, stderr string, code int) {
	return func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		defer cancel()
		name := args[0]
		full := append([]string{name, "--addr", ae.addr, "--home", ae.home}, args[1:]...)
		cmd := exec.CommandContext(ctx, bin, full...)
		cmd.Env = append(os.Environ(), "TABRELAY_ADDR=", "TABRELAY_HOME=")
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var xe *exec.ExitError
		if errors.As(err, &xe) {
			code = xe.ExitCode()
		} else if err != nil {
			t.Fatalf("tabrelay %v: %v", args, err)
		}
		return o.String(), e.String(), code
	}
}

func testCLI(t *testing.T, ae *agentEnv, model *llmtest.Server, shop, controls browser.Tab) {
	tr := cliRunner(t, ae, buildCLI(t))
	ok := func(args ...string) string {
		t.Helper()
		out, errOut, code := tr(args...)
		if code != 0 {
			t.Fatalf("tabrelay %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
		return out
	}
	fails := func(want string, args ...string) {
		t.Helper()
		out, errOut, code := tr(args...)
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("tabrelay %v: exit %d, stderr %q (stdout %q); want exit 1 mentioning %q", args, code, errOut, out, want)
		}
	}

	out := ok("tabs")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); !strings.HasPrefix(lines[0], "* "+shop.TargetID) || !strings.Contains(out, controls.TargetID) {
		t.Errorf("tabrelay tabs:\n%s", out)
	}
	snap := ok("snapshot", "--tab", controls.TargetID, "--interactive")
	signin, email := refOf2(snap, "button", "Sign in"), refOf2(snap, "textbox", "Email")
	if signin == "" || email == "" || strings.Contains(snap, "End of the page") {
		t.Fatalf("tabrelay snapshot --interactive:\n%s", snap)
	}
	if out := ok("snapshot", "--tab", controls.TargetID, "--max-chars", "200"); len(out) > 500 {
		t.Errorf("snapshot --max-chars 200 printed %d bytes", len(out))
	}
	ae.pageEval(t, controls, "window.log = [], true", nil)
	ok("act", "--tab", controls.TargetID, "click", signin)
	ok("act", "--tab", controls.TargetID, "type", email, "hello", "world")
	ok("act", "--tab", controls.TargetID, "press", "Enter")
	var log []string
	ae.pageEval(t, controls, "window.log", &log)
	var typed string
	ae.pageEval(t, controls, "document.getElementById('email').value", &typed)
	if !slices.Contains(log, "click:signin") || typed != "hello world" || !slices.Contains(log, "key:Enter") {
		t.Errorf("after the CLI actions the page logged %v and the email field holds %q", log, typed)
	}
	if out := ok("act", "--tab", controls.TargetID, "--json", `{"kind":"evaluate","expression":"document.title"}`); !strings.Contains(out, `"Agent controls"`) {
		t.Errorf("act --json evaluate printed %q", out)
	}
	png := filepath.Join(t.TempDir(), "shot.png")
	ok("screenshot", "--tab", controls.TargetID, "-o", png)
	if b, err := os.ReadFile(png); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("screenshot file: %v, %d bytes", err, len(b))
	}
	// errors in plain words, exit code 1
	fails(`unknown action kind "explode"`, "act", "--tab", controls.TargetID, "explode", "e1")
	fails(`tab "NOSUCHTAB" is not a shared tab`, "act", "--tab", "NOSUCHTAB", "click", "e1")
	fails("e9999", "act", "--tab", controls.TargetID, "click", "e9999")
	fails("type needs text", "act", "--tab", controls.TargetID, "type", email)
	fails("snapshot takes no arguments", "snapshot", "extra")
	out, errOut, code := tr("tabs", "--addr", "127.0.0.1:1")
	if code != 1 || !strings.Contains(errOut, "tabrelay server not running at 127.0.0.1:1: start it with `tabrelay serve`") {
		t.Errorf("tabs against no server: exit %d %q %q", code, out, errOut)
	}
	fails("no tabrelay secret", "tabs", "--home", t.TempDir())

	// run takes the side panel's entry: a simple command needs no model call
	ae.pageEval(t, controls, "window.log = [], true", nil)
	calls := model.Calls()
	out = ok("run", "--tab", controls.TargetID, "click sign in")
	ae.pageEval(t, controls, "window.log", &log)
	if !slices.Contains(log, "click:signin") || model.Calls() != calls {
		t.Errorf("tabrelay run \"click sign in\": the page logged %v, the model was called %d times (want 0); output:\n%s", log, model.Calls()-calls, out)
	}
	if last := lastLine(out); last != "no model" {
		t.Errorf("tabrelay run \"click sign in\" ends with %q, want the cost line \"no model\"; output:\n%s", last, out)
	}

	// run: the live plan and steps, --yes approves the purchase, the answer, exit 0
	ae.resetShop(t, shop)
	model.Push(
		llmtest.ToolCall("update_plan", `{"steps":[{"text":"buy the kettle","status":"active"}]}`),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, refFor(r, "Buy now", "button")))
		}),
		llmtest.ToolCall("finish", `{"answer":"Ordered."}`),
	)
	calls = model.Calls()
	out = ok("run", "--tab", shop.TargetID, "--yes", "buy the kettle")
	if last := lastLine(out); !regexp.MustCompile(fmt.Sprintf(`^model: %d calls, [1-9][0-9]{0,2}(,[0-9]{3})* tokens in, [1-9][0-9]* out$`, model.Calls()-calls)).MatchString(last) {
		t.Errorf("tabrelay run \"buy the kettle\" ends with %q, want the cost line \"model: %d calls, N tokens in, M out\"", last, model.Calls()-calls)
	}
	for _, want := range []string{"[>] buy the kettle", "→ s2 click", "needs your confirmation (purchase or payment)", "approved (--yes)", "✓ s2 click", "Ordered."} {
		if !strings.Contains(out, want) {
			t.Errorf("tabrelay run output lacks %q:\n%s", want, out)
		}
	}
	if !ae.shopState(t, shop).Ordered {
		t.Error("tabrelay run --yes did not place the order")
	}
	// a failing task: exit code 1 with the reason
	model.Push(llmtest.ToolCall("fail", `{"reason":"the shop has no teapots"}`))
	fails("the shop has no teapots", "run", "find a teapot")
	t.Logf("tabrelay run printed:\n%s", out)
}

// lastLine is the last non-empty line of a command's output.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}
