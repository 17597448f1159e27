package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/actions/gate/gatetest"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// contacts is a fake contacts page: a form (Name, Team, Subscribe, a button) that adds a row.
type contacts struct {
	mu      sync.Mutex
	button  string // "Add contact", renamed by tests
	name    string
	team    string
	sub     bool
	added   []string
	actions []string
}

func newContacts() *contacts { return &contacts{button: "Add contact", team: "Red"} }

func (p *contacts) Snapshot(ctx context.Context, tabID string) (*snapshot.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	E := pagetest.El
	type ref = pagetest.Ref
	news := E("checkbox", "Newsletter", ref("e3"))
	if p.sub {
		news.States = []string{"checked"}
	}
	nodes := []*snapshot.Node{
		E("form", "New contact",
			E("textbox", "Name", ref("e1"), pagetest.Value(p.name)),
			E("combobox", "Team", ref("e2"), pagetest.Value(p.team)),
			news,
			E("button", p.button, ref("e4"))),
		E("button", "Remove", ref("e5")),
		E("button", "Remove", ref("e6")),
	}
	for _, a := range p.added {
		nodes = append(nodes, E("status", "", pagetest.Text("Added "+a)))
	}
	return pagetest.Page("https://contacts.test/new", "Contacts", nodes...), nil
}

// shows reports whether the page says text (as a wait for text finds it).
func (p *contacts) shows(text string) bool {
	s, _ := p.Snapshot(context.Background(), "")
	for _, n := range s.Nodes() {
		if strings.Contains(n.Words(), text) {
			return true
		}
	}
	return false
}

