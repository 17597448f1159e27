package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
)

// handover gives step i (or, for i < 0, the whole prose skill) to the model through the task
// runner, records what it did in the run's task, checks the step's effect and drafts the steps
// as they were done.
func (r *run) handover(ctx context.Context, i int, reason string, rep *StepReport) error {
	if r.s.opts.Runner == nil {
		return errors.New("no language model is configured to adapt the step: edit the skill to match the page, or configure a model (TABRELAY_LLM_PROVIDER, TABRELAY_LLM_MODEL and the provider's key)")
	}
	pre, _, _ := r.snapshot(ctx)
	goal := r.goal(i, reason)
	r.s.log.Info().Str("skill", r.sk.Name).Int("step", i+1).Msg("handing a skill step to the model")
	// The model does this one step with browser tools only: a handover task that could run a
	// skill would wait on this run's tab forever.
	// Task lists show the run's own request, never this prompt.
	request := fmt.Sprintf("%s, step %d (handed to the model)", r.t.Shown(), i+1)
	if i < 0 {
		request = r.t.Shown() + " (handed to the model)"
	}
	// The goal holds the run's parameters: when an MCP client passed them they are a model's,
	// not the person's words, and the hand-over acts for the words that started the run.
	t, err := r.s.opts.Runner.RunWith(task.WithoutToolbox(ctx), task.StartRequest{Goal: goal, Request: request, Tab: r.tab, ModelGoal: r.modelParams, Words: r.request})
	if err != nil {
		if errors.Is(err, llm.ErrNotConfigured) {
			return fmt.Errorf("no language model is configured to adapt the step (%v)", err)
		}
		return fmt.Errorf("hand the step to the model: %w", err)
	}
	r.res.Handovers++
	r.res.ModelCalls += t.Usage.LLMCalls
	// the run's task reports the tokens too (its model calls are counted at the end)
	r.t.Usage.PromptTokens += t.Usage.PromptTokens
	r.t.Usage.CompletionTokens += t.Usage.CompletionTokens
	rep.HandoverTask = t.ID
	for _, st := range t.Steps {
		st.ID = fmt.Sprintf("s%d", len(r.t.Steps)+1)
		st.Index = len(r.t.Steps) + 1
		st.Tool = "model:" + st.Tool
		st.Args = json.RawMessage(r.mask(string(st.Args)))
		r.t.Steps = append(r.t.Steps, st)
	}
	r.save(ctx)
	if t.Status != task.StatusSucceeded {
		why := t.Error
		if why == "" {
			why = string(t.Status)
		}
		return fmt.Errorf("the model could not do it either (task %s): %s", t.ID, why)
	}
	if i < 0 {
		r.res.Output = t.Answer
		return nil
	}
	st := r.sk.Steps[i]
	if st.Expect != nil {
		if err := r.expect(ctx, *st.Expect); err != nil {
			return fmt.Errorf("the model finished but %w", err)
		}
	}
	post, _, _ := r.snapshot(ctx)
	done, ok := r.stepsFromTask(t, pre, post)
	if !ok || len(done) == 0 {
		r.addDraft(st)
		return nil
	}
	done[len(done)-1].Expect = st.Expect
	for k := range done {
		done[k].Hint = st.Hint
	}
	if len(done) != 1 || !sameStep(done[0], st) {
		r.diff = true
	}
	r.draft = append(r.draft, done...)
	return nil
}

// goal tells the model the skill, the step to do and what comes after.
func (r *run) goal(i int, reason string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are running the skill %q (%s) on this tab.\n", r.sk.Name, strings.TrimSpace(r.sk.Description))
	if len(r.params) > 0 {
		b.WriteString("Parameters:")
		for _, p := range r.sk.Parameters {
			v := r.params[p.Name]
			if p.Secret {
				v = "(secret, not shown)"
			}
			fmt.Fprintf(&b, " %s=%q", p.Name, v)
		}
		b.WriteString("\n")
	}
	if i < 0 {
		b.WriteString("The skill has no structured steps; follow its instructions, then call finish with the result:\n\n")
		b.WriteString(capText(r.sk.Body, 6000))
		return b.String()
	}
	st := r.sk.Steps[i]
	if i > 0 {
		fmt.Fprintf(&b, "Steps 1-%d are done.\n", i)
	}
	fmt.Fprintf(&b, "Step %d could not run as written: %s.\n", i+1, reason)
	fmt.Fprintf(&b, "Do step %d now, and only that step: %s.", i+1, describe(st, r.params))
	if st.Hint != "" {
		fmt.Fprintf(&b, " Hint: %s.", strings.TrimSuffix(st.Hint, "."))
	}
	b.WriteString(" The page may have changed (renamed or moved elements): find the element that serves the same purpose. Then call finish.\n")
	if notes := prose(r.sk.Body); notes != "" {
		// what the author wrote for when the page differs (preconditions, notes, verification)
		b.WriteString("The skill's own instructions (for context; do only the step above):\n")
		b.WriteString(capText(notes, maxHandoverNotes))
		b.WriteString("\n")
	}
	if i+1 < len(r.sk.Steps) {
		b.WriteString("Do NOT do the later steps; they run automatically after you finish:\n")
		for j := i + 1; j < len(r.sk.Steps); j++ {
			fmt.Fprintf(&b, "%d. %s\n", j+1, describe(r.sk.Steps[j], r.params))
		}
	}
	return r.mask(b.String())
}

