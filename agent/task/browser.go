package task

import (
	"context"
	"encoding/json"
)

// Browser is what the loop needs from the browser layer. It is deliberately narrow and
// JSON-based so that agent/actions can be adapted to it in a few lines.
type Browser interface {
	// Snapshot returns the tab's role outline (`- role "name" [ref=eN]` lines).
	Snapshot(ctx context.Context, tabID string) (string, error)
	// Act performs one action on the tab and returns a small JSON (or text) result. action is
	// a JSON object {"kind": "...", ...}; kinds and fields are listed in [ActionKinds].
	// A returned error is shown to the model as the tool's result, so make it actionable.
	// Results may carry "tabId" (new_tab: the new tab, which becomes current).
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

// ActionKinds documents the action objects passed to [Browser.Act]; each is the tool's
// arguments plus "kind":
//
//	{"kind":"click","ref":"e3"}
//	{"kind":"type","ref":"e4","text":"hello","submit":false}
//	{"kind":"press","key":"Enter","ref":"e4"}          (ref optional: focused element)
//	{"kind":"hover","ref":"e3"}
//	{"kind":"select","ref":"e5","values":["Blue"]}
//	{"kind":"check","ref":"e6","checked":true}
//	{"kind":"scroll","direction":"down","ref":"e7"}     (ref optional: the page)
//	{"kind":"wait","text":"Saved","ms":1000}
//	{"kind":"navigate","url":"https://github.com"}
//	{"kind":"back"} {"kind":"forward"} {"kind":"reload"}
//	{"kind":"new_tab","url":"https://…"}                (result {"tabId":"…"})
//	{"kind":"close_tab","tab":"…"}
//	{"kind":"activate_tab","tab":"…"}
var ActionKinds = []string{"click", "type", "press", "hover", "select", "check", "scroll", "wait",
	"navigate", "back", "forward", "reload", "new_tab", "close_tab", "activate_tab"}
