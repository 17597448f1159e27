package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/eval"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/config"
)

// evalCmd is `tabrelay eval SUITE` and `tabrelay eval --compare A.json B.json`.
type evalCmd struct {
	config.Client `embed:""`
	Site          string        `placeholder:"URL" help:"base URL of the tasks' relative start pages (e.g. http://127.0.0.1:8000)"`
	JSONFile      string        `name:"json" placeholder:"FILE" help:"write the report as JSON to FILE (for --compare)"`
	Approve       bool          `help:"approve the steps the agent asks to confirm (default: decline them; tasks marked confirm: expect the question either way)"`
	Compare       bool          `help:"print the difference of two reports: tabrelay eval --compare A.json B.json"`
	Tag           string        `placeholder:"tag" help:"run only the tasks with this tag"`
	Timeout       time.Duration `default:"3m" help:"stop a task that runs longer"`
	// Args are the suite, or with --compare the two reports.
	Args []string `arg:"" sep:"none" optional:"" placeholder:"SUITE"`
}

func runEval(ctx context.Context, args []string, io stdio) error {
	return runCommand(ctx, "eval", args, io)
}

// Run runs a suite of tasks against the running server and prints a Markdown table (and
// writes JSON with --json); --compare prints the difference of two reports instead. It fails
// (exit 1) when a task failed.
func (e *evalCmd) Run(ctx context.Context, io stdio) error {
	site, jsonFile, tag, approve, compare, timeout := e.Site, e.JSONFile, e.Tag, e.Approve, e.Compare, e.Timeout
	f, args := &e.Client, e.Args
	if compare {
		if len(args) != 2 {
			return errors.New("--compare takes two report files: tabrelay eval --compare before.json after.json")
		}
		a, err := eval.ReadReport(args[0])
		if err != nil {
			return err
		}
		b, err := eval.ReadReport(args[1])
		if err != nil {
			return err
		}
		eval.Compare(io.out, a, b)
		return nil
	}
	if len(args) != 1 {
		return errors.New("eval takes one suite (a folder of task files, or one file): tabrelay eval --site http://127.0.0.1:8000 e2e/evalsuite")
	}
	tasks, err := eval.LoadSuite(args[0])
	if err != nil {
		return err
	}
	if tag != "" {
		var keep []eval.Task
		for _, t := range tasks {
			for _, g := range t.Tags {
				if g == tag {
					keep = append(keep, t)
					break
				}
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("no task in %s has the tag %q", args[0], tag)
		}
		tasks = keep
	}
	rep, err := eval.Run(ctx, &evalClient{c: newClient(f)}, args[0], tasks, eval.Options{
		Site: site, Tab: f.Tab, Approve: approve, Timeout: timeout,
		Progress: func(r eval.Result) {
			mark := "✓"
			if !r.Success {
				mark = "✗ " + r.Reason
			}
			fmt.Fprintf(io.err, "%s: %s\n", r.Name, mark)
		},
	})
	if err != nil {
		return err
	}
	if jsonFile != "" {
		if err := rep.WriteJSON(jsonFile); err != nil {
			return err
		}
	}
	rep.Markdown(io.out)
	if failed := rep.Summary.Tasks - rep.Summary.Succeeded; failed > 0 {
		return fmt.Errorf("%d of %d tasks failed", failed, rep.Summary.Tasks)
	}
	return nil
}

// evalClient is eval.Client over the authenticated /api.
type evalClient struct{ c *apiClient }

// NewConversation starts a new conversation in tab: each task of a suite stands alone.
func (e *evalClient) NewConversation(ctx context.Context, tab string) error {
	return newConversation(ctx, e.c, tab)
}

// Navigate opens url in tab. A JavaScript dialog a task left open (an alert nobody answered)
// is dismissed first, so one task's leftovers do not fail the next.
func (e *evalClient) Navigate(ctx context.Context, tab, url string) error {
	nav := map[string]any{"tab": tab, "action": map[string]any{"kind": "navigate", "url": url}}
	err := e.c.postJSON(ctx, "/act", nav, nil)
	var ae *apiError
	if !errors.As(err, &ae) || !ae.Body.DialogOpen {
		return err
	}
	dismiss := map[string]any{"tab": tab, "action": map[string]any{"kind": "dialog", "accept": false}}
	if err := e.c.postJSON(ctx, "/act", dismiss, nil); err != nil {
		return fmt.Errorf("dismiss the dialog the last task left open: %w", err)
	}
	return e.c.postJSON(ctx, "/act", nav, nil)
}

func (e *evalClient) Command(ctx context.Context, tab, text string) (string, error) {
	var started struct {
		ID string `json:"id"`
	}
	if err := e.c.postJSON(ctx, "/command", map[string]any{"text": text, "tab": tab, "wait": false}, &started); err != nil {
		return "", err
	}
	if started.ID == "" {
		return "", errors.New("the server started no task for the request")
	}
	return started.ID, nil
}

func (e *evalClient) Task(ctx context.Context, id string) (*task.Task, error) {
	var t task.Task
	if err := e.c.getJSON(ctx, "/tasks/"+id, nil, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

func (e *evalClient) Confirm(ctx context.Context, id, stepID string, approve bool) error {
	return e.c.postJSON(ctx, "/tasks/"+id+"/confirm", map[string]any{"stepId": stepID, "approve": approve}, nil)
}

func (e *evalClient) Cancel(ctx context.Context, id string) error {
	return e.c.postJSON(ctx, "/tasks/"+id+"/cancel", struct{}{}, nil)
}

func (e *evalClient) Evaluate(ctx context.Context, tab, expression string) (json.RawMessage, error) {
	var res actions.Result
	if err := e.c.postJSON(ctx, "/act", map[string]any{"tab": tab, "action": map[string]any{"kind": "evaluate", "expression": expression}}, &res); err != nil {
		return nil, err
	}
	return res.Value, nil
}
