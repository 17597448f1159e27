package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/eval"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// TestEval runs the built `tabrelay eval` on five tasks of the shipped suite (e2e/evalsuite)
// against the real stack (relay + agent, real Chromium, real extension) with the model played by
// the scripted OpenAI-protocol server: two tasks the fast path solves with no model (one asks
// for confirmation, which eval declines), two the model solves, and one whose scripted answer is
// wrong on purpose. It checks the JSON report's per-task success, steps, calls, tokens, time and
// failure reason against the page, the scripted server and the tasks, the Markdown table, and
// --compare.
func TestEval(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "openai/test"})
	tab := ae.share(t, ae.site.URL("/agent/controls.html"))

	suite := t.TempDir()
	names := []string{"fp-click-signin", "fp-place-order", "mail-subjects", "shop-cheapest-to-cart", "shop-glass-price"}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("evalsuite", n+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(suite, n+".yaml"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// the model's side, in the suite's (name) order: mail-subjects answers only one subject
	// (the check wants both); the shop tasks search, add and answer
	model.Push(
		llmtest.ToolCall("finish", `{"answer":"Your inbox has one email: Your invoice."}`),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			return llmtest.ToolCall("type", fmt.Sprintf(`{"ref":%q,"text":"kettle","submit":true}`, refFor(r, "Search products", "searchbox", "textbox")))
		}),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			ref := refFor(r, "Add Steel kettle to cart", "button")
			if ref == "" {
				return llmtest.ToolCall("fail", `{"reason":"test script: no Add Steel kettle button after the search"}`)
			}
			return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, ref))
		}),
		llmtest.ToolCall("finish", `{"answer":"The Steel kettle (25 EUR) is in your cart."}`).WithText("Done."),
		llmtest.ToolCall("finish", `{"answer":"The Glass kettle costs 54 EUR."}`),
	)
	modelCalls := []int{0, 0, 1, 3, 1}

	tr := cliRunner(t, ae, buildCLI(t))
	report := filepath.Join(t.TempDir(), "report.json")
	began := time.Now()
	out, errOut, code := tr("eval", "--tab", tab.TargetID, "--site", ae.site.URL("/"), "--json", report, suite)
	elapsed := time.Since(began)
	if code != 1 || !strings.Contains(errOut, "1 of 5 tasks failed") {
		t.Fatalf("tabrelay eval: exit %d (want 1: one task fails on purpose)\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if model.Remaining() != 0 {
		t.Errorf("%d scripted replies unused", model.Remaining())
	}
	rep, err := eval.ReadReport(report)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(names) {
		t.Fatalf("%d results, want %d: %+v", len(rep.Results), len(names), rep.Results)
	}

	// the tokens the scripted server reported, per model call (prompt: body/4; completion:
	// text/4+1), summed per task in request order
	reqs := model.Requests()
	completion := []int{1, 1, 1, len("Done.")/4 + 1, 1}
	next := 0
	for i, r := range rep.Results {
		if r.Name != names[i] {
			t.Errorf("result %d is %q, want %q", i, r.Name, names[i])
			continue
		}
		in, outTok := 0, 0
		for range modelCalls[i] {
			if next < len(reqs) {
				in += len(reqs[next].Body) / 4
				outTok += completion[next]
			}
			next++
		}
		tk := ae.getTask(t, r.TaskID)
		if r.ModelCalls != modelCalls[i] || r.TokensIn != in || r.TokensOut != outTok || r.Steps != len(tk.Steps) || r.Steps == 0 {
			t.Errorf("%s: %d steps, %d calls, %d/%d tokens; want %d steps (the task's), %d calls, %d/%d tokens", r.Name, r.Steps, r.ModelCalls, r.TokensIn, r.TokensOut, len(tk.Steps), modelCalls[i], in, outTok)
		}
		if r.WallMS <= 0 || r.WallMS > elapsed.Milliseconds() {
			t.Errorf("%s: wall time %d ms, want within the run's %v", r.Name, r.WallMS, elapsed)
		}
		wantModel := "openai/test"
		if modelCalls[i] == 0 {
			wantModel = "fastpath"
		}
		if tk.Model != wantModel || r.Model != wantModel {
			t.Errorf("%s: task model %q, report %q, want %q", r.Name, tk.Model, r.Model, wantModel)
		}
	}
	want := []struct {
		success bool
		status  task.Status
		asked   bool
		reason  string
	}{
		{true, task.StatusSucceeded, false, ""},
		{true, task.StatusCancelled, true, ""}, // eval declined the order, as the task expects
		{false, task.StatusSucceeded, false, `the answer "Your inbox has one email: Your invoice." does not match /Lunch on Friday`},
		{true, task.StatusSucceeded, false, ""},
		{true, task.StatusSucceeded, false, ""},
	}
	for i, w := range want {
		r := rep.Results[i]
		if r.Success != w.success || r.Status != w.status || r.Asked != w.asked || !strings.HasPrefix(r.Reason, w.reason) || (w.reason == "") != (r.Reason == "") {
			t.Errorf("%s: success %v, status %s, asked %v, reason %q; want %v %s %v %q…", r.Name, r.Success, r.Status, r.Asked, r.Reason, w.success, w.status, w.asked, w.reason)
		}
	}
	// ground truth on the page: the order was declined, the steel kettle is in the shop's cart
	// (the tab is on the shop after the last task, whose check passed on the same page)
	var cart []string
	ae.pageEval(t, tab, "window.state.cart", &cart)
	if len(cart) != 0 {
		t.Errorf("the last task (a question) left the cart %v; it must start on a fresh shop page", cart)
	}
	s := rep.Summary
	if s.Tasks != 5 || s.Succeeded != 4 || s.NoModel != 2 || s.ModelCalls != 5 || s.Steps != sumSteps(rep) || s.MedianWallMS <= 0 {
		t.Errorf("summary %+v", s)
	}
	for _, wantLine := range []string{
		"| task | ok | steps | calls | tokens in | tokens out | time (ms) | reason |",
		fmt.Sprintf("| fp-click-signin | ✓ | %d | 0 | 0 | 0 | %d |  |", rep.Results[0].Steps, rep.Results[0].WallMS),
		fmt.Sprintf("| mail-subjects | ✗ | %d | 1 | %d | 1 | %d | the answer", rep.Results[2].Steps, rep.Results[2].TokensIn, rep.Results[2].WallMS),
		"**4/5 succeeded** (80%; 2 with no model call)",
	} {
		if !strings.Contains(out, wantLine) {
			t.Errorf("the Markdown report lacks %q:\n%s", wantLine, out)
		}
	}

	// --compare: the same report against itself changes nothing
	cmp, cerrOut, ccode := tr("eval", "--compare", report, report)
	if ccode != 0 || !strings.Contains(cmp, "**succeeded 4/5 → 4/5** · Δ steps +0 · Δ model calls +0") || !strings.Contains(cmp, "| shop-glass-price | ✓ | ✓ | +0 | +0 | +0 | +0 | +0 |") {
		t.Errorf("eval --compare: exit %d\n%s\n%s", ccode, cmp, cerrOut)
	}
	t.Logf("tabrelay eval printed:\n%s", out)

	// the shipped suite's fast-path tasks, checked against the real pages: all solved with no
	// model call (the scripted server has no replies left, so a call would fail the task)
	calls := model.Calls()
	fpReport := filepath.Join(t.TempDir(), "fastpath.json")
	out, errOut, code = tr("eval", "--tab", tab.TargetID, "--site", ae.site.URL("/"), "--tag", "fastpath", "--json", fpReport, "evalsuite")
	fp, err := eval.ReadReport(fpReport)
	if code != 0 || err != nil || fp.Summary.Tasks < 5 || fp.Summary.NoModel != fp.Summary.Tasks || model.Calls() != calls {
		t.Errorf("eval --tag fastpath: exit %d, report %v, %d model calls\nstdout: %s\nstderr: %s", code, err, model.Calls()-calls, out, errOut)
	}
}

