package task_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// TestReplyStopsAtFirstFailedCall: a reply whose first call fails runs none of the calls after
// it; each comes back to the model as not run, saying why, and the model's own text beside the
// calls is in the next request.
func TestReplyStopsAtFirstFailedCall(t *testing.T) {
	for _, p := range protocols {
		t.Run(p.name, func(t *testing.T) {
			srv := p.new(t,
				llmtest.ToolCalls(llmtest.Tool("type", `{"ref":"e2","text":"kettle"}`), llmtest.Tool("click", `{"ref":"e3"}`), llmtest.Tool("click", `{"ref":"e4"}`)).
					WithText("I'll search for a kettle, then open the cart."),
				llmtest.ToolCall("finish", `{"answer":"gave up"}`),
			)
			b := newShop()
			b.failRef = "e2"
			tk, err := newRunner(t, srv, b, nil).Run(context.Background(), "search kettle", "tab1")
			if err != nil || tk.Status != task.StatusSucceeded {
				t.Fatalf("%v %+v", err, tk)
			}
			if b.has("click") {
				t.Fatalf("a call after the failed one ran: %v", b.actions())
			}
			if len(tk.Steps) != 2 || tk.Steps[0].Status != task.StepError {
				t.Fatalf("steps %+v: want the failed type, then finish", tk.Steps)
			}
			req := srv.Requests()[1]
			res := req.ToolResults()
			if len(res) != 3 {
				t.Fatalf("%d tool results, want 3: %+v", len(res), res)
			}
			if !strings.Contains(res[0].Text, "element is covered") {
				t.Errorf("the failed call's result: %q", res[0].Text)
			}
			for _, r := range res[1:] {
				// the browser's error may quote the page: it stays inside the page block
				if !strings.HasPrefix(r.Text, "not run: the call before it (type) failed:\n<page_content>\ntype failed: element is covered") {
					t.Errorf("a call after the failed one came back as %q", r.Text)
				}
			}
			said := false
			for _, m := range req.Messages {
				said = said || m.Role == "assistant" && strings.Contains(m.Text, "I'll search for a kettle, then open the cart.")
			}
			if !said {
				t.Errorf("the model's text is not in the next request: %+v", req.Messages)
			}
		})
	}
}

// TestApprovedAndDeclinedResults: a step the person approved says so in its result, as the
// person was asked, and stops the rest of its reply; a declined one says nothing was done.
func TestApprovedAndDeclinedResults(t *testing.T) {
	for _, p := range protocols {
		for _, approve := range []bool{true, false} {
			t.Run(p.name+"/"+map[bool]string{true: "approve", false: "decline"}[approve], func(t *testing.T) {
				srv := p.new(t,
					llmtest.ToolCalls(llmtest.Tool("type", `{"ref":"e2","text":"kettle"}`), llmtest.Tool("click", `{"ref":"e3"}`)),
					llmtest.ToolCalls(llmtest.Tool("click", `{"ref":"e11"}`), llmtest.Tool("click", `{"ref":"e20"}`)),
					llmtest.ToolCall("finish", `{"answer":"ordered"}`),
				)
				b := newShop()
				r := newRunner(t, srv, b, nil)
				events, unsub := r.Subscribe("", 512)
				defer unsub()
				tk, err := r.Start(context.Background(), "buy a kettle", "tab1")
				if err != nil {
					t.Fatal(err)
				}
				conf := waitConfirmation(t, events)
				asked := conf.Step.Confirmation.Prompt
				if err := r.Confirm(tk.ID, conf.Step.ID, approve); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				done, err := r.Wait(ctx, tk.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !approve {
					want := "declined by the person, nothing was done: " + asked
					if done.Status != task.StatusCancelled || !strings.HasPrefix(done.Error, want) {
						t.Fatalf("declined: %s %q, want it to start %q", done.Status, done.Error, want)
					}
					if last := done.Steps[len(done.Steps)-1]; !strings.HasPrefix(last.Error, want) {
						t.Errorf("declined step's record: %q", last.Error)
					}
					return
				}
				if done.Status != task.StatusSucceeded || b.has("click e20") {
					t.Fatalf("approved: %s %q, actions %v", done.Status, done.Error, b.actions())
				}
				res := srv.Requests()[2].ToolResults()
				if len(res) < 2 {
					t.Fatalf("tool results %+v", res)
				}
				got := res[len(res)-2].Text
				if !strings.HasPrefix(got, "approved by the person, then done:\n<page_content>\n"+asked+"\n</page_content>") {
					t.Errorf("the approved step's result is %q; want it to name %q", got, asked)
				}
				if !strings.Contains(asked, `click button "Buy now"`) {
					t.Errorf("the person was asked %q", asked)
				}
				if next := res[len(res)-1].Text; !strings.HasPrefix(next, "not run: the call before it (click) waited for the person's approval") {
					t.Errorf("the call after the approved one: %q", next)
				}
			})
		}
	}
}
