package skills

import (
	"context"
	"errors"
	"github.com/tabrelay/tabrelay/agent/actions"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// added returns the contacts the page added, read under its lock.
func (p *contacts) addedNames() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.added)
}

func (p *contacts) actionCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.actions)
}

func toolResults(r llmtest.Request) string {
	var b strings.Builder
	for _, m := range r.ToolResults() {
		b.WriteString(m.Text + "\n")
	}
	return b.String()
}

// TestAgentLoopRunsSkills drives the agent's real task loop with a scripted model over the
// OpenAI API: the loop offers the skill tools next to its browser tools, and the model's
// run_skill call replays the skill (no model call for the replay itself).
func TestAgentLoopRunsSkills(t *testing.T) {
	cases := []struct {
		name    string
		button  string // the page's add button
		replies []llmtest.Reply
		check   func(t *testing.T, tk *task.Task, reqs []llmtest.Request, page *contacts, st *memStore)
	}{
		{
			name: "list then run",
			replies: []llmtest.Reply{
				llmtest.ToolCall(ToolListSkills, `{"request":"add Ada to the contacts"}`),
				llmtest.ToolCall(ToolRunSkill, `{"name":"add-contact","params":{"name":"Ada"}}`),
				llmtest.ToolCall("finish", `{"answer":"Added Ada."}`),
			},
			check: func(t *testing.T, tk *task.Task, reqs []llmtest.Request, page *contacts, st *memStore) {
				first := reqs[0]
				for _, name := range []string{ToolListSkills, ToolReadSkill, ToolRunSkill, "click", "finish"} {
					if !first.HasTool(name) {
						t.Errorf("tool %s not offered (tools: %v)", name, first.Tools)
					}
				}
				// the prompt names the skill tools; what each does is in its schema, not repeated
				if !strings.Contains(first.System, "Skills (list_skills, read_skill, run_skill)") || strings.Contains(first.System, "Run a skill") {
					t.Errorf("the system prompt does not mention the skills:\n%s", first.System)
				}
				if got := toolResults(reqs[1]); !strings.Contains(got, "- add-contact: Add a contact") {
					t.Errorf("list_skills result: %s", got)
				}
				got := toolResults(reqs[2])
				if !strings.Contains(got, "result of run_skill") || !strings.Contains(got, `"status":"succeeded"`) || !strings.Contains(got, "text: Added Ada") {
					t.Errorf("run_skill result (with the page afterwards): %s", got)
				}
				if names := page.addedNames(); len(names) != 1 || names[0] != "Ada" {
					t.Fatalf("the skill did not add the contact: %v", names)
				}
				if tk.Status != task.StatusSucceeded || len(tk.Steps) != 3 || tk.Steps[1].Tool != ToolRunSkill || tk.Steps[1].Status != task.StepOK {
					t.Fatalf("task %s (%s), steps %+v", tk.Status, tk.Error, tk.Steps)
				}
				m := regexp.MustCompile(`"task":"([^"]+)"`).FindStringSubmatch(tk.Steps[1].Result)
				if m == nil {
					t.Fatalf("the run_skill step does not name the skill run's task: %s", tk.Steps[1].Result)
				}
				run, err := st.GetTask(context.Background(), m[1])
				if err != nil || run.Model != "skill:add-contact" || run.Status != task.StatusSucceeded || run.Usage.LLMCalls != 0 {
					t.Fatalf("the skill run's task: %v %+v", err, run)
				}
			},
		},
		{
			name:   "a handed-over step gets no skill tools",
			button: "Create contact",
			replies: []llmtest.Reply{
				llmtest.ToolCall(ToolRunSkill, `{"name":"add-contact","params":{"name":"Ada"}}`),
				llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
					if r.HasTool(ToolRunSkill) || strings.Contains(r.System, "Skills:") {
						return llmtest.ToolCall("fail", `{"reason":"the handover task was offered the skill tools"}`)
					}
					return llmtest.ToolCall("click", `{"ref":"e4"}`)
				}),
				llmtest.ToolCall("finish", `{"answer":"clicked Create contact"}`),
				llmtest.ToolCall("finish", `{"answer":"Added Ada."}`),
			},
			check: func(t *testing.T, tk *task.Task, reqs []llmtest.Request, page *contacts, st *memStore) {
				if tk.Status != task.StatusSucceeded || tk.Steps[0].Status != task.StepOK || !strings.Contains(tk.Steps[0].Result, `"status":"succeeded"`) {
					t.Fatalf("task %s (%s), steps %+v", tk.Status, tk.Error, tk.Steps)
				}
				if names := page.addedNames(); len(names) != 1 || names[0] != "Ada" {
					t.Fatalf("contact not added: %v", names)
				}
				if reqs[1].HasTool(ToolRunSkill) {
					t.Fatalf("the handover task was offered run_skill: %v", reqs[1].Tools)
				}
			},
		},
		{
			name: "missing parameter",
			replies: []llmtest.Reply{
				llmtest.ToolCall(ToolRunSkill, `{"name":"add-contact"}`),
				llmtest.ToolCall("fail", `{"reason":"which name?"}`),
			},
			check: func(t *testing.T, tk *task.Task, reqs []llmtest.Request, page *contacts, st *memStore) {
				got := toolResults(reqs[1])
				if !strings.Contains(got, "error: run_skill: skill add-contact needs a required parameter before it can run: name") ||
					!strings.Contains(got, `Call run_skill again with "params": {"name": "…"}`) {
					t.Fatalf("run_skill result: %s", got)
				}
				if tk.Steps[0].Status != task.StepError || page.actionCount() != 0 {
					t.Fatalf("step %+v, page actions %d", tk.Steps[0], page.actionCount())
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			page := newContacts()
			if c.button != "" {
				page.button = c.button
			}
			srv := llmtest.NewOpenAI(t, c.replies...)
			s, st := newTestService(t, page, srv)
			tk, err := s.opts.Runner.Run(context.Background(), "Add Ada to the contacts", "")
			if err != nil {
				t.Fatal(err)
			}
			if srv.Remaining() != 0 {
				t.Errorf("%d scripted replies unused (model calls: %d)", srv.Remaining(), srv.Calls())
			}
			c.check(t, tk, srv.Requests(), page, st)
		})
	}
}

