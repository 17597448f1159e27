package task_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tabrelay/tabrelay/agent/llmtest"
)

// TestRequestTokens: on a small page, the tool schemas take at most 500 cl100k tokens of each
// request, the first request at most 1,500 in all, and so does the median request of the task.
func TestRequestTokens(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("type", `{"ref":"e2","text":"kettle"}`),
		llmtest.ToolCall("click", `{"ref":"e3"}`),
		llmtest.ToolCall("find", `{"text":"kettle"}`),
		llmtest.ToolCall("finish", `{"answer":"39 EUR"}`),
	)
	if _, err := newRunner(t, srv, newShop(), nil).Run(context.Background(), "Find the price of a kettle", "tab1"); err != nil {
		t.Fatal(err)
	}
	var totals []int
	for i, r := range srv.Requests() {
		s := r.Split()
		t.Logf("request %d: %d tokens: system %d, tools %d (%d tools), page %d, history %d", i+1, s.Total(), s.System, s.Tools, len(r.Tools), s.Page, s.History)
		if s.Tools > 500 {
			t.Errorf("request %d: tool definitions take %d tokens, want ≤ 500", i+1, s.Tools)
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
}
