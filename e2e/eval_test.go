package e2e

import (
	"fmt"
	"os"
	"path/filepath"
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
