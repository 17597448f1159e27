package task_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/tabrelay/tabrelay/agent/actions"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tmc/langchaingo/llms"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// box is a toolbox with a read-only tool (lookup), a tool that acts on the shop (search: types
// and presses Go, like a skill replay) and one whose name clashes with a browser tool.
type box struct {
	shop  *shop
	mu    sync.Mutex
	calls []string
}

func (b *box) Tools() []llms.Tool {
	def := func(name, desc string) llms.Tool {
		return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Description: desc,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}}}
	}
	return []llms.Tool{def("lookup", "Look something up."), def("search", "Search the shop."), def("click", "A clashing click.")}
}

func (b *box) CallTool(ctx context.Context, name string, args json.RawMessage, tab, pageURL string) (string, error) {
	var a struct{ Q string }
	_ = json.Unmarshal(args, &a)
	b.mu.Lock()
	b.calls = append(b.calls, name+" "+a.Q+" on "+tab+" at "+pageURL)
	b.mu.Unlock()
	switch name {
	case "lookup":
		return "found " + a.Q, nil
	case "search":
		if _, err := b.shop.Act(ctx, tab, actions.Do(actions.Type{Ref: "e2", Text: a.Q})); err != nil {
			return "", err
		}
		if _, err := b.shop.Act(ctx, tab, actions.Do(actions.Click{Ref: "e3"})); err != nil {
			return "", err
		}
		return `{"status":"succeeded"}`, nil
	}
	return "", errors.New("no such tool")
}

func (b *box) ReadOnlyTool(name string) bool { return name == "lookup" }

func (b *box) called() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.calls...)
}

func TestToolbox(t *testing.T) {
	cases := []struct {
		name    string
		allowed []string
		noBox   bool // the task runs under task.WithoutToolbox
		replies []llmtest.Reply
		check   func(t *testing.T, tk *task.Task, reqs []llmtest.Request, b *box, s *shop)
	}{
		{
			name: "offered and called",
			replies: []llmtest.Reply{
				llmtest.ToolCall("lookup", `{"q":"kettle"}`),
				llmtest.ToolCall("search", `{"q":"kettle"}`),
				llmtest.ToolCall("finish", `{"answer":"done"}`),
			},
			check: func(t *testing.T, tk *task.Task, reqs []llmtest.Request, b *box, s *shop) {
				r := reqs[0]
				if !r.HasTool("lookup") || !r.HasTool("search") || !r.HasTool("snapshot") {
					t.Errorf("tools offered: %v", r.Tools)
				}
				clicks := 0
				for _, name := range r.Tools {
					if name == "click" {
						clicks++
					}
				}
				if clicks != 1 {
					t.Errorf("the clashing click was offered: %v", r.Tools)
				}
				if !strings.Contains(r.System, "Skills (lookup, search)") {
					t.Errorf("the prompt does not present the toolbox:\n%s", r.System)
				}
				if got := b.called(); len(got) != 2 || got[0] != "lookup kettle on tab1 at https://shop.test/" || got[1] != "search kettle on tab1 at https://shop.test/" {
					t.Errorf("toolbox calls %v", got)
				}
				if res := reqs[1].Last().Text; res != "found kettle" {
					t.Errorf("read-only result %q", res)
				}
				res := reqs[2].Last().Text
				for _, want := range []string{"result of search:", `{"status":"succeeded"}`, "navigated to another page\npage:\n<page_content>\n# Results for kettle — https://shop.test/search?q=kettle", `button "Buy now"`} {
					if !strings.Contains(res, want) {
						t.Errorf("search result lacks %q:\n%s", want, res)
					}
				}
				if tk.Status != task.StatusSucceeded || len(tk.Steps) != 3 || tk.Steps[1].Tool != "search" || tk.Steps[1].Status != task.StepOK ||
					tk.Steps[1].URLAfter != "https://shop.test/search?q=kettle" {
					t.Fatalf("task %s, steps %+v", tk.Status, tk.Steps)
				}
			},
		},
		{
			name:    "allowlist",
			allowed: []string{"other.test"},
			replies: []llmtest.Reply{
				llmtest.ToolCall("search", `{"q":"kettle"}`),
				llmtest.ToolCall("lookup", `{"q":"kettle"}`),
				llmtest.ToolCall("finish", `{"answer":"done"}`),
			},
			check: func(t *testing.T, tk *task.Task, reqs []llmtest.Request, b *box, s *shop) {
				if tk.Steps[0].Status != task.StepBlocked || !strings.Contains(tk.Steps[0].Error, "search may change the page and acting on shop.test is not allowed") {
					t.Errorf("search step %+v", tk.Steps[0])
				}
				if got := b.called(); len(got) != 1 || !strings.HasPrefix(got[0], "lookup") || len(s.actions()) != 0 {
					t.Errorf("toolbox calls %v, page actions %v", got, s.actions())
				}
			},
		},
		{
			name:  "not offered under WithoutToolbox",
			noBox: true,
			replies: []llmtest.Reply{
				llmtest.ToolCall("search", `{"q":"kettle"}`),
				llmtest.ToolCall("finish", `{"answer":"done"}`),
			},
			check: func(t *testing.T, tk *task.Task, reqs []llmtest.Request, b *box, s *shop) {
				if reqs[0].HasTool("search") || strings.Contains(reqs[0].System, "Skills (") {
					t.Errorf("toolbox offered: %v", reqs[0].Tools)
				}
				if tk.Steps[0].Status != task.StepError || !strings.Contains(tk.Steps[0].Error, `unknown tool "search"`) || len(b.called()) != 0 {
					t.Errorf("step %+v, calls %v", tk.Steps[0], b.called())
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, c.replies...)
			s := newShop()
			b := &box{shop: s}
			r := newRunner(t, srv, s, func(o *task.Options) {
				o.AllowedSites = c.allowed
				o.Toolbox = func(*task.Runner) task.Toolbox { return b }
			})
			ctx := context.Background()
			if c.noBox {
				ctx = task.WithoutToolbox(ctx)
			}
			tk, err := r.Run(ctx, "buy a kettle", "")
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, tk, srv.Requests(), b, s)
		})
	}
}

