package task

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tmc/langchaingo/llms"
)

// Schemas are map[string]any throughout: googleai rejects anything else, and every object
// carries "properties" (googleai also insists on that).
func obj(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// str is a string parameter described by desc ("" for none: its name says it).
func str(desc string) map[string]any {
	if desc == "" {
		return map[string]any{"type": "string"}
	}
	return map[string]any{"type": "string", "description": desc}
}

func tool(name, desc string, params map[string]any) llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Description: desc, Parameters: params}}
}

// The loop's own tools, which are not browser actions.
const (
	toolUpdatePlan = "update_plan"
	toolFinish     = "finish"
	toolFail       = "fail"
	// toolAskUser asks the user a question and waits for the answer (Runner.Answer).
	toolAskUser = "ask_user"
	// toolHandOver hands the tab to the person for a step only they may do (signing in, a
	// CAPTCHA, a 2FA code) and waits until they press Continue (Runner.Continue).
	toolHandOver = "hand_over"
	// toolMore lists the browser tools left out of the core set and enables some of them: they
	// are offered in every later request of the task.
	toolMore = "more_tools"
)

// coreKinds are the action kinds whose tools are offered with their schemas in every model
// request: what a typical step uses (read, find, act on elements, type, scroll). The dialog
// tool joins them while a JavaScript dialog is open.
// The other tools are named in more_tools' one-line index and their schemas are offered once
// the model enables them, which keeps the fixed part of a request small (at most
// [maxToolTokens]) and the same from step to step (a provider's prompt cache holds it).
var coreKinds = []reflect.Type{
	reflect.TypeFor[actions.Snapshot](), reflect.TypeFor[actions.Search](), reflect.TypeFor[actions.Click](),
	reflect.TypeFor[actions.Type](), reflect.TypeFor[actions.Scroll](),
}

// maxToolTokens bounds the cl100k tokens of the tool definitions a request offers before the
// model enables more (tested): the rest of a request is for the page.
const maxToolTokens = 500

// isCore reports whether action kind k's tool is in the core set.
func isCore(k *actions.Kind) bool { return slices.Contains(coreKinds, k.Params()) }

// Tools returns every tool the loop answers: the action registry's tools (screenshot only when
// vision is on) and the loop's own. A model is offered [CoreTools] and enables the rest through
// more_tools.
func Tools(vision bool) []llms.Tool {
	core, more := toolsFrom(actions.Default(), vision)
	return append(core, more...)
}

// CoreTools returns the tools offered in every model request, in a fixed order: the core
// browser tools, finish and fail, and more_tools, whose index names the rest.
func CoreTools(vision bool) []llms.Tool {
	core, _ := toolsFrom(actions.Default(), vision)
	return core
}

// toolsFrom derives the tools from registry reg: core holds the core kinds' tools, finish, fail
// and more_tools (indexing the others), more the other browser tools and the loop's rarely used
// ones.
func toolsFrom(reg *actions.Registry, vision bool) (core, more []llms.Tool) {
	defs, err := reg.Tools()
	if err != nil {
		panic(fmt.Sprintf("task: the action registry's tool schemas: %v", err)) // a programming error, caught by tests
	}
	for _, d := range defs {
		if isScreenshot(d.Kind) && !vision {
			continue
		}
		t := tool(d.Name, d.Description, d.Parameters)
		if isCore(d.Kind) || isScreenshot(d.Kind) { // a vision model's way to see the page
			core = append(core, t)
		} else {
			more = append(more, t)
		}
	}
	own := loopTools()
	for _, t := range own {
		switch t.Function.Name {
		case toolFinish, toolFail:
			core = append(core, t)
		default:
			more = append(more, t)
		}
	}
	core = append(core, tool(toolMore, moreIndex(more),
		obj(map[string]any{"enable": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}})))
	return core, more
}

// moreIndex is more_tools' description: the one-line index of the tools outside the core set.
func moreIndex(more []llms.Tool) string {
	names := make([]string, len(more))
	for i, t := range more {
		names[i] = t.Function.Name
	}
	return "Enable by name (schemas follow): " + strings.Join(names, ", ")
}

