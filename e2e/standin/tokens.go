package standin

import (
	"encoding/json"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Split is a request's size in cl100k tokens (snapshot.Tokens, the count the outline's budgets
// use), by part.
type Split struct {
	// System is the system prompt.
	System int `json:"system"`
	// Tools is the tool definitions as sent (names, descriptions, parameter schemas).
	Tools int `json:"tools"`
	// Page is what is new in this request: the messages after the model's last turn (the goal
	// on the first request, the tool results and the page after them later).
	Page int `json:"page"`
	// History is the earlier turns: every message up to and including the model's last turn.
	History int `json:"history"`
	// Total is the sum of the parts.
	Total int `json:"total"`
}

// SplitOf counts req's parts. The tools are counted from the request's body when it has one
// (as sent), else from the decoded schemas.
func SplitOf(req llmtest.Request) Split {
	s := Split{System: snapshot.Tokens(req.System), Tools: toolTokens(req)}
	last := LastTurn(req)
	for i, m := range req.Messages {
		n := MessageTokens(m)
		if i <= last {
			s.History += n
		} else {
			s.Page += n
		}
	}
	s.Total = s.System + s.Tools + s.Page + s.History
	return s
}

// LastTurn is the index of the request's last assistant message (-1 when the model has not
// spoken yet).
func LastTurn(req llmtest.Request) int {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "assistant" {
			return i
		}
	}
	return -1
}

// MessageTokens counts a message's text and its tool calls (names and arguments).
func MessageTokens(m llmtest.Message) int {
	n := snapshot.Tokens(m.Text)
	for _, c := range m.ToolCalls {
		n += snapshot.Tokens(c.Name) + snapshot.Tokens(c.Args)
	}
	return n
}

// toolTokens counts the tool definitions.
func toolTokens(req llmtest.Request) int {
	var b struct {
		Tools json.RawMessage `json:"tools"`
	}
	if len(req.Body) > 0 && json.Unmarshal(req.Body, &b) == nil && len(b.Tools) > 0 {
		return snapshot.Tokens(string(b.Tools))
	}
	n := 0
	for _, name := range req.Tools {
		n += snapshot.Tokens(name) + snapshot.Tokens(string(req.Schemas[name]))
	}
	return n
}

// ToolTokens counts each tool's definition as sent (name, description, parameters), by name.
func ToolTokens(req llmtest.Request) map[string]int {
	var b struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	var raw struct {
		Tools []json.RawMessage `json:"tools"`
	}
	out := map[string]int{}
	if json.Unmarshal(req.Body, &b) != nil || json.Unmarshal(req.Body, &raw) != nil || len(b.Tools) != len(raw.Tools) {
		for _, name := range req.Tools {
			out[name] = snapshot.Tokens(name) + snapshot.Tokens(string(req.Schemas[name]))
		}
		return out
	}
	for i, t := range b.Tools {
		out[t.Function.Name] = snapshot.Tokens(string(raw.Tools[i]))
	}
	return out
}
