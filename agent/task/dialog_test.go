package task_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate/gatetest"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// Page models are written with pagetest: E is an element, ref an element's ref.
var E = pagetest.El

type ref = pagetest.Ref

// page is a fake tab whose page model the test sets; it records every action (validated
// against the action API, so the loop's payloads are ones agent/actions accepts) and simulates
// a JavaScript dialog the way the real stack does: the snapshot has only the dialog (no tree),
// and every action but dialog fails until it is answered.
type page struct {
	mu     sync.Mutex
	nodes  []*snapshot.Node
	acts   []actions.Action
	dialog [2]string // type, message; empty when none
	opens  map[string][2]string
	onAct  func(a actions.Action) // called with the lock held
}

func (p *page) Snapshot(ctx context.Context, tabID string) (*snapshot.Snapshot, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dialog[0] != "" {
		return pagetest.Blocked("https://admin.test/", "Admin", snapshot.Dialog{Type: p.dialog[0], Message: p.dialog[1]}), nil
	}
	return pagetest.Page("https://admin.test/", "Admin", p.nodes...), nil
}

func (p *page) Act(ctx context.Context, tabID string, act actions.Action) (*actions.Result, error) {
	a := act
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("the action API rejects %+v: %w", act, err)
	}
	// the safety gate, as the action service runs it: before anything reaches the page
	if snap, _ := p.Snapshot(ctx, tabID); a.Kind == "dialog" || snap.Dialog == nil {
		if _, err := gatetest.Check(ctx, testGate, snap, a); err != nil {
			return nil, err
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.acts = append(p.acts, a)
	if p.dialog[0] != "" && a.Kind != "dialog" {
		return nil, fmt.Errorf("%w: %s %q blocks the page; accept or dismiss it first", snapshot.ErrDialogOpen, p.dialog[0], p.dialog[1])
	}
	switch a.Kind {
	case "dialog":
		if p.dialog[0] == "" {
			return nil, fmt.Errorf("no JavaScript dialog is open")
		}
		verb := "accepted"
		if d := a.Params.(*actions.Dialog); d.Accept != nil && !*d.Accept {
			verb = "dismissed"
		}
		p.dialog = [2]string{}
		return &actions.Result{Message: verb + " the dialog"}, nil
	case "click":
		if d, ok := p.opens[a.Params.(*actions.Click).Ref]; ok {
			p.dialog = d
			return &actions.Result{Message: "clicked", Dialog: &snapshot.Dialog{Type: d[0], Message: d[1]}}, nil
		}
	}
	if p.onAct != nil {
		p.onAct(a)
	}
	return &actions.Result{Message: "ok"}, nil
}

func (p *page) Tabs(ctx context.Context) ([]task.Tab, error) {
	return []task.Tab{{ID: "tab1", URL: "https://admin.test/", Title: "Admin", Active: true}}, nil
}

func (p *page) actions() []actions.Action {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]actions.Action(nil), p.acts...)
}

// waitConfirmation returns the next confirmation event, failing after 5 s.
func waitConfirmation(t *testing.T, events <-chan task.Event) task.Event {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case e := <-events:
			if e.Type == task.EventConfirmation {
				return e
			}
		case <-timeout:
			t.Fatal("no confirmation event")
		}
	}
}

