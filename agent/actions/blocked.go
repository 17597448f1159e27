package actions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot"
)

// A page that cannot answer. Attaching to a tab enables the Page domain, which the page's
// renderer answers; a page blocked by a JavaScript dialog (alert, confirm, prompt, a "leave
// site?" prompt) or by a script that never yields does not, and Chrome does not tell a debugger
// that attached after a dialog opened about it (Page.javascriptDialogOpening went to the
// sessions that had Page on then; Page.handleJavaScriptDialog answers "No dialog is showing"
// elsewhere). So the service does not wait out its timeout on such a page: when attaching
// takes longer than attachWait, it asks the page directly (probeBlocked) and fails at once with
// a BlockedError saying a dialog blocks it and the way out; a page a script keeps busy may
// still come back, and is named in the error only if the action's time runs out. The dialog action is that way out for a
// dialog: it answers the dialog when the tab's debugger session can, and otherwise reloads the
// page, the one thing that closes a dialog no debugger can answer (closeBlockingDialog).

// ErrPageBusy is wrapped by errors returned while a script keeps a tab's page from answering.
var ErrPageBusy = errors.New("the page does not answer")

// BlockedError says that tab TargetID's page cannot answer and why. It wraps
// snapshot.ErrDialogOpen when a JavaScript dialog blocks it, else ErrPageBusy.
type BlockedError struct {
	TargetID string
	// Dialog: a JavaScript dialog blocks the page (else a busy script, or a paused debugger).
	Dialog bool
}

func (e *BlockedError) Error() string {
	if e.Dialog {
		return fmt.Sprintf("%v in tab %s (an alert, confirm, prompt or \"leave site?\" prompt) that opened while nothing drove the tab: "+
			"its text cannot be read, and the page answers nothing until it closes; "+
			"the dialog action closes it (by reloading the page: Chrome lets no debugger that came later answer such a dialog; "+
			"a \"leave site?\" prompt, which a reload does not close, must be answered in the browser window)",
			snapshot.ErrDialogOpen, e.TargetID)
	}
	return fmt.Sprintf("%v: a script keeps the page of tab %s busy (or the page is paused in a debugger); "+
		"wait and try again, or reload the tab in the browser", ErrPageBusy, e.TargetID)
}

// Is makes errors.Is(err, snapshot.ErrDialogOpen) or errors.Is(err, ErrPageBusy) hold.
func (e *BlockedError) Is(target error) bool {
	if e.Dialog {
		return target == snapshot.ErrDialogOpen
	}
	return target == ErrPageBusy
}

const (
	// attachWait is how long attaching to a tab may take before the service asks why.
	attachWait = 3 * time.Second
	// probeWait bounds each question of probeBlocked.
	probeWait = 1500 * time.Millisecond
	// reloadWait is how long the dialog action waits for a reload to close a dialog.
	reloadWait = 5 * time.Second
	// leaveWait is how long the dialog action waits, after reloading, for the dialog to close
	// before it calls it a "leave site?" prompt, which a reload does not close (the closing
	// comes within milliseconds; the margin is for a busy machine).
	leaveWait = 1500 * time.Millisecond
)

// attach is snapshot.Attach, failing at once with a *BlockedError when a JavaScript dialog
// blocks the page, and naming a busy page in the error when the wait for one runs out (a busy
// page may still come back: it is not given up before then).
func (s *Service) attach(ctx context.Context, targetID string) (*snapshot.Tab, error) {
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	type attached struct {
		tab *snapshot.Tab
		err error
	}
	done := make(chan attached, 1)
	go func() {
		tab, err := snapshot.Attach(actx, s.c, targetID)
		done <- attached{tab, err}
	}()
	wait := time.NewTimer(attachWait)
	defer wait.Stop()
	var busy *BlockedError
	for {
		select {
		case a := <-done:
			if a.err != nil && busy != nil && ctx.Err() != nil {
				return nil, fmt.Errorf("%w (%w)", busy, a.err)
			}
			return a.tab, a.err
		case <-wait.C:
		}
		blocked := s.probeBlocked(ctx, targetID)
		if blocked != nil && blocked.Dialog {
			cancel()
			if a := <-done; a.err == nil {
				_ = a.tab.Close(context.WithoutCancel(ctx)) // it made it after all: let it go, report the dialog
			}
			return nil, blocked
		}
		busy = blocked // nil again when the page answered: attaching is only slow
		wait.Reset(attachWait)
	}
}

