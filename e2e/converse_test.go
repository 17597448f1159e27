package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// lastToolResult is the text of the request's last tool result ("" when none).
func lastToolResult(r llmtest.Request) string {
	res := r.ToolResults()
	if len(res) == 0 {
		return ""
	}
	return res[len(res)-1].Text
}

// TestPanelConversation drives the real side panel (opened as a tab) with the real extension
// on headless Chromium and the scripted model server: the agent asks a question, answered by
// typing in the panel; the finished task shows its model calls and tokens, is saved as a skill
// from the panel and the saved skill replays with no model call; a follow-up in the same tab
// sees the earlier answer, and after "New conversation" it does not; a hand-over waits for the
// person and resumes, on Continue, from a fresh look at the page.
func TestPanelConversation(t *testing.T) {
	oa := llmtest.NewOpenAI(t)
	pe := startPanelEnv(t, api.Options{Model: oa.Model(t), ModelName: "openai/test"})
	pe.waitText(t, "tabstate", "This tab is not shared", 15*time.Second)
	pe.click(t, "share")
	pe.waitText(t, "tabstate", "This tab is shared", 15*time.Second)
	pe.waitListed(t, pe.page)

	t.Run("QuestionAnsweredByTyping", func(t *testing.T) {
		oa.Push(
			llmtest.ToolCall("ask_user", `{"question":"Which name goes on the draft?","choices":["Ada","Grace"]}`),
			llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
				name, ok := strings.CutPrefix(lastToolResult(r), "the user answered: ")
				if !ok {
					return llmtest.ToolCall("fail", `{"reason":"no answer came back"}`)
				}
				return llmtest.ToolCall("type", fmt.Sprintf(`{"ref":%q,"text":%q}`, refOf(r, "textbox", "Name"), name))
			}),
			llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
				return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, refOf(r, "button", "Save draft")))
			}),
			llmtest.ToolCall("finish", `{"answer":"Saved a draft for Lin."}`),
		)
		pe.ask(t, "prepare a draft order for someone")
		pe.waitText(t, "question", "Which name goes on the draft?", 15*time.Second)
		pe.waitText(t, "task-status", "waiting input", 2*time.Second)
		var choices []string
		pe.js(t, `[...document.querySelectorAll('#question-choices button')].map(b => b.textContent)`, &choices)
		if strings.Join(choices, "|") != "Ada|Grace" {
			t.Errorf("choice buttons %q", choices)
		}
		pe.shot(t, "question")
		// typed, not one of the choices
		pe.js(t, `(() => { document.getElementById('question-answer').value = 'Lin';
			document.getElementById('question-form').requestSubmit(); return true; })()`, nil)
		pe.waitText(t, "answer", "Saved a draft for Lin.", 20*time.Second)
		var out string
		pe.pageEval(t, pe.page, `document.getElementById('out').textContent`, &out)
		if out != "Draft saved for Lin." {
			t.Errorf("the page says %q after the task", out)
		}
		if pe.text(t, "question") != "" {
			t.Error("the question stays shown after the answer")
		}
		usage := pe.waitText(t, "task-usage", "4 model calls · ", 5*time.Second)
		if !strings.Contains(usage, " tokens in · ") || !strings.HasSuffix(strings.TrimSpace(usage), " out") {
			t.Errorf("usage line %q", usage)
		}
		t.Logf("usage line: %q", usage)
	})
	if t.Failed() {
		return
	}

	t.Run("SaveAsSkillReplaysWithoutModel", func(t *testing.T) {
		pe.click(t, "save-skill")
		pe.waitText(t, "draft", "Review the skill made from this task", 10*time.Second)
		var md, name string
		pe.js(t, `document.getElementById('draft-md').value`, &md)
		pe.js(t, `document.getElementById('draft-name').value`, &name)
		for _, want := range []string{`target: textbox "Name"`, "{{name}}", `target: button "Save draft"`, "Draft saved for {{name}}", "example: Lin"} {
			if !strings.Contains(md, want) {
				t.Errorf("the draft lacks %q:\n%s", want, md)
			}
		}
		if name == "" {
			t.Fatalf("the draft has no name:\n%s", md)
		}
		pe.shot(t, "task-skill-draft")
		pe.click(t, "draft-save")
		var saved string
		eventually(t, 10*time.Second, "the draft is saved", func() (bool, string) {
			pe.js(t, `document.getElementById('draft-result').textContent`, &saved)
			return strings.HasPrefix(saved, "Saved"), saved
		})
		calls := oa.Calls()
		r := pe.call(t, "POST", "/api/skills/"+name+"/run", map[string]any{"params": map[string]string{"name": "Mo"}, "tab": pe.page.TargetID})
		if r.Status != 200 {
			t.Fatalf("replay the saved skill: HTTP %d %s", r.Status, r.Body)
		}
		var out string
		pe.pageEval(t, pe.page, `document.getElementById('out').textContent`, &out)
		if out != "Draft saved for Mo." {
			t.Errorf("after the replay the page says %q", out)
		}
		if n := oa.Calls() - calls; n != 0 {
			t.Errorf("the saved skill called the model %d times", n)
		}
	})

	t.Run("FollowUpUsesTheEarlierAnswer", func(t *testing.T) {
		oa.Push(llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			first := r.Messages[0].Text
			if strings.Contains(first, "Earlier in this conversation") && strings.Contains(first, "the user answered: Lin") {
				return llmtest.ToolCall("finish", `{"answer":"You picked Lin."}`)
			}
			return llmtest.ToolCall("finish", `{"answer":"I do not know."}`)
		}))
		pe.ask(t, "remind me which name I picked for the draft")
		pe.waitText(t, "answer", "You picked Lin.", 20*time.Second)
		// the recent list shows the requests as typed
		pe.waitText(t, "recent", "remind me which name I picked for the draft", 10*time.Second)
		pe.waitText(t, "recent", "prepare a draft order for someone", time.Second)

		pe.click(t, "new-conversation")
		pe.waitText(t, "notice", "New conversation", 5*time.Second)
		oa.Push(llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			if strings.Contains(r.Messages[0].Text, "Earlier in this conversation") {
				return llmtest.ToolCall("finish", `{"answer":"Still remembered."}`)
			}
			return llmtest.ToolCall("finish", `{"answer":"A fresh start."}`)
		}))
		pe.ask(t, "remind me which name I picked for the draft")
		pe.waitText(t, "answer", "A fresh start.", 20*time.Second)
	})

	t.Run("HandOverWaitsAndResumes", func(t *testing.T) {
		oa.Push(
			llmtest.ToolCall("hand_over", `{"instruction":"Type your name in the Name field, then press Continue."}`),
			llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
				res := lastToolResult(r)
				if strings.Contains(res, "pressed Continue") && strings.Contains(res, "Zoe") {
					return llmtest.ToolCall("finish", `{"answer":"Thanks, Zoe."}`)
				}
				return llmtest.ToolCall("fail", `{"reason":"the page after the hand-over does not show the name"}`)
			}),
		)
		pe.ask(t, "sign me in to the order page")
		pe.waitText(t, "handover", "Type your name in the Name field", 15*time.Second)
		pe.waitText(t, "task-status", "waiting user", 2*time.Second)
		pe.shot(t, "handover")
		// the person does it in the tab, while the task waits
		var ok bool
		pe.pageEval(t, pe.page, `(() => { const n = document.getElementById('name'); n.focus(); n.value = 'Zoe';
			n.dispatchEvent(new Event('input', {bubbles: true})); return true; })()`, &ok)
		r := pe.call(t, "GET", "/api/tasks?limit=1", nil)
		var list api.TaskList
		if err := json.Unmarshal(r.Body, &list); err != nil || len(list.Tasks) == 0 || list.Tasks[0].Status != task.StatusWaitingUser {
			t.Fatalf("the task while the person acts: HTTP %d %s", r.Status, r.Body)
		}
		pe.click(t, "handover-continue")
		pe.waitText(t, "answer", "Thanks, Zoe.", 20*time.Second)
		if pe.text(t, "handover") != "" {
			t.Error("the hand-over stays shown after Continue")
		}
	})
}