// A confirm() opened by a click used to leave the agent stuck: no tool could answer it and
// every action failed. The observation now names the dialog and the dialog tool; dismissing
// needs no confirmation, accepting a confirm() that deletes does.
func TestDialogTool(t *testing.T) {
	for _, approve := range []bool{true, false} {
		t.Run(fmt.Sprintf("approve=%v", approve), func(t *testing.T) {
			replies := []llmtest.Reply{
				llmtest.ToolCall("click", `{"ref":"e1"}`),
				llmtest.ToolCall("click", `{"ref":"e2"}`),
				llmtest.ToolCall("dialog", `{"accept":false}`),
				llmtest.ToolCall("click", `{"ref":"e1"}`),
				llmtest.ToolCall("dialog", `{"accept":true}`),
			}
			if approve {
				replies = append(replies, llmtest.ToolCall("finish", `{"answer":"Inbox cleared."}`))
			}
			srv := llmtest.NewOpenAI(t, replies...)
			p := &page{nodes: []*snapshot.Node{E("button", "Clear inbox", ref("e1")), E("button", "Refresh", ref("e2"))},
				opens: map[string][2]string{"e1": {"confirm", "Delete all 12 messages? This cannot be undone."}}}
			r := newRunner(t, srv, p, nil)
			events, unsub := r.Subscribe("", 512)
			defer unsub()
			tk, err := r.Start(context.Background(), "clear my inbox", "tab1")
			if err != nil {
				t.Fatal(err)
			}
			conf := waitConfirmation(t, events)
			c := conf.Step.Confirmation
			if conf.Step.Tool != "dialog" || c.Reason != "deletion" || !strings.Contains(c.Prompt, `accept confirm "Delete all 12 messages?`) {
				t.Fatalf("confirmation %+v on step %s", c, conf.Step.Tool)
			}
			if err := r.Confirm(tk.ID, conf.Step.ID, approve); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			done, err := r.Wait(ctx, tk.ID)
			if err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			// the dialog tool is not in the core set: it joins the tools while a dialog is open
			if reqs[0].HasTool("dialog") || !reqs[1].HasTool("dialog") || !reqs[len(reqs)-1].HasTool("dialog") {
				t.Fatalf("dialog tool offered before the dialog (%v) or not after it (%v)", reqs[0].Tools, reqs[1].Tools)
			}
			// After the click the model is told about the dialog and the tool to answer it.
			obs := reqs[1].Last().Text
			for _, want := range []string{"confirm dialog is open", "Delete all 12 messages?", "Call the dialog tool", "accept=false for Cancel"} {
				if !strings.Contains(obs, want) {
					t.Errorf("observation after the click lacks %q:\n%s", want, obs)
				}
			}
			// An action while the dialog is open fails with a pointer to the dialog tool.
			if blocked := reqs[2].Last().Text; !strings.Contains(blocked, "accept or dismiss it first") || !strings.Contains(blocked, "call the dialog tool") {
				t.Errorf("blocked action result: %s", blocked)
			}
			var kinds []string
			for _, a := range p.actions() {
				k := a.Kind
				if d, ok := a.Params.(*actions.Dialog); ok {
					k += fmt.Sprintf(" accept=%v", d.Accept == nil || *d.Accept)
				}
				kinds = append(kinds, k)
			}
			want := "click dialog accept=false click"
			if approve {
				want += " dialog accept=true"
			}
			if got := strings.Join(kinds, " "); got != want {
				t.Errorf("actions %q, want %q", got, want)
			}
			if approve && done.Status != task.StatusSucceeded || !approve && done.Status != task.StatusCancelled {
				t.Errorf("task %s %q", done.Status, done.Error)
			}
		})
	}
}

