package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/task"
)

// fakeClient plays a server whose tasks end as scripted.
type fakeClient struct {
	// final is the task each request becomes (by request text).
	final map[string]*task.Task
	// value is what the page check evaluates to.
	value     string
	confirmed []bool
	navigated []string
	cur       *task.Task
	asking    bool
	// conversations counts the new conversations started (one per task)
	conversations int
}

func (f *fakeClient) NewConversation(context.Context, string) error {
	f.conversations++
	return nil
}
func (f *fakeClient) Navigate(_ context.Context, _, url string) error {
	f.navigated = append(f.navigated, url)
	return nil
}
func (f *fakeClient) Command(_ context.Context, _, text string) (string, error) {
	f.cur = f.final[text]
	f.asking = f.cur.Steps != nil && f.cur.Steps[len(f.cur.Steps)-1].Confirmation != nil
	return "t1", nil
}
func (f *fakeClient) Task(context.Context, string) (*task.Task, error) {
	if f.asking {
		tk := *f.cur
		tk.Status = task.StatusWaitingConfirmation
		return &tk, nil
	}
	return f.cur, nil
}
func (f *fakeClient) Confirm(_ context.Context, _, _ string, approve bool) error {
	f.confirmed = append(f.confirmed, approve)
	f.asking = false
	return nil
}
func (f *fakeClient) Cancel(context.Context, string) error { return nil }
func (f *fakeClient) Evaluate(context.Context, string, string) (json.RawMessage, error) {
	return json.RawMessage(f.value), nil
}

func steps(n int) []task.Step { return make([]task.Step, n) }