// paramNames is "(a,b)" for a tool whose schema has properties a and b, required ones first;
// "" for a tool without parameters.
func paramNames(t llms.Tool) string {
	p, _ := t.Function.Parameters.(map[string]any)
	props, _ := p["properties"].(map[string]any)
	if len(props) == 0 {
		return ""
	}
	var req []string
	switch r := p["required"].(type) {
	case []string:
		req = r
	case []any:
		for _, n := range r {
			req = append(req, fmt.Sprint(n))
		}
	}
	names := slices.Clone(req)
	var rest []string
	for n := range props {
		if !slices.Contains(req, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	return "(" + strings.Join(append(names, rest...), ",") + ")"
}

// loopTools are the loop's own tools, which are not browser actions.
func loopTools() []llms.Tool {
	return []llms.Tool{
		tool(toolFinish, "Goal reached.", obj(map[string]any{"answer": str("for the user")}, "answer")),
		tool(toolFail, "The goal cannot be reached.", obj(map[string]any{"reason": str("")}, "reason")),
		tool(toolAskUser, "Ask the user; waits for the answer.", obj(map[string]any{
			"question": str(""),
			"choices":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		}, "question")),
		tool(toolHandOver, "The person does a step in this tab (sign-in, CAPTCHA, 2FA); waits for them.", obj(map[string]any{
			"instruction": str(""),
		}, "instruction")),
		tool(toolUpdatePlan, "Keep a plan for a multi-step goal.", obj(map[string]any{
			"steps": map[string]any{"type": "array", "items": obj(map[string]any{
				"text": str(""), "status": str("pending, active, done or failed"),
			}, "text", "status")},
		}, "steps")),
	}
}

// isScreenshot reports whether k is the screenshot kind, offered to vision models only.
func isScreenshot(k *actions.Kind) bool { return k.Params() == reflect.TypeFor[actions.Screenshot]() }

// isReadOnlyTool reports whether a tool never changes the page (no look at the page needed
// afterwards): the loop's own tools and actions of risk class Reads.
func isReadOnlyTool(name string) bool {
	switch name {
	case toolUpdatePlan, toolFinish, toolFail, toolAskUser, toolHandOver, toolMore:
		return true
	}
	k := toolKind(name)
	return k != nil && k.Risk == actions.Reads
}

// isWriteTool reports whether a tool acts on the page's elements (held to the site
// allowlist).
func isWriteTool(name string) bool {
	k := toolKind(name)
	return k != nil && k.Risk == actions.Writes
}

// toolKind is the action kind behind a model's tool name (nil for other tools).
func toolKind(name string) *actions.Kind {
	for _, k := range actions.Default().All() {
		if k.ToolName() == name {
			return k
		}
	}
	return nil
}

// offered is the tools of the loop's next model request, in an order that only grows at its
// end, so that a provider's prompt cache holds across steps: the core tools, the toolbox's, then
// the tools the model enabled.
func (l *loop) offered() []llms.Tool {
	if l.lastSnap != nil && l.lastSnap.Dialog != nil {
		l.enable("dialog")
	}
	ts := append(CoreTools(l.vision), l.boxTools...)
	return append(ts, l.enabled...)
}

// enable adds tool name, one of the tools outside the core set, to the enabled tools unless
// it is offered already; it reports whether name is such a tool.
func (l *loop) enable(name string) bool {
	_, more := toolsFrom(actions.Default(), l.vision)
	i := slices.IndexFunc(more, func(t llms.Tool) bool { return t.Function.Name == name })
	if i < 0 {
		return false
	}
	if !slices.ContainsFunc(l.enabled, func(t llms.Tool) bool { return t.Function.Name == name }) {
		l.enabled = append(l.enabled, more[i])
	}
	return true
}

// moreTools answers more_tools: with names, it enables those tools for the rest of the task
// (their schemas come with the next request); without, it lists the tools outside the core set
// with what they do. A tool the model calls without enabling it runs all the same (the loop
// answers every tool of [Tools]).
func (l *loop) moreTools(args map[string]any) result {
	_, more := toolsFrom(actions.Default(), l.vision)
	var names []string
	switch v := args["enable"].(type) {
	case []any:
		for _, n := range v {
			names = append(names, fmt.Sprint(n))
		}
	case string:
		names = strings.Split(v, ",")
	}
	if len(names) == 0 {
		var b strings.Builder
		for _, t := range more {
			fmt.Fprintf(&b, "- %s%s: %s\n", t.Function.Name, paramNames(t), t.Function.Description)
		}
		return result{text: b.String() + "Call more_tools with the names you need to enable them."}
	}
	var added, unknown []string
	for _, n := range names {
		n = strings.TrimSpace(n)
		if l.enable(n) {
			added = append(added, n)
		} else if !slices.ContainsFunc(l.offered(), func(t llms.Tool) bool { return t.Function.Name == n }) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		all := make([]string, len(more))
		for i, t := range more {
			all[i] = t.Function.Name
		}
		msg := fmt.Sprintf("no tool %s among the more tools (%s)", strings.Join(unknown, ", "), strings.Join(all, ", "))
		if len(added) > 0 {
			msg += "; enabled " + strings.Join(added, ", ")
		}
		return result{err: errors.New(msg)}
	}
	if len(added) == 0 {
		return result{text: "already offered: " + strings.Join(names, ", ")}
	}
	return result{text: "enabled (their schemas come with your next request): " + strings.Join(added, ", ")}
}
