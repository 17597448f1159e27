package task_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// TestStepsMovingANumberSayWhatItIs: a value each step moves (a slider's -1, -2, -3) changes in
// its numbers alone in every diff, as a clock does; the result of each step still says what it
// is now, never "page unchanged".
func TestStepsMovingANumberSayWhatItIs(t *testing.T) {
	const presses = 4
	var calls []llmtest.Reply
	for range presses {
		calls = append(calls, llmtest.ToolCall("press", `{"key":"ArrowLeft","ref":"e1"}`))
	}
	srv := llmtest.NewOpenAI(t, append(calls, llmtest.ToolCall("finish", `{"answer":"ok"}`))...)
	value := -1
	nodes := func() []*snapshot.Node {
		return []*snapshot.Node{E("slider", "handle", ref("e1")), pagetest.Text(fmt.Sprint(value))}
	}
	p := &page{nodes: nodes()}
	p.onAct = func(a actions.Action) {
		if _, ok := a.Params.(*actions.Press); ok {
			value--
			p.nodes = nodes()
		}
	}
	tk, err := newRunner(t, srv, p, nil).Run(context.Background(), "set the slider to -5", "tab1")
	if err != nil || tk.Status != task.StatusSucceeded {
		t.Fatalf("%v %+v", err, tk)
	}
	for i := 1; i <= presses; i++ {
		got := srv.Requests()[i].Last().Text
		if want := fmt.Sprint(-1 - i); strings.Contains(got, "page unchanged") || !strings.Contains(got, want) {
			t.Errorf("press %d's result does not say the value is %s now:\n%s", i, want, got)
		}
	}
}