// stepsFromTask turns the model's page actions into skill steps, naming each element by role
// and name from the snapshots around the handover. ok is false when an element cannot be named.
func (r *run) stepsFromTask(t *task.Task, pre, post *snapshot.Snapshot) ([]Step, bool) {
	var out []Step
	for _, ts := range t.Steps {
		if ts.Status != task.StepOK {
			continue
		}
		a, err := decodeStepArgs(ts.Args)
		if err != nil {
			return nil, false
		}
		st := Step{Do: ts.Tool}
		if a.Ref != "" {
			tg, ok := targetFor(pre, a.Ref)
			if !ok {
				tg, ok = targetFor(post, a.Ref)
			}
			if !ok {
				return nil, false
			}
			st.Target = &tg
		}
		switch ts.Tool {
		case "click", "hover":
		case "type":
			st.Text, st.Submit = r.templatize(a.Text), a.Submit
		case "press":
			st.Key = a.Key
		case "select":
			for _, v := range a.Values {
				st.Values = append(st.Values, r.templatize(v))
			}
		case "check":
			st.Do = "check"
			if a.Checked != nil && !*a.Checked {
				st.Do = "uncheck"
			}
		case "navigate":
			st.URL = r.templatize(a.URL)
		case "back", "forward", "reload":
		case "wait":
			if a.Text == "" {
				continue
			}
			st.Text = r.templatize(a.Text)
		case "hand_over":
			var h struct {
				Instruction string `json:"instruction"`
			}
			_ = json.Unmarshal(ts.Args, &h)
			st.Text = h.Instruction
		case "snapshot", "update_plan", "finish", "tabs", "screenshot", "scroll", "ask_user":
			continue
		default:
			return nil, false
		}
		if st.Target == nil && (st.Do == "click" || st.Do == "hover" || st.Do == "type" || st.Do == "select" || st.Do == "check" || st.Do == "uncheck") {
			return nil, false
		}
		out = append(out, st)
	}
	return out, true
}

// templatize writes parameter values back as {{name}}.
func (r *run) templatize(s string) string {
	for _, p := range r.sk.Parameters {
		if v := r.params[p.Name]; v != "" && strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "{{"+p.Name+"}}")
		}
	}
	return s
}

// targetFor names the element with ref by role and name (with nth among equals).
func targetFor(page *snapshot.Snapshot, ref string) (Target, bool) {
	n := page.Find(ref)
	if n == nil || n.Role == "" {
		return Target{}, false
	}
	t := Target{Role: n.Role, Name: n.Name}
	m := matchAll(page.Nodes(), t, nil, true)
	if len(m) > 1 {
		for k, hit := range m {
			if hit.Ref == ref {
				t.Nth = k + 1
			}
		}
	}
	return t, true
}

func sameStep(a, b Step) bool {
	ja, _ := json.Marshal(Step{Do: a.Do, Target: a.Target, Text: a.Text, Key: a.Key, Values: a.Values, URL: a.URL, Submit: a.Submit})
	jb, _ := json.Marshal(Step{Do: b.Do, Target: b.Target, Text: b.Text, Key: b.Key, Values: b.Values, URL: b.URL, Submit: b.Submit})
	return string(ja) == string(jb)
}

// maxHandoverNotes caps the skill's prose given to the model with a step.
const maxHandoverNotes = 2000

// prose is a skill's markdown body without its ```steps blocks (the steps are described to the
// model one by one), trimmed; "" when nothing else is written.
func prose(body string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case !in && strings.HasPrefix(t, "```steps"):
			in = true
			continue
		case in && strings.HasPrefix(t, "```"):
			in = false
			continue
		case in:
			continue
		}
		b.WriteString(line)
		b.WriteString("\n")
	}
	out := strings.TrimSpace(b.String())
	for strings.Contains(out, "\n\n\n") {
		out = strings.ReplaceAll(out, "\n\n\n", "\n\n")
	}
	return out
}
