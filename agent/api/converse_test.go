package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/app"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// startWithModel is start with the scripted model server's replies as the agent's model.
func startWithModel(t *testing.T, replies ...llmtest.Reply) (*app.App, string, *relaytest.Extension) {
	t.Helper()
	t.Setenv("TABRELAY_LLM_PROVIDER", "")
	model := llmtest.NewOpenAI(t, replies...)
	home := t.TempDir()
	store, err := secret.NewStore(home)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := app.Start(ctx, app.Config{
		Relay: relay.Options{Addr: "127.0.0.1:0", Secret: store},
		Agent: api.Options{Home: home, Model: model.Model(t), ModelName: "scripted"},
		Voice: voice.Options{Getenv: func(string) string { return "" }},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ext, err := relaytest.Dial(ctx, srv.Addr(), srv.Token(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)
	return srv, srv.Token(), ext
}

// waitStatus polls GET /api/tasks/{id} until the task has status want (failing after 15 s).
func waitStatus(t *testing.T, base, tok, id string, want task.Status) task.Task {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var tk task.Task
	for time.Now().Before(deadline) {
		a := call(t, base, tok, "GET", "/api/tasks/"+id, "", nil)
		if a.status != 200 || json.Unmarshal(a.body, &tk) != nil {
			t.Fatalf("GET task: HTTP %d %s", a.status, a.body)
		}
		if tk.Status == want {
			return tk
		}
		if tk.Status.Done() {
			t.Fatalf("task ended %s (%s) before reaching %s", tk.Status, tk.Error, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task still %s, never %s", tk.Status, want)
	return tk
}

// TestQuestionAndHandoverRoutes: a task's question is answered and its hand-over continued
// over HTTP, with 400 for an empty answer and 409 for a question or hand-over that is not
// waiting; a new conversation clears the tab's; a task that only answered is not a skill.
func TestQuestionAndHandoverRoutes(t *testing.T) {
	srv, tok, ext := startWithModel(t,
		llmtest.ToolCall("ask_user", `{"question":"Which address?","choices":["Home","Work"]}`),
		llmtest.ToolCall("hand_over", `{"instruction":"Sign in, then press Continue."}`),
		llmtest.ToolCall("finish", `{"answer":"Sent to Work."}`),
	)
	base := srv.HTTPURL()
	const tab = "AAAA1111BBBB2222CCCC3333DDDD4444"
	if err := ext.Share(tab, "https://one.test/", "One"); err != nil {
		t.Fatal(err)
	}
	const js = "application/json"
	a := call(t, base, tok, "POST", "/api/tasks", js, []byte(`{"goal":"send the parcel","tab":"`+tab+`"}`))
	var started api.TaskStarted
	if a.status != 202 || json.Unmarshal(a.body, &started) != nil {
		t.Fatalf("start: HTTP %d %s", a.status, a.body)
	}
	id := started.ID
	tk := waitStatus(t, base, tok, id, task.StatusWaitingInput)
	if tk.Question == nil || tk.Question.ID != "q1" || strings.Join(tk.Question.Choices, "|") != "Home|Work" || tk.Request != "send the parcel" {
		t.Fatalf("waiting task: question %+v request %q", tk.Question, tk.Request)
	}
	for _, c := range []struct {
		name, path, body string
		status           int
		has              string
	}{
		{"empty answer", "answer", `{"questionId":"q1","answer":"  "}`, 400, "empty answer"},
		{"unknown question", "answer", `{"questionId":"q7","answer":"Work"}`, 409, "not waiting"},
		{"answer unknown field", "answer", `{"question":"q1","answer":"Work"}`, 400, `unknown field "question"`},
		{"continue while asking", "continue", `{"handoverId":"h1"}`, 409, "not waiting"},
		{"answer unknown task", "../nosuchtask/answer", `{"questionId":"q1","answer":"Work"}`, 404, "nosuchtask"},
	} {
		path := "/api/tasks/" + id + "/" + c.path
		if strings.HasPrefix(c.path, "../") {
			path = "/api/tasks/" + strings.TrimPrefix(c.path, "../")
		}
		a := call(t, base, tok, "POST", path, js, []byte(c.body))
		if e := a.errorBody(t); a.status != c.status || !strings.Contains(e.Error, c.has) {
			t.Errorf("%s: HTTP %d %s; want %d with %q", c.name, a.status, a.body, c.status, c.has)
		}
	}
	a = call(t, base, tok, "POST", "/api/tasks/"+id+"/answer", js, []byte(`{"questionId":"q1","answer":"Work"}`))
	var ans api.Answered
	if a.status != 200 || json.Unmarshal(a.body, &ans) != nil || ans != (api.Answered{ID: id, QuestionID: "q1", Answer: "Work"}) {
		t.Fatalf("answer: HTTP %d %s", a.status, a.body)
	}
	tk = waitStatus(t, base, tok, id, task.StatusWaitingUser)
	if tk.Handover == nil || tk.Handover.ID != "h1" || tk.Question != nil {
		t.Fatalf("hand-over %+v question %+v", tk.Handover, tk.Question)
	}
	if a := call(t, base, tok, "POST", "/api/tasks/"+id+"/continue", js, []byte(`{"handoverId":"h2"}`)); a.status != 409 {
		t.Errorf("continue an unknown hand-over: HTTP %d %s", a.status, a.body)
	}
	a = call(t, base, tok, "POST", "/api/tasks/"+id+"/continue", js, []byte(`{"handoverId":"h1"}`))
	var cont api.Continued
	if a.status != 200 || json.Unmarshal(a.body, &cont) != nil || cont != (api.Continued{ID: id, HandoverID: "h1"}) {
		t.Fatalf("continue: HTTP %d %s", a.status, a.body)
	}
	tk = waitStatus(t, base, tok, id, task.StatusSucceeded)
	if tk.Answer != "Sent to Work." {
		t.Errorf("answer %q", tk.Answer)
	}
	if a := call(t, base, tok, "POST", "/api/tasks/"+id+"/answer", js, []byte(`{"questionId":"q1","answer":"Home"}`)); a.status != 409 {
		t.Errorf("answer after the end: HTTP %d %s", a.status, a.body)
	}
	if a := call(t, base, tok, "POST", "/api/tasks/"+id+"/skill", "", nil); a.status != 409 || !strings.Contains(a.errorBody(t).Error, "did nothing on a page") {
		t.Errorf("save a task that only asked as a skill: HTTP %d %s", a.status, a.body)
	}
	a = call(t, base, tok, "POST", "/api/conversation/new", js, []byte(`{"tab":"`+tab+`"}`))
	var nc api.NewConversation
	if a.status != 200 || json.Unmarshal(a.body, &nc) != nil || nc != (api.NewConversation{Tab: tab, Cleared: 1}) {
		t.Errorf("new conversation: HTTP %d %s", a.status, a.body)
	}
}
