package skills

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

func TestTools(t *testing.T) {
	page := newContacts()
	s, _ := newTestService(t, page, nil)
	if n := len(s.Tools()); n != 3 {
		t.Fatalf("%d tools", n)
	}
	out, err := s.CallTool(context.Background(), ToolListSkills, json.RawMessage(`{"request":"add a contact"}`), "", "https://contacts.test/new")
	if err != nil || !strings.HasPrefix(out, "- add-contact: Add a contact") || !strings.Contains(out, "name*") {
		t.Fatalf("list_skills: %v %q", err, out)
	}
	out, err = s.CallTool(context.Background(), ToolReadSkill, json.RawMessage(`{"name":"add-contact"}`), "", "")
	if err != nil || !strings.Contains(out, "```steps") {
		t.Fatalf("read_skill: %v %q", err, out)
	}
	out, err = s.CallTool(context.Background(), ToolRunSkill, json.RawMessage(`{"name":"add-contact","params":{"name":"Ada"}}`), "", "")
	if err != nil || !strings.Contains(out, `"status":"succeeded"`) || len(page.added) != 1 {
		t.Fatalf("run_skill: %v %q", err, out)
	}
	if _, err := s.CallTool(context.Background(), ToolRunSkill, json.RawMessage(`{"name":"add-contact"}`), "", ""); err == nil || !strings.Contains(err.Error(), "needs a required parameter") {
		t.Fatalf("run_skill without params: %v", err)
	}
}

func TestDraftNamedFromNarrationByModel(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text("Here you go:\n```json\n{\"name\": \"invite-teammate\", \"description\": \"Invite a teammate to the workspace by email.\", \"parameters\": {\"email\": \"Email address of the person to invite\"}}\n```"))
	s := New(Options{Model: srv.Model(t), Log: testLog(t)})
	caps := []captured{
		{Kind: "type", Target: Target{Role: "textbox", Name: "Email"}, Value: "bob@example.com", URL: "https://app.test/team"},
		{Kind: "type", Target: Target{Role: "textbox", Name: "Password"}, Password: true, URL: "https://app.test/team"},
		{Kind: "click", Target: Target{Role: "button", Name: "Invite", Nth: 2}, URL: "https://app.test/team", ExpectTo: "/team/invited"},
		{Kind: "navigate", URL: "https://app.test/search?q=bob%40example.com"},
	}
	d, err := s.draft(context.Background(), Recording{URL: "https://app.test/team", StartedAt: time.Now()}, caps, "I invite Bob to our team")
	if err != nil {
		t.Fatal(err)
	}
	if !d.Named || d.Skill.Name != "invite-teammate" || d.Skill.Parameters[0].Description != "Email address of the person to invite" || srv.Calls() != 1 {
		t.Fatalf("draft %+v (calls %d)", d.Skill, srv.Calls())
	}
	if d.ModelCalls != 1 {
		t.Errorf("the naming call is not counted: draft modelCalls %d, model served %d", d.ModelCalls, srv.Calls())
	}
	for _, want := range []string{`text: '{{email}}'`, `text: '{{password}}'`, `target: button "Invite" nth=2`, "url: /team/invited", "url: https://app.test/search?q={{email}}", "https://app.test/*"} {
		if !strings.Contains(d.Markdown, want) {
			t.Errorf("draft lacks %q:\n%s", want, d.Markdown)
		}
	}
	if !strings.Contains(srv.LastRequest().Last().Text, "I invite Bob to our team") {
		t.Errorf("the narration was not sent to the model")
	}
	// Without a model: defaults from the narration, or from the site.
	s2 := New(Options{Log: testLog(t)})
	d, err = s2.draft(context.Background(), Recording{URL: "https://app.test/team"}, caps[:1], "")
	if err != nil || !strings.HasPrefix(d.Skill.Name, "recorded-app-test-") || !strings.Contains(d.Skill.Description, "Recorded on app.test") {
		t.Fatalf("default name: %v %+v", err, d.Skill)
	}
	if _, err := s2.draft(context.Background(), Recording{}, nil, ""); !errors.Is(err, ErrNothingRecorded) {
		t.Fatalf("empty recording: %v", err)
	}
}

func TestParamsFromRequestByModel(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.Text(`{"name": "Katherine Johnson"}`))
	page := newContacts()
	s, st := newTestService(t, page, nil)
	s.opts.Model = srv.Model(t)
	res, err := s.Run(context.Background(), "add-contact", RunRequest{Request: "please put Katherine Johnson in the address book"})
	if err != nil || res.Status != task.StatusSucceeded || page.name != "Katherine Johnson" || srv.Calls() != 1 {
		t.Fatalf("%v %+v name=%q calls=%d", err, res, page.name, srv.Calls())
	}
	// the extraction call counts as the run's model call, in the result and in its task
	tk, err := st.GetTask(context.Background(), res.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if res.ModelCalls != 1 || tk.Usage.LLMCalls != 1 {
		t.Errorf("model calls counted: result %d, task %d; the model served %d", res.ModelCalls, tk.Usage.LLMCalls, srv.Calls())
	}
}
