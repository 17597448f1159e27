package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/skills"
)

// The agent hooks the skills service in through this interface.
var _ api.Skills = (*skills.Service)(nil)

// commandAnswer is the answer of POST /api/command decoded with the fields the tests read.
type commandAnswer struct {
	task.Task
	FastPath bool   `json:"fastPath"`
	Skill    string `json:"skill"`
}

// answerOf follows a task's events to its end and returns the final answer event's data.
func answerOf(t *testing.T, ae *agentEnv, id string) task.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var last task.Event
	types := []string{}
	for ev := range ae.follow(t, ctx, id) {
		types = append(types, ev.Type)
		if ev.Type == string(task.EventAnswer) {
			if err := json.Unmarshal(ev.Data, &last); err != nil {
				t.Fatalf("answer event: %v: %s", err, ev.Data)
			}
		}
	}
	if last.Type != task.EventAnswer {
		t.Fatalf("the events of task %s ended without an answer: %v", id, types)
	}
	return last
}

// TestAgentSkills drives skills through the agent's own API on real Chromium: POST
// /api/command and POST /api/tasks run a skill the request names with no model call, answer
// at once with ?wait=0, refuse a named skill missing a parameter with the names, and the
// model's task loop runs skills through run_skill.
func TestAgentSkills(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "scripted"})
	// the environment starts internal/app as `tabrelay serve` does: skills are wired there
	page := ae.site.URL("/skills/contacts.html")
	tab := ae.share(t, page)
	u := user{t: t, svc: ae.agent.Actions(), tab: tab.TargetID}
	title := func() string {
		var s string
		u.eval(`document.getElementById("title") ? document.getElementById("title").textContent : document.title`, &s)
		return s
	}

	t.Run("named skill runs without the model", func(t *testing.T) {
		u.open(page)
		r := ae.call(t, http.MethodPost, "/api/command", map[string]any{"text": "run site-search for Hopper", "tab": tab.TargetID})
		var res commandAnswer
		if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != http.StatusOK {
			t.Fatalf("HTTP %d %s", r.Status, r.Body)
		}
		if res.Skill != "site-search" || res.Status != task.StatusSucceeded || res.FastPath || res.Usage.LLMCalls != 0 || res.Model != "skill:site-search" {
			t.Fatalf("answer: %.800s", r.Body)
		}
		if got := title(); got != "Results for Hopper" {
			t.Fatalf("the search landed on %q", got)
		}
		if n := model.Calls(); n != 0 {
			t.Fatalf("the model was called %d times", n)
		}
	})

	cases := []struct {
		name   string
		path   string
		body   map[string]any
		skill  string
		check  func(t *testing.T, ev task.Event)
		wantFP bool
	}{
		{name: "command ?wait=0 (skill)", path: "/api/command?wait=0", body: map[string]any{"text": "site-search query=Turing"}, skill: "site-search",
			check: func(t *testing.T, ev task.Event) {
				if got := title(); got != "Results for Turing" {
					t.Errorf("the search landed on %q", got)
				}
			}},
		{name: "command wait:false (fast path)", path: "/api/command", body: map[string]any{"text": "scroll down", "wait": false}, wantFP: true},
		{name: "task (skill)", path: "/api/tasks", body: map[string]any{"goal": "run extract-table"}, skill: "extract-table",
			check: func(t *testing.T, ev task.Event) {
				if !strings.HasPrefix(ev.Answer, "Name,Email,Team,News\nAda Lovelace,") {
					t.Errorf("answer %q", ev.Answer)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u.open(page)
			start := time.Now()
			r := ae.call(t, http.MethodPost, c.path, c.body)
			took := time.Since(start)
			m := r.JSON(t)
			id, _ := m["id"].(string)
			if r.Status != http.StatusAccepted || id == "" || r.Header.Get("Location") != "/api/tasks/"+id {
				t.Fatalf("HTTP %d (Location %q) %.600s", r.Status, r.Header.Get("Location"), r.Body)
			}
			if got, _ := m["skill"].(string); got != c.skill {
				t.Errorf("skill %q, want %q", got, c.skill)
			}
			if fp, ok := m["fastPath"].(bool); ok && fp != c.wantFP {
				t.Errorf("fastPath %v", fp)
			}
			ev := answerOf(t, ae, id)
			if ev.Status != task.StatusSucceeded || ev.Error != "" {
				t.Fatalf("the task ended %s: %s", ev.Status, ev.Error)
			}
			if c.check != nil {
				c.check(t, ev)
			}
			got := ae.call(t, http.MethodGet, "/api/tasks/"+id, nil)
			var tk task.Task
			if err := json.Unmarshal(got.Body, &tk); err != nil || tk.Status != task.StatusSucceeded || tk.Usage.LLMCalls != 0 {
				t.Fatalf("GET the task: HTTP %d %.600s", got.Status, got.Body)
			}
			t.Logf("answered in %v", took.Round(time.Millisecond))
		})
	}
	if n := model.Calls(); n != 0 {
		t.Fatalf("the model was called %d times for named skills and a simple command", n)
	}

	t.Run("refusals", func(t *testing.T) {
		u.open(page)
		for _, c := range []struct {
			path string
			body map[string]any
			code int
			has  []string
		}{
			{"/api/command", map[string]any{"text": "run site-search"}, http.StatusBadRequest,
				[]string{`"missing":["query"]`, "needs a required parameter", "nothing was done", `run site-search query='wireless headphones'`}},
			{"/api/tasks", map[string]any{"goal": "run site-search"}, http.StatusBadRequest, []string{`"missing":["query"]`}},
			{"/api/command?wait=maybe", map[string]any{"text": "scroll down"}, http.StatusBadRequest, []string{"wait=0"}},
			{"/api/command", map[string]any{"text": "scroll down", "wait": "no"}, http.StatusBadRequest, []string{"bad command"}},
		} {
			r := ae.call(t, http.MethodPost, c.path, c.body)
			if r.Status != c.code {
				t.Errorf("%s %v: HTTP %d %s; want %d", c.path, c.body, r.Status, r.Body, c.code)
				continue
			}
			for _, want := range c.has {
				if !strings.Contains(string(r.Body), want) {
					t.Errorf("%s %v: %s lacks %q", c.path, c.body, r.Body, want)
				}
			}
		}
		var v string
		u.eval(`document.querySelector("input[type=search]").value`, &v)
		if v != "" || model.Calls() != 0 {
			t.Fatalf("a refused run typed %q or called the model (%d)", v, model.Calls())
		}

		// A named skill's step that needs the user's approval asks when it comes, judged on
		// the element it matched: declined, nothing happens; approved, that step runs.
		runAndAnswer := func(approve bool) *task.Task {
			t.Helper()
			r := ae.call(t, http.MethodPost, "/api/command", map[string]any{"text": "fill-form values='Subscribe to news: yes'", "wait": false})
			var started struct{ ID, Skill string }
			if err := json.Unmarshal(r.Body, &started); err != nil || started.ID == "" || started.Skill != "fill-form" {
				t.Fatalf("risky skill: HTTP %d %s", r.Status, r.Body)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			answered := map[string]bool{}
			for ctx.Err() == nil {
				tk, err := ae.agent.Runner().Get(ctx, started.ID)
				if err != nil {
					t.Fatal(err)
				}
				if tk.Status == task.StatusWaitingConfirmation {
					for _, st := range tk.Steps {
						if st.Confirmation != nil && st.Confirmation.Approved == nil && !answered[st.ID] && strings.Contains(st.Confirmation.Prompt, "Subscribe to news") {
							answered[st.ID] = true
							if r := ae.call(t, http.MethodPost, "/api/tasks/"+tk.ID+"/confirm", map[string]any{"stepId": st.ID, "approve": approve}); r.Status != http.StatusOK {
								t.Fatalf("confirm: HTTP %d %s", r.Status, r.Body)
							}
						}
					}
				}
				if tk.Status.Done() {
					return tk
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Fatal("the skill run did not end")
			return nil
		}
		var ticked bool
		if tk := runAndAnswer(false); tk.Status != task.StatusFailed {
			t.Fatalf("declined risky skill: %s %q", tk.Status, tk.Error)
		}
		u.eval(`document.querySelector("input[type=checkbox]").checked`, &ticked)
		if ticked {
			t.Fatal("the declined run ticked the box")
		}
		if tk := runAndAnswer(true); tk.Status != task.StatusSucceeded {
			t.Fatalf("approved risky skill: %s %q", tk.Status, tk.Error)
		}
		u.eval(`document.querySelector("input[type=checkbox]").checked`, &ticked)
		if !ticked || model.Calls() != 0 {
			t.Fatalf("the approved run did not tick the box (%v) or called the model (%d)", ticked, model.Calls())
		}
	})

	t.Run("the model runs a skill", func(t *testing.T) {
		u.open(page)
		model.Push(
			llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
				if !r.HasTool(skills.ToolListSkills) || !r.HasTool(skills.ToolRunSkill) || !strings.Contains(r.System, "Skills (") {
					return llmtest.ToolCall("fail", fmt.Sprintf(`{"reason":"no skill tools offered: %v"}`, r.Tools))
				}
				return llmtest.ToolCall(skills.ToolListSkills, `{"request":"search the contacts for Lovelace"}`)
			}),
			llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
				if !strings.Contains(r.Last().Text, "- site-search:") {
					return llmtest.ToolCall("fail", `{"reason":"list_skills did not list site-search"}`)
				}
				return llmtest.ToolCall(skills.ToolRunSkill, `{"name":"site-search","params":{"query":"Lovelace"}}`)
			}),
			llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
				if res := r.Last().Text; !strings.Contains(res, `"status":"succeeded"`) || !strings.Contains(res, "Results for Lovelace") {
					return llmtest.ToolCall("fail", fmt.Sprintf(`{"reason":%q}`, "unexpected run_skill result: "+res))
				}
				return llmtest.ToolCall("finish", `{"answer":"Found Ada Lovelace."}`)
			}),
		)
		r := ae.call(t, http.MethodPost, "/api/command", map[string]any{"text": "look up Lovelace with the site search"})
		var res commandAnswer
		if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != http.StatusOK {
			t.Fatalf("HTTP %d %.800s", r.Status, r.Body)
		}
		if res.Status != task.StatusSucceeded || res.Answer != "Found Ada Lovelace." || res.Skill != "" || len(res.Steps) != 3 || res.Steps[1].Tool != skills.ToolRunSkill {
			t.Fatalf("task %s (%s): %.1200s", res.Status, res.Error, r.Body)
		}
		if got := title(); got != "Results for Lovelace" {
			t.Fatalf("the skill's search landed on %q", got)
		}
		if n := model.Calls(); n != 3 {
			t.Fatalf("%d model calls, want 3 (the replay itself needs none)", n)
		}
	})
}
