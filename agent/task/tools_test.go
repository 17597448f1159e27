package task

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/llms"
)

// TestToolList: the model's tools come from the action registry (console, errors and
// network included) and every schema is an object with properties (googleai insists). Every
// request offers the core set, whose JSON must stay within 4,700 bytes (it was 8,252 bytes for
// every tool when the whole list was offered): the kinds a typical step uses, the loop's own
// tools and more_tools, which names each of the other tools.
func TestToolList(t *testing.T) {
	for _, vision := range []bool{false, true} {
		all, core := Tools(vision), CoreTools(vision)
		b, err := json.Marshal(core)
		if err != nil {
			t.Fatal(err)
		}
		if max := 4700 + 250*btoi(vision); len(b) > max {
			t.Errorf("vision=%v: the core tools are %d bytes of JSON, more than %d", vision, len(b), max)
		}
		names := func(ts []llms.Tool) []string {
			var out []string
			for _, tl := range ts {
				out = append(out, tl.Function.Name)
			}
			return out
		}
		allNames, coreNames := names(all), names(core)
		for _, tl := range all {
			p, ok := tl.Function.Parameters.(map[string]any)
			if _, has := p["properties"]; !ok || p["type"] != "object" || !has {
				t.Errorf("%s: parameters %v are not an object with properties", tl.Function.Name, tl.Function.Parameters)
			}
		}
		for _, want := range []string{"click", "type", "check", "fill", "wait", "new_tab", "switch_tab", "close_tab", "console", "errors", "network", "finish", "more_tools"} {
			if !slices.Contains(allNames, want) {
				t.Errorf("vision=%v: no tool %s in %v", vision, want, allNames)
			}
		}
		for _, want := range []string{"snapshot", "find", "click", "type", "fill", "select", "check", "scroll", "navigate", "finish", "fail", "ask_user", "hand_over", "more_tools"} {
			if !slices.Contains(coreNames, want) {
				t.Errorf("vision=%v: %s is not in the core set %v", vision, want, coreNames)
			}
		}
		more := core[len(core)-1].Function
		for _, n := range allNames {
			if !slices.Contains(coreNames, n) && !strings.Contains(more.Description, n) {
				t.Errorf("more_tools does not name %s: %q", n, more.Description)
			}
		}
		if slices.Contains(allNames, "screenshot") != vision || slices.Contains(coreNames, "screenshot") != vision {
			t.Errorf("vision=%v: screenshot offered: %v", vision, slices.Contains(coreNames, "screenshot"))
		}
		for _, hidden := range []string{"evaluate", "pdf", "resize", "open", "focus"} {
			if slices.Contains(allNames, hidden) {
				t.Errorf("%s is offered to the model", hidden)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
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
