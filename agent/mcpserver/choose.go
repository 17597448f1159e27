package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/actions"
)

// TabChooser lets a tool that needs a tab, while none is shared, ask the person to pick one:
// the extension's tab chooser. *relay.Hub is one.
type TabChooser interface {
	// OfferTabWhile asks the extension to offer the person a choice of tab, when no tab is
	// shared and an extension is connected (who says who waits, "agent" here), for as long as
	// ctx lasts: once every caller's wait ended with no tab shared, the browser's chooser says
	// nobody waits any more. It reports whether the extension was asked.
	OfferTabWhile(ctx context.Context, who string) bool
	// Changed returns a channel closed the next time the set of shared tabs changes.
	Changed() <-chan struct{}
}

// DefaultChooseWait is Options.ChooseWait's default.
const DefaultChooseWait = 90 * time.Second

// chooseProgressEvery is how often a call waiting for the person's pick reports it is waiting.
const chooseProgressEvery = 5 * time.Second

// errNotChosen is wrapped by the error of a call that waited for the person to pick a tab and
// none was picked in time.
var errNotChosen = errors.New("no tab was chosen in time")

// waitForChoice runs when a tool failed because no tab is shared: it asks the person to pick a
// tab (Options.Chooser) and waits, up to Options.ChooseWait, until a tab is shared, telling the
// client it waits (progress notifications, when the call asked for them). It reports whether a
// tab is shared now (the caller runs the tool again); an error says why not, for the model.
func (s *Server) waitForChoice(c *call, tool string) (bool, error) {
	ch := s.opts.Chooser
	if ch == nil {
		return false, nil
	}
	changed := ch.Changed()
	if tabs, err := s.opts.Actions.Tabs(c.ctx); err != nil || len(tabs) > 0 {
		return false, nil // a named tab is missing, or the relay is away: the first error stands
	}
	// the chooser waits as long as this call does, and no longer
	wctx, stopWaiting := context.WithCancel(c.ctx)
	defer stopWaiting()
	if !ch.OfferTabWhile(wctx, "agent") {
		return false, nil // no extension connected: the advice to share stands
	}
	wait := s.opts.ChooseWait
	start := time.Now()
	s.opts.Log.Info().Str("tool", tool).Dur("upTo", wait).Msg("no tab shared: the browser asks the person which tab to share; the tool call waits")
	token := c.req.Params.GetProgressToken()
	progress := func() {
		if token == nil {
			return
		}
		waited := time.Since(start)
		_ = c.req.Session.NotifyProgress(c.ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      waited.Seconds(),
			Total:         wait.Seconds(),
			Message: fmt.Sprintf("No tab is shared: the browser now asks the user which tab to share (or they share one with Alt+Shift+S). "+
				"Waiting for their choice (%ds of %ds).",
				int(waited.Seconds()), int(wait.Seconds())),
		})
	}
	progress()
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(chooseProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-changed:
			changed = ch.Changed()
			tabs, err := s.opts.Actions.Tabs(c.ctx)
			if err != nil {
				return false, err
			}
			if len(tabs) > 0 {
				s.opts.Log.Info().Str("tool", tool).Dur("after", time.Since(start)).Msg("the person shared a tab; the tool call goes on")
				return true, nil
			}
		case <-tick.C:
			progress()
		case <-deadline.C:
			return false, fmt.Errorf("%w: %w: the browser asked the user which tab to share (its tab chooser) and none was chosen within %s; "+
				"ask the user to pick one there (or to share one with Alt+Shift+S), then call %s again", actions.ErrNoTab, errNotChosen, wait, tool)
		case <-c.ctx.Done():
			return false, fmt.Errorf("%w: waiting for the user to choose a tab: %w", actions.ErrNoTab, c.ctx.Err())
		}
	}
}
