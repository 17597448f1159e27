package task

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tabrelay/tabrelay/snapshot"
)

// Browser is what the loop needs from the browser layer. It is deliberately narrow and
// JSON-based so that agent/actions can be adapted to it in a few lines.
type Browser interface {
	// Snapshot reads the tab: its page model, and the outline text rendered from it
	// (`- role "name" [ref=eN]` lines) that the model is shown.
	Snapshot(ctx context.Context, tabID string) (*snapshot.Snapshot, error)
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
var actionTools = []string{"click", "type", "press", "hover", "drag", "select", "check", "fill", "upload", "dialog",
	"scroll", "wait", "navigate", "back", "forward", "reload", "new_tab", "close_tab"}

// BrowserAction turns a tool call (the model's, or a fastpath action with the same kind and
// fields) into the tab to act on and the action object for [Browser.Act]. The objects follow
// agent/actions.Action, so an adapter only unmarshals them:
//
//	click, hover        {"kind":"click","ref":"e3"}
//	type                {"kind":"type","ref":"e4","text":"hello","submit":true}
//	press               {"kind":"press","key":"Enter","ref":"e4"}   (ref optional)
//	drag                {"kind":"drag","ref":"e3","to":"e9"}
//	select              {"kind":"select","ref":"e5","values":["Blue"]}
//	check               {"kind":"fill","fields":[{"ref":"e6","value":"true"}]}
//	fill                {"kind":"fill","fields":[{"ref":"e4","value":"Ada"},{"ref":"e6","value":"true"}]}
//	upload              {"kind":"upload","ref":"e8","files":["/home/ada/cv.pdf"]}
//	dialog              {"kind":"dialog","accept":false,"promptText":"…"}  (accept defaults to true)
//	scroll              {"kind":"scroll","direction":"down","ref":"e7"}  (top/bottom: press Home/End)
//	wait                {"kind":"wait","text":"Saved"}  (or url, state, seconds: one of them)
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
		// The action API waits for exactly one thing: the first given of text, url, state, ms.
		ms, _ := args["ms"].(float64)
		switch {
		case argStr(args, "text") != "":
			out["text"] = argStr(args, "text")
		case argStr(args, "url") != "":
			out["url"] = argStr(args, "url")
		case argStr(args, "state") != "":
			out["state"] = strings.ToLower(argStr(args, "state"))
		case ms > 0:
			out["seconds"] = min(ms, 10000) / 1000
		default:
			out["seconds"] = 1.0
		}
	case "drag":
		copyArg("ref", "to")
	case "fill":
		out["fields"] = fillFields(args)
	case "upload":
		copyArg("ref")
		out["files"] = fileList(args)
	case "dialog":
		out["accept"] = dialogAccept(args)
		copyArg("promptText")
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

// fillFields reads the fields of a fill call as ref/value pairs; values that are not strings
// (true, 3) are written out.
func fillFields(args map[string]any) []map[string]string {
	list, _ := args["fields"].([]any)
	out := make([]map[string]string, 0, len(list))
	for _, f := range list {
		m, ok := f.(map[string]any)
		if !ok {
			continue
		}
		out = append(out, map[string]string{"ref": argStr(m, "ref"), "value": argStr(m, "value")})
	}
	return out
}

// fileList reads an upload's files: a list of paths, or one path as a string.
func fileList(args map[string]any) []string {
	switch v := args["files"].(type) {
	case string:
		if strings.TrimSpace(v) != "" {
			return []string{v}
		}
	case []any:
		out := make([]string, 0, len(v))
		for _, f := range v {
			if s := strings.TrimSpace(fmt.Sprint(f)); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// dialogAccept reads a dialog call's accept: only an explicit false (or "false") dismisses,
// as in the action API, where accept defaults to true.
func dialogAccept(args map[string]any) bool {
	switch v := args["accept"].(type) {
	case bool:
		return v
	case string:
		return !strings.EqualFold(strings.TrimSpace(v), "false")
	}
	return true
}
