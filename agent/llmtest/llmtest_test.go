package llmtest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tmc/langchaingo/llms"
)

var clickTool = llms.Tool{Type: "function", Function: &llms.FunctionDefinition{
	Name: "click", Description: "click an element",
	Parameters: map[string]any{"type": "object", "properties": map[string]any{"ref": map[string]any{"type": "string"}}, "required": []string{"ref"}},
}}

func TestProviders(t *testing.T) {
	for _, proto := range []string{"openai", "anthropic"} {
		for _, stream := range []bool{false, true} {
			name := proto
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				replies := []llmtest.Reply{llmtest.ToolCall("click", `{"ref":"e3"}`).WithText("Clicking it."), llmtest.Text("all done here")}
				var srv *llmtest.Server
				if proto == "openai" {
					srv = llmtest.NewOpenAI(t, replies...)
				} else {
					srv = llmtest.NewAnthropic(t, replies...)
				}
				model := srv.Model(t)
				ctx := context.Background()
				var streamed strings.Builder
				opts := []llms.CallOption{llms.WithTools([]llms.Tool{clickTool})}
				if stream {
					opts = append(opts, llm.Streaming(func(_ context.Context, s string) error { streamed.WriteString(s); return nil }))
				}
				msgs := []llms.MessageContent{
					llms.TextParts(llms.ChatMessageTypeSystem, "be brief"),
					llms.TextParts(llms.ChatMessageTypeHuman, "click the button"),
				}
				resp, err := model.GenerateContent(ctx, msgs, opts...)
				if err != nil {
					t.Fatal(err)
				}
				var calls []llms.ToolCall
				for _, c := range resp.Choices {
					calls = append(calls, c.ToolCalls...)
				}
				if len(calls) != 1 || calls[0].FunctionCall.Name != "click" || !strings.Contains(calls[0].FunctionCall.Arguments, "e3") {
					t.Fatalf("tool calls %+v", calls)
				}
				msgs = append(msgs,
					llms.MessageContent{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{llms.ToolCall{ID: calls[0].ID, Type: "function", FunctionCall: calls[0].FunctionCall}}},
					llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: calls[0].ID, Name: "click", Content: "clicked"}}},
				)
				resp, err = model.GenerateContent(ctx, msgs, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if got := resp.Choices[0].Content; got != "all done here" {
					t.Fatalf("final text %q", got)
				}
				if stream && !strings.Contains(streamed.String(), "all done here") {
					t.Errorf("streamed %q", streamed.String())
				}
				if stream && strings.Contains(streamed.String(), "arguments") {
					t.Errorf("tool deltas leaked into the text stream: %q", streamed.String())
				}
				if srv.Calls() != 2 {
					t.Fatalf("calls %d", srv.Calls())
				}
				r := srv.Requests()[1]
				if r.System != "be brief" || !r.HasTool("click") || r.Model != "test-model" || r.Stream != stream {
					t.Errorf("request %+v", r)
				}
				res := r.ToolResults()
				if len(res) != 1 || res[0].Text != "clicked" || res[0].ToolCallID != calls[0].ID {
					t.Errorf("tool results %+v", res)
				}
				if len(r.Messages) != 3 || len(r.Messages[1].ToolCalls) != 1 {
					t.Errorf("messages %+v", r.Messages)
				}
			})
		}
	}
}

func TestHTTPErrorAndDynamic(t *testing.T) {
	srv := llmtest.NewOpenAI(t, llmtest.HTTPError(429, "slow down"), llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Text("you said " + r.Last().Text)
	}))
	m := srv.Model(t)
	_, err := llms.GenerateFromSinglePrompt(context.Background(), m, "x")
	if err == nil || !strings.Contains(err.Error(), "slow down") {
		t.Fatalf("err %v", err)
	}
	out, err := llms.GenerateFromSinglePrompt(context.Background(), m, "hello")
	if err != nil || out != "you said hello" {
		t.Fatalf("%q %v", out, err)
	}
}

// TestNewServerKeepsProblems: outside a test, a request the script has no reply for is answered
// with an error and kept for Problems.
func TestNewServerKeepsProblems(t *testing.T) {
	s := llmtest.NewServer("openai", llmtest.Text("hello"))
	defer s.Close()
	post := func() int {
		resp, err := http.Post(s.URL+"/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(); code != http.StatusOK {
		t.Fatalf("first request: %d, want 200", code)
	}
	if p := s.Problems(); len(p) != 0 {
		t.Fatalf("problems after a scripted reply: %v", p)
	}
	if code := post(); code != http.StatusInternalServerError {
		t.Fatalf("unscripted request: %d, want 500", code)
	}
	if p := s.Problems(); len(p) != 1 || !strings.Contains(p[0], "no scripted reply") {
		t.Fatalf("problems %v, want the unscripted request", p)
	}
}