// probeBlocked asks tab targetID's page whether it can answer: nil when it does; else a
// *BlockedError whose Dialog says whether a JavaScript dialog blocks it. Chrome ignores input
// while a dialog is up (the input command answers at once) but holds it for a busy page (it
// waits with everything else). Each question has a session of its own: a session's answers
// come in order, so an unanswered evaluate would hold back the input's answer.
func (s *Service) probeBlocked(ctx context.Context, targetID string) *BlockedError {
	ask := func(method string, params any) (answered, ok bool) {
		sid, done, err := s.probeSession(ctx, targetID)
		if err != nil {
			return false, false // cannot tell
		}
		defer done()
		pctx, cancel := context.WithTimeout(ctx, probeWait)
		defer cancel()
		return s.c.Call(pctx, sid, method, params, nil) == nil, true
	}
	if answered, ok := ask(runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: "0"}); answered || !ok {
		return nil // the page answers, or there is no telling: let the attach go on
	}
	// A move to the viewport's corner: dropped while a dialog is up; a busy page gets it late.
	dialog, _ := ask(input.CommandDispatchMouseEvent, &input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved})
	return &BlockedError{TargetID: targetID, Dialog: dialog}
}

// probeSession attaches a flat session to tab targetID for a few commands; done detaches it.
func (s *Service) probeSession(ctx context.Context, targetID string) (sid string, done func(), err error) {
	var at target.AttachToTargetResult
	actx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	if err := s.c.Call(actx, "", target.CommandAttachToTarget, &target.AttachToTargetParams{TargetID: target.ID(targetID), Flatten: new(true)}, &at); err != nil {
		return "", nil, err
	}
	return string(at.SessionID), func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeWait)
		defer cancel()
		_ = s.c.Call(dctx, "", target.CommandDetachFromTarget, &target.DetachFromTargetParams{SessionID: at.SessionID}, nil)
	}, nil
}

