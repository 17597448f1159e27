package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

type oaPart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL string `json:"url"`
	} `json:"image_url"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// decodeOpenAI turns a chat-completions request into a Request.
func decodeOpenAI(body []byte) (Request, error) {
	var in struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCalls  []oaToolCall    `json:"tool_calls"`
			ToolCallID string          `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("decode chat request: %w", err)
	}
	req := Request{Model: in.Model, Stream: in.Stream, Schemas: map[string]json.RawMessage{}}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
		req.Schemas[t.Function.Name] = t.Function.Parameters
	}
	for i, m := range in.Messages {
		msg := Message{Role: m.Role, ToolCallID: m.ToolCallID}
		if len(m.Content) > 0 && m.Content[0] == '"' {
			if err := json.Unmarshal(m.Content, &msg.Text); err != nil {
				return Request{}, fmt.Errorf("message %d content: %w", i, err)
			}
		} else if len(m.Content) > 0 && m.Content[0] == '[' {
			var parts []oaPart
			if err := json.Unmarshal(m.Content, &parts); err != nil {
				return Request{}, fmt.Errorf("message %d parts: %w", i, err)
			}
			var texts []string
			for _, p := range parts {
				switch p.Type {
				case "text":
					texts = append(texts, p.Text)
				case "image_url":
					msg.Images++
				}
			}
			msg.Text = strings.Join(texts, "\n")
		}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, Call{ID: tc.ID, Name: tc.Function.Name, Args: tc.Function.Arguments})
		}
		if m.Role == "system" {
			if req.System != "" {
				req.System += "\n"
			}
			req.System += msg.Text
			continue
		}
		req.Messages = append(req.Messages, msg)
	}
	return req, nil
}

func openAIToolCalls(calls []Call) []oaToolCall {
	out := make([]oaToolCall, len(calls))
	for i, c := range calls {
		out[i].ID, out[i].Type = c.ID, "function"
		out[i].Function.Name, out[i].Function.Arguments = c.Name, c.Args
	}
	return out
}

func writeOpenAI(w http.ResponseWriter, req Request, r Reply, promptTokens int) {
	finish := "stop"
	if len(r.Calls) > 0 {
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": promptTokens, "completion_tokens": len(r.Text)/4 + 1, "total_tokens": promptTokens + len(r.Text)/4 + 1}
	created := time.Now().Unix()
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": r.Text}
		if len(r.Calls) > 0 {
			msg["tool_calls"] = openAIToolCalls(r.Calls)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-llmtest", "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(delta map[string]any, finish any, usage any) {
		chunk := map[string]any{"id": "chatcmpl-llmtest", "object": "chat.completion.chunk", "created": created, "model": req.Model}
		if delta != nil {
			chunk["choices"] = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}
		} else {
			chunk["choices"] = []any{}
		}
		if usage != nil {
			chunk["usage"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, piece := range splitText(r.Text) {
		send(map[string]any{"content": piece}, nil, nil)
	}
	for i, c := range r.Calls {
		send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil, nil)
		for _, piece := range splitArgs(c.Args) {
			send(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": piece}}}}, nil, nil)
		}
	}
	send(map[string]any{}, finish, nil)
	send(nil, nil, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
}

// splitText cuts text into word-sized pieces for streaming.
func splitText(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(s[min(1, len(s)):], ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// splitArgs cuts a JSON string into two halves, as real servers stream arguments in pieces.
func splitArgs(s string) []string {
	if len(s) < 4 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}
