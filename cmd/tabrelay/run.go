package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	sse "github.com/tmaxmax/go-sse"

	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/config"
)

// maxEventSize bounds one event of a task's stream (a task event carries every step's result).
const maxEventSize = 32 << 20

// readSSE reads the Server-Sent Events of r until the stream ends or fn returns false. Unnamed
// events get the type "message", as a browser's EventSource gives them.
func readSSE(r io.Reader, fn func(sse.Event) bool) error {
	for ev, err := range sse.Read(r, &sse.ReadConfig{MaxEventSize: maxEventSize}) {
		if err != nil {
			return fmt.Errorf("reading the event stream: %w", err)
		}
		if ev.Type == "" {
			ev.Type = "message"
		}
		if !fn(ev) {
			return nil
		}
	}
	return nil
}

// goalCmd is `tabrelay run "goal"`.
type goalCmd struct {
	config.Client `embed:""`
	Yes           bool `help:"approve every step that needs confirmation without asking (careful: purchases, messages, deletions)"`
	// NewConversation starts a new conversation in the tab first.
	NewConversation bool `name:"new-conversation" help:"start a new conversation in the tab: the request does not see the tab's earlier requests and answers"`
	// Goal is the request, in words; everything from its first word on belongs to it.
	Goal []string `arg:"" sep:"none" optional:"" passthrough:"partial" placeholder:"goal"`
}

func runRun(ctx context.Context, args []string, io stdio) error {
	return runCommand(ctx, "run", args, io)
}

