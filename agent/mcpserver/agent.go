package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/skills"
)

// taskArgs are run_task's arguments. There is no way for the client's model to approve a
// step: the person answers each confirmation (an elicitation, or the side panel).
type taskArgs struct {
	Goal string `json:"goal" jsonschema:"what to do, in plain words"`
}

// skillArgs are run_skill's arguments.
type skillArgs struct {
	Name   string            `json:"name" jsonschema:"skill name"`
	Params map[string]string `json:"params,omitempty" jsonschema:"parameter values by name"`
}

// mustSchema is the compact JSON Schema of an argument struct (a programming error panics,
// caught by the tests).
func mustSchema[T any]() map[string]any {
	sc, err := jsonschema.For[T](&jsonschema.ForOptions{})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %T: %v", *new(T), err))
	}
	sc.AdditionalProperties = nil
	for _, p := range sc.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	b, _ := json.Marshal(sc)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// taskTool runs a task with the in-process agent; progress notifications carry its plan and
// steps.
func (s *Server) taskTool() *tool {
	return &tool{
		def: &mcp.Tool{Name: "run_task", InputSchema: mustSchema[taskArgs](),
			Description: "Hand a whole task to tabrelay's own agent on the current tab (needs a model configured on the server); progress notifications show its plan and steps. When the agent asks the user a question or hands the tab over (sign-in), clients with elicitation get it as a form; others get a result saying how to answer."},
		run: (*Server).runTask,
	}
}

func (s *Server) runTask(c *call) (*mcp.CallToolResult, error) {
	var a taskArgs
	if err := json.Unmarshal(c.args, &a); err != nil || strings.TrimSpace(a.Goal) == "" {
		return nil, fmt.Errorf(`run_task needs a goal, e.g. {"goal":"find the cheapest kettle"}`)
	}
	if s.opts.NoModel != nil {
		if err := s.opts.NoModel(); err != nil {
			return nil, fmt.Errorf("run_task: %w", err)
		}
	}
	tab, err := s.resolve(c)
	if err != nil {
		return nil, err
	}
	events, unsub := s.opts.Runner.Subscribe("", 256) // before Start: no event is missed
	defer unsub()
	// The goal is the client's model's words, not the person's: it names no site, value or
	// file for the safety gate and approves nothing.
	t, err := s.opts.Runner.StartWith(context.WithoutCancel(c.ctx), task.StartRequest{Goal: a.Goal, Tab: tab, Conversation: true, ModelGoal: true})
	if err != nil {
		return nil, fmt.Errorf("run_task: %w", err)
	}
	token := c.req.Params.GetProgressToken()
	progress := 0.0
	notify := func(msg string) {
		progress++
		if token == nil || c.req.Session == nil {
			return
		}
		_ = c.req.Session.NotifyProgress(c.ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: progress, Message: msg})
	}
	notify("task " + t.ID + " started: " + a.Goal)
	var declined []string
	for {
		select {
		case <-c.ctx.Done():
			_ = s.opts.Runner.Cancel(t.ID)
			return nil, fmt.Errorf("run_task cancelled: %w", c.ctx.Err())
		case ev, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("run_task: the agent stopped (task %s)", t.ID)
			}
			if ev.TaskID != t.ID {
				continue
			}
			switch ev.Type {
			case task.EventPlan:
				notify("plan: " + planText(ev.Plan))
			case task.EventStepStarted:
				if ev.Step != nil {
					notify(fmt.Sprintf("step %d: %s %s", ev.Step.Index, ev.Step.Tool, compactJSON(ev.Step.Args)))
				}
			case task.EventStepFinished:
				if ev.Step != nil {
					notify(fmt.Sprintf("step %d %s: %s", ev.Step.Index, ev.Step.Status, clip(firstNonEmpty(ev.Step.Error, ev.Step.Result), 200)))
				}
			case task.EventQuestion, task.EventHandover:
				if !canElicit(c) {
					cur, err := s.opts.Runner.Get(c.ctx, t.ID)
					if err != nil {
						return nil, err
					}
					return waitingResult(cur, ev), nil
				}
				notify("waiting for the user: " + firstNonEmpty(questionText(ev), handoverText(ev)))
				go s.elicit(c.ctx, c, t.ID, ev)
			case task.EventConfirmation:
				if ev.Step != nil && ev.Step.Confirmation != nil {
					// the person answers, never the client's model: through the client where
					// it can ask them, else in the side panel, where the task waits
					if !canElicit(c) {
						cur, err := s.opts.Runner.Get(c.ctx, t.ID)
						if err != nil {
							return nil, err
						}
						return confirmWaitingResult(cur, ev.Step), nil
					}
					if s.askPerson(c, ev.Step.Confirmation) {
						_ = s.opts.Runner.Confirm(t.ID, ev.Step.ID, true)
					} else {
						declined = append(declined, fmt.Sprintf("%s (%s)", ev.Step.Confirmation.Prompt, ev.Step.Confirmation.Reason))
						_ = s.opts.Runner.Confirm(t.ID, ev.Step.ID, false)
					}
				}
			}
			if ev.Type != task.EventAnswer && !(ev.Type == task.EventStatus && ev.Status.Done()) {
				continue
			}
			done, err := s.opts.Runner.Wait(c.ctx, t.ID)
			if err != nil {
				return nil, err
			}
			return taskResult(done, declined), nil
		}
	}
}

