package task

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestToolList: the model's tools come from the action registry (console, errors and
// network included), every schema is an object with properties (googleai insists), and the
// list stays within the size it had when it was written out by hand (6410 bytes of JSON
// without vision, 6615 with) plus the find tool (search, 335 bytes, which lets the model's
// snapshot shrink from a 30 KB cap to a token budget, 2,000 today), the extract tool (536 bytes:
// records from rows, cards and results across pages, in one call instead of a page read and
// many steps), the conversation tools (ask_user and hand_over, 750 bytes) and the downloads
// tool (221 bytes, without which the agent cannot see or wait for a file it downloads), so the
// registry costs no tokens.
func TestToolList(t *testing.T) {
	for _, c := range []struct {
		vision bool
		max    int
	}{{false, 6410 + 335 + 536 + 750 + 221}, {true, 6615 + 335 + 536 + 750 + 221}} {
		tools := Tools(c.vision)
		b, err := json.Marshal(tools)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > c.max {
			t.Errorf("vision=%v: the tool list is %d bytes of JSON, more than %d", c.vision, len(b), c.max)
		}
		var names []string
		for _, tl := range tools {
			names = append(names, tl.Function.Name)
			p, ok := tl.Function.Parameters.(map[string]any)
			if _, has := p["properties"]; !ok || p["type"] != "object" || !has {
				t.Errorf("%s: parameters %v are not an object with properties", tl.Function.Name, tl.Function.Parameters)
			}
		}
		for _, want := range []string{"click", "type", "check", "fill", "wait", "new_tab", "switch_tab", "close_tab", "console", "errors", "network", "finish"} {
			if !slices.Contains(names, want) {
				t.Errorf("vision=%v: no tool %s in %v", c.vision, want, names)
			}
		}
		if slices.Contains(names, "screenshot") != c.vision {
			t.Errorf("vision=%v: screenshot offered: %v", c.vision, slices.Contains(names, "screenshot"))
		}
		for _, hidden := range []string{"evaluate", "pdf", "resize", "open", "focus"} {
			if slices.Contains(names, hidden) {
				t.Errorf("%s is offered to the model", hidden)
			}
		}
	}
}

// TestCapLines: a result or an outline past its cap is cut on a line boundary with a note of
// the lines left out, and one long line is cut within (it was passed whole when it had no
// line break).
func TestCapLines(t *testing.T) {
	long := strings.Repeat("x", 50)
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"a\nb\nc\nd", 4, "a\nb\n[… 2 more lines not shown]"},
		{long, 10, strings.Repeat("x", 10) + "…"},
		{long + "\nb", 10, strings.Repeat("x", 10) + "…\n[… 1 more lines not shown]"},
	} {
		if got := capLines(c.in, c.n, "not shown"); got != c.want {
			t.Errorf("capLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
