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
	// Act performs one action on the tab. The model is shown the result's Text, so keep it
	// small (no binary data). A returned error is shown to the model as the tool's result, so
	// make it actionable, and keep it matchable (errors.Is: snapshot.ErrDialogOpen,
	// urlpolicy.ErrRefused). The result of an open action carries the new tab's TargetID: it
	// becomes current.
	Act(ctx context.Context, tabID string, action actions.Action) (*actions.Result, error)
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
