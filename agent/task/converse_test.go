package task_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/agent/task/taskstore"
)

// waitEvent returns the first event of type typ from events (failing after 10 s).
func waitEvent(t *testing.T, events <-chan task.Event, typ task.EventType) task.Event {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Type == typ {
				return e
			}
		case <-timeout:
			t.Fatalf("no %s event", typ)
			return task.Event{}
		}
	}
}

func TestAskUserAnswered(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("ask_user", `{"question":"Which address?","choices":["Home","Work"]}`),
		llmtest.ToolCall("finish", `{"answer":"Delivering to Work."}`),
	)
	r := newRunner(t, srv, newShop(), nil)
	events, unsub := r.Subscribe("", 512)
	defer unsub()
	tk, err := r.Start(context.Background(), "Deliver the kettle", "")
	if err != nil {
		t.Fatal(err)
	}
	e := waitEvent(t, events, task.EventQuestion)
	if e.Question == nil || e.Question.ID != "q1" || e.Question.Text != "Which address?" || strings.Join(e.Question.Choices, ",") != "Home,Work" {
		t.Fatalf("question event %+v", e.Question)
	}
	cur, _ := r.Get(context.Background(), tk.ID)
	if cur.Status != task.StatusWaitingInput || cur.Question == nil || cur.Question.Deadline.Sub(cur.Question.AskedAt) != task.DefaultAskTimeout {
		t.Fatalf("waiting task %s %+v", cur.Status, cur.Question)
	}
	for _, c := range []struct {
		name, q, a string
		want       error
	}{
		{"empty answer", "q1", "  ", task.ErrEmptyAnswer},
		{"unknown question", "q9", "Work", task.ErrNotWaiting},
	} {
		if err := r.Answer(tk.ID, c.q, c.a); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if err := r.Answer("nope", "q1", "Work"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("unknown task: %v", err)
	}
	if err := r.Answer(tk.ID, "q1", "Work"); err != nil {
		t.Fatal(err)
	}
	if err := r.Answer(tk.ID, "q1", "Home"); !errors.Is(err, task.ErrNotWaiting) {
		t.Errorf("second answer: %v", err)
	}
	done, err := r.Wait(context.Background(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != task.StatusSucceeded || done.Question != nil {
		t.Fatalf("task %s %+v", done.Status, done.Question)
	}
	res := srv.LastRequest().ToolResults()
	if got := res[len(res)-1].Text; got != "the user answered: Work" {
		t.Errorf("the model got %q", got)
	}
	if s := srv.Requests()[0].System; !strings.Contains(s, "hand_over") || !strings.Contains(s, "Never type credentials") {
		t.Errorf("the system prompt does not say to hand over sign-ins")
	}
}

func TestAskUserTimesOut(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("ask_user", `{"question":"Which account?"}`),
		llmtest.ToolCall("fail", `{"reason":"I needed to know which account."}`),
	)
	r := newRunner(t, srv, newShop(), func(o *task.Options) { o.AskTimeout = 50 * time.Millisecond })
	tk, err := r.Run(context.Background(), "Pay the bill", "")
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != task.StatusFailed || tk.Question != nil {
		t.Fatalf("task %s %q", tk.Status, tk.Error)
	}
	res := srv.LastRequest().ToolResults()
	if got := res[len(res)-1].Text; !strings.Contains(got, "nobody answered within 50ms") || !strings.Contains(got, "call fail") {
		t.Errorf("the model got %q", got)
	}
}

func TestHandOverContinues(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("hand_over", `{"instruction":"Sign in to the shop in this tab, then press Continue."}`),
		llmtest.ToolCall("finish", `{"answer":"Signed in."}`),
	)
	b := newShop()
	r := newRunner(t, srv, b, nil)
	events, unsub := r.Subscribe("", 512)
	defer unsub()
	tk, err := r.Start(context.Background(), "Check my orders", "")
	if err != nil {
		t.Fatal(err)
	}
	e := waitEvent(t, events, task.EventHandover)
	if e.Handover == nil || e.Handover.ID != "h1" || !strings.HasPrefix(e.Handover.Instruction, "Sign in") {
		t.Fatalf("hand-over event %+v", e.Handover)
	}
	if cur, _ := r.Get(context.Background(), tk.ID); cur.Status != task.StatusWaitingUser || cur.Handover == nil {
		t.Fatalf("waiting task %s %+v", cur.Status, cur.Handover)
	}
	if err := r.Continue(tk.ID, "h1"); err != nil {
		t.Fatal(err)
	}
	done, _ := r.Wait(context.Background(), tk.ID)
	if done.Status != task.StatusSucceeded || done.Handover != nil {
		t.Fatalf("task %s", done.Status)
	}
	if err := r.Continue(tk.ID, "h1"); !errors.Is(err, task.ErrNotWaiting) {
		t.Errorf("late continue: %v", err)
	}
	res := srv.LastRequest().ToolResults()
	if got := res[len(res)-1].Text; !strings.Contains(got, "pressed Continue") || !strings.Contains(got, "[ref=e2]") {
		t.Errorf("no fresh page after the hand-over: %q", got)
	}
}