// TestTrack registers a task run elsewhere: the runner lists, waits for and cancels it, and
// Close waits for its end.
func TestTrack(t *testing.T) {
	r := task.NewRunner(task.Options{Browser: newShop(), Memory: 3})
	now := time.Now()
	tk := &task.Task{ID: "ext-1", Goal: "Run skill x", Status: task.StatusRunning, Model: "skill:x", CreatedAt: now, UpdatedAt: now}
	ctx, tr := r.Track(context.Background(), tk)
	tk.Plan = []task.PlanItem{{Text: "one", Status: task.PlanActive}}
	tr.Update(tk)
	got, err := r.Get(context.Background(), "ext-1")
	if err != nil || got.Status != task.StatusRunning || len(got.Plan) != 1 {
		t.Fatalf("Get: %v %+v", err, got)
	}
	if list, _ := r.List(context.Background(), 10, 0); len(list) != 1 || list[0].ID != "ext-1" {
		t.Fatalf("List: %+v", list)
	}
	wctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if _, err := r.Wait(wctx, "ext-1"); err == nil {
		t.Fatal("Wait returned before the end")
	}
	cancel()
	if err := r.Cancel("ext-1"); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	if !strings.Contains(context.Cause(ctx).Error(), "cancelled by the user") {
		t.Fatalf("cause %v", context.Cause(ctx))
	}
	tk.Status, tk.Error = task.StatusCancelled, "cancelled by the user"
	tr.End(tk)
	tr.End(tk) // again: nothing happens
	done, err := r.Wait(context.Background(), "ext-1")
	if err != nil || done.Status != task.StatusCancelled {
		t.Fatalf("Wait: %v %+v", err, done)
	}

	// Close cancels a tracked task and waits for its end.
	ctx2, tr2 := r.Track(context.Background(), &task.Task{ID: "ext-2", Status: task.StatusRunning})
	var ending atomic.Bool
	go func() {
		<-ctx2.Done()
		time.Sleep(20 * time.Millisecond)
		ending.Store(true)
		tr2.End(&task.Task{ID: "ext-2", Status: task.StatusCancelled})
	}()
	r.Close()
	if !ending.Load() {
		t.Fatal("Close returned before the tracked task ended")
	}
	// After Close, a tracked task's context is over at once.
	ctx3, tr3 := r.Track(context.Background(), &task.Task{ID: "ext-3"})
	if ctx3.Err() == nil {
		t.Fatal("a task tracked after Close can run")
	}
	tr3.End(&task.Task{ID: "ext-3", Status: task.StatusCancelled})
	var nilTr *task.Tracked
	nilTr.Update(tk)
	nilTr.End(tk)
}

// fitBox is a box whose tools serve only goals that mention a kettle on the shop
// (task.ToolboxFit), as skills serve only the requests and sites they were saved for.
type fitBox struct {
	box
	asked []string
}

func (b *fitBox) Fits(goal, pageURL string) bool {
	b.asked = append(b.asked, goal+" at "+pageURL)
	return strings.Contains(goal, "kettle") && strings.HasPrefix(pageURL, "https://shop.test/")
}

// TestToolboxOnlyWhereItFits: a toolbox that says which goals it serves is offered, with its
// words in the system prompt, only to those; other tasks carry neither its schemas nor the
// prompt's words about it.
func TestToolboxOnlyWhereItFits(t *testing.T) {
	for _, tc := range []struct {
		goal    string
		offered bool
	}{
		{"buy a kettle", true},
		{"read the top headline", false},
	} {
		t.Run(tc.goal, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, llmtest.ToolCall("finish", `{"answer":"done"}`))
			s := newShop()
			b := &fitBox{box: box{shop: s}}
			r := newRunner(t, srv, s, func(o *task.Options) { o.Toolbox = func(*task.Runner) task.Toolbox { return b } })
			if _, err := r.Run(context.Background(), tc.goal, "tab1"); err != nil {
				t.Fatal(err)
			}
			req := srv.Requests()[0]
			if req.HasTool("lookup") != tc.offered || strings.Contains(req.System, "Skills (") != tc.offered {
				t.Errorf("toolbox offered %v (tools %v), want %v; system prompt:\n%s", req.HasTool("lookup"), req.Tools, tc.offered, req.System)
			}
			if len(b.asked) != 1 || b.asked[0] != tc.goal+" at https://shop.test/" {
				t.Errorf("Fits was asked %q, want the goal on the task's page", b.asked)
			}
		})
	}
}
