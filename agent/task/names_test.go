package task

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
	"github.com/tmc/langchaingo/llms"
)

// toolMentions finds in text what names a tool or a tool's parameter: snake_case words (tools
// such as ask_user), "<word> action" or "<word> tool", "call <word>", and "<tool> with a
// <param> ref" or "<tool> <param>=" for parameters. It returns the tool words and, for the
// parameter forms, "tool.param".
var (
	snakeRe  = regexp.MustCompile(`\b[a-z]+(?:_[a-z]+)+\b`)
	kindRe   = regexp.MustCompile(`\b(?:the |a )?([a-z_]+) (?:action|tool)\b|\bcall ([a-z_]+)\b`)
	paramRe  = regexp.MustCompile(`\b([a-z_]+) (?:with (?:a |an )?)?([a-z_]+)(?:=| ref\b)`)
	notTools = []string{"page_content"}
)

// checkNames reports each tool or parameter text names that is not offered: a tool must be one
// of tools (offered or in more_tools' index), a parameter one of its schema's properties.
func checkNames(text string, tools []llms.Tool) []string {
	byName := map[string]llms.Tool{}
	for _, t := range tools {
		byName[t.Function.Name] = t
	}
	kinds := map[string]bool{}
	for _, k := range actions.Default().All() {
		kinds[k.Name] = true
		if k.ToolName() != "" {
			kinds[k.ToolName()] = true
		}
	}
	var bad []string
	for _, w := range snakeRe.FindAllString(text, -1) {
		if _, ok := byName[w]; !ok && !slices.Contains(notTools, w) {
			bad = append(bad, fmt.Sprintf("tool %s", w))
		}
	}
	for _, m := range kindRe.FindAllStringSubmatch(text, -1) {
		w := m[1] + m[2]
		if _, ok := byName[w]; !ok && kinds[w] {
			bad = append(bad, fmt.Sprintf("tool %s (%q)", w, m[0]))
		}
	}
	for _, m := range paramRe.FindAllStringSubmatch(text, -1) {
		t, ok := byName[m[1]]
		if !ok {
			if kinds[m[1]] {
				bad = append(bad, fmt.Sprintf("tool %s (%q)", m[1], m[0]))
			}
			continue
		}
		props, _ := t.Function.Parameters.(map[string]any)["properties"].(map[string]any)
		if _, ok := props[m[2]]; !ok {
			bad = append(bad, fmt.Sprintf("parameter %s of %s (%q)", m[2], m[1], m[0]))
		}
	}
	return slices.Compact(bad)
}

// TestPromptNamesWhatExists: every tool and parameter the system prompt names is one the
// model can call under that name (the core tools, or those more_tools' index names).
func TestPromptNamesWhatExists(t *testing.T) {
	tools := Tools(true)
	prompt := buildSystemPrompt([]string{"shop.test"}, "do it again", []*Task{{Goal: "read the news", Status: StatusSucceeded, Answer: "ok"}})
	for _, bad := range checkNames(prompt, tools) {
		t.Errorf("the system prompt names %s, which the model is not offered", bad)
	}
	// the checker itself: it catches a wrong tool, a kind by its action name, and a parameter
	for _, tc := range []struct{ text, want string }{
		{"call look_around first", "tool look_around"},
		{"the search action finds them", "tool search"},
		{"snapshot with a frame ref shows it", "parameter frame of snapshot"},
		{"snapshot depth=2", "parameter depth of snapshot"},
	} {
		if got := checkNames(tc.text, tools); len(got) != 1 || !strings.HasPrefix(got[0], tc.want) {
			t.Errorf("checkNames(%q) = %q, want %s", tc.text, got, tc.want)
		}
	}
	for _, ok := range []string{"find reaches any element, snapshot with a scope ref reads one part", "call finish", "snapshot scope=<ref>", "ask_user, hand_over",
		"find searches them, snapshot with scope=<ref> shows a part", "extract reads them as records"} {
		if got := checkNames(ok, tools); len(got) != 0 {
			t.Errorf("checkNames(%q) = %q, want nothing", ok, got)
		}
	}
}

// TestOutlineHeaderNamesWhatExists: what a page outline's header tells the model to use for
// what it leaves out (searching the page, reading a part, reading repeated items) is offered
// under that name.
func TestOutlineHeaderNamesWhatExists(t *testing.T) {
	items := []any{pagetest.Ref("e2")}
	for i := range 120 {
		items = append(items, pagetest.El("listitem", "", pagetest.El("link", fmt.Sprintf("Product %d", i), pagetest.Ref(fmt.Sprintf("e%d", 10+i))),
			pagetest.Text(fmt.Sprintf("%d.99 EUR", i))))
	}
	s := pagetest.Page("https://shop.test/", "Shop", pagetest.El("list", "Products", items...))
	s.Render(snapshot.Options{MaxTokens: 300})
	if !strings.Contains(s.Text, "left out") {
		t.Fatalf("the test page's outline leaves nothing out:\n%s", s.Text)
	}
	for _, bad := range checkNames(s.Text, Tools(false)) {
		t.Errorf("the outline's header names %s, which the model is not offered:\n%s", bad, capLines(s.Text, 600, "not shown"))
	}
}