func TestConversationPerTab(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("ask_user", `{"question":"Which colour?","choices":["Blue","Red"]}`),
		llmtest.ToolCall("finish", `{"answer":"The blue kettle costs 39 EUR."}`),
		llmtest.ToolCall("finish", `{"answer":"Added."}`),
		llmtest.ToolCall("finish", `{"answer":"Fresh."}`),
	)
	r := newRunner(t, srv, newShop(), nil)
	events, unsub := r.Subscribe("", 512)
	defer unsub()
	first, err := r.Start(context.Background(), "Find a kettle", "t1")
	if err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, task.EventQuestion)
	if err := r.Answer(first.ID, "q1", "Blue"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Wait(context.Background(), first.ID); err != nil {
		t.Fatal(err)
	}
	second, err := r.Start(context.Background(), "Add it to the cart", "t1")
	if err != nil {
		t.Fatal(err)
	}
	done, _ := r.Wait(context.Background(), second.ID)
	if done.Conversation == "" || done.Conversation != first.Conversation || done.Request != "Add it to the cart" {
		t.Fatalf("conversation %q vs %q, request %q", done.Conversation, first.Conversation, done.Request)
	}
	msg := srv.Requests()[2].Messages[0].Text
	for _, want := range []string{"Earlier in this conversation", "the user asked: Find a kettle", "you asked: Which colour?; the user answered: Blue", "The blue kettle costs 39 EUR.", "Goal: Add it to the cart"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the follow-up's first message lacks %q:\n%s", want, msg)
		}
	}
	if n := r.NewConversation("t1"); n != 2 {
		t.Errorf("new conversation cleared %d turns, want 2", n)
	}
	third, _ := r.Start(context.Background(), "What is on this page?", "t1")
	done, _ = r.Wait(context.Background(), third.ID)
	if done.Conversation == first.Conversation {
		t.Errorf("the new conversation kept the old id")
	}
	if msg := srv.Requests()[3].Messages[0].Text; strings.Contains(msg, "Earlier in this conversation") {
		t.Errorf("a new conversation still sees the old one:\n%s", msg)
	}
}

func TestConversationBudgetDropsOldest(t *testing.T) {
	var replies []llmtest.Reply
	for range 4 {
		replies = append(replies, llmtest.ToolCall("finish", `{"answer":"`+strings.Repeat("x", 300)+`"}`))
	}
	srv := llmtest.NewOpenAI(t, replies...)
	r := newRunner(t, srv, newShop(), func(o *task.Options) { o.ConversationTokens = 200 })
	for _, goal := range []string{"first request", "second request", "third request", "fourth request"} {
		tk, err := r.Start(context.Background(), goal, "t1")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = r.Wait(context.Background(), tk.ID)
	}
	msg := srv.LastRequest().Messages[0].Text
	if !strings.Contains(msg, "third request") || strings.Contains(msg, "first request") || !strings.Contains(msg, "older turns left out") {
		t.Errorf("budget: the newest turns should stay, the oldest go:\n%s", msg)
	}
}

// TestConversationSurvivesRestart: a new runner on the same task store (the server restarted)
// reads the tab's conversation back for the next request there; New conversation still clears
// it.
func TestConversationSurvivesRestart(t *testing.T) {
	store, err := taskstore.Open(context.Background(), filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("finish", `{"answer":"The blue kettle costs 39 EUR."}`),
		llmtest.ToolCall("finish", `{"answer":"Added."}`),
		llmtest.ToolCall("finish", `{"answer":"Fresh."}`),
	)
	first := newRunner(t, srv, newShop(), func(o *task.Options) { o.Store = store })
	tk, err := first.Start(context.Background(), "Find a kettle", "t1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Wait(context.Background(), tk.ID); err != nil {
		t.Fatal(err)
	}
	first.Close()
	second := newRunner(t, srv, newShop(), func(o *task.Options) { o.Store = store })
	tk2, err := second.Start(context.Background(), "Add it to the cart", "t1")
	if err != nil {
		t.Fatal(err)
	}
	done, _ := second.Wait(context.Background(), tk2.ID)
	if done.Conversation != tk.Conversation {
		t.Errorf("after the restart the tab's conversation is %q, want %q", done.Conversation, tk.Conversation)
	}
	if msg := srv.Requests()[1].Messages[0].Text; !strings.Contains(msg, "the user asked: Find a kettle") || !strings.Contains(msg, "The blue kettle costs 39 EUR.") {
		t.Errorf("the follow-up after a restart lacks the earlier turn:\n%s", msg)
	}
	second.NewConversation("t1")
	tk3, _ := second.Start(context.Background(), "What now?", "t1")
	done, _ = second.Wait(context.Background(), tk3.ID)
	if done.Conversation == tk.Conversation || strings.Contains(srv.LastRequest().Messages[0].Text, "Earlier in this conversation") {
		t.Errorf("New conversation after a restart kept the stored one")
	}
}

// TestWaitingForTheUserStopsTheClock: the task's time limit stands still while it waits for an
// answer, so a user who takes longer than the whole limit to answer does not end the task.
func TestWaitingForTheUserStopsTheClock(t *testing.T) {
	const limit = 300 * time.Millisecond
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("ask_user", `{"question":"Which address?"}`),
		llmtest.ToolCall("finish", `{"answer":"ok"}`),
	)
	r := newRunner(t, srv, newShop(), func(o *task.Options) { o.Timeout = limit })
	events, unsub := r.Subscribe("", 64)
	defer unsub()
	tk, err := r.Start(context.Background(), "Deliver it", "")
	if err != nil {
		t.Fatal(err)
	}
	waitEvent(t, events, task.EventQuestion)
	<-time.After(3 * limit) // the user takes their time: longer than the task's whole limit
	if err := r.Answer(tk.ID, "q1", "Home"); err != nil {
		t.Fatalf("the task stopped waiting: %v", err)
	}
	done, _ := r.Wait(context.Background(), tk.ID)
	if done.Status != task.StatusSucceeded {
		t.Fatalf("task %s: %s", done.Status, done.Error)
	}
}
