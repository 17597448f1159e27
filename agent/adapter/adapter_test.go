package adapter_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/adapter"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// TestAgentSafetyInChromium runs the agent (scripted model and fast path) over real Chromium
// through the action service: "Continue" in a form that says "Pay $500 now" waits for the
// user, whose "no" leaves the page unpaid and whose "yes" pays; a file: URL in any spelling is
// refused and the tab stays where it was.
func TestAgentSafetyInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Chromium (skipped with -short)")
	}
	ctx, cancel := context.WithTimeout(gate.With(context.Background(), gate.Request{Who: gate.Caller}), 120*time.Second)
	defer cancel()
	site, err := fixtures.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	b, err := snapshottest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	svc := actions.New(b.Client, actions.Options{Timeout: 20 * time.Second})
	defer svc.Close(context.Background())
	tab, err := b.NewTab(ctx, site.URL("/agent/pay.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Act(ctx, tab, actions.Do(actions.Wait{Expression: "location.protocol !== 'about:' && document.readyState === 'complete'"})); err != nil {
		t.Fatal(err)
	}
	paid := func() bool {
		t.Helper()
		r, err := svc.Act(ctx, tab, actions.Do(actions.Evaluate{Expression: "state.paid"}))
		if err != nil {
			t.Fatal(err)
		}
		return string(r.Value) == "true"
	}
	snap, err := svc.Snapshot(ctx, tab, snapshot.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`button "Continue" \[ref=(e\d+)\]`).FindStringSubmatch(snap.Text)
	if m == nil {
		t.Fatalf("no Continue button in\n%s", snap.Text)
	}
	// the model's find tool: the button's ref and line, once (no "matches" beside the message)
	found, err := adapter.New(svc).Act(ctx, tab, actions.Do(actions.Search{Text: "continue", Role: "button"}))
	if err != nil {
		t.Fatalf("search for the Continue button: %v", err)
	}
	if !strings.Contains(found.Text(), `button "Continue" [ref=`+m[1]+`]`) || found.Matches != nil {
		t.Fatalf("search for the Continue button: matches %v beside the message\n%s", found.Matches, found.Text())
	}
	args, _ := json.Marshal(map[string]string{"url": "\x01fi\tle:///etc/passwd"})
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("navigate", string(args)),
		llmtest.ToolCall("click", `{"ref":"`+m[1]+`"}`),
	)
	r := task.NewRunner(task.Options{Model: srv.Model(t), ModelName: "test", Browser: adapter.New(svc), Timeout: 60 * time.Second})
	defer r.Close()
	events, unsub := r.Subscribe("", 256)
	defer unsub()

	// answer waits for the task's confirmation, checks it, answers it and returns the task.
	answer := func(tk *task.Task, approve bool) *task.Task {
		t.Helper()
		for e := range events {
			if e.TaskID != tk.ID || e.Type != task.EventConfirmation {
				continue
			}
			c := e.Step.Confirmation
			if c.Reason != "purchase or payment" || !strings.Contains(c.Prompt, `click button "Continue"`) || !strings.Contains(c.Prompt, "Pay $500 now") {
				t.Errorf("confirmation %q: %q, want a payment reason quoting the page", c.Reason, c.Prompt)
			}
			if err := r.Confirm(tk.ID, e.Step.ID, approve); err != nil {
				t.Fatal(err)
			}
			break
		}
		done, err := r.Wait(ctx, tk.ID)
		if err != nil {
			t.Fatal(err)
		}
		return done
	}

	// the model: the file: URL is refused, then Continue waits for the user, who declines
	tk, err := r.Start(ctx, "renew my plan", tab)
	if err != nil {
		t.Fatal(err)
	}
	tk = answer(tk, false)
	if len(tk.Steps) != 2 || tk.Steps[0].Status != task.StepBlocked || !strings.Contains(tk.Steps[0].Error, "file: URLs are not allowed") {
		t.Fatalf("navigate step: %+v", tk.Steps)
	}
	if tk.Status != task.StatusCancelled || tk.Steps[1].Status != task.StepDeclined || paid() {
		t.Fatalf("declined payment: task %s, step %s, paid %v", tk.Status, tk.Steps[1].Status, paid())
	}
	if info, _ := svc.Tabs(ctx); len(info) == 0 || info[0].URL != site.URL("/agent/pay.html") {
		t.Fatalf("the tab moved: %+v", info)
	}

	// the fast path ("click continue") asks the same way; declined, then approved
	tk, err = r.Command(ctx, "click continue", tab)
	if err != nil {
		t.Fatal(err)
	}
	if tk = answer(tk, false); tk.Model != task.ModelFastPath || tk.Status != task.StatusCancelled || paid() {
		t.Fatalf("fast path declined: model %s, %s, paid %v", tk.Model, tk.Status, paid())
	}
	tk, err = r.Command(ctx, "click continue", tab)
	if err != nil {
		t.Fatal(err)
	}
	if tk = answer(tk, true); tk.Status != task.StatusSucceeded || !paid() {
		t.Fatalf("fast path approved: %s %q, paid %v", tk.Status, tk.Error, paid())
	}
}
