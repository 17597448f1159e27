package standin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/agent/llmtest"
)

// Files hands each request to whoever watches a folder: request n is written to
// Dir/req-NNN.md (readable: the system prompt, the tools with their schemas, the messages, each
// with its cl100k token count) and Dir/req-NNN.json (the decoded request), and the answer is
// read from Dir/ans-NNN.json once it appears:
//
//	{"text": "I'll open the second email.", "tool_calls": [{"name": "click", "args": {"ref": "e7"}}]}
//
// An answer file that cannot be read as an [Answer] (and stays so for a poll: it may be still
// being written) is renamed ans-NNN.json.bad, with the error in Dir/ans-NNN.error, for the
// stand-in to write it again.
type Files struct {
	// Dir is the folder; it must exist.
	Dir string
	// Poll is how often the folder is looked at (default 200 ms).
	Poll time.Duration
}

// Answer writes request n and waits for its answer.
func (f Files) Answer(ctx context.Context, n int, req llmtest.Request) (Answer, error) {
	base := filepath.Join(f.Dir, fmt.Sprintf("req-%03d", n))
	js, err := json.MarshalIndent(struct {
		llmtest.Request
		Split Split          `json:"tokens"`
		Tools map[string]int `json:"tool_tokens"`
	}{req, SplitOf(req), ToolTokens(req)}, "", "  ")
	if err != nil {
		return Answer{}, fmt.Errorf("encode request %d: %w", n, err)
	}
	if err := os.WriteFile(base+".json", js, 0o644); err != nil {
		return Answer{}, fmt.Errorf("write request %d: %w", n, err)
	}
	ansPath := filepath.Join(f.Dir, fmt.Sprintf("ans-%03d.json", n))
	if err := os.WriteFile(base+".md", []byte(Render(n, req, filepath.Base(ansPath))), 0o644); err != nil {
		return Answer{}, fmt.Errorf("write request %d: %w", n, err)
	}
	poll := f.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	var a Answer
	var last []byte // the answer file as the poll before read it
	err = wait(ctx, poll, func() (bool, error) {
		b, err := os.ReadFile(ansPath)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read the answer to request %d: %w", n, err)
		}
		if err := json.Unmarshal(b, &a); err != nil && !bytes.Equal(b, last) {
			last = b // still being written, maybe: judged once it stays the same for a poll
			return false, nil
		}
		last = nil
		if err := json.Unmarshal(b, &a); err != nil || (a.Text == "" && len(a.Calls) == 0) {
			if err == nil {
				err = errors.New("the answer has neither text nor tool_calls")
			}
			msg := fmt.Sprintf("%s: %v\nwrite it again as {\"text\": \"…\", \"tool_calls\": [{\"name\": \"click\", \"args\": {\"ref\": \"e7\"}}]}\n", ansPath, err)
			_ = os.Rename(ansPath, ansPath+".bad")
			_ = os.WriteFile(strings.TrimSuffix(ansPath, ".json")+".error", []byte(msg), 0o644)
			a = Answer{}
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return Answer{}, fmt.Errorf("waiting for %s: %w", ansPath, err)
	}
	return a, nil
}

// Render is request n as a person reads it: the token split, the system prompt, each tool
// with its definition, and the messages, each with its cl100k token count; answerFile names
// the file the answer goes to.
func Render(n int, req llmtest.Request, answerFile string) string {
	s := SplitOf(req)
	var b strings.Builder
	fmt.Fprintf(&b, "# Request %d: %d tokens (system %d, tools %d, page %d, history %d)\n\n", n, s.Total, s.System, s.Tools, s.Page, s.History)
	fmt.Fprintf(&b, "## System prompt (%d tokens)\n\n%s\n\n", s.System, req.System)
	per := ToolTokens(req)
	fmt.Fprintf(&b, "## Tools (%d tokens)\n\n", s.Tools)
	for _, d := range toolDefs(req) {
		fmt.Fprintf(&b, "- %s (%d): %s\n  %s\n", d.Name, per[d.Name], d.Description, d.Parameters)
	}
	fmt.Fprintf(&b, "\n## Messages\n")
	for i, m := range req.Messages {
		who := m.Role
		if m.ToolCallID != "" {
			who += " " + m.ToolCallID
		}
		fmt.Fprintf(&b, "\n### %d. %s (%d tokens)\n\n", i+1, who, MessageTokens(m))
		if m.Text != "" {
			b.WriteString(m.Text)
			b.WriteByte('\n')
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "→ %s %s [%s]\n", c.Name, c.Args, c.ID)
		}
		if m.Images > 0 {
			fmt.Fprintf(&b, "(%d image(s))\n", m.Images)
		}
	}
	fmt.Fprintf(&b, "\n## Answer\n\nWrite %s: {\"text\": \"…\", \"tool_calls\": [{\"name\": \"…\", \"args\": {…}}]}\n", answerFile)
	return b.String()
}

// toolDef is one tool's definition as sent.
type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// toolDefs reads the tool definitions from the request's body (from the decoded names and
// schemas when it has none).
func toolDefs(req llmtest.Request) []toolDef {
	var b struct {
		Tools []struct {
			Function toolDef `json:"function"`
		} `json:"tools"`
	}
	var out []toolDef
	if json.Unmarshal(req.Body, &b) == nil && len(b.Tools) > 0 {
		for _, t := range b.Tools {
			out = append(out, t.Function)
		}
		return out
	}
	for _, name := range req.Tools {
		out = append(out, toolDef{Name: name, Parameters: req.Schemas[name]})
	}
	return out
}
