package standin

import (
	"encoding/json"
	"regexp"

	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Split is a request's size in cl100k tokens (snapshot.Tokens, the count the outline's budgets
// use), by what it is spent on. It counts as llmtest's Request.Split on the agentloop branch
// does (page: what stands inside <page_content> blocks), and is to give way to it.
type Split struct {
	// System is the system prompt.
	System int `json:"system"`
	// Tools is the tool definitions as sent (names, descriptions, parameter schemas).
	Tools int `json:"tools"`
	// Page is the page text in the messages: what stands inside <page_content> blocks.
	Page int `json:"page"`
	// History is the rest of the messages: the goal, the model's calls and text, the tool
	// results' own words.
	History int `json:"history"`
	// Total is the sum of the parts: the whole prompt.
	Total int `json:"total"`
}

// SplitOf counts req's parts. The tools are counted from the request's body when it has one
// (as sent), else from the decoded schemas.
func SplitOf(req llmtest.Request) Split {
	s := Split{System: snapshot.Tokens(req.System), Tools: toolTokens(req)}
	for _, m := range req.Messages {
		page, rest := pageParts(m)
		s.Page += page
		s.History += rest
	}
	s.Total = s.System + s.Tools + s.Page + s.History
	return s
}

// pageBlockRe is one <page_content> block of a message.
var pageBlockRe = regexp.MustCompile(`(?s)<page_content>.*?</page_content>`)

// OutsidePage is text without its <page_content> blocks: the agent's own words.
func OutsidePage(text string) string { return pageBlockRe.ReplaceAllString(text, "") }

// pageParts counts a message's page text (its <page_content> blocks) and the rest (its own
// words, tool calls included).
func pageParts(m llmtest.Message) (page, rest int) {
	for _, b := range pageBlockRe.FindAllString(m.Text, -1) {
		page += snapshot.Tokens(b)
	}
	rest = snapshot.Tokens(OutsidePage(m.Text))
	for _, c := range m.ToolCalls {
		rest += snapshot.Tokens(c.Name) + snapshot.Tokens(c.Args)
	}
	return page, rest
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
