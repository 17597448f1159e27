package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tmc/langchaingo/llms"
)

func TestLegacyMaxTokensField(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		srv := llmtest.NewOpenAI(t, llmtest.Text("ok"))
		cfg := srv.Config("local-model")
		cfg.LegacyMaxTokens = legacy
		m, err := llm.New(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := llms.GenerateFromSinglePrompt(context.Background(), m, "hi", llms.WithMaxTokens(77)); err != nil {
			t.Fatal(err)
		}
		body := string(srv.LastRequest().Body)
		if got := strings.Contains(body, `"max_tokens":77`); got != legacy {
			t.Errorf("legacy=%v: body %s", legacy, body)
		}
		if srv.LastRequest().Model != "local-model" {
			t.Errorf("model %q", srv.LastRequest().Model)
		}
	}
}
