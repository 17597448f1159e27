package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

type anBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// decodeAnthropic turns a messages request into a Request. Tool results (user messages made of
// tool_result blocks) are reported with Role "tool", one Message per block.
func decodeAnthropic(body []byte) (Request, error) {
	var in struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, fmt.Errorf("decode messages request: %w", err)
	}
	req := Request{Model: in.Model, Stream: in.Stream, Schemas: map[string]json.RawMessage{}}
	if len(in.System) > 0 {
		if in.System[0] == '"' {
			_ = json.Unmarshal(in.System, &req.System)
		} else {
			var blocks []anBlock
			_ = json.Unmarshal(in.System, &blocks)
			for _, b := range blocks {
				req.System += b.Text
			}
		}
	}
	for _, t := range in.Tools {
		req.Tools = append(req.Tools, t.Name)
		req.Schemas[t.Name] = t.InputSchema
	}
	for i, m := range in.Messages {
		if len(m.Content) > 0 && m.Content[0] == '"' {
			msg := Message{Role: m.Role}
			_ = json.Unmarshal(m.Content, &msg.Text)
			req.Messages = append(req.Messages, msg)
			continue
		}
		var blocks []anBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return Request{}, fmt.Errorf("message %d content: %w", i, err)
		}
		msg := Message{Role: m.Role}
		var texts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "image":
				msg.Images++
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, Call{ID: b.ID, Name: b.Name, Args: string(b.Input)})
			case "tool_result":
				res := Message{Role: "tool", ToolCallID: b.ToolUseID}
				if len(b.Content) > 0 && b.Content[0] == '"' {
					_ = json.Unmarshal(b.Content, &res.Text)
				} else {
					var inner []anBlock
					_ = json.Unmarshal(b.Content, &inner)
					for _, ib := range inner {
						res.Text += ib.Text
					}
				}
				req.Messages = append(req.Messages, res)
			}
		}
		msg.Text = strings.Join(texts, "\n")
		if msg.Text != "" || msg.Images > 0 || len(msg.ToolCalls) > 0 {
			req.Messages = append(req.Messages, msg)
		}
	}
	return req, nil
}

func writeAnthropic(w http.ResponseWriter, req Request, r Reply, inputTokens int) {
	stop := "end_turn"
	if len(r.Calls) > 0 {
		stop = "tool_use"
	}
	var blocks []map[string]any
	if r.Text != "" || len(r.Calls) == 0 {
		blocks = append(blocks, map[string]any{"type": "text", "text": r.Text})
	}
	for _, c := range r.Calls {
		blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
	}
	outTokens := len(r.Text)/4 + 1
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "msg_llmtest", "type": "message", "role": "assistant", "model": req.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": inputTokens, "output_tokens": outTokens},
		})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fl, _ := w.(http.Flusher)
	send := func(event string, data map[string]any) {
		data["type"] = event
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if fl != nil {
			fl.Flush()
		}
	}
	send("message_start", map[string]any{"message": map[string]any{"id": "msg_llmtest", "type": "message", "role": "assistant",
		"model": req.Model, "content": []any{}, "usage": map[string]any{"input_tokens": inputTokens, "output_tokens": 1}}})
	for i, b := range blocks {
		switch b["type"] {
		case "text":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			for _, piece := range splitText(r.Text) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "text_delta", "text": piece}})
			}
		case "tool_use":
			send("content_block_start", map[string]any{"index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			args := string(b["input"].(json.RawMessage))
			for _, piece := range splitArgs(args) {
				send("content_block_delta", map[string]any{"index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": piece}})
			}
		}
		send("content_block_stop", map[string]any{"index": i})
	}
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop}, "usage": map[string]any{"output_tokens": outTokens}})
	send("message_stop", map[string]any{})
}
