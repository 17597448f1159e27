package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// agentMove is one step of the scripted model's side of the agent benchmark: a tool call whose
// "ref" argument, when target is set, is the ref of the element with that exact name in what
// the agent last sent.
type agentMove struct {
	tool   string
	target string
	args   map[string]any
}

// agentMoves is an 11-step task on a generated page: find a product far below the fold (p),
// act on it (enabling the check tool first), go back to the top, open a quick view, type in the
// search box, read the page once, finish.
func agentMoves(p int) []agentMove {
	return []agentMove{
		{tool: "find", args: map[string]any{"text": fmt.Sprintf("Add product %d to cart", p)}},
		{tool: "click", target: fmt.Sprintf("Add product %d to cart", p)},
		{tool: "find", args: map[string]any{"text": fmt.Sprintf("Gift wrap %d", p)}},
		{tool: "more_tools", args: map[string]any{"enable": []string{"check"}}}, // check is not among the tools offered first
		{tool: "check", target: fmt.Sprintf("Gift wrap %d", p), args: map[string]any{"checked": true}},
		{tool: "scroll", args: map[string]any{"direction": "top"}},
		{tool: "find", args: map[string]any{"text": "Quick view 5"}},
		{tool: "click", target: "Quick view 5"},
		{tool: "type", target: "Search products", args: map[string]any{"text": "kettle"}},
		{tool: "snapshot"},
		{tool: "finish", args: map[string]any{"answer": fmt.Sprintf("Product %d is in the cart with gift wrap; the quick view of product 5 is open.", p)}},
	}
}

// agentPageElements is the size of the benchmark's page (gen.html: 10 elements per product).
const agentPageElements = 20000

// agentStall is how long the benchmark's task may go without a step ending before it counts as
// stuck: each step of the task, not the whole of it, is bounded, so a slow (loaded) machine only
// makes the task longer.
const agentStall = 3 * time.Minute

// runAgent runs agentMoves as a task of the in-process agent on /gen.html?n=20000 through the
// real extension, with the model played by the scripted OpenAI-protocol server, and reports
// what each model call cost in tokens (the whole request: system prompt, tool schemas, history
// and observations), in all and not in the previous request's prefix (what a provider's prompt
// cache would not hold). The targets (first step ≤ 5,000, median ≤ 3,000, whole task ≤ 30,000)
// are reported, not asserted. The task starts once the page holds all its products, and ends
// with an error only when it stops making progress ([agentStall]).
func runAgent(cfg config, r *Results) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	model := llmtest.NewServer("openai")
	defer model.Close()
	n := agentPageElements
	if v, err := strconv.Atoi(os.Getenv("BENCH_AGENT_N")); err == nil && v >= 200 {
		n = v // a smaller page, to try the script quickly
	}
	product := n/10 - 10
	moves := agentMoves(product)
	for _, mv := range moves {
		model.Push(llmtest.Dynamic(func(req llmtest.Request) llmtest.Reply { return playMove(req, mv) }))
	}
	launch, cancelLaunch := context.WithTimeout(ctx, 5*time.Minute) // starting processes, not the page
	s, err := startReal(launch, fmt.Sprintf("/gen.html?n=%d", n),
		llm.EnvProvider+"=openai-compatible", llm.EnvBaseURL+"="+model.URL, llm.EnvModel+"=bench", llm.EnvAPIKey+"=bench",
		// the scripted model plays the task's moves only; the alignment check's cost per step
		// is the critic group's
		"TABRELAY_CRITIC=off")
	cancelLaunch()
	if err != nil {
		return err
	}
	defer s.close()
	if err := waitGenerated(ctx, s, n/10); err != nil {
		return err
	}

	var started api.TaskStarted
	if err := s.rp.api(ctx, "POST", "/api/tasks", map[string]any{"goal": fmt.Sprintf("Put product %d in the cart with gift wrap, then open the quick view of product 5", product), "tab": s.tab.TargetID}, &started); err != nil {
		return err
	}
	var tk task.Task
	progress, steps := time.Now(), -1
	for {
		if err := s.rp.api(ctx, "GET", "/api/tasks/"+started.ID, nil, &tk); err != nil {
			return err
		}
		if tk.Status.Done() {
			break
		}
		if ended := endedSteps(tk.Steps); ended != steps {
			progress, steps = time.Now(), ended
		}
		if time.Since(progress) > agentStall {
			dumpRequests(model.Requests())
			return fmt.Errorf("the agent task made no progress for %s after %d model calls and %d steps", agentStall, model.Calls(), steps)
		}
		time.Sleep(200 * time.Millisecond)
	}
	reqs := model.Requests()
	dumpRequests(reqs)
	if p := model.Problems(); len(p) > 0 {
		return fmt.Errorf("the scripted model: %v", p)
	}
	if tk.Status != task.StatusSucceeded {
		return fmt.Errorf("the agent task ended %s: %s", tk.Status, tk.Error)
	}
	for _, st := range tk.Steps {
		if st.Status != task.StepOK {
			return fmt.Errorf("step %d (%s) ended %s: %s", st.Index, st.Tool, st.Status, st.Error)
		}
	}
	if len(reqs) != len(moves) {
		return fmt.Errorf("%d model calls, want %d", len(reqs), len(moves))
	}
	tokens := make([]float64, len(reqs))
	fresh := make([]float64, len(reqs)) // not in the previous request's prefix
	for i, q := range reqs {
		tokens[i] = float64(q.ApproxTokens())
		fresh[i] = tokens[i]
		if i > 0 {
			fresh[i] = float64(q.NewTokens(reqs[i-1]))
		}
	}
	for i := range reqs {
		// the per-step table: the whole request, and what a provider's prompt cache would not hold
		fmt.Fprintf(os.Stderr, "    step %2d %-10s %6.0f tokens, %6.0f new\n", i+1, moves[i].tool, tokens[i], fresh[i])
	}
	sorted := append([]float64(nil), tokens...)
	sort.Float64s(sorted)
	med := median(tokens)
	page := fmt.Sprintf("agent, %d steps on gen %dk", len(moves), n/1000)
	r.add(Figure{Group: "agent", Name: page + ": first step", Unit: "tokens", Value: tokens[0], Target: "≤ 5000", Met: met(tokens[0] <= 5000)})
	r.add(Figure{Group: "agent", Name: page + ": median step", Unit: "tokens", Value: med, Target: "≤ 3000", Met: met(med <= 3000)})
	r.add(Figure{Group: "agent", Name: page + ": largest step", Unit: "tokens", Value: sorted[len(sorted)-1]})
	r.add(Figure{Group: "agent", Name: page + ": median step, new tokens (not in the previous request's prefix)", Unit: "tokens", Value: median(fresh)})
	r.add(Figure{Group: "agent", Name: page + ": whole task", Unit: "tokens", Value: sum(tokens), Target: "≤ 30000", Met: met(sum(tokens) <= 30000)})
	r.add(Figure{Group: "agent", Name: page + ": whole task, new tokens", Unit: "tokens", Value: sum(fresh)})
	r.add(Figure{Group: "agent", Name: page + ": wall time", Unit: "s", Value: tk.FinishedAt.Sub(tk.CreatedAt).Seconds()})
	// where a request's tokens go (cl100k, counted offline): the first request, and the median
	// of each part over the task's requests
	splits := make([]llmtest.Split, len(reqs))
	for i, q := range reqs {
		splits[i] = q.Split()
	}
	for _, part := range []struct {
		name string
		of   func(llmtest.Split) int
	}{
		{"system prompt", func(s llmtest.Split) int { return s.System }},
		{"tool definitions", func(s llmtest.Split) int { return s.Tools }},
		{"page", func(s llmtest.Split) int { return s.Page }},
		{"history", func(s llmtest.Split) int { return s.History }},
	} {
		vals := make([]float64, len(splits))
		for i, s := range splits {
			vals[i] = float64(part.of(s))
		}
		f := Figure{Group: "agent", Name: page + ": first request, " + part.name, Unit: "cl100k tokens", Value: vals[0]}
		if part.name == "tool definitions" {
			f.Target, f.Met = "≤ 500", met(vals[0] <= 500)
		}
		r.add(f)
		r.add(Figure{Group: "agent", Name: page + ": median request, " + part.name, Unit: "cl100k tokens", Value: median(vals)})
	}
	return nil
}

