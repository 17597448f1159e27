package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/agent/task"
)

// Client is what the runner needs of a running tabrelay server (cmd/tabrelay implements it
// over the authenticated /api).
type Client interface {
	// NewConversation starts a new conversation in tab, so a task does not see the ones before.
	NewConversation(ctx context.Context, tab string) error
	// Navigate opens url in tab (empty: the tab the server would pick).
	Navigate(ctx context.Context, tab, url string) error
	// Command sends the request as the side panel does (POST /api/command, not waiting) and
	// returns the task's id.
	Command(ctx context.Context, tab, text string) (string, error)
	// Task reads a task (GET /api/tasks/{id}).
	Task(ctx context.Context, id string) (*task.Task, error)
	// Confirm answers a step waiting for confirmation.
	Confirm(ctx context.Context, id, stepID string, approve bool) error
	// Cancel stops a task.
	Cancel(ctx context.Context, id string) error
	// Evaluate runs a JavaScript expression in tab and returns its JSON value.
	Evaluate(ctx context.Context, tab, expression string) (json.RawMessage, error)
}

// Options say how to run a suite.
type Options struct {
	// Site is the base URL of relative start pages.
	Site string
	// Tab is the shared tab to run in (empty: the server's default tab).
	Tab string
	// Approve answers yes to every confirmation (default: no).
	Approve bool
	// Timeout bounds one task (default 3 minutes).
	Timeout time.Duration
	// Poll is how often a running task is read (default 100 ms).
	Poll time.Duration
	// Progress, when set, is called after each task.
	Progress func(Result)
}

// Result is the outcome of one task.
type Result struct {
	Name    string `json:"name"`
	Request string `json:"request"`
	// Success is true when the task ended as it should and every check held.
	Success bool `json:"success"`
	// Reason says why a task failed.
	Reason string `json:"reason,omitempty"`
	TaskID string `json:"taskId,omitempty"`
	// Status is the task's final status.
	Status     task.Status `json:"status,omitempty"`
	Model      string      `json:"model,omitempty"`
	Steps      int         `json:"steps"`
	ModelCalls int         `json:"modelCalls"`
	TokensIn   int         `json:"tokensIn"`
	TokensOut  int         `json:"tokensOut"`
	// WallMS is the time from the request to the task's end (not the checks), in milliseconds.
	WallMS int64 `json:"wallMs"`
	// Asked is true when the agent stopped to ask for confirmation.
	Asked  bool   `json:"asked,omitempty"`
	Answer string `json:"answer,omitempty"`
}