// The tools the action API had and the loop lacked: drag, fill, upload, wait for a URL or a
// load state. Each call must become an action agent/actions accepts, with the fields the
// model gave.
func TestNewActionTools(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("drag", `{"ref":"e1","to":"e2"}`),
		llmtest.ToolCall("fill", `{"fields":[{"ref":"e3","value":"Ada"},{"ref":"e4","value":true},{"ref":"e5","value":"France"}]}`),
		llmtest.ToolCall("upload", `{"ref":"e6","files":["/home/ada/cv.pdf"]}`),
		llmtest.ToolCall("wait", `{"url":"/done"}`),
		llmtest.ToolCall("wait", `{"state":"networkidle"}`),
		llmtest.ToolCall("wait", `{"text":"Saved","ms":500}`),
		llmtest.ToolCall("finish", `{"answer":"ok"}`),
	)
	p := &page{nodes: []*snapshot.Node{
		E("listitem", "Card A", ref("e1")),
		E("list", "Done", ref("e2")),
		E("form", "",
			E("textbox", "Name", ref("e3")),
			E("checkbox", "Remember me", ref("e4")),
			E("combobox", "Country", ref("e5")),
			E("button", "Choose file", ref("e6")),
			E("button", "Save", ref("e7"))),
	}}
	r := newRunner(t, srv, p, nil)
	tk, err := r.Run(context.Background(), "move card A to done, fill the form as Ada from France and upload /home/ada/cv.pdf", "tab1")
	if err != nil || tk.Status != task.StatusSucceeded {
		t.Fatalf("%v %s %q", err, tk.Status, tk.Error)
	}
	// fill, drag, upload and wait are named by more_tools and run when called
	first := srv.Requests()[0]
	if first.HasTool("fill") || !first.HasTool("more_tools") || first.HasTool("drag") {
		t.Errorf("tools offered: %v", first.Tools)
	}
	var got []string
	for _, a := range p.actions() {
		b, _ := json.Marshal(a)
		got = append(got, string(b))
	}
	want := []string{
		`{"kind":"drag","ref":"e1","to":"e2"}`,
		`{"kind":"fill","fields":[{"ref":"e3","value":"Ada"},{"ref":"e4","value":"true"},{"ref":"e5","value":"France"}]}`,
		`{"kind":"upload","ref":"e6","files":["/home/ada/cv.pdf"]}`,
		`{"kind":"wait","url":"/done"}`,
		`{"kind":"wait","state":"networkidle"}`,
		`{"kind":"wait","text":"Saved"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("actions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range tk.Steps {
		if s.Status != task.StepOK {
			t.Errorf("step %s %s: %s %s", s.ID, s.Tool, s.Status, s.Error)
		}
	}
}

// Safety on the loop's path: Enter submitted by type, fill into a password field whatever its
// label, an upload the user did not name: each waits for the user (declined here).
func TestSubmitPasswordUploadNeedConfirmation(t *testing.T) {
	account := func(nameFocused bool) []*snapshot.Node {
		name := E("textbox", "Confirm with your name", ref("e1"))
		name.Focused = nameFocused
		return []*snapshot.Node{
			E("form", "Account",
				name,
				E("textbox", "Secret", "password", ref("e2")),
				E("button", "Cancel", ref("e3")),
				E("button", "Delete account", ref("e4"))),
			E("button", "Attach", ref("e5")),
		}
	}
	tests := []struct {
		name, tool, args, reason, prompt string
	}{
		{"type submit", "type", `{"ref":"e1","text":"Ada","submit":true}`, "deletion", `Enter submits the form with button "Delete account"`},
		{"press enter focused", "press", `{"key":"Enter"}`, "deletion", `button "Delete account"`},
		{"fill password", "fill", `{"fields":[{"ref":"e1","value":"Ada"},{"ref":"e2","value":"hunter2"}]}`, "password field", `textbox "Secret" (value hidden)`},
		{"upload", "upload", `{"ref":"e5","files":["/home/ada/cv.pdf"]}`, "uploading a file", "/home/ada/cv.pdf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, llmtest.ToolCall(tt.tool, tt.args))
			p := &page{nodes: account(tt.tool == "press")}
			r := newRunner(t, srv, p, nil)
			events, unsub := r.Subscribe("", 512)
			defer unsub()
			tk, err := r.Start(context.Background(), "tidy my account", "tab1")
			if err != nil {
				t.Fatal(err)
			}
			conf := waitConfirmation(t, events)
			c := conf.Step.Confirmation
			if c.Reason != tt.reason || !strings.Contains(c.Prompt, tt.prompt) || strings.Contains(c.Prompt, "hunter2") {
				t.Errorf("confirmation %q: %s, want %q: …%s…", c.Reason, c.Prompt, tt.reason, tt.prompt)
			}
			_ = r.Confirm(tk.ID, conf.Step.ID, false)
			done, _ := r.Wait(context.Background(), tk.ID)
			if done.Status != task.StatusCancelled || len(p.actions()) != 0 {
				t.Errorf("%s, actions %v", done.Status, p.actions())
			}
		})
	}
}

// TestMoreTools: a request offers the core tools only; more_tools lists the others with what
// they do, refuses names it does not know, and enables the ones named, which are offered from
// then on at the end of the list (the list before them stays the same, for the prompt cache).
func TestMoreTools(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("more_tools", `{}`),
		llmtest.ToolCall("more_tools", `{"enable":["hover","teleport"]}`),
		llmtest.ToolCall("more_tools", `{"enable":["drag","ask_user"]}`),
		llmtest.ToolCall("hover", `{"ref":"e1"}`),
		llmtest.ToolCall("finish", `{"answer":"ok"}`),
	)
	p := &page{nodes: []*snapshot.Node{E("button", "Menu", ref("e1")), E("list", "Done", ref("e2"))}}
	r := newRunner(t, srv, p, nil)
	tk, err := r.Run(context.Background(), "open the menu", "tab1")
	if err != nil || tk.Status != task.StatusSucceeded {
		t.Fatalf("%v %s %q", err, tk.Status, tk.Error)
	}
	reqs := srv.Requests()
	if reqs[0].HasTool("hover") || reqs[0].HasTool("tabs") || !reqs[0].HasTool("click") || !reqs[0].HasTool("more_tools") {
		t.Errorf("first request's tools: %v", reqs[0].Tools)
	}
	if list := reqs[1].Last().Text; !strings.Contains(list, "- hover(ref): Move the mouse over an element.") || !strings.Contains(list, "- tabs: ") || strings.Contains(list, "- click:") {
		t.Errorf("more_tools listed:\n%s", list)
	}
	if res := reqs[2].Last().Text; !strings.Contains(res, `no tool teleport`) || !strings.Contains(res, "enabled hover") {
		t.Errorf("more_tools with an unknown name: %s", res)
	}
	before, after := reqs[1].Tools, reqs[4].Tools
	if want := append(slices.Clone(before), "hover", "drag", "ask_user"); !slices.Equal(after, want) {
		t.Errorf("tools after enabling hover, drag and ask_user:\n%v\nwant\n%v", after, want)
	}
	if got := p.actions(); len(got) != 1 || got[0].Kind != "hover" {
		t.Errorf("actions %v", got)
	}
}
