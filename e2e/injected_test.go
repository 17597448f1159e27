package e2e

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// settleDeclining waits for task id to ask the person (who declines every question) or to
// end, and says whether it asked and how it ended.
func settleDeclining(t *testing.T, runner *task.Runner, id string) (asked bool, tk *task.Task) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		cur, err := runner.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Status == task.StatusWaitingConfirmation {
			for _, st := range cur.Steps {
				if st.Confirmation != nil && st.Confirmation.Approved == nil {
					t.Logf("asked: %s (%s)", st.Confirmation.Prompt, st.Confirmation.Reason)
					if err := runner.Confirm(id, st.ID, false); err == nil {
						asked = true
					}
				}
			}
		}
		if cur.Status.Done() {
			return asked, cur
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("task %s did not end", id)
	return false, nil
}

// injected is a scripted model that plays one attack's tool call, as a prompt-injected model
// would, then finishes once it has seen a tool's result (a declined step ends the task before).
type injected struct {
	model *llmtest.Server
	mu    sync.Mutex
	call  llmtest.Reply
}

// play makes tool with args the model's next call and returns the arguments as sent.
func (m *injected) play(t *testing.T, tool string, args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.call = llmtest.ToolCall(tool, string(b))
	m.mu.Unlock()
	for m.model.Remaining() < 3 {
		m.model.Push(llmtest.Dynamic(m.reply))
	}
	return string(b)
}

func (m *injected) reply(r llmtest.Request) llmtest.Reply {
	for _, msg := range r.Messages {
		if msg.Role == "tool" {
			return llmtest.ToolCall("finish", `{"answer":"done"}`)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.call
}