func TestRunOne(t *testing.T) {
	ok := &task.Task{Status: task.StatusSucceeded, Answer: "The Steel kettle costs 25 EUR", Steps: steps(3), Model: "openai/x",
		Usage: task.Usage{LLMCalls: 3, PromptTokens: 900, CompletionTokens: 40}}
	failed := &task.Task{Status: task.StatusFailed, Error: "no teapots", Steps: steps(1)}
	long := &task.Task{Status: task.StatusSucceeded, Steps: steps(9)}
	asking := &task.Task{Status: task.StatusWaitingInput, Question: &task.Question{ID: "q1", Text: "Which address?", Choices: []string{"Home", "Work"}}, Steps: steps(1)}
	handing := &task.Task{Status: task.StatusWaitingUser, Handover: &task.Handover{ID: "h1", Instruction: "Sign in, then press Continue."}, Steps: steps(1)}
	ask := &task.Task{Status: task.StatusCancelled, Steps: []task.Step{{ID: "s1", Confirmation: &task.Confirmation{Reason: "purchase"}}}}
	tests := []struct {
		name    string
		tk      Task
		final   *task.Task
		value   string
		approve bool
		success bool
		reason  string
	}{
		{"check and answer hold", Task{Check: "x", Answer: "steel kettle"}, ok, "true", false, true, ""},
		{"answer regexp", Task{Answer: "/\\d+ EUR/"}, ok, "true", false, true, ""},
		{"answer differs", Task{Answer: "glass"}, ok, "true", false, false, `the answer "The Steel kettle costs 25 EUR" does not match glass`},
		{"check falsy", Task{Check: "document.title"}, ok, `""`, false, false, `the check document.title is ""`},
		{"task failed", Task{Check: "x"}, failed, "true", false, false, "the task ended failed: no teapots"},
		{"step limit", Task{Check: "x", MaxSteps: 4}, long, "true", false, false, "over the step limit: 9 steps, the task allows 4"},
		{"confirm declined", Task{Confirm: true, CheckDeclined: "x"}, ask, "true", false, true, ""},
		{"a question nobody answers", Task{Check: "x"}, asking, "true", false, false, `the agent asked "Which address?"; a task of the suite must say all the agent needs`},
		{"a hand-over nobody takes", Task{Check: "x"}, handing, "true", false, false, `the agent handed the tab over to the person ("Sign in, then press Continue.")`},
		{"confirm never asked", Task{Confirm: true}, ok, "true", false, false, "the agent did not stop to ask for confirmation (task succeeded)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.tk.Name, tc.tk.Start, tc.tk.Request = "t", "/p.html", "do it"
			if tc.tk.MaxSteps == 0 {
				tc.tk.MaxSteps = DefaultMaxSteps
			}
			f := &fakeClient{final: map[string]*task.Task{"do it": tc.final}, value: tc.value}
			rep, err := Run(context.Background(), f, "s", []Task{tc.tk}, Options{Site: "http://h:1/", Approve: tc.approve, Poll: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Results[0]
			if r.Success != tc.success || r.Reason != tc.reason {
				t.Errorf("success %v reason %q; want %v %q", r.Success, r.Reason, tc.success, tc.reason)
			}
			if f.navigated[0] != "http://h:1/p.html" || f.conversations != 1 || r.Steps != len(tc.final.Steps) || r.ModelCalls != tc.final.Usage.LLMCalls || r.TokensIn != tc.final.Usage.PromptTokens {
				t.Errorf("navigated %v, %d new conversations; result %+v", f.navigated, f.conversations, r)
			}
			if tc.tk.Confirm && tc.final == ask && (len(f.confirmed) != 1 || f.confirmed[0] != tc.approve || !r.Asked) {
				t.Errorf("confirmations answered %v, asked %v", f.confirmed, r.Asked)
			}
		})
	}
}

func TestLoadSuiteErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.yaml", "start: /x.html\nrequest: click ok\ncheck: window.ok\n")
	write("b.yaml", "start: /x.html\nrequest: click ok\n")
	write("c.yaml", "start: /x.html\nrequest: hi\nanswr: yes\n")
	write("d.yaml", "start: /x.html\nrequest: hi\nanswer: /(/\n")
	_, err := LoadSuite(dir)
	for _, want := range []string{"b.yaml: no success check", `c.yaml: not a task`, `[3:1] unknown field "answr"`, "d.yaml: answer /(/ is not a valid regexp"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	tasks, err := LoadSuite(filepath.Join(dir, "a.yaml"))
	if err != nil || len(tasks) != 1 || tasks[0].Name != "a" || tasks[0].MaxSteps != DefaultMaxSteps {
		t.Errorf("one file: %+v %v", tasks, err)
	}
}

func TestReportMarkdownAndCompare(t *testing.T) {
	a := &Report{Results: []Result{{Name: "x", Success: true, Steps: 2, ModelCalls: 1, TokensIn: 100, WallMS: 50}, {Name: "y", Reason: "the check a|b is false"}}}
	a.summarize()
	b := &Report{Results: []Result{{Name: "x", Success: true, Steps: 1, WallMS: 10}, {Name: "y", Success: true, Steps: 3, ModelCalls: 2, TokensIn: 300, TokensOut: 9, WallMS: 70}}}
	b.summarize()
	var md, cmp bytes.Buffer
	a.Markdown(&md)
	Compare(&cmp, a, b)
	for _, want := range []string{"| x | ✓ | 2 | 1 | 100 | 0 | 50 |  |", `| y | ✗ | 0 | 0 | 0 | 0 | 0 | the check a\|b is false |`, "**1/2 succeeded** (50%; 0 with no model call)"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}
	for _, want := range []string{"| x | ✓ | ✓ | -1 | -1 | -100 | +0 | -40 |", `| y | ✗ the check a\|b is false | ✓ | +3 | +2 | +300 | +9 | +70 |`, "**succeeded 1/2 → 2/2**"} {
		if !strings.Contains(cmp.String(), want) {
			t.Errorf("compare lacks %q:\n%s", want, cmp.String())
		}
	}
}

// TestShippedSuite loads the suite shipped in e2e/evalsuite: every file is a valid task, there
// are at least 25, and every kind the issue names is covered.
func TestShippedSuite(t *testing.T) {
	tasks, err := LoadSuite("../../e2e/evalsuite")
	if err != nil {
		t.Fatal(err)
	}
	tags := map[string]int{}
	for _, tk := range tasks {
		for _, g := range tk.Tags {
			tags[g]++
		}
		if _, err := ResolveStart("http://127.0.0.1:1", tk.Start); err != nil {
			t.Errorf("%s: %v", tk.Name, err)
		}
		needsModel := !slices.Contains(tk.Tags, "fastpath") && !slices.Contains(tk.Tags, "skills")
		if needsModel && len(tk.Reference) == 0 {
			t.Errorf("%s needs a model but has no reference solution (e2e's TestEvalShippedSuite plays it)", tk.Name)
		}
	}
	if len(tasks) < 25 {
		t.Errorf("%d tasks, want at least 25", len(tasks))
	}
	for _, g := range []string{"fastpath", "forms", "search", "multipage", "frames", "dialogs", "extraction", "confirmation", "skills"} {
		if tags[g] == 0 {
			t.Errorf("no task tagged %s (tags: %v)", g, tags)
		}
	}
}
