package task

import (
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

func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

func strs(desc string) map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": desc}
}

func tool(name, desc string, params map[string]any) llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name, Description: desc, Parameters: params}}
}

var refArg = str("element ref, e.g. e12")

// plain is a string property that needs no description.
var plain = map[string]any{"type": "string"}

// Tools returns the tool definitions offered to the model; screenshot only when vision is on.
func Tools(vision bool) []llms.Tool {
	ts := []llms.Tool{
		tool("snapshot", "Read the current tab as a role outline with element refs.", obj(map[string]any{})),
		tool("click", "Click an element.", obj(map[string]any{"ref": refArg}, "ref")),
		tool("type", "Type text into a field (replaces its content). submit=true presses Enter after.", obj(map[string]any{
			"ref": refArg, "text": str("text to type"), "submit": boolean("press Enter afterwards"),
		}, "ref", "text")),
		tool("press", "Press a key (Enter, Escape, Tab, ArrowDown, Control+a…), on an element or the focused one.", obj(map[string]any{
			"key": str("key name"), "ref": str("optional element ref"),
		}, "key")),
		tool("hover", "Move the mouse over an element.", obj(map[string]any{"ref": refArg}, "ref")),
		tool("drag", "Drag an element onto another.", obj(map[string]any{"ref": refArg, "to": str("drop target ref")}, "ref", "to")),
		tool("fill", "Fill several fields at once (true/false for checkboxes, radios, switches).", obj(map[string]any{
			"fields": map[string]any{"type": "array", "items": obj(map[string]any{"ref": plain, "value": plain}, "ref", "value")},
		}, "fields")),
		tool("upload", "Set a file input's files (paths on the user's computer).", obj(map[string]any{"ref": refArg, "files": strs("paths")}, "ref", "files")),
		tool("dialog", "Answer the open JavaScript alert/confirm/prompt dialog.", obj(map[string]any{
			"accept": boolean("true: OK, false: Cancel"), "promptText": str("prompt answer"),
		}, "accept")),
		tool("select", "Choose option(s) in a select/listbox by label or value.", obj(map[string]any{
			"ref": refArg, "values": strs("options to select"),
		}, "ref", "values")),
		tool("check", "Set a checkbox, radio or switch.", obj(map[string]any{
			"ref": refArg, "checked": boolean("true to check, false to uncheck"),
		}, "ref", "checked")),
		tool("scroll", "Scroll the page or an element.", obj(map[string]any{
			"direction": str("up, down, left or right"), "ref": str("optional element ref to scroll into view or within"),
		}, "direction")),
		tool("wait", "Wait for text, a URL containing url, a load state, or ms (max 10000).", obj(map[string]any{
			"text": str("text to wait for"), "url": str("URL part"), "state": str("load, domcontentloaded or networkidle"),
			"ms": map[string]any{"type": "integer", "description": "milliseconds"},
		})),
		tool("navigate", "Open a URL in the current tab.", obj(map[string]any{"url": str("absolute URL")}, "url")),
		tool("back", "Go back in history.", obj(map[string]any{})),
		tool("forward", "Go forward in history.", obj(map[string]any{})),
		tool("reload", "Reload the tab.", obj(map[string]any{})),
		tool("tabs", "List the shared tabs (id, title, url).", obj(map[string]any{})),
		tool("switch_tab", "Make another shared tab the current one.", obj(map[string]any{"tab": str("tab id from tabs")}, "tab")),
		tool("new_tab", "Open a URL in a new tab, which becomes current.", obj(map[string]any{"url": str("absolute URL")}, "url")),
		tool("close_tab", "Close a tab (default: the current one).", obj(map[string]any{"tab": str("optional tab id")})),
		tool("update_plan", "Set the plan: 2-7 short steps with their status (pending, active, done, failed).", obj(map[string]any{
			"steps": map[string]any{"type": "array", "items": obj(map[string]any{
				"text": str("step"), "status": str("pending, active, done or failed"),
			}, "text", "status")},
		}, "steps")),
		tool("finish", "The goal is achieved: give the user the answer or a one-line summary of what was done.", obj(map[string]any{"answer": str("answer for the user")}, "answer")),
		tool("fail", "The goal cannot be achieved: say why and what the user could do.", obj(map[string]any{"reason": str("reason")}, "reason")),
	}
	if vision {
		ts = append(ts, tool("screenshot", "See the current tab as an image (for layouts, images, canvases the outline cannot show).", obj(map[string]any{})))
	}
	return ts
}

// readOnlyTools never change the page (no snapshot diff needed afterwards).
func isReadOnlyTool(name string) bool {
	switch name {
	case "snapshot", "tabs", "screenshot", "update_plan", "finish", "fail", "switch_tab":
		return true
	}
	return false
}
