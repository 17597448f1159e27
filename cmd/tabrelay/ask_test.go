package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/config"
)

// startModelServer is startTestServer with the scripted model server as the configured model
// (through the same environment variables a user sets).
func startModelServer(t *testing.T, replies ...llmtest.Reply) *config.Server {
	t.Helper()
	oa := llmtest.NewOpenAI(t, replies...)
	f, _, _ := startTestServerEnv(t, map[string]string{
		llm.EnvProvider: "openai", llm.EnvModel: "test-model", llm.EnvBaseURL: oa.URL, llm.EnvAPIKey: "test-key",
	})
	return f
}

// conversationReplies: a question with choices, then (only when the answer came back as
// "Work") a hand-over, then (only after Continue) the answer.
func conversationReplies() []llmtest.Reply {
	last := func(r llmtest.Request) string {
		res := r.ToolResults()
		if len(res) == 0 {
			return ""
		}
		return res[len(res)-1].Text
	}
	return []llmtest.Reply{
		llmtest.ToolCall("ask_user", `{"question":"Which address?","choices":["Home","Work"]}`),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			if last(r) != "the user answered: Work" {
				return llmtest.ToolCall("fail", `{"reason":"wrong answer: `+last(r)+`"}`)
			}
			return llmtest.ToolCall("hand_over", `{"instruction":"Sign in to the shop, then press Continue."}`)
		}),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			if !strings.Contains(last(r), "pressed Continue") {
				return llmtest.ToolCall("fail", `{"reason":"no Continue"}`)
			}
			return llmtest.ToolCall("finish", `{"answer":"Sent to Work."}`)
		}),
	}
}

// TestRunAsksOnTheTerminal: `tabrelay run` asks the agent's question on the terminal (a
// choice's number answers it) and waits for Enter after a hand-over.
func TestRunAsksOnTheTerminal(t *testing.T) {
	f := startModelServer(t, conversationReplies()...)
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := runRun(ctx, []string{"--addr", f.Addr, "--home", f.Home, "send the parcel"},
		stdio{in: strings.NewReader("\n2\n\n"), out: &out, err: &errOut, terminal: true})
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, out.String(), errOut.String())
	}
	got := out.String()
	for _, want := range []string{"? the agent asks: Which address?", "  1) Home", "  2) Work", "(an empty answer is not sent", "! your turn in the tab: Sign in to the shop", "press Enter when done", "Sent to Work."} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q:\n%s", want, got)
		}
	}
}

// TestRunWaitsForAnAPIAnswer: without a terminal, `tabrelay run` prints how to answer through
// the API and waits; answers sent there let the task go on.
func TestRunWaitsForAnAPIAnswer(t *testing.T) {
	f := startModelServer(t, conversationReplies()...)
	var out, errOut lockedBuffer
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runRun(ctx, []string{"--addr", f.Addr, "--home", f.Home, "send the parcel"},
			stdio{in: strings.NewReader(""), out: &out, err: &errOut})
	}()
	c := newClient(&config.Client{Common: f.Common})
	waitFor := func(s task.Status) task.Task {
		t.Helper()
		for {
			var list api.TaskList
			if err := c.getJSON(ctx, "/tasks", nil, &list); err != nil {
				t.Fatal(err)
			}
			if len(list.Tasks) > 0 && list.Tasks[0].Status == s {
				return *list.Tasks[0]
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the task never reached %s:\n%s", s, out.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	tk := waitFor(task.StatusWaitingInput)
	if err := c.postJSON(ctx, "/tasks/"+tk.ID+"/answer", map[string]any{"questionId": "q1", "answer": "Work"}, nil); err != nil {
		t.Fatal(err)
	}
	tk = waitFor(task.StatusWaitingUser)
	var cont api.Continued
	if err := c.postJSON(ctx, "/tasks/"+tk.ID+"/continue", map[string]any{"handoverId": "h1"}, &cont); err != nil || cont.HandoverID != "h1" {
		t.Fatalf("continue: %v %+v", err, cont)
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{"POST /api/tasks/" + tk.ID + `/answer {"questionId":"q1","answer":"…"}`, "POST /api/tasks/" + tk.ID + `/continue {"handoverId":"h1"}`, "Sent to Work."} {
		if !strings.Contains(got, want) {
			t.Errorf("the output lacks %q:\n%s", want, got)
		}
	}
	// a task that only asked and waited did nothing a skill can replay
	for _, c := range []struct{ id, want string }{
		{tk.ID, "did nothing on a page that a skill can replay"},
		{"nosuchtask", `task "nosuchtask" not found`},
	} {
		if _, _, err := runCmd(t, runSkills, f, "save-task", c.id); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("skills save-task %s: %v, want %q", c.id, err, c.want)
		}
	}
}

// TestRunNewConversation: a second `tabrelay run` in the tab sees the first request; with
// --new-conversation it does not.
func TestRunNewConversation(t *testing.T) {
	remembers := llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(r.Messages[0].Text, "the user asked: find the kettle") {
			return llmtest.ToolCall("finish", `{"answer":"remembered"}`)
		}
		return llmtest.ToolCall("finish", `{"answer":"fresh"}`)
	})
	f := startModelServer(t, llmtest.ToolCall("finish", `{"answer":"found"}`), remembers, remembers)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"find the kettle"}, "found"},
		{[]string{"open it"}, "remembered"},
		{[]string{"--new-conversation", "open it"}, "fresh"},
	} {
		out, errOut, err := runCmd(t, runRun, f, c.args...)
		if err != nil || !strings.Contains(out, "\n"+c.want+"\n") {
			t.Errorf("run %q: %v\n%s\n%s", c.args, err, out, errOut)
		}
	}
}