// Run starts a task, follows its live events (plan and steps), asks y/n when a step needs
// confirmation and stdin is a terminal, and prints the answer and what the task cost. It fails
// (exit code 1) unless the task succeeds; interrupting it cancels the task.
func (r *goalCmd) Run(ctx context.Context, io stdio) error {
	yes, f := r.Yes, &r.Client
	goal := strings.TrimSpace(strings.Join(r.Goal, " "))
	if goal == "" {
		return errors.New(`run needs a goal: tabrelay run "find the cheapest kettle on this page"`)
	}
	c := newClient(f)
	if r.NewConversation {
		if err := newConversation(ctx, c, f.Tab); err != nil {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(ctx, requestTimeout)
	// The same entry as the side panel: a skill the request names, then a simple command
	// through the fast path (no model needed), then a task of the model.
	var started struct {
		ID     string      `json:"id"`
		Status task.Status `json:"status"`
	}
	err := c.postJSON(sctx, "/command", map[string]any{"text": goal, "tab": f.Tab, "approve": yes, "wait": false}, &started)
	cancel()
	if err != nil {
		return err
	}
	fmt.Fprintf(io.err, "task %s started: %s\n", started.ID, goal)

	resp, err := c.open(ctx, http.MethodGet, "/tasks/"+started.ID+"/events", nil, nil)
	if err != nil {
		return cancelOnInterrupt(ctx, c, started.ID, err)
	}
	defer resp.Body.Close()
	// answers from the terminal are read on their own goroutine so the stream keeps flowing
	var lines *bufio.Reader
	if io.terminal {
		lines = bufio.NewReader(io.in)
	}
	p := &runPrinter{w: io.out}
	ask := &asker{ctx: ctx, c: c, io: io, lines: lines, taskID: started.ID}
	var final *task.Task
	streamErr := readSSE(resp.Body, func(ev sse.Event) bool {
		switch ev.Type {
		case "task":
			var t task.Task
			if json.Unmarshal([]byte(ev.Data), &t) == nil {
				p.plan(t.Plan)
				for i := range t.Steps {
					p.stepDone(&t.Steps[i])
				}
				if t.Status.Done() {
					final = &t
					return false
				}
				p.line()
				ask.task(&t)
			}
		default:
			var e task.Event
			if json.Unmarshal([]byte(ev.Data), &e) != nil {
				return true
			}
			switch e.Type {
			case task.EventPlan:
				p.plan(e.Plan)
			case task.EventStepStarted:
				p.stepStarted(e.Step)
			case task.EventStepFinished:
				p.stepDone(e.Step)
			case task.EventText:
				p.text(e.Text)
			case task.EventConfirmation:
				if e.Step == nil {
					return true
				}
				p.confirmation(e.Step)
				switch {
				case yes:
					fmt.Fprintln(io.out, "  approved (--yes)")
					go confirm(ctx, c, io, started.ID, e.Step.ID, true)
				case lines != nil:
					fmt.Fprint(io.out, "  go ahead? [y/N] ")
					go func(stepID string) {
						line, _ := lines.ReadString('\n')
						a := strings.ToLower(strings.TrimSpace(line))
						confirm(ctx, c, io, started.ID, stepID, a == "y" || a == "yes")
					}(e.Step.ID)
				default:
					fmt.Fprintf(io.out, "  waiting for your answer: POST /api/tasks/%s/confirm {\"stepId\":%q,\"approve\":true|false} (or rerun with --yes)\n", started.ID, e.Step.ID)
				}
			case task.EventQuestion, task.EventHandover:
				p.line()
				ask.event(e)
			case task.EventAnswer:
				return false
			}
		}
		return true
	})
	if ctx.Err() != nil {
		return cancelOnInterrupt(ctx, c, started.ID, ctx.Err())
	}
	if streamErr != nil {
		fmt.Fprintf(io.err, "the event stream broke (%v); reading the task's final state\n", streamErr)
	}
	if final == nil {
		gctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		var t task.Task
		for {
			if err := c.getJSON(gctx, "/tasks/"+started.ID, nil, &t); err != nil {
				return err
			}
			if t.Status.Done() {
				break
			}
			select {
			case <-gctx.Done():
				return fmt.Errorf("task %s did not end: %w", started.ID, gctx.Err())
			case <-time.After(200 * time.Millisecond):
			}
		}
		final = &t
	}
	p.line()
	if final.Answer != "" {
		fmt.Fprintf(io.out, "\n%s\n", final.Answer)
	}
	if final.NotSaved != "" {
		fmt.Fprintf(io.err, "warning: task %s %s (the server keeps it and saves it when it can; its /health says when)\n", final.ID, final.NotSaved)
	}
	if hint := recordsHint(final); hint != "" {
		fmt.Fprintln(io.err, hint)
	}
	// what the task cost, always the last line: "model: 3 calls, 4,210 tokens in, 312 out"
	fmt.Fprintln(io.out, final.Usage)
	if final.Status != task.StatusSucceeded {
		return &errTaskFailed{status: final.Status, reason: final.Error}
	}
	return nil
}

// confirm sends the user's answer for a step.
func confirm(ctx context.Context, c *apiClient, io stdio, taskID, stepID string, approve bool) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := c.postJSON(ctx, "/tasks/"+taskID+"/confirm", map[string]any{"stepId": stepID, "approve": approve}, nil); err != nil {
		fmt.Fprintf(io.err, "sending your answer failed: %v\n", err)
	}
}

// cancelOnInterrupt cancels the task when the command was interrupted.
func cancelOnInterrupt(ctx context.Context, c *apiClient, id string, err error) error {
	if ctx.Err() == nil {
		return err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if cerr := c.postJSON(cctx, "/tasks/"+id+"/cancel", struct{}{}, nil); cerr != nil {
		return fmt.Errorf("interrupted; cancelling task %s failed: %w", id, cerr)
	}
	return fmt.Errorf("interrupted: task %s cancelled", id)
}

// runPrinter prints a task's live plan and steps.
type runPrinter struct {
	w        io.Writer
	lastPlan string
	shown    map[string]bool
	// midLine is true while streamed prose has not ended its line.
	midLine bool
}

// text prints streamed prose of the model.
func (p *runPrinter) text(s string) {
	if s == "" {
		return
	}
	fmt.Fprint(p.w, s)
	p.midLine = !strings.HasSuffix(s, "\n")
}

// line ends streamed prose before a line of its own.
func (p *runPrinter) line() {
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
}

func (p *runPrinter) plan(items []task.PlanItem) {
	p.line()
	if len(items) == 0 {
		return
	}
	var b strings.Builder
	b.WriteString("plan:\n")
	for _, it := range items {
		mark := map[task.PlanStatus]string{task.PlanPending: "[ ]", task.PlanActive: "[>]", task.PlanDone: "[x]", task.PlanFailed: "[!]"}[it.Status]
		if mark == "" {
			mark = "[?]"
		}
		fmt.Fprintf(&b, "  %s %s\n", mark, it.Text)
	}
	if s := b.String(); s != p.lastPlan {
		p.lastPlan = s
		fmt.Fprint(p.w, s)
	}
}

func (p *runPrinter) stepStarted(s *task.Step) {
	p.line()
	if s == nil {
		return
	}
	fmt.Fprintf(p.w, "→ %s %s %s\n", s.ID, s.Tool, oneLine(string(s.Args), 120))
}

func (p *runPrinter) stepDone(s *task.Step) {
	p.line()
	if s == nil || s.Status == task.StepRunning {
		return
	}
	if p.shown == nil {
		p.shown = map[string]bool{}
	}
	if p.shown[s.ID] {
		return
	}
	p.shown[s.ID] = true
	switch s.Status {
	case task.StepOK:
		first, _, _ := strings.Cut(s.Result, "\n")
		fmt.Fprintf(p.w, "  ✓ %s %s (%d ms) %s\n", s.ID, s.Tool, s.DurationMS, oneLine(first, 120))
	default:
		fmt.Fprintf(p.w, "  ✗ %s %s %s: %s\n", s.ID, s.Tool, s.Status, oneLine(s.Error, 200))
	}
}

func (p *runPrinter) confirmation(s *task.Step) {
	p.line()
	why, what := "", s.Tool
	if s.Confirmation != nil {
		why, what = s.Confirmation.Reason, s.Confirmation.Prompt
	}
	fmt.Fprintf(p.w, "? %s needs your confirmation (%s): %s\n", s.ID, why, what)
}
