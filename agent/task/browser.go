package task

import (
	"context"
	"encoding/json"
	"fmt"
)

// Browser is what the loop needs from the browser layer. It is deliberately narrow and
// JSON-based so that agent/actions can be adapted to it in a few lines.
type Browser interface {
	// Snapshot returns the tab's role outline (`- role "name" [ref=eN]` lines).
	Snapshot(ctx context.Context, tabID string) (string, error)
	// Act performs one action on the tab and returns a small JSON (or text) result. action is
	// a JSON object shaped like agent/actions.Action; see [BrowserAction] for the kinds used.
	// A returned error is shown to the model as the tool's result, so make it actionable.
	// The result of "open" should carry "targetId" (or "tabId"): the new tab becomes current.
	Act(ctx context.Context, tabID string, action json.RawMessage) (string, error)
	// Tabs lists the shared tabs.
	Tabs(ctx context.Context) ([]Tab, error)
}

// Screenshotter is implemented by browsers that can capture a tab as PNG; the screenshot
// tool is offered to vision models only when the Browser implements it.
type Screenshotter interface {
	Screenshot(ctx context.Context, tabID string) ([]byte, error)
}

// Tab is one shared tab.
type Tab struct {
	ID     string `json:"id"`
	URL    string `json:"url"`
	Title  string `json:"title"`
	Active bool   `json:"active,omitempty"`
}

// actionTools are the model's tools that become [Browser.Act] calls.
var actionTools = []string{"click", "type", "press", "hover", "select", "check", "scroll", "wait",
	"navigate", "back", "forward", "reload", "new_tab", "close_tab"}

// BrowserAction turns a tool call (the model's, or a fastpath action with the same kind and
// fields) into the tab to act on and the action object for [Browser.Act]. The objects follow
// agent/actions.Action, so an adapter only unmarshals them:
//
//	click, hover        {"kind":"click","ref":"e3"}
//	type                {"kind":"type","ref":"e4","text":"hello","submit":true}
//	press               {"kind":"press","key":"Enter","ref":"e4"}   (ref optional)
//	select              {"kind":"select","ref":"e5","values":["Blue"]}
//	check               {"kind":"fill","fields":[{"ref":"e6","value":"true"}]}
//	scroll              {"kind":"scroll","direction":"down","ref":"e7"}  (top/bottom: press Home/End)
//	wait                {"kind":"wait","text":"Saved","seconds":1.5}
//	navigate            {"kind":"navigate","url":"https://github.com"}
//	back/forward/reload {"kind":"back"}
//	new_tab             {"kind":"open","url":"https://…"}  (result carries "targetId")
//	close_tab           {"kind":"close"}                   (on the tab to close)
//	switch_tab          {"kind":"focus"}                   (on the tab to show)
func BrowserAction(tool string, args map[string]any, currentTab string) (tabID string, action json.RawMessage) {
	tabID = currentTab
	out := map[string]any{"kind": tool}
	copyArg := func(keys ...string) {
		for _, k := range keys {
			if v, ok := args[k]; ok && v != nil && v != "" {
				out[k] = v
			}
		}
	}
	switch tool {
	case "check":
		checked := true
		if v, ok := args["checked"].(bool); ok {
			checked = v
		}
		out = map[string]any{"kind": "fill", "fields": []map[string]string{{"ref": argStr(args, "ref"), "value": fmt.Sprint(checked)}}}
	case "wait":
		out["kind"] = "wait"
		copyArg("text")
		if ms, ok := args["ms"].(float64); ok && ms > 0 {
			out["seconds"] = min(ms, 10000) / 1000
		} else if _, ok := out["text"]; !ok {
			out["seconds"] = 1.0
		}
	case "scroll":
		switch argStr(args, "direction") {
		case "top":
			out = map[string]any{"kind": "press", "key": "Home"}
		case "bottom":
			out = map[string]any{"kind": "press", "key": "End"}
		default:
			copyArg("direction", "ref")
		}
	case "new_tab":
		out["kind"] = "open"
		copyArg("url")
	case "close_tab", "switch_tab":
		out["kind"] = map[string]string{"close_tab": "close", "switch_tab": "focus"}[tool]
		if t := argStr(args, "tab"); t != "" {
			tabID = t
		}
	default:
		copyArg("ref", "text", "submit", "key", "values", "direction", "url")
	}
	b, err := json.Marshal(out)
	if err != nil {
		b = []byte(`{"kind":"` + tool + `"}`)
	}
	return tabID, b
}
