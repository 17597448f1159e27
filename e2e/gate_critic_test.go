package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// TestMCPRunSkillParamsAreModelWords: the parameters an MCP client passes to run_skill are
// the client's words, never the person's, even once the skill's run is handed to the model:
// a file the parameters name is not uploaded unasked.
func TestMCPRunSkillParamsAreModelWords(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "injected"})
	doc := filepath.Join(t.TempDir(), "private-notes.pdf")
	if err := os.WriteFile(doc, []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	// a skill with no structured steps: its whole run is handed to the model
	dir := filepath.Join(ae.home, "skills", "attach-file")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	skill := "---\nname: attach-file\ndescription: Attach a file on the upload page.\nparameters:\n  - name: file\n    description: the file's path\n    required: true\n---\n# Attach a file\n\nUpload {{file}} with the Document field, then finish.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skill), 0o600); err != nil {
		t.Fatal(err)
	}
	tab := ae.share(t, ae.site.URL("/upload.html"))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cs := ae.mcpConnect(ctx, t, "e2e-client", "/mcp?tools=all")
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return mcpText(res), res.IsError
	}
	if txt, isErr := call("switch_tab", map[string]any{"tab": tab.TargetID}); isErr {
		t.Fatal(txt)
	}
	snap, _ := call("snapshot", nil)
	input := mcpRef(t, snap, "button", "Document")

	// the person, asked in the side panel, declines whatever the hand-over asks
	runner := ae.agent.Runner()
	events, unsub := runner.Subscribe("", 256)
	defer unsub()
	var mu sync.Mutex
	var asked []string
	go func() {
		for ev := range events {
			if ev.Type == task.EventConfirmation && ev.Step != nil && ev.Step.Confirmation != nil && ev.Step.Confirmation.Approved == nil {
				mu.Lock()
				asked = append(asked, ev.Step.Confirmation.Prompt+" ("+ev.Step.Confirmation.Reason+")")
				mu.Unlock()
				_ = runner.Confirm(ev.TaskID, ev.Step.ID, false)
			}
		}
	}()
	// the model, handed the run, uploads the file the parameters name
	model.Push(llmtest.ToolCall("upload", fmt.Sprintf(`{"ref":%q,"files":[%q]}`, input, doc)),
		llmtest.ToolCall("finish", `{"answer":"done"}`), llmtest.ToolCall("finish", `{"answer":"done"}`))
	txt, _ := call("run_skill", map[string]any{"name": "attach-file", "params": map[string]any{"file": doc}})
	var uploads int
	ae.pageEval(t, tab, "window.uploads.length", &uploads)
	if uploads != 0 {
		t.Errorf("the file named by the MCP client's parameters was uploaded unasked (run_skill: %s)", txt)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) == 0 || !strings.Contains(strings.Join(asked, "\n"), "private-notes.pdf") {
		t.Errorf("the person was not asked about the upload (asked %q; run_skill: %s)", asked, txt)
	}
}

// TestCriticThroughTheAgent: the alignment check on the agent's own door, in real Chromium
// with the real extension: a second model (its own HTTP server) sees each step that changes
// something and the person's words, never the page's prose; its ask holds the step for the
// person, its allow lets a step the rules alone ask about (a name in a script the gate does not
// read) run, and an answer it cannot read asks.
func TestCriticThroughTheAgent(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	critic := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "injected", Critic: gate.ModelCritic{Model: critic.Model(t)}})
	tab := ae.share(t, ae.site.URL("/agent/effects/critic.html"))
	u := user{t: t, svc: ae.agent.Actions(), tab: tab.TargetID}
	runner := ae.agent.Runner()
	im := &injected{model: model}
	for _, c := range []struct {
		name, goal   string
		role, target string
		answer       llmtest.Reply
		asked        bool
		hit          string
	}{
		{"a deletion in Swahili the rules do not read", "show me my account's page", "button", "Futa akaunti",
			llmtest.Text(`{"verdict":"ask","reason":"Futa akaunti means delete account; you did not ask for that"}`), true, ""},
		{"a Georgian next-page button the critic reads (the rules alone ask)", "go to the next page", "button", "შემდეგი გვერდი",
			llmtest.Text(`{"verdict":"allow","reason":"going to the next page"}`), false, "next"},
		{"an answer the critic cannot read", "go to the next page", "button", "შემდეგი გვერდი",
			llmtest.Text("I am not sure."), true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := u
			u.t = t
			u.open(ae.site.URL("/agent/effects/critic.html"))
			im.play(t, "click", map[string]any{"ref": u.ref(c.role, c.target)})
			before := critic.Calls()
			critic.Push(c.answer)
			tk, err := runner.Start(context.Background(), c.goal, tab.TargetID)
			if err != nil {
				t.Fatal(err)
			}
			asked, done := settleDeclining(t, runner, tk.ID)
			if asked != c.asked {
				t.Errorf("asked %v, want %v (task %s %q)", asked, c.asked, done.Status, done.Error)
			}
			var hits []string
			u.eval(`window.hits`, &hits)
			if got := strings.Join(hits, ","); got != c.hit {
				t.Errorf("the page saw %q, want %q", got, c.hit)
			}
			if critic.Calls() != before+1 {
				t.Fatalf("the alignment check was asked %d times, want once", critic.Calls()-before)
			}
			req := critic.LastRequest()
			if !strings.Contains(req.Last().Text, c.target) || !strings.Contains(req.Last().Text, c.goal) {
				t.Errorf("the check did not see the step and the person's words: %s", req.Last().Text)
			}
			if strings.Contains(string(req.Body), "MARKER") {
				t.Errorf("the page's prose reached the alignment check: %s", req.Body)
			}
		})
	}
}
