package task_test

import (
	"testing"

	"github.com/tabrelay/tabrelay/agent/task"
)

func TestUsageString(t *testing.T) {
	for _, tc := range []struct {
		u    task.Usage
		want string
	}{
		{task.Usage{}, "no model"},
		{task.Usage{LLMCalls: 1, PromptTokens: 999, CompletionTokens: 12}, "model: 1 call, 999 tokens in, 12 out"},
		{task.Usage{LLMCalls: 3, PromptTokens: 4210, CompletionTokens: 312}, "model: 3 calls, 4,210 tokens in, 312 out"},
		{task.Usage{LLMCalls: 12, PromptTokens: 1234567, CompletionTokens: 1000}, "model: 12 calls, 1,234,567 tokens in, 1,000 out"},
	} {
		if got := tc.u.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.u, got, tc.want)
		}
	}
}