// taskResult reports an ended task: its answer or error, and its steps.
func taskResult(t *task.Task, declined []string) *mcp.CallToolResult {
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s %s.", t.ID, t.Status)
	if t.Answer != "" {
		fmt.Fprintf(&b, "\nAnswer: %s", t.Answer)
	}
	if t.Error != "" {
		fmt.Fprintf(&b, "\nError: %s", t.Error)
	}
	if t.NotSaved != "" {
		fmt.Fprintf(&b, "\nWarning: %s (the server keeps the task and saves it when it can).", t.NotSaved)
	}
	for _, st := range t.Steps {
		fmt.Fprintf(&b, "\n%d. %s %s: %s", st.Index, st.Tool, compactJSON(st.Args), st.Status)
	}
	if len(declined) > 0 {
		fmt.Fprintf(&b, "\nNot done (needed the user's confirmation, which this client could not ask for or the user declined): %s. Tell the user; they can run the task from the tabrelay side panel, which asks them before such steps.", strings.Join(declined, "; "))
	}
	res := text("%s", b.String())
	res.IsError = t.Status != task.StatusSucceeded
	return res
}

// skillTools list and run skills (replayable procedures, no model needed for their steps).
func (s *Server) skillTools() []*tool {
	return []*tool{
		{def: &mcp.Tool{Name: "skills", InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
			Description: "List the skills: saved procedures run_skill replays on the page without a model."},
			run: (*Server).listSkills},
		{def: &mcp.Tool{Name: "run_skill", InputSchema: mustSchema[skillArgs](),
			Description: "Run a skill on the current tab."},
			run: (*Server).runSkill},
	}
}

func (s *Server) listSkills(*call) (*mcp.CallToolResult, error) {
	var b strings.Builder
	list := s.opts.Skills.Library().List()
	fmt.Fprintf(&b, "%d skills", len(list))
	for _, sk := range list {
		fmt.Fprintf(&b, "\n%s: %s", sk.Name, sk.Description)
		var ps []string
		for _, p := range sk.Parameters {
			n := p.Name
			if p.Required {
				n += "*"
			}
			ps = append(ps, n)
		}
		if len(ps) > 0 {
			fmt.Fprintf(&b, " (params: %s; * required)", strings.Join(ps, ", "))
		}
	}
	return text("%s", b.String()), nil
}

func (s *Server) runSkill(c *call) (*mcp.CallToolResult, error) {
	var a skillArgs
	if err := json.Unmarshal(c.args, &a); err != nil || a.Name == "" {
		return nil, fmt.Errorf(`run_skill needs a name, e.g. {"name":"site-search","params":{"query":"mugs"}} (skills lists them)`)
	}
	if _, err := s.opts.Skills.Library().Get(a.Name); err != nil {
		return nil, err
	}
	tab, err := s.resolve(c)
	if err != nil {
		return nil, err
	}
	if s.opts.Runner != nil && canElicit(c) {
		// a step the gate holds waits for the person: ask them through the client (elsewhere
		// it waits for their answer in the side panel)
		events, unsub := s.opts.Runner.Subscribe("", 256)
		defer unsub()
		go func() {
			for ev := range events {
				if ev.Type == task.EventConfirmation && ev.Step != nil && ev.Step.Confirmation != nil &&
					strings.HasPrefix(ev.Step.ID, "s") && ev.Step.Tool == "confirm" {
					_ = s.opts.Runner.Confirm(ev.TaskID, ev.Step.ID, s.askPerson(c, ev.Step.Confirmation))
				}
			}
		}()
	}
	r, err := s.opts.Skills.Run(c.ctx, a.Name, skills.RunRequest{Params: a.Params, Tab: tab, ModelParams: true})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s %s (%d model calls).", r.Skill, r.Status, r.ModelCalls)
	if r.Output != "" {
		fmt.Fprintf(&b, "\nOutput: %s", r.Output)
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "\nError: %s", r.Error)
	}
	for _, st := range r.Steps {
		fmt.Fprintf(&b, "\n%d. %s %s: %s %s", st.Index, st.Do, st.Target, st.Status, st.Message)
	}
	res := text("%s", b.String())
	res.IsError = r.Status != task.StatusSucceeded
	return res, nil
}

func questionText(ev task.Event) string {
	if ev.Question == nil {
		return ""
	}
	return ev.Question.Text
}

func handoverText(ev task.Event) string {
	if ev.Handover == nil {
		return ""
	}
	return ev.Handover.Instruction
}

func planText(plan []task.PlanItem) string {
	parts := make([]string, len(plan))
	for i, p := range plan {
		parts[i] = fmt.Sprintf("%d. [%s] %s", i+1, p.Status, p.Text)
	}
	return strings.Join(parts, "; ")
}

func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return ""
	}
	return string(b)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// askPerson puts a step the task waits to confirm to the person through the client (an
// elicitation) and reports whether they accepted; false when the client cannot ask.
func (s *Server) askPerson(c *call, cf *task.Confirmation) bool {
	if !canElicit(c) {
		return false
	}
	res, err := c.req.Session.Elicit(c.ctx, &mcp.ElicitParams{Mode: "form",
		Message:         fmt.Sprintf("tabrelay's agent wants to %s.\nThis is %s and may not be undone. Accept to let it do this one step; decline to stop the task.", cf.Prompt, cf.Reason),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
	if err != nil {
		s.opts.Log.Debug().Err(err).Msg("eliciting a confirmation")
		return false
	}
	return res.Action == "accept"
}