func (p *contacts) Act(ctx context.Context, tabID string, act actions.Action) (*actions.Result, error) {
	if snap, _ := p.Snapshot(ctx, tabID); snap != nil {
		if _, err := gatetest.Check(ctx, testGate, snap, act); err != nil {
			return nil, err // held by the safety gate: nothing reaches the page
		}
	}
	raw, _ := json.Marshal(act) // the action as the HTTP API shows it
	var a struct {
		Kind   string   `json:"kind"`
		Ref    string   `json:"ref"`
		Text   string   `json:"text"`
		Values []string `json:"values"`
		Fields []struct {
			Ref, Value string
		} `json:"fields"`
		Expression string `json:"expression"`
		Checked    bool   `json:"checked"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.actions = append(p.actions, string(raw))
	p.mu.Unlock()
	if a.Kind == "wait" {
		if a.Text != "" && !p.shows(a.Text) {
			return nil, fmt.Errorf("timed out waiting for text %q", a.Text)
		}
		return &actions.Result{Kind: "wait", Message: "ok"}, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	set := func(ref, v string) error {
		switch ref {
		case "e1":
			p.name = v
		case "e2":
			p.team = v
		case "e3":
			p.sub = v == "true" || v == "yes"
		default:
			return fmt.Errorf("%s is not a field", ref)
		}
		return nil
	}
	switch a.Kind {
	case "type":
		return &actions.Result{Kind: "type", Message: "typed"}, set(a.Ref, a.Text)
	case "select":
		return &actions.Result{Kind: "select", Message: "selected"}, set(a.Ref, a.Values[0])
	case "check":
		return &actions.Result{Kind: "check", Message: "checked"}, set(a.Ref, fmt.Sprint(a.Checked))
	case "fill":
		for _, f := range a.Fields {
			if err := set(f.Ref, f.Value); err != nil {
				return nil, err
			}
		}
		return &actions.Result{Kind: "fill", Message: "filled"}, nil
	case "click":
		if a.Ref == "e4" {
			p.added = append(p.added, p.name)
		}
		return &actions.Result{Kind: "click", Message: "clicked"}, nil
	case "evaluate":
		return &actions.Result{Kind: "evaluate", Message: "ok", Value: json.RawMessage(`"a,b\n1,2\n"`)}, nil
	}
	return nil, fmt.Errorf("unsupported %s", a.Kind)
}

func (p *contacts) Tabs(ctx context.Context) ([]task.Tab, error) {
	return []task.Tab{{ID: "t1", URL: "https://contacts.test/new", Title: "Contacts", Active: true}}, nil
}

// memStore is an in-memory task.Store.
type memStore struct {
	mu    sync.Mutex
	tasks map[string]*task.Task
}

func (m *memStore) SaveTask(ctx context.Context, t *task.Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks == nil {
		m.tasks = map[string]*task.Task{}
	}
	m.tasks[t.ID] = t.Clone()
	return nil
}

func (m *memStore) GetTask(ctx context.Context, id string) (*task.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.tasks[id]; ok {
		return t.Clone(), nil
	}
	return nil, task.ErrNotFound
}

func (m *memStore) ListTasks(ctx context.Context, limit, offset int) ([]*task.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*task.Task
	for _, t := range m.tasks {
		out = append(out, t.Clone())
	}
	return out, nil
}

const addContact = `---
name: add-contact
description: Add a contact to the address book.
parameters:
  - name: name
    required: true
    example: Ada
  - name: team
    default: Blue
  - name: pin
    secret: true
---
` + "```steps" + `
- do: type
  target: textbox "Name"
  text: "{{name}}"
- do: select
  target: {role: combobox, name: Team, within: form "New contact"}
  values: ["{{team}}"]
- do: check
  target: checkbox "Newsletter"
- do: click
  target: button "Add contact"
  hint: Press the button that adds the contact
  expect: {text: "Added {{name}}"}
` + "```\n"

func newTestService(t *testing.T, page task.Browser, srv *llmtest.Server) (*Service, *memStore) {
	t.Helper()
	st := &memStore{}
	opts := Options{Dir: t.TempDir(), Browser: page, Store: st, Log: testLog(t), ResolveTimeout: 200 * time.Millisecond, ExpectTimeout: time.Second}
	var s *Service
	if srv == nil {
		s = New(opts)
	} else {
		// The service is built with the runner it serves, as the server builds them: the
		// runner's tasks offer its tools.
		r := task.NewRunner(task.Options{Model: srv.Model(t), ModelName: "test", Browser: page, Store: st, Timeout: 20 * time.Second, Memory: -1,
			Toolbox: func(r *task.Runner) task.Toolbox {
				opts.Runner = r
				s = New(opts)
				return s
			}})
		t.Cleanup(r.Close)
	}
	if _, err := s.Library().Save("add-contact", []byte(addContact)); err != nil {
		t.Fatal(err)
	}
	return s, st
}

func TestRunReplaysWithoutModel(t *testing.T) {
	page := newContacts()
	srv := llmtest.NewOpenAI(t) // any call fails the test
	s, st := newTestService(t, page, srv)
	res, err := s.Run(context.Background(), "add-contact", RunRequest{Params: map[string]string{"name": "Ada Lovelace", "pin": "1234"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != task.StatusSucceeded || srv.Calls() != 0 || res.ModelCalls != 0 || res.Handovers != 0 {
		t.Fatalf("status %s, model calls %d/%d, error %s", res.Status, srv.Calls(), res.ModelCalls, res.Error)
	}
	if page.name != "Ada Lovelace" || page.team != "Blue" || !page.sub || len(page.added) != 1 {
		t.Fatalf("page state %+v", page)
	}
	if res.Draft != "" {
		t.Errorf("a run as written offers no draft, got one")
	}
	tk, err := st.GetTask(context.Background(), res.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != task.StatusSucceeded || len(tk.Plan) != 4 || len(tk.Steps) != 5 { // 4 actions + 1 expect
		t.Fatalf("recorded task: status %s, plan %d, steps %d", tk.Status, len(tk.Plan), len(tk.Steps))
	}
	for _, p := range tk.Plan {
		if p.Status != task.PlanDone {
			t.Errorf("plan item %q is %s", p.Text, p.Status)
		}
	}
	if strings.Contains(tk.Goal, "1234") {
		t.Errorf("secret parameter in the task goal: %s", tk.Goal)
	}
}

func TestRunHandsRenamedStepToModel(t *testing.T) {
	for _, proto := range []struct {
		name string
		new  func(testing.TB, ...llmtest.Reply) *llmtest.Server
	}{{"openai", llmtest.NewOpenAI}, {"anthropic", llmtest.NewAnthropic}} {
		t.Run(proto.name, func(t *testing.T) {
			page := newContacts()
			page.button = "Create contact"
			refRE := regexp.MustCompile(`button "Create contact" \[ref=(e\d+)\]`)
			srv := proto.new(t,
				llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
					all := r.System
					for _, m := range r.Messages {
						all += "\n" + m.Text
					}
					m := refRE.FindStringSubmatch(all)
					if m == nil || !strings.Contains(all, "Step 4") {
						return llmtest.Text("the page has no renamed button or the goal lacks the step")
					}
					return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, m[1]))
				}),
				llmtest.ToolCall("finish", `{"answer":"clicked Create contact"}`),
			)
			s, st := newTestService(t, page, srv)
			res, err := s.Run(context.Background(), "add-contact", RunRequest{Params: map[string]string{"name": "Ada"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != task.StatusSucceeded || res.Handovers != 1 || srv.Calls() != 2 || res.ModelCalls != 2 {
				t.Fatalf("status %s (%s), handovers %d, calls %d/%d", res.Status, res.Error, res.Handovers, srv.Calls(), res.ModelCalls)
			}
			if len(page.added) != 1 || page.added[0] != "Ada" {
				t.Fatalf("contact not added: %+v", page.added)
			}
			last := res.Steps[3]
			if last.Status != "model" || last.HandoverTask == "" || !strings.Contains(last.Message, `button "Add contact"`) {
				t.Fatalf("step 4 report %+v", last)
			}
			if !strings.Contains(res.Draft, `target: button "Create contact"`) || !strings.Contains(res.Draft, "Added {{name}}") {
				t.Fatalf("draft does not do the step the new way:\n%s", res.Draft)
			}
			if _, err := Parse("draft", []byte(res.Draft)); err != nil {
				t.Fatalf("draft does not parse: %v", err)
			}
			tk, _ := st.GetTask(context.Background(), res.TaskID)
			if tk.Usage.LLMCalls != 2 || tk.Usage.PromptTokens == 0 || !hasTool(tk, "model:click") {
				t.Fatalf("recorded task lacks the model's steps: %+v", tk.Steps)
			}
			// Task lists show the run's request for the model's part, never the prompt it got.
			ho, err := st.GetTask(context.Background(), last.HandoverTask)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(ho.Goal, "You are running the skill") || ho.Shown() != tk.Shown()+", step 4 (handed to the model)" {
				t.Errorf("the hand-over task shows %q (goal %q)", ho.Shown(), ho.Goal)
			}
			// The draft, saved, replays with no model.
			if _, err := s.Library().Save("add-contact", []byte(res.Draft)); err != nil {
				t.Fatal(err)
			}
			res2, err := s.Run(context.Background(), "add-contact", RunRequest{Params: map[string]string{"name": "Bob"}})
			if err != nil || res2.Status != task.StatusSucceeded || srv.Calls() != 2 {
				t.Fatalf("replay of the saved draft: %v %s %s, calls %d", err, res2.Status, res2.Error, srv.Calls())
			}
		})
	}
}

func hasTool(t *task.Task, tool string) bool {
	for _, s := range t.Steps {
		if s.Tool == tool {
			return true
		}
	}
	return false
}

func TestRunWithoutModelFailsClearly(t *testing.T) {
	page := newContacts()
	page.button = "Create contact"
	s, _ := newTestService(t, page, nil)
	res, err := s.Run(context.Background(), "add-contact", RunRequest{Params: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != task.StatusFailed || !strings.Contains(res.Error, "step 4") || !strings.Contains(res.Error, "no language model") ||
		!strings.Contains(res.Error, `button "Create contact"`) {
		t.Fatalf("status %s, error %q", res.Status, res.Error)
	}
}

func TestRunRefusesMissingParameter(t *testing.T) {
	page := newContacts()
	s, st := newTestService(t, page, nil)
	_, err := s.Run(context.Background(), "add-contact", RunRequest{Params: map[string]string{"team": "Red"}})
	var mp *MissingParamsError
	if !errors.As(err, &mp) || len(mp.Missing) != 1 || mp.Missing[0].Name != "name" {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{"add-contact", "name", `"Ada"`, "nothing was done", "--param name="} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if len(page.actions) != 0 || len(st.tasks) != 0 {
		t.Fatalf("something ran: %v", page.actions)
	}
	if _, err := s.Run(context.Background(), "add-contact", RunRequest{Params: map[string]string{"name": "x", "colour": "red"}}); err == nil || !strings.Contains(err.Error(), `no parameter "colour"`) {
		t.Fatalf("unknown parameter: %v", err)
	}
}

func TestDoRunsNamedSkill(t *testing.T) {
	page := newContacts()
	s, _ := newTestService(t, page, nil)
	res, err := s.Do(context.Background(), "run add-contact for Grace Hopper", "")
	if err != nil || res.Status != task.StatusSucceeded || page.name != "Grace Hopper" {
		t.Fatalf("%v %+v name=%q", err, res, page.name)
	}
	if _, err := s.Do(context.Background(), "what's the weather", ""); !errors.Is(err, ErrNotNamed) {
		t.Fatalf("unnamed request: %v", err)
	}
}

func TestBundledFillFormAndExtract(t *testing.T) {
	page := newContacts()
	s, _ := newTestService(t, page, nil)
	res, err := s.Run(context.Background(), "fill-form", RunRequest{Params: map[string]string{"values": "Name: Ada\nteam: Green\nNewsletter: yes", "submit": "Add contact"}})
	if err != nil || res.Status != task.StatusSucceeded {
		t.Fatalf("%v %+v", err, res)
	}
	if page.name != "Ada" || page.team != "Green" || !page.sub || len(page.added) != 1 {
		t.Fatalf("page %+v", page)
	}
	res, err = s.Run(context.Background(), "fill-form", RunRequest{Params: map[string]string{"values": `{"Phone": "123"}`}})
	if err != nil || res.Status != task.StatusFailed || !strings.Contains(res.Error, `no field labelled "Phone"`) || !strings.Contains(res.Error, `"Name"`) {
		t.Fatalf("unknown field: %v %+v", err, res)
	}
	res, err = s.Run(context.Background(), "extract-table", RunRequest{})
	if err != nil || res.Output != "a,b\n1,2\n" {
		t.Fatalf("extract: %v %+v", err, res)
	}
	var sent struct{ Expression string }
	_ = json.Unmarshal([]byte(page.actions[len(page.actions)-1]), &sent)
	if !strings.Contains(sent.Expression, `String("" || "")`) {
		t.Errorf("template in script not a JS string literal: %.200s", sent.Expression)
	}
}

func TestProseSkillFollowedByModel(t *testing.T) {
	page := newContacts()
	srv := llmtest.NewOpenAI(t, llmtest.ToolCall("click", `{"ref":"e4"}`), llmtest.ToolCall("finish", `{"answer":"Added the contact."}`))
	s, _ := newTestService(t, page, srv)
	if _, err := s.Library().Save("press-add", []byte("---\nname: press-add\ndescription: Press the add button.\n---\nPress the button that adds the contact.\n")); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), "press-add", RunRequest{})
	if err != nil || res.Status != task.StatusSucceeded || res.Output != "Added the contact." || len(page.added) != 1 || res.ModelCalls != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	if !strings.Contains(srv.Requests()[0].Messages[0].Text, "Press the button that adds the contact.") {
		t.Errorf("the skill's prose was not given to the model")
	}
	// Without a model, a prose skill is refused up front.
	s2, _ := newTestService(t, page, nil)
	_, _ = s2.Library().Save("press-add", []byte("---\nname: press-add\ndescription: Press the add button.\n---\nPress it.\n"))
	if _, err := s2.Run(context.Background(), "press-add", RunRequest{}); err == nil || !strings.Contains(err.Error(), "no ```steps block") {
		t.Fatalf("prose skill without a model: %v", err)
	}
}

// TestHandoverGivesModelTheSkillsNotes: a step handed to the model comes with the skill's prose
// (its notes for when the page differs), without the steps block and capped.
func TestHandoverGivesModelTheSkillsNotes(t *testing.T) {
	page := newContacts()
	page.button = "Create contact"
	refRE := regexp.MustCompile(`button "Create contact" \[ref=(e\d+)\]`)
	srv := llmtest.NewOpenAI(t,
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			var all string
			for _, m := range r.Messages {
				all += "\n" + m.Text
			}
			return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, refRE.FindStringSubmatch(all)[1]))
		}),
		llmtest.ToolCall("finish", `{"answer":"done"}`),
	)
	s, _ := newTestService(t, page, srv)
	const notes = "## Notes\n\nOn the new layout the add button is labelled Create contact."
	long := strings.Repeat("Filler that should be cut. ", 200)
	md := strings.Replace(addContact, "---\n```steps", "---\n# Add a contact\n\n"+notes+"\n\n```steps", 1) + "\n## More\n\n" + long + "\n"
	if _, err := s.Library().Save("add-contact", []byte(md)); err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(context.Background(), "add-contact", RunRequest{Params: map[string]string{"name": "Ada"}})
	if err != nil || res.Status != task.StatusSucceeded || res.Handovers != 1 {
		t.Fatalf("%v %+v", err, res)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	var goal string
	for _, m := range reqs[0].Messages {
		goal += m.Text + "\n"
	}
	if !strings.Contains(goal, "labelled Create contact") || !strings.Contains(goal, "# Add a contact") {
		t.Errorf("the model was not given the skill's notes:\n%s", goal)
	}
	if strings.Contains(goal, "```steps") || strings.Contains(goal, "- do: type") {
		t.Errorf("the model was given the raw steps block:\n%s", goal)
	}
	if n := strings.Count(goal, "Filler that should be cut."); n == 0 || n >= 200 {
		t.Errorf("the notes are not capped: %d filler sentences sent", n)
	}
}

// TestBackgroundRunKeepsHealedDraft: a run in the background (a command naming the skill) that
// the model healed offers its updated SKILL.md by task id (GET /api/skills/drafts/{taskId} is
// tested in agent/api); its task's answer says so.
func TestBackgroundRunKeepsHealedDraft(t *testing.T) {
	page := newContacts()
	page.button = "Create contact"
	refRE := regexp.MustCompile(`button "Create contact" \[ref=(e\d+)\]`)
	srv := llmtest.NewOpenAI(t,
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			var all string
			for _, m := range r.Messages {
				all += "\n" + m.Text
			}
			return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, refRE.FindStringSubmatch(all)[1]))
		}),
		llmtest.ToolCall("finish", `{"answer":"done"}`),
	)
	s, _ := newTestService(t, page, srv)
	sk, _ := s.Library().Get("add-contact")
	tk, err := s.StartSkill(context.Background(), sk, RunRequest{Params: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ended, err := s.opts.Runner.Wait(ctx, tk.ID)
	if err != nil || ended.Status != task.StatusSucceeded {
		t.Fatalf("run: %v %+v", err, ended)
	}
	if !strings.Contains(ended.Answer, "updated skill is ready") {
		t.Errorf("the task's answer does not mention the draft: %q", ended.Answer)
	}
	d, ok := s.Draft(tk.ID)
	if !ok || d.Skill != "add-contact" || !strings.Contains(d.Markdown, `target: button "Create contact"`) {
		t.Fatalf("draft kept for the task: %v %+v", ok, d)
	}
	if _, ok := s.Draft("no-such-task"); ok {
		t.Error("a draft for a task that offered none")
	}
}

// testGate is the safety gate the fake page judges actions with, as the action service does.
var testGate = gate.New(gate.Options{})