// closeBlockingDialog runs the dialog action a on tab be.TargetID, whose page a JavaScript
// dialog blocks that the service could not attach past: it answers the dialog as asked when the
// tab's debugger session can (the relay keeps the session that saw a dialog open), and
// otherwise reloads the page to close it (the dialog then counts as dismissed). The safety gate
// judges it as the dismissal it amounts to, or as the answer asked for.
func (s *Service) closeBlockingDialog(ctx context.Context, be *BlockedError, a Action, p *Dialog) (*Result, error) {
	accept := p.Accept == nil || *p.Accept
	pageURL := s.targetInfo(ctx, be.TargetID).URL
	var approved *gate.Decision
	if req := gate.From(ctx); req.Who != gate.Caller {
		prop := gate.Proposal{Action: gate.Action{Kind: "dialog", Accept: accept, Text: p.PromptText}, URL: pageURL}
		var err error
		if approved, err = s.opts.Gate.CheckAll(ctx, []gate.Proposal{prop}, req, func(d gate.Decision) {
			if d.Level != gate.None {
				s.opts.Log.Info().Str("kind", a.Kind).Str("verdict", d.Verdict.String()).Str("level", d.Level.String()).
					Str("reason", d.Reason).Bool("approved", d.Approved).Msg("safety gate")
			}
		}); err != nil {
			return nil, err
		}
	}
	verb := "accepted"
	if !accept {
		verb = "dismissed"
	}
	answer := func() error {
		sid, done, err := s.probeSession(ctx, be.TargetID)
		if err != nil {
			return err
		}
		defer done()
		return s.c.Call(ctx, sid, page.CommandHandleJavaScriptDialog, &page.HandleJavaScriptDialogParams{Accept: accept, PromptText: p.PromptText}, nil)
	}
	if answer() == nil {
		return &Result{Kind: a.Kind, TargetID: be.TargetID, Approved: approved, Message: verb + " the JavaScript dialog"}, nil
	}
	// No session can answer it: a navigation closes it. The watching session turns the Page
	// domain on first (the browser does so at once; the answer waits for the page), so that a
	// "leave site?" prompt the reload itself raises is told to it, and answered as asked:
	// accepted, the page reloads; dismissed, it stays as it was.
	sid, done, err := s.probeSession(ctx, be.TargetID)
	if err != nil {
		return nil, fmt.Errorf("close the dialog of tab %s: %w", be.TargetID, err)
	}
	defer done()
	events := make(chan string, 8)
	unsub := s.c.Subscribe(func(e cdpclient.Event) {
		if e.SessionID != sid {
			return
		}
		switch e.Method {
		case "Page.loadEventFired", "Page.javascriptDialogOpening", "Page.javascriptDialogClosed":
			select {
			case events <- e.Method:
			default:
			}
		}
	})
	defer unsub()
	// Their answers come after the page answers again: only the events are awaited.
	if err := s.c.Send(ctx, sid, page.CommandEnable, nil); err != nil {
		return nil, fmt.Errorf("close the dialog of tab %s: %w", be.TargetID, err)
	}
	if err := s.c.Send(ctx, sid, page.CommandReload, &page.ReloadParams{}); err != nil {
		return nil, fmt.Errorf("close the dialog of tab %s by reloading the page: %w", be.TargetID, err)
	}
	prompted, closed := false, false
	leavePrompt := fmt.Errorf("%w in tab %s and it did not close when the page was reloaded: it is a \"leave site?\" prompt "+
		"that opened while nothing drove the tab (someone navigated it in the browser); Chrome lets no debugger that came later "+
		"answer it, and neither a reload nor stopping the navigation closes it: answer it in the browser window",
		snapshot.ErrDialogOpen, be.TargetID)
	stuck := time.NewTimer(reloadWait)
	defer stuck.Stop()
	// Chrome closes an alert, confirm or prompt as soon as the reload starts (the watching
	// session hears Page.javascriptDialogClosed within milliseconds), but not a "leave site?"
	// prompt, which belongs to a navigation under way: the page then stays blocked.
	leave := time.NewTimer(leaveWait)
	defer leave.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the page of tab %s was reloaded to close its dialog but did not load: %w", be.TargetID, ctx.Err())
		case <-leave.C:
			if !closed && !prompted {
				return nil, leavePrompt
			}
		case <-stuck.C:
			if closed && !prompted {
				return &Result{Kind: a.Kind, TargetID: be.TargetID, URL: pageURL, Approved: approved,
					Message: "closed the JavaScript dialog by reloading the page (it counts as dismissed); the page is still loading"}, nil
			}
			if !prompted {
				return nil, leavePrompt
			}
		case m := <-events:
			switch {
			case m == "Page.javascriptDialogClosed" && !prompted:
				closed = true // the dialog that blocked the page
			case m == "Page.javascriptDialogOpening" && !prompted:
				prompted = true // the reload's own "leave site?" prompt
				if err := answer(); err != nil {
					return nil, fmt.Errorf("answer the \"leave site?\" prompt of tab %s: %w", be.TargetID, err)
				}
			case m == "Page.javascriptDialogClosed" && prompted && !accept:
				return &Result{Kind: a.Kind, TargetID: be.TargetID, URL: pageURL, Approved: approved,
					Message: "dismissed the \"leave site?\" prompt: the page stays as it was"}, nil
			case m == "Page.loadEventFired":
				return &Result{Kind: a.Kind, TargetID: be.TargetID, URL: pageURL, Approved: approved,
					Message: "closed the JavaScript dialog by reloading the page (it counts as dismissed): it had opened while nothing drove the tab, and Chrome lets no debugger that came later answer it; the page starts anew"}, nil
			}
		}
	}
}
