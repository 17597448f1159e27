package task

import (
	"fmt"
	"reflect"

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

func str(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }

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
)

// Tools returns the tool definitions offered to the model: the action registry's tools
// (screenshot only when vision is on) and the loop's own.
func Tools(vision bool) []llms.Tool { return toolsFrom(actions.Default(), vision) }

// toolsFrom derives the browser tools from registry reg.
func toolsFrom(reg *actions.Registry, vision bool) []llms.Tool {
	defs, err := reg.Tools()
	if err != nil {
		panic(fmt.Sprintf("task: the action registry's tool schemas: %v", err)) // a programming error, caught by tests
	}
	ts := make([]llms.Tool, 0, len(defs)+3)
	for _, d := range defs {
		if isScreenshot(d.Kind) && !vision {
			continue
		}
		ts = append(ts, tool(d.Name, d.Description, d.Parameters))
	}
	return append(ts,
		tool(toolUpdatePlan, "Set the plan: 2-7 short steps with their status (pending, active, done, failed).", obj(map[string]any{
			"steps": map[string]any{"type": "array", "items": obj(map[string]any{
				"text": str("step"), "status": str("pending, active, done or failed"),
			}, "text", "status")},
		}, "steps")),
		tool(toolFinish, "The goal is achieved: give the user the answer or a one-line summary of what was done.", obj(map[string]any{"answer": str("answer for the user")}, "answer")),
		tool(toolFail, "The goal cannot be achieved: say why and what the user could do.", obj(map[string]any{"reason": str("reason")}, "reason")),
		tool(toolAskUser, "Ask the user what the goal leaves open instead of guessing (which address, account, item); waits for the answer.", obj(map[string]any{
			"question": str("question"),
			"choices":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "answers to offer (optional)"},
		}, "question")),
		tool(toolHandOver, "Let the person do what only they may (sign-in, CAPTCHA, 2FA code) in this tab; waits for their Continue, then shows the page.", obj(map[string]any{
			"instruction": str("what they must do in the tab"),
		}, "instruction")),
	)
}

// isScreenshot reports whether k is the screenshot kind, offered to vision models only.
func isScreenshot(k *actions.Kind) bool { return k.Params() == reflect.TypeFor[actions.Screenshot]() }

// isReadOnlyTool reports whether a tool never changes the page (no look at the page needed
// afterwards): the loop's own tools and actions of risk class Reads.
func isReadOnlyTool(name string) bool {
	switch name {
	case toolUpdatePlan, toolFinish, toolFail, toolAskUser, toolHandOver:
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
