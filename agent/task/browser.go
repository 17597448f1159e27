package task

import (
	"context"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Browser is what the loop needs from the browser layer (package agent/adapter implements it
// over an actions.Service).
type Browser interface {
	// Snapshot reads the tab: its page model, and the outline text rendered from it
	// (`- role "name" [ref=eN]` lines) that the model is shown.
	Snapshot(ctx context.Context, tabID string) (*snapshot.Snapshot, error)
	// Act performs one action on the tab and returns a small JSON (or text) result.
	// A returned error is shown to the model as the tool's result, so make it actionable, and
	// keep it matchable (errors.Is: snapshot.ErrDialogOpen, urlpolicy.ErrRefused).
	// The result of an open action should carry "targetId" (or "tabId"): the new tab becomes
	// current.
	Act(ctx context.Context, tabID string, action actions.Action) (string, error)
	// Tabs lists the shared tabs.
	Tabs(ctx context.Context) ([]Tab, error)
}

// RecordsBrowser is implemented by browsers that hand back the records an action read (the
// extract action's actions.Records) as well as its text: the loop keeps them on the step, so
// the task's reports can export them (package agent/adapter implements it).
type RecordsBrowser interface {
	Browser
	// ActRecords is Act that also returns the records the action read (nil for actions that
	// read none).
	ActRecords(ctx context.Context, tabID string, action actions.Action) (string, *actions.Records, error)
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
