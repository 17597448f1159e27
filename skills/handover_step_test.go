package skills

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

const personStep = `---
name: add-by-hand
description: The person types the name, the skill adds the contact.
---
` + "```steps" + `
- do: hand_over
  text: Type the contact's name yourself, then press Continue.
- do: click
  target: button "Add contact"
  expect: {text: "Added Ada"}
` + "```\n"

// TestHandOverStep: a skill's hand_over step puts the run in waiting_user with the hand-over
// until the person presses Continue, then the run goes on with no model call; a hand_over step
// without text does not load.
func TestHandOverStep(t *testing.T) {
	page := newContacts()
	srv := llmtest.NewOpenAI(t) // any call fails the test
	s, _ := newTestService(t, page, srv)
	if _, err := s.Library().Save("add-by-hand", []byte(personStep)); err != nil {
		t.Fatal(err)
	}
	r := s.opts.Runner
	events, unsub := r.Subscribe("", 256)
	defer unsub()
	sk, err := s.Library().Get("add-by-hand")
	if err != nil {
		t.Fatal(err)
	}
	tk, err := s.StartSkill(context.Background(), sk, RunRequest{Request: "add a contact by hand"})
	if err != nil {
		t.Fatal(err)
	}
	var h *task.Handover
	timeout := time.After(10 * time.Second)
	for h == nil {
		select {
		case e := <-events:
			if e.Type == task.EventHandover && e.TaskID == tk.ID {
				h = e.Handover
			}
		case <-timeout:
			t.Fatal("no handover_requested event")
		}
	}
	cur, _ := r.Get(context.Background(), tk.ID)
	if cur.Status != task.StatusWaitingUser || cur.Handover == nil || cur.Handover.ID != h.ID || !strings.HasPrefix(h.Instruction, "Type the contact's name") {
		t.Fatalf("waiting run: %s %+v", cur.Status, cur.Handover)
	}
	if cur.Request != "add a contact by hand" {
		t.Errorf("the run's request %q", cur.Request)
	}
	page.mu.Lock()
	page.name = "Ada" // the person's turn
	page.mu.Unlock()
	if err := r.Continue(tk.ID, h.ID); err != nil {
		t.Fatal(err)
	}
	done, err := r.Wait(context.Background(), tk.ID)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != task.StatusSucceeded || done.Handover != nil || srv.Calls() != 0 {
		t.Fatalf("run %s (%s), model calls %d", done.Status, done.Error, srv.Calls())
	}
	if len(page.added) != 1 || page.added[0] != "Ada" {
		t.Errorf("added %q", page.added)
	}
	if err := r.Continue(tk.ID, h.ID); !errors.Is(err, task.ErrNotWaiting) {
		t.Errorf("a second Continue: %v", err)
	}
	bad := strings.Replace(personStep, "  text: Type the contact's name yourself, then press Continue.\n", "", 1)
	if _, err := s.Library().Save("bad-hand", []byte(strings.Replace(bad, "add-by-hand", "bad-hand", 1))); err == nil || !strings.Contains(err.Error(), "a hand_over step needs text") {
		t.Errorf("a hand_over without text: %v", err)
	}
}
