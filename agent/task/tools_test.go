package task

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tmc/langchaingo/llms"
)

// TestToolList: the model's tools come from the action registry (console, errors and
// network included) and every schema is an object with properties (googleai insists). Every
// request offers the core set, whose definitions take at most maxToolTokens cl100k tokens
// (a vision model's screenshot tool aside; every tool's schema was 1,098 tokens when they were
// all offered): the kinds a typical step uses, finish, fail and more_tools, which names each
// of the other tools.
func TestToolList(t *testing.T) {
	for _, vision := range []bool{false, true} {
		all, core := Tools(vision), CoreTools(vision)
		b, err := json.Marshal(slices.DeleteFunc(slices.Clone(core), func(t llms.Tool) bool { return t.Function.Name == "screenshot" }))
		if err != nil {
			t.Fatal(err)
		}
		if n := snapshot.Tokens(string(b)); n > maxToolTokens {
			t.Errorf("vision=%v: the core tools take %d tokens, more than %d", vision, n, maxToolTokens)
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
		for _, want := range []string{"snapshot", "find", "click", "type", "scroll", "finish", "fail", "more_tools", "ask_user", "hand_over", "update_plan", "navigate", "select"} {
			if !slices.Contains(allNames, want) {
				t.Errorf("vision=%v: no tool %s in %v", vision, want, allNames)
			}
		}
		for _, want := range []string{"snapshot", "find", "click", "type", "scroll", "finish", "fail", "more_tools"} {
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
