package skills

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/task"
)

// TestDraftFromTask: a task's page steps become skill steps naming the elements it acted on,
// the typed value a parameter, the page a click led to and the status it showed expectations;
// reading steps are left out, and a task that failed or only read is refused.
func TestDraftFromTask(t *testing.T) {
	s := New(Options{Log: testLog(t)})
	ok := task.Task{ID: "t1", Request: "add Ada to the guest list", Status: task.StatusSucceeded, TabID: "tab", CreatedAt: time.Now(),
		Steps: []task.Step{
			{Index: 1, Tool: "snapshot", Status: task.StepOK, URLBefore: "https://guests.test/", URLAfter: "https://guests.test/"},
			{Index: 2, Tool: "type", Args: json.RawMessage(`{"ref":"e2","text":"Ada"}`), Status: task.StepOK,
				Target: &task.Target{Role: "textbox", Name: "Name"}, URLBefore: "https://guests.test/", URLAfter: "https://guests.test/"},
			{Index: 3, Tool: "click", Args: json.RawMessage(`{"ref":"e3"}`), Status: task.StepOK, Target: &task.Target{Role: "button", Name: "Add"},
				URLBefore: "https://guests.test/", URLAfter: "https://guests.test/added",
				Result: "result: ok\nchanges:\n<page_content>\n+ status \"Added Ada\" [ref=e9]\n</page_content>"},
			{Index: 4, Tool: "finish", Args: json.RawMessage(`{"answer":"Added."}`), Status: task.StepOK},
		}}
	for _, c := range []struct{ result, want string }{
		{"+ text: Saved Ada", "Saved Ada"},
		{"~ status \"Added Ada\" [ref=e9] (was: name \"Not yet\")", "Added Ada"},
		{"~ text: Saved Ada (was: \"Not saved\")", "Saved Ada"},
		{"- status \"Gone\"", ""},
	} {
		if got := appeared("changes:\n<page_content>\n" + c.result + "\n</page_content>"); got != c.want {
			t.Errorf("appeared(%q) = %q, want %q", c.result, got, c.want)
		}
	}
	d, err := s.DraftFromTask(context.Background(), &ok)
	if err != nil {
		t.Fatal(err)
	}
	sk := d.Skill
	if len(sk.Steps) != 2 || sk.Steps[0].Do != "type" || sk.Steps[0].Target.Name != "Name" || sk.Steps[1].Do != "click" || sk.Steps[1].Target.Name != "Add" {
		t.Fatalf("steps %+v", sk.Steps)
	}
	if len(sk.Parameters) != 1 || sk.Steps[0].Text != "{{"+sk.Parameters[0].Name+"}}" || sk.Parameters[0].Example != "Ada" {
		t.Errorf("parameters %+v, typed %q", sk.Parameters, sk.Steps[0].Text)
	}
	if e := sk.Steps[1].Expect; e == nil || e.URL != "/added" || e.Text != "Added {{"+sk.Parameters[0].Name+"}}" {
		t.Errorf("expectation %+v", e)
	}
	if sk.Description != ok.Request || d.ModelCalls != 0 || !strings.Contains(d.Markdown, "guests.test") {
		t.Errorf("description %q, model calls %d\n%s", sk.Description, d.ModelCalls, d.Markdown)
	}
	for _, c := range []struct {
		name string
		t    task.Task
	}{
		{"failed", task.Task{ID: "t2", Status: task.StatusFailed, Steps: ok.Steps}},
		{"only read", task.Task{ID: "t3", Status: task.StatusSucceeded, Steps: ok.Steps[:1]}},
		{"a step skills cannot replay", task.Task{ID: "t5", Status: task.StatusSucceeded, Steps: append([]task.Step{{Index: 1, Tool: "fill", Args: json.RawMessage(`{"fields":[]}`), Status: task.StepOK}}, ok.Steps...)}},
		{"element not named", task.Task{ID: "t4", Status: task.StatusSucceeded, Steps: []task.Step{{Index: 1, Tool: "click", Args: json.RawMessage(`{"ref":"e3"}`), Status: task.StepOK}}}},
	} {
		if _, err := s.DraftFromTask(context.Background(), &c.t); !errors.Is(err, ErrNotSavable) {
			t.Errorf("%s: %v, want ErrNotSavable", c.name, err)
		}
	}
}
