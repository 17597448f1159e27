package task_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
)

// TestRequestTokens: on small pages like MiniWoB++'s, the tool definitions of a request take at
// most 500 cl100k tokens until the model enables more, the first request at most 1,500 in all,
// and so does the median request of the task.
func TestRequestTokens(t *testing.T) {
	form := func() task.Browser {
		return &page{nodes: []*snapshot.Node{
			E("heading", "Sign up for the newsletter", "level=1", ref("e1")),
			E("form", "",
				E("textbox", "First name", ref("e2")),
				E("textbox", "Favourite colour", ref("e3")),
				E("checkbox", "Weekly digest", ref("e4")),
				E("button", "Next", ref("e5"))),
		}}
	}
	cases := []struct {
		name    string
		browser func() task.Browser
		goal    string
		replies []llmtest.Reply
	}{
		{"search", func() task.Browser { return newShop() }, "Find the price of a kettle", []llmtest.Reply{
			llmtest.ToolCall("type", `{"ref":"e2","text":"kettle"}`),
			llmtest.ToolCall("click", `{"ref":"e3"}`),
			llmtest.ToolCall("find", `{"text":"kettle"}`),
			llmtest.ToolCall("finish", `{"answer":"39 EUR"}`),
		}},
		{"form", form, "Enter Ada as first name and blue as colour, tick the weekly digest, then press Next", []llmtest.Reply{
			llmtest.ToolCall("type", `{"ref":"e2","text":"Ada"}`),
			llmtest.ToolCall("type", `{"ref":"e3","text":"blue"}`),
			llmtest.ToolCall("more_tools", `{"enable":["check"]}`),
			llmtest.ToolCall("check", `{"ref":"e4","checked":true}`),
			llmtest.ToolCall("click", `{"ref":"e5"}`),
			llmtest.ToolCall("finish", `{"answer":"done"}`),
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(t, c.replies...)
			tk, err := newRunner(t, srv, c.browser(), nil).Run(context.Background(), c.goal, "tab1")
			if err != nil || tk.Status != task.StatusSucceeded {
				t.Fatalf("%v %+v", err, tk)
			}
			var totals []int
			for i, r := range srv.Requests() {
				s := r.Split()
				t.Logf("request %d: %d tokens: system %d, tools %d (%d tools), page %d, history %d", i+1, s.Total(), s.System, s.Tools, len(r.Tools), s.Page, s.History)
				enabled := slices.ContainsFunc(r.Messages, func(m llmtest.Message) bool {
					return slices.ContainsFunc(m.ToolCalls, func(c llmtest.Call) bool { return c.Name == "more_tools" })
				})
				if s.Tools > 500 && !enabled {
					t.Errorf("request %d: tool definitions take %d tokens, want ≤ 500 before the model enables more", i+1, s.Tools)
				}
				totals = append(totals, s.Total())
			}
			if totals[0] > 1500 {
				t.Errorf("first request takes %d tokens, want ≤ 1500", totals[0])
			}
			slices.Sort(totals)
			if med := totals[len(totals)/2]; med > 1500 {
				t.Errorf("median request takes %d tokens, want ≤ 1500", med)
			}
		})
	}
}
