// Package adapter lets the agent's task loop (agent/task) drive real tabs through the action
// API (agent/actions): it implements task.Browser and task.Screenshotter over an
// actions.Service in a few lines, because the loop already builds actions.Action values.
package adapter

import (
	"context"
	"errors"
	"fmt"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Browser adapts an *actions.Service to task.Browser and task.Screenshotter.
type Browser struct {
	svc *actions.Service
}

var (
	_ task.Browser       = (*Browser)(nil)
	_ task.Screenshotter = (*Browser)(nil)
)

// New returns the adapter over svc.
func New(svc *actions.Service) *Browser { return &Browser{svc: svc} }

// ModelMaxTokens is the token budget of the outline the model reads (the page model under
// Root stays whole); what it leaves out, the model finds with the search tool. The outline of a
// page stays in the model's history until a newer one supersedes it, so it weighs on every
// step: 700 tokens (a few examples of each repeated item, the fields, what is in view) keeps a
// step on a large page under 3,000 tokens in all.
const ModelMaxTokens = 700

// modelRecords is the agent's tool for records as the outline's header names it: extract is not among
// the tools a request offers until the model enables it with more_tools.
const modelRecords = "extract (more_tools enables it)"

// Snapshot returns the tab's compact role snapshot: its page model and outline text, the text
// within ModelMaxTokens.
func (b *Browser) Snapshot(ctx context.Context, tabID string) (*snapshot.Snapshot, error) {
	return b.svc.Snapshot(ctx, tabID, snapshot.Options{MaxTokens: ModelMaxTokens, Tools: snapshot.Tools{Records: modelRecords}})
}

// Act runs action a. Binary payloads (screenshots, PDFs) are left out, and so are search
// matches and snapshots, whose text the message or the loop already holds: the model gets what
// happened, not megabytes. Errors come back as the service returned them, so callers can match
// them (errors.Is).
func (b *Browser) Act(ctx context.Context, tabID string, a actions.Action) (*actions.Result, error) {
	res, err := b.svc.Act(ctx, tabID, a)
	if err != nil {
		return nil, err
	}
	if len(res.Data) > 0 {
		res.Message += fmt.Sprintf(" (%d bytes of %s not shown)", len(res.Data), res.MIME)
		res.Data = nil
	}
	res.Matches = nil // the message lists them, one line each: the model reads them once
	return res, nil
}

// Tabs lists the shared tabs; the first one (the tab the user most recently shared or focused)
// is marked active.
func (b *Browser) Tabs(ctx context.Context) ([]task.Tab, error) {
	tabs, err := b.svc.Tabs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]task.Tab, 0, len(tabs))
	for i, t := range tabs {
		out = append(out, task.Tab{ID: t.TargetID, URL: t.URL, Title: t.Title, Active: i == 0})
	}
	return out, nil
}

// Screenshot captures the tab's viewport as PNG.
func (b *Browser) Screenshot(ctx context.Context, tabID string) ([]byte, error) {
	res, err := b.svc.Act(ctx, tabID, actions.Do(actions.Screenshot{Format: "png"}))
	if err != nil {
		return nil, err
	}
	if len(res.Data) == 0 {
		return nil, errors.New("the screenshot came back empty; try again once the page has loaded")
	}
	return res.Data, nil
}