func TestPlainlyNamed(t *testing.T) {
	sk := &Skill{Name: "add-contact"}
	one := &Skill{Name: "login"}
	cases := []struct {
		s    *Skill
		req  string
		want bool
	}{
		{sk, "run add-contact for Grace", true},
		{sk, "add-contact name=Grace", true},
		{sk, "please run add-contact", true},
		{sk, "Run the add contact for Grace", true},
		{sk, "use add contact", true},
		{sk, "what does add-contact do?", false},
		{sk, "add a contact named Grace", false},
		{sk, "add contact Grace", false},
		{one, "login", true},
		{one, "run login as ada", true},
		{one, "click login", false},
		{one, "loginx", false},
	}
	for _, c := range cases {
		if got := plainlyNamed(c.s, c.req); got != c.want {
			t.Errorf("plainlyNamed(%s, %q) = %v, want %v", c.s.Name, c.req, got, c.want)
		}
	}
	// Only a request with more than the name is worth a model call for parameters.
	for req, want := range map[string]bool{"run add-contact": false, "please use the add contact": false, "do add-contact": false,
		"run add-contact for Grace": true, "add-contact Grace": true} {
		if got := saysMore(sk, req); got != want {
			t.Errorf("saysMore(%q) = %v, want %v", req, got, want)
		}
	}
}