// playMove answers a model request with mv, its target resolved to a ref from the newest
// message that shows an element with exactly that name.
func playMove(req llmtest.Request, mv agentMove) llmtest.Reply {
	args := map[string]any{}
	for k, v := range mv.args {
		args[k] = v
	}
	if mv.target != "" {
		// the name in quotes, escaped when the observation is JSON
		re := regexp.MustCompile(`\\?"` + regexp.QuoteMeta(mv.target) + `\\?"[^\n]*?\[ref=([a-z0-9]+)\]`)
		ref := ""
		for i := len(req.Messages) - 1; i >= 0 && ref == ""; i-- {
			if m := re.FindStringSubmatch(req.Messages[i].Text); m != nil {
				ref = m[1]
			}
		}
		if ref == "" {
			return failMove(fmt.Sprintf("bench script: no element %q in what the agent sent; last: %.300s", mv.target, req.Last().Text))
		}
		args["ref"] = ref
	}
	b, err := json.Marshal(args)
	if err != nil {
		return failMove(err.Error())
	}
	return llmtest.ToolCall(mv.tool, string(b))
}

// failMove is the fail tool call with reason.
func failMove(reason string) llmtest.Reply {
	b, _ := json.Marshal(map[string]string{"reason": reason})
	return llmtest.ToolCall("fail", string(b))
}

// sum is the sum of xs.
func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// dumpRequests writes each model request's body to the directory BENCH_DUMP names, if any.
func dumpRequests(reqs []llmtest.Request) {
	if dir := os.Getenv("BENCH_DUMP"); dir != "" {
		for i, q := range reqs {
			_ = os.WriteFile(fmt.Sprintf("%s/agent-request-%d.json", dir, i+1), q.Body, 0o644)
		}
	}
}

// endedSteps is how many of steps have ended.
func endedSteps(steps []task.Step) int {
	n := 0
	for _, st := range steps {
		if st.Status != task.StepRunning {
			n++
		}
	}
	return n
}

// waitGenerated waits until the shared gen.html tab has loaded and holds all its cards
// (products): a page of 20,000 elements takes a while to build on a loaded machine, and a task
// started earlier would read half a page. It gives up when the page stops growing for a minute.
func waitGenerated(ctx context.Context, s *realSetup, cards int) error {
	last, since := -1, time.Now()
	for {
		var st struct {
			Ready string `json:"ready"`
			Cards int    `json:"cards"`
		}
		err := s.b.PageEval(ctx, s.tab, `({ready: document.readyState, cards: document.querySelectorAll('#main section').length})`, &st)
		switch {
		case err == nil && st.Ready == "complete" && st.Cards >= cards:
			return nil
		case err == nil && st.Cards != last:
			last, since = st.Cards, time.Now()
		case time.Since(since) > time.Minute:
			return fmt.Errorf("the generated page stopped at %d of %d products (%s; %v)", st.Cards, cards, st.Ready, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
