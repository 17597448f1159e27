package standin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/tabrelay/tabrelay/agent/llmtest"
)

// ErrRecordAgain is what a replay's errors are (errors.Is) when the agent no longer sends what
// the recording answered: the conversation must be recorded again.
var ErrRecordAgain = errors.New("the conversation must be recorded again")

// StaleError says why a recorded answer no longer fits the agent's request.
type StaleError struct {
	// Conversation is the conversation's name.
	Conversation string
	// Request is the request's number (from 1).
	Request int
	// Why is what does not fit.
	Why string
	// Record is how to record the conversation again.
	Record string
}

func (e *StaleError) Error() string {
	msg := fmt.Sprintf("conversation %s, request %d: %s; the conversation must be recorded again", e.Conversation, e.Request, e.Why)
	if e.Record != "" {
		msg += " (" + e.Record + ")"
	}
	return msg
}

// Is makes a StaleError match ErrRecordAgain.
func (e *StaleError) Is(target error) bool { return target == ErrRecordAgain }

// Replay answers from a recorded conversation: request n gets the recorded answer n, with every
// element ref in its tool calls' arguments moved onto the current request's outline. A ref is
// found by the outline line it pointed to in the recorded request (role, name and marks such
// as [icon], e.g. `button "trash" [icon]`): the same ref when the current request shows it on
// that same line, else the element on the line with the same role and name (the same one of
// several, counted in order). An element that cannot be found, or a request the recording does
// not have, is a [StaleError].
type Replay struct {
	// Conv is the recording.
	Conv *Conversation
	// Record says how to record it again (a command line), for the error messages.
	Record string
}

// refKeys are the argument names whose string values are element refs.
var refKeys = map[string]bool{"ref": true, "to": true, "scope": true, "target": true}

// Answer returns the recorded answer to request n, its refs moved.
func (r Replay) Answer(_ context.Context, n int, req llmtest.Request) (Answer, error) {
	stale := func(format string, args ...any) error {
		return &StaleError{Conversation: r.Conv.Name, Request: n, Why: fmt.Sprintf(format, args...), Record: r.Record}
	}
	if n > len(r.Conv.Exchanges) {
		return Answer{}, stale("the agent sent a request the recording does not have (it has %d): the agent now needs more model calls for this task", len(r.Conv.Exchanges))
	}
	rec := r.Conv.Exchanges[n-1]
	if why := diverged(rec.Request, req); why != "" {
		return Answer{}, stale("%s", why)
	}
	for _, name := range toolsCalled(rec.Answer) {
		if !req.HasTool(name) && !rec.Request.HasTool(name) {
			continue // a tool the recording itself was not offered: replay it as recorded
		}
		if !req.HasTool(name) {
			return Answer{}, stale("the recorded answer calls %s, which the agent no longer offers in this request (it offers %s)", name, strings.Join(req.Tools, ", "))
		}
	}
	out := Answer{Text: rec.Answer.Text}
	for _, c := range rec.Answer.Calls {
		args, err := Reanchor(c.Args, rec.Request, req)
		if err != nil {
			return Answer{}, stale("%s %s: %v", c.Name, c.Args, err)
		}
		out.Calls = append(out.Calls, Call{ID: c.ID, Name: c.Name, Args: args})
	}
	return out, nil
}

func toolsCalled(a Answer) []string {
	var out []string
	for _, c := range a.Calls {
		out = append(out, c.Name)
	}
	return out
}