// Run runs every task in order and returns the report. It stops early only when ctx ends; a
// task that fails, for whatever reason, is a failed Result.
func Run(ctx context.Context, c Client, suite string, tasks []Task, o Options) (*Report, error) {
	if o.Timeout <= 0 {
		o.Timeout = 3 * time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	rep := &Report{Suite: suite, StartedAt: time.Now().UTC(), Approve: o.Approve}
	for i := range tasks {
		r := runOne(ctx, c, &tasks[i], o)
		if ctx.Err() != nil {
			return rep, fmt.Errorf("eval interrupted at task %s: %w", tasks[i].Name, ctx.Err())
		}
		if o.Progress != nil {
			o.Progress(r)
		}
		rep.Results = append(rep.Results, r)
	}
	rep.summarize()
	return rep, nil
}

// runOne runs one task; every failure becomes the Result's Reason.
func runOne(ctx context.Context, c Client, t *Task, o Options) Result {
	r := Result{Name: t.Name, Request: t.Request}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	fail := func(format string, a ...any) Result {
		r.Success, r.Reason = false, fmt.Sprintf(format, a...)
		return r
	}
	start, err := ResolveStart(o.Site, t.Start)
	if err != nil {
		return fail("%v", err)
	}
	if err := c.Navigate(ctx, o.Tab, start); err != nil {
		return fail("open the start page %s: %v", start, err)
	}
	if err := c.NewConversation(ctx, o.Tab); err != nil {
		return fail("start a new conversation for the task: %v", err)
	}
	began := time.Now()
	id, err := c.Command(ctx, o.Tab, t.Request)
	if err != nil {
		r.WallMS = time.Since(began).Milliseconds()
		return fail("the request was refused: %v", err)
	}
	r.TaskID = id
	tk, limit, err := follow(ctx, c, id, t, o, &r)
	r.WallMS = time.Since(began).Milliseconds()
	if tk != nil {
		r.Status, r.Model, r.Answer = tk.Status, tk.Model, tk.Answer
		r.Steps = len(tk.Steps)
		r.ModelCalls, r.TokensIn, r.TokensOut = tk.Usage.LLMCalls, tk.Usage.PromptTokens, tk.Usage.CompletionTokens
	}
	switch {
	case err != nil:
		return fail("%v", err)
	case limit:
		return fail("over the step limit: %d steps, the task allows %d (stopped)", r.Steps, t.MaxSteps)
	case r.Steps > t.MaxSteps:
		return fail("over the step limit: %d steps, the task allows %d", r.Steps, t.MaxSteps)
	}
	if t.Confirm && !r.Asked {
		return fail("the agent did not stop to ask for confirmation (task %s)", tk.Status)
	}
	declined := t.Confirm && !o.Approve
	if !declined && tk.Status != task.StatusSucceeded {
		why := tk.Error
		if why == "" {
			why = "no reason given"
		}
		return fail("the task ended %s: %s", tk.Status, why)
	}
	if re, _ := t.answerPattern(); re != nil && !re.MatchString(tk.Answer) {
		return fail("the answer %q does not match %s", oneLine(tk.Answer, 200), t.Answer)
	}
	checks := []string{t.Check}
	if t.Confirm && o.Approve {
		checks = append(checks, t.CheckApproved)
	} else if declined {
		checks = append(checks, t.CheckDeclined)
	}
	tab := tk.TabID
	if tab == "" {
		tab = o.Tab
	}
	for _, expr := range checks {
		if strings.TrimSpace(expr) == "" {
			continue
		}
		v, err := c.Evaluate(ctx, tab, expr)
		if err != nil {
			return fail("the check %s could not run: %v", oneLine(expr, 120), err)
		}
		if !truthy(v) {
			return fail("the check %s is %s", oneLine(expr, 120), oneLine(string(v), 80))
		}
	}
	r.Success = true
	return r
}

// follow polls the task until it ends, answering confirmations and enforcing the step limit.
// limit is true when the task was stopped for taking too many steps.
func follow(ctx context.Context, c Client, id string, t *Task, o Options, r *Result) (tk *task.Task, limit bool, err error) {
	answered := map[string]bool{}
	for {
		tk, err = c.Task(ctx, id)
		if err != nil {
			return nil, false, fmt.Errorf("read task %s: %w", id, err)
		}
		if tk.Status.Done() {
			return tk, limit, nil
		}
		if !limit && len(tk.Steps) > t.MaxSteps {
			limit = true
			if err := c.Cancel(ctx, id); err != nil && !tkDone(ctx, c, id) {
				return tk, true, fmt.Errorf("over the step limit, and cancelling task %s failed: %w", id, err)
			}
		}
		if tk.Status == task.StatusWaitingConfirmation {
			for _, s := range tk.Steps {
				if s.Confirmation == nil || s.Confirmation.Approved != nil || answered[s.ID] {
					continue
				}
				r.Asked = true
				answered[s.ID] = true
				if err := c.Confirm(ctx, id, s.ID, o.Approve); err != nil {
					return tk, limit, fmt.Errorf("answer the confirmation of step %s: %w", s.ID, err)
				}
			}
		}
		for _, s := range tk.Steps {
			if s.Confirmation != nil {
				r.Asked = true
			}
		}
		// nobody is there to answer a question or take a hand-over: say so at once rather
		// than wait for the task's time limit
		var waiting string
		switch {
		case tk.Status == task.StatusWaitingInput && tk.Question != nil:
			waiting = fmt.Sprintf("the agent asked %q; a task of the suite must say all the agent needs", oneLine(tk.Question.Text, 200))
		case tk.Status == task.StatusWaitingUser && tk.Handover != nil:
			waiting = fmt.Sprintf("the agent handed the tab over to the person (%q)", oneLine(tk.Handover.Instruction, 200))
		}
		if waiting != "" {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = c.Cancel(cctx, id)
			cancel()
			return tk, limit, errors.New(waiting)
		}
		select {
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = c.Cancel(cctx, id)
			cancel()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return tk, limit, fmt.Errorf("the task did not end within %v (cancelled)", o.Timeout)
			}
			return tk, limit, ctx.Err()
		case <-time.After(o.Poll):
		}
	}
}

// tkDone reports whether the task has ended (a cancel that lost the race is no error).
func tkDone(ctx context.Context, c Client, id string) bool {
	tk, err := c.Task(ctx, id)
	return err == nil && tk.Status.Done()
}

// truthy is JavaScript's truthiness of a JSON value.
func truthy(v json.RawMessage) bool {
	s := strings.TrimSpace(string(v))
	switch s {
	case "", "null", "false", "0", "-0", `""`:
		return false
	}
	var f float64
	if json.Unmarshal(v, &f) == nil {
		return f != 0
	}
	return true
}

// oneLine shortens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