func sumSteps(r *eval.Report) int {
	n := 0
	for _, x := range r.Results {
		n += x.Steps
	}
	return n
}

// TestEvalShippedSuite runs `tabrelay eval` on the whole shipped suite (e2e/evalsuite) against
// the real stack, with the model played by the scripted server following each task's reference
// solution (referencePlayer). Every task must succeed: the fast-path and skill tasks with no
// model call, the others in exactly their reference's steps. It runs once declining
// confirmations (the default) and once approving them (--tag confirmation --approve), so both
// checks of every confirmation task are seen to hold. A task whose check cannot see its result,
// or whose reference no longer fits the page, fails here.
func TestEvalShippedSuite(t *testing.T) {
	tasks, err := eval.LoadSuite("evalsuite")
	if err != nil {
		t.Fatal(err)
	}
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "openai/test"})
	tab := ae.share(t, ae.site.URL("/agent/controls.html"))
	tr := cliRunnerWithin(t, ae, buildCLI(t), 10*time.Minute)

	byName := map[string]eval.Task{}
	moves := 0
	for _, tk := range tasks {
		byName[tk.Name] = tk
		moves += len(tk.Reference)
	}
	run := func(args ...string) *eval.Report {
		t.Helper()
		// every reply is the same player (declined confirmations leave their later moves in the
		// queue for the next run), so the queue only needs to be long enough
		for range moves - model.Remaining() {
			model.Push(llmtest.Dynamic(referencePlayer(tasks)))
		}
		report := filepath.Join(t.TempDir(), "report.json")
		full := append([]string{"eval", "--tab", tab.TargetID, "--site", ae.site.URL("/"), "--json", report}, args...)
		out, errOut, code := tr(append(full, "evalsuite")...)
		rep, err := eval.ReadReport(report)
		if err != nil {
			t.Fatalf("tabrelay %v: exit %d, no report: %v\nstdout: %s\nstderr: %s", args, code, err, out, errOut)
		}
		for _, r := range rep.Results {
			if !r.Success {
				t.Errorf("%s failed: %s (status %s, %d steps, %d model calls)", r.Name, r.Reason, r.Status, r.Steps, r.ModelCalls)
			}
		}
		if code != 0 {
			t.Errorf("tabrelay eval %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
		t.Logf("tabrelay eval %v printed:\n%s", args, out) // the suite's figures: steps, calls, tokens
		return rep
	}

	declined := run()
	if len(declined.Results) != len(tasks) {
		t.Fatalf("%d results for %d tasks", len(declined.Results), len(tasks))
	}
	noModel := 0
	for _, r := range declined.Results {
		tk := byName[r.Name]
		switch {
		case hasTag(tk, "fastpath") || hasTag(tk, "skills"):
			noModel++
			if r.ModelCalls != 0 {
				t.Errorf("%s: %d model calls; the fast path or the skill should need none", r.Name, r.ModelCalls)
			}
		case tk.Confirm:
			// declined at the confirming move: the later moves are never asked for
			if r.ModelCalls < 1 || r.Steps > len(tk.Reference) {
				t.Errorf("%s: %d steps, %d model calls; want at least one call and at most its reference's %d steps", r.Name, r.Steps, r.ModelCalls, len(tk.Reference))
			}
		case r.ModelCalls < 1 || r.Steps != len(tk.Reference):
			// the fast path may run the first parts of a compound request and hand the rest on
			t.Errorf("%s: %d steps, %d model calls; want its reference's %d steps and at least one call (a task the fast path solves needs the fastpath tag)", r.Name, r.Steps, r.ModelCalls, len(tk.Reference))
		}
		if r.Name == "prompt-answer-ada" && r.ModelCalls != len(tk.Reference)-1 {
			// "Click Ask name and answer Ada": the fast path clicks, then hands "answer Ada" on
			t.Errorf("%s: %d model calls, want %d (the fast path runs the first part)", r.Name, r.ModelCalls, len(tk.Reference)-1)
		}
		if r.ModelCalls > 0 && (r.TokensIn == 0 || r.TokensOut == 0) {
			t.Errorf("%s: %d calls but %d/%d tokens", r.Name, r.ModelCalls, r.TokensIn, r.TokensOut)
		}
	}
	if s := declined.Summary; s.Tasks != len(tasks) || s.Succeeded != len(tasks) || s.NoModel != noModel {
		t.Errorf("summary %+v, want %d tasks, all succeeded, %d with no model", s, len(tasks), noModel)
	}

	approved := run("--tag", "confirmation", "--approve")
	confirms := 0
	for _, r := range approved.Results {
		tk := byName[r.Name]
		confirms++
		if !r.Asked {
			t.Errorf("%s: approved without being asked", r.Name)
		}
		if !hasTag(tk, "fastpath") && (r.ModelCalls < 1 || r.Steps != len(tk.Reference)) {
			t.Errorf("%s (approved): %d steps, %d model calls; want its reference's %d steps", r.Name, r.Steps, r.ModelCalls, len(tk.Reference))
		}
	}
	if confirms < 3 {
		t.Errorf("only %d confirmation tasks ran with --approve", confirms)
	}
}

func hasTag(tk eval.Task, tag string) bool { return slices.Contains(tk.Tags, tag) }

// referencePlayer answers a model request with the next move of the task being run: the task is
// the one whose request the newest user message states (before its page content), the move the
// first its conversation has not made yet, and a move's target becomes the ref of the element
// the agent showed with that role and name (the newest message that shows one).
func referencePlayer(tasks []eval.Task) func(llmtest.Request) llmtest.Reply {
	fail := func(format string, a ...any) llmtest.Reply {
		return llmtest.ToolCall("fail", fmt.Sprintf(`{"reason":%q}`, "reference player: "+fmt.Sprintf(format, a...)))
	}
	return func(r llmtest.Request) llmtest.Reply {
		var tk *eval.Task
		start := -1
		for i := len(r.Messages) - 1; i >= 0 && tk == nil; i-- {
			if r.Messages[i].Role != "user" {
				continue
			}
			said, _, _ := strings.Cut(r.Messages[i].Text, "<page_content>")
			for j := range tasks {
				if len(tasks[j].Reference) > 0 && strings.Contains(said, tasks[j].Request) && (tk == nil || len(tasks[j].Request) > len(tk.Request)) {
					tk, start = &tasks[j], i
				}
			}
		}
		if tk == nil {
			return fail("no user message states a request of the suite")
		}
		made := 0
		for _, m := range r.Messages[start:] {
			made += len(m.ToolCalls)
		}
		if made >= len(tk.Reference) {
			return fail("task %s has made all %d moves of its reference", tk.Name, len(tk.Reference))
		}
		mv := tk.Reference[made]
		args := map[string]any{}
		maps.Copy(args, mv.Args)
		if mv.Target != "" {
			role, name, err := mv.ParseTarget()
			if err != nil {
				return fail("%v", err)
			}
			ref, err := refAmong(r.Messages[start:], role, name, mv.Nth)
			if err != nil {
				return fail("task %s, move %d: %v", tk.Name, made+1, err)
			}
			args["ref"] = ref
		}
		b, err := json.Marshal(args)
		if err != nil {
			return fail("%v", err)
		}
		return llmtest.ToolCall(mv.Tool, string(b))
	}
}

// refAmong returns the ref of the element with role and name in the newest message that shows
// one: the nth of them (1-based, -1 the last), or the only one when nth is 0.
func refAmong(msgs []llmtest.Message, role, name string, nth int) (string, error) {
	re := regexp.MustCompile(`(?m)\b` + regexp.QuoteMeta(role+` "`+name+`"`) + `[^\n]*?\[ref=([a-z0-9]+)\]`)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := re.FindAllStringSubmatch(msgs[i].Text, -1)
		switch {
		case len(m) == 0:
			continue
		case nth == 0 && len(m) > 1:
			return "", fmt.Errorf(`%d elements %s "%s" in one message: say which (nth)`, len(m), role, name)
		case nth == 0:
			return m[0][1], nil
		case nth < 0 && -nth <= len(m):
			return m[len(m)+nth][1], nil
		case nth > 0 && nth <= len(m):
			return m[nth-1][1], nil
		default:
			return "", fmt.Errorf(`element %d of %s "%s" asked, %d shown`, nth, role, name, len(m))
		}
	}
	return "", fmt.Errorf(`no element %s "%s" in what the agent sent`, role, name)
}