// Reanchor moves the element refs in a tool call's arguments from the outline of recorded
// onto the outline of current.
func Reanchor(args json.RawMessage, recorded, current llmtest.Request) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	changed := false
	var walk func(v any) error
	walk = func(v any) error {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if s, ok := e.(string); ok && refKeys[k] {
					ref, err := MoveRef(s, recorded, current)
					if err != nil {
						return err
					}
					if ref != s {
						x[k], changed = ref, true
					}
					continue
				}
				if err := walk(e); err != nil {
					return err
				}
			}
		case []any:
			for _, e := range x {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(v); err != nil {
		return nil, err
	}
	if !changed {
		return args, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	return b, nil
}

// outlineRe reads an outline line: its element (role, name, marks) before the ref, and the
// ref. Leading indentation and diff marks (+ added, - removed, ~ changed) are not part of it.
var outlineRe = regexp.MustCompile(`(?m)^[\s+~\-]*(\S[^\n]*?)\s*\[ref=([^\]\s]+)\]`)

// Element is one element line of an outline.
type Element struct {
	// Line is the whole line.
	Line string
	// Elem is what the line says of the element before its ref: role, name and marks
	// (`button "trash" [icon]`), without indentation or diff marks.
	Elem string
	// Ref is its ref.
	Ref string
}

// Elements lists the element lines of an outline (or of any text holding outline lines).
func Elements(text string) []Element {
	var out []Element
	for _, sm := range outlineRe.FindAllStringSubmatch(text, -1) {
		out = append(out, Element{Line: strings.TrimSpace(sm[0]), Elem: sm[1], Ref: sm[2]})
	}
	return out
}

// line is one outline line of a request.
type line struct {
	msg  int    // message index
	elem string // role, name and marks before the ref
	ref  string
}

// outlineLines lists the outline lines of the request's messages in order.
func outlineLines(req llmtest.Request) []line {
	var out []line
	for i, m := range req.Messages {
		for _, e := range Elements(m.Text) {
			out = append(out, line{msg: i, elem: e.Elem, ref: e.Ref})
		}
	}
	return out
}

// MoveRef finds the element ref pointed to in recorded on current's outline. A ref recorded
// is looked up on its latest outline line in recorded; a value that is on no outline line
// there (not a ref) is kept as it is.
func MoveRef(ref string, recorded, current llmtest.Request) (string, error) {
	rec := outlineLines(recorded)
	at := -1
	for i := len(rec) - 1; i >= 0; i-- {
		if rec[i].ref == ref {
			at = i
			break
		}
	}
	if at < 0 {
		return ref, nil
	}
	want := rec[at]
	// which of the lines with this element in that message it was
	nth := 0
	for _, l := range rec[:at] {
		if l.msg == want.msg && l.elem == want.elem {
			nth++
		}
	}
	cur := outlineLines(current)
	for i := len(cur) - 1; i >= 0; i-- {
		if cur[i].ref == ref && cur[i].elem == want.elem {
			return ref, nil
		}
	}
	// the latest message of current that shows the element, and its nth line with it
	last := -1
	for _, l := range cur {
		if l.elem == want.elem {
			last = max(last, l.msg)
		}
	}
	if last < 0 {
		return "", fmt.Errorf("no line `%s` on the current outline (ref %s when recorded)", want.elem, ref)
	}
	var same []line
	for _, l := range cur {
		if l.msg == last && l.elem == want.elem {
			same = append(same, l)
		}
	}
	if nth >= len(same) {
		return "", fmt.Errorf("the current outline has %d line(s) `%s`, the recorded one was number %d (ref %s)", len(same), want.elem, nth+1, ref)
	}
	return same[nth].ref, nil
}

// failed reports whether a tool result says its call failed or did not run.
func failed(result string) bool {
	return strings.HasPrefix(result, "error") || strings.HasPrefix(result, "not run")
}

// diverged says how the tool results in current differ from the recording's (a call that
// failed then and succeeds now, or the reverse; more or fewer results), or "" when they agree:
// answers recorded after a divergence were given to another page.
func diverged(recorded, current llmtest.Request) string {
	rec, cur := recorded.ToolResults(), current.ToolResults()
	if len(rec) != len(cur) {
		return fmt.Sprintf("the request has %d tool result(s), the recording %d", len(cur), len(rec))
	}
	for i := range rec {
		if failed(rec[i].Text) != failed(cur[i].Text) {
			return fmt.Sprintf("tool result %d differs from the recording: recorded %.160q, now %.160q", i+1, rec[i].Text, cur[i].Text)
		}
	}
	return ""
}