// TestStartNamed starts named skills as the agent's /api/command does: in the background, as
// runner tasks, refusing up front what cannot run.
func TestStartNamed(t *testing.T) {
	cases := []struct {
		req, url   string
		ok         bool
		status     task.Status
		added      string
		errHas     []string
		missing    []string
		needsModel bool
	}{
		{req: "run add-contact for Grace Hopper", url: "https://contacts.test/new", ok: true, status: task.StatusSucceeded, added: "Grace Hopper"},
		{req: "add-contact name='Ada Lovelace' team=Red", url: "https://contacts.test/new", ok: true, status: task.StatusSucceeded, added: "Ada Lovelace"},
		{req: "run add-contact", url: "https://contacts.test/new", ok: true, missing: []string{"name"},
			errHas: []string{"needs a required parameter before it can run: name", "nothing was done", `Name it in the request, e.g. "run add-contact name=Ada"`}},
		{req: "run export-orders", url: "https://contacts.test/new"}, // for another site
		{req: "add a contact named Grace", url: "https://contacts.test/new"},
		{req: "what does add-contact do?", url: "https://contacts.test/new"},
	}
	for _, c := range cases {
		t.Run(c.req, func(t *testing.T) {
			page := newContacts()
			srv := llmtest.NewOpenAI(t) // any model call fails the run
			s, _ := newTestService(t, page, srv)
			if _, err := s.Library().Save("export-orders", []byte("---\nname: export-orders\ndescription: Export orders.\nsites: [shop.test]\n---\n```steps\n- do: click\n  target: button \"Export\"\n```\n")); err != nil {
				t.Fatal(err)
			}
			tk, ok, err := s.StartNamed(context.Background(), c.req, "t1", c.url, false)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v (err %v)", ok, c.ok, err)
			}
			if len(c.errHas) > 0 {
				if err == nil {
					t.Fatalf("no error; want %v", c.errHas)
				}
				for _, want := range c.errHas {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				var mp interface{ MissingParams() []string }
				if !errors.As(err, &mp) || !slices.Equal(mp.MissingParams(), c.missing) {
					t.Errorf("missing parameters not reported: %v", err)
				}
				if page.actionCount() != 0 {
					t.Errorf("a refused run acted on the page")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				if tk != nil || page.actionCount() != 0 {
					t.Fatalf("an unnamed request ran something: %+v", tk)
				}
				return
			}
			if tk.Status != task.StatusRunning || tk.Model != "skill:add-contact" {
				t.Fatalf("started task %+v", tk)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			done, err := s.opts.Runner.Wait(ctx, tk.ID)
			if err != nil || done.Status != c.status {
				t.Fatalf("wait: %v %+v", err, done)
			}
			if names := page.addedNames(); len(names) != 1 || names[0] != c.added || srv.Calls() != 0 {
				t.Fatalf("added %v with %d model calls", names, srv.Calls())
			}
		})
	}
}

// slowPage holds hover actions until the run's context ends.
type slowPage struct {
	*contacts
	hovering chan struct{}
}

func (p *slowPage) Act(ctx context.Context, tabID string, act actions.Action) (*actions.Result, error) {
	if _, ok := act.Params.(*actions.Hover); ok {
		close(p.hovering)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return p.contacts.Act(ctx, tabID, act)
}

// TestTrackedRunCancelled cancels a background skill run through the runner, as
// POST /api/tasks/{id}/cancel does.
func TestTrackedRunCancelled(t *testing.T) {
	page := &slowPage{contacts: newContacts(), hovering: make(chan struct{})}
	srv := llmtest.NewOpenAI(t)
	s, st := newTestService(t, page, srv)
	if _, err := s.Library().Save("hover-add", []byte("---\nname: hover-add\ndescription: Hover, then add.\n---\n```steps\n- do: hover\n  target: button \"Add contact\"\n- do: click\n  target: button \"Add contact\"\n```\n")); err != nil {
		t.Fatal(err)
	}
	sk, _ := s.Library().Get("hover-add")
	tk, err := s.StartSkill(context.Background(), sk, RunRequest{Tab: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	<-page.hovering
	r := s.opts.Runner
	if got, err := r.Get(context.Background(), tk.ID); err != nil || got.Status != task.StatusRunning {
		t.Fatalf("running run: %v %+v", err, got)
	}
	if err := r.Cancel(tk.ID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done, err := r.Wait(ctx, tk.ID)
	if err != nil || done.Status != task.StatusCancelled || !strings.Contains(done.Error, "cancelled by the user") {
		t.Fatalf("cancelled run: %v %+v", err, done)
	}
	if saved, _ := st.GetTask(context.Background(), tk.ID); saved.Status != task.StatusCancelled {
		t.Fatalf("stored run: %+v", saved)
	}
	if names := page.addedNames(); len(names) != 0 {
		t.Fatalf("the step after the cancel ran: %v", names)
	}
}

// TestFits: the skill tools are offered to a goal a skill could serve (named, or sharing enough
// of its words), not to every goal that shares a word with a bundled skill's description.
func TestFits(t *testing.T) {
	s, _ := newTestService(t, newContacts(), nil)
	if _, err := s.Library().Save("add-contact", []byte(addContact)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		goal string
		want bool
	}{
		{"Add Ada to the contacts", true},
		{"search the site for wireless headphones", true},
		{"fill the form with Ada's details", true},
		{"run extract-table", true},
		{"Put product 190 in the cart with gift wrap, then open the quick view of product 5", false},
		{"Click the button that says Submit", false},
		{"What is the headline of this article?", false},
	} {
		if got := s.Fits(tc.goal, "https://shop.test/"); got != tc.want {
			t.Errorf("Fits(%q) = %v, want %v (ranked %+v)", tc.goal, got, tc.want, s.Find(tc.goal, "https://shop.test/"))
		}
	}
}
