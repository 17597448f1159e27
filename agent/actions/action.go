package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/target"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Result is what an action did, small enough to hand back to a model.
type Result struct {
	Kind string `json:"kind"`
	// Message says what happened.
	Message string `json:"message"`
	// TargetID is the tab acted on (for open: the new tab).
	TargetID string `json:"targetId,omitempty"`
	// URL and Title are set when the action changed them (navigations among them), and to the
	// page read by the kinds that read one (snapshot, search, extract).
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	// Dialog is a JavaScript dialog the action opened.
	Dialog *snapshot.Dialog `json:"dialog,omitempty"`
	// Value is the result of evaluate.
	Value json.RawMessage `json:"value,omitempty"`
	// Data is a screenshot or PDF, of type MIME.
	Data []byte `json:"data,omitempty"`
	MIME string `json:"mime,omitempty"`
	// Snapshot is the result of kind snapshot.
	Snapshot *snapshot.Snapshot `json:"snapshot,omitempty"`
	// History entries for console, errors and network.
	Console  []ConsoleMessage `json:"console,omitempty"`
	Errors   []PageError      `json:"errors,omitempty"`
	Requests []Request        `json:"requests,omitempty"`
	// Matches are what kind search found.
	Matches []SearchMatch `json:"matches,omitempty"`
	// Records are what kind extract read.
	Records *Records `json:"records,omitempty"`
	// Tabs for kind tabs.
	Tabs []TabInfo `json:"tabs,omitempty"`
	// Downloads for kind downloads, newest first.
	Downloads []Download `json:"downloads,omitempty"`
	// Approved is the safety gate's decision an approval the requester held let run (the
	// person's answer, or the user's own command naming the element); nil when none was needed.
	Approved *gate.Decision `json:"-"`
}

// Act validates and runs action a on tab targetID ("" for the first tab, or the tab the action
// names). Actions on one tab run one after another; errors are written for the agent to act on.
func (s *Service) Act(ctx context.Context, targetID string, a Action) (*Result, error) {
	reg := s.opts.Registry
	if err := reg.Validate(&a); err != nil {
		return nil, err
	}
	k := reg.Kind(a.Kind)
	if t := a.Tab(); t != "" {
		if targetID != "" && targetID != t {
			return nil, badf("%s names tab %s but the request is for tab %s: give one", a.Kind, t, targetID)
		}
		targetID = t
	}
	timeout := s.opts.Timeout
	if a.Timeout > 0 {
		timeout = time.Duration(a.Timeout * float64(time.Second))
	}
	if w, ok := a.Params.(*Wait); ok && w.Seconds > 0 && timeout < time.Duration(w.Seconds*float64(time.Second))+5*time.Second {
		timeout = time.Duration(w.Seconds*float64(time.Second)) + 5*time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	s.watchDownloads(ctx)
	downloadsBefore := s.dl.count()
	rn := &runner{Service: s, kind: k.Name}
	if k.Browser {
		approved, err := s.checkBoundary(ctx, nil, a)
		if err != nil {
			return nil, err
		}
		r, err := k.run(rn, ctx, a.Params)
		if err != nil {
			return nil, err
		}
		r.Kind = k.Name
		r.Approved = approved
		s.noteRead(ctx, nil, k.Name, r)
		if k.Name != "downloads" {
			r.Message += s.dl.begunSince(downloadsBefore)
		}
		return r, nil
	}
	r, err := retryStale(ctx, s, targetID, func(ts *tabState) (*Result, error) {
		if err := ts.lock(ctx); err != nil {
			return nil, err
		}
		defer ts.unlock()
		defer ts.dropHeld(ctx)
		ts.times.begin()
		if d := ts.tab.Dialog(); d != nil && !k.DuringDialog {
			return nil, ts.tab.DialogError()
		}
		// The one decision point: the elements resolved, nothing sent yet.
		approved, err := s.checkAction(ctx, ts, a)
		if err != nil {
			return nil, err
		}
		if nav, err := s.checkBoundary(ctx, ts, a); err != nil {
			return nil, err
		} else if approved == nil {
			approved = nav
		}
		ts.times.mark("gate")
		rn := &runner{Service: s, kind: k.Name, ts: ts}
		ts.takeProbe() // a reading from an earlier action is not this one's
		r, err := k.run(rn, ctx, a.Params)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
				return nil, fmt.Errorf("%s timed out after %v: %w", a.Kind, timeout, err)
			}
			return nil, err
		}
		ts.times.mark("run")
		if s.opts.SettleTimeout > 0 && settles(k) && r.Dialog == nil && !s.settlePage(ctx, ts) {
			r.Message += fmt.Sprintf("; the page was still changing after %v (a clock, an animation or a stream?): take a snapshot to see where it is", s.opts.SettleTimeout)
		}
		ts.times.mark("settle")
		ts.times.log(s.opts.Log, k.Name)
		r.Kind = k.Name
		r.Approved = approved
		if r.TargetID == "" {
			r.TargetID = ts.id
		}
		s.noteRead(ctx, ts, k.Name, r)
		r.Message += s.dl.begunSince(downloadsBefore)
		return r, nil
	})
	// A dialog no session can answer blocks the tab (see blocked.go): the dialog action closes it.
	var blocked *BlockedError
	if d, ok := a.Params.(*Dialog); ok && errors.As(err, &blocked) && blocked.Dialog {
		return s.closeBlockingDialog(ctx, blocked, a, d)
	}
	return r, err
}

func (r *runner) snapshot(ctx context.Context, p *Snapshot) (*Result, error) {
	o := snapshot.Options{}
	if p.Options != nil {
		o = *p.Options
	}
	if o.Scope == "" {
		o.Scope = p.Scope
	}
	snap, err := r.ts.tab.Snapshot(ctx, o)
	if err != nil {
		return nil, err
	}
	return &Result{Message: fmt.Sprintf("snapshot with %d refs", snap.Refs), Snapshot: snap, URL: snap.URL, Title: snap.Title}, nil
}

func (r *runner) tabs(ctx context.Context, _ *Tabs) (*Result, error) {
	tabs, err := r.Tabs(ctx)
	if err != nil {
		return nil, err
	}
	return &Result{Message: fmt.Sprintf("%d tabs", len(tabs)), Tabs: tabs}, nil
}

func (r *runner) focusTab(ctx context.Context, _ *Focus) (*Result, error) {
	if err := r.c.Call(ctx, "", target.CommandActivateTarget, &target.ActivateTargetParams{TargetID: target.ID(r.ts.id)}, nil); err != nil {
		return nil, fmt.Errorf("focus tab: %w", err)
	}
	return &Result{Message: "tab focused"}, nil
}

func (r *runner) closeTab(ctx context.Context, _ *Close) (*Result, error) {
	if err := r.c.Call(ctx, "", target.CommandCloseTarget, &target.CloseTargetParams{TargetID: target.ID(r.ts.id)}, nil); err != nil {
		return nil, fmt.Errorf("close tab: %w", err)
	}
	go r.reset(r.ts)
	return &Result{Message: "tab closed"}, nil
}

func (r *runner) openTab(ctx context.Context, p *Open) (*Result, error) {
	u := "about:blank"
	if p.URL != "" {
		var err error
		if u, err = r.checkURL(p.URL, ""); err != nil {
			return nil, err
		}
	}
	var res struct {
		TargetID string `json:"targetId"`
	}
	if err := r.c.Call(ctx, "", target.CommandCreateTarget, &target.CreateTargetParams{URL: u}, &res); err != nil {
		return nil, fmt.Errorf("open tab: %w", err)
	}
	return &Result{Message: "opened a new tab", TargetID: res.TargetID, URL: u}, nil
}

// tail returns the last limit (default 50) entries of s, copied.
func tail[T any](s []T, limit int) []T {
	if limit <= 0 {
		limit = 50
	}
	if len(s) > limit {
		s = s[len(s)-limit:]
	}
	return append([]T(nil), s...)
}

func (ts *tabState) consoleLog(limit int) *Result {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r := &Result{Console: tail(ts.console, limit)}
	r.Message = fmt.Sprintf("%d console messages", len(r.Console))
	return r
}

func (ts *tabState) pageErrors(limit int) *Result {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r := &Result{Errors: tail(ts.errs, limit)}
	r.Message = fmt.Sprintf("%d page errors", len(r.Errors))
	return r
}

func (ts *tabState) networkLog(limit int) *Result {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r := &Result{Requests: tail(ts.requests, limit)}
	r.Message = fmt.Sprintf("%d requests", len(r.Requests))
	return r
}

// Text is the result in plain text, the one rendering a model or a person reads: the
// message, then what the result carries beyond it, a line each (the page's title and URL, a
// dialog, an evaluated value, the outline of a snapshot, the records as JSON lines, console messages, page errors,
// requests, downloads, tabs). Binary data is described, not written.
func (r *Result) Text() string { return r.text(true) }

// TextBesidePage is [Result.Text] without the page's title and URL, for a door that shows the
// page after the action itself (its outline, its changes or its summary), so that the model
// does not read them twice.
func (r *Result) TextBesidePage() string { return r.text(false) }

func (r *Result) text(page bool) string {
	var b strings.Builder
	b.WriteString(r.Message)
	if page && (r.Title != "" || r.URL != "") {
		fmt.Fprintf(&b, "\nPage: %q %s", r.Title, r.URL)
	}
	if d := r.Dialog; d != nil {
		fmt.Fprintf(&b, "\nDialog: %s %q", d.Type, d.Message)
	}
	if len(r.Value) > 0 {
		fmt.Fprintf(&b, "\nValue: %s", r.Value)
	}
	if len(r.Data) > 0 {
		fmt.Fprintf(&b, "\n(%d bytes of %s not shown)", len(r.Data), r.MIME)
	}
	if r.Snapshot != nil {
		b.WriteString("\n" + r.Snapshot.Text)
	}
	if r.Records != nil {
		b.WriteString("\nRecords (one JSON object a line):\n")
		_ = r.Records.WriteJSONLines(&b) // a strings.Builder does not fail
	}
	for _, m := range r.Console {
		fmt.Fprintf(&b, "\n[%s] %s", m.Type, m.Text)
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "\n%s", e.Text)
	}
	for _, q := range r.Requests {
		st := strconv.Itoa(q.Status)
		switch {
		case q.Failed != "":
			st = "failed: " + q.Failed
		case !q.Done:
			st = "pending"
		}
		fmt.Fprintf(&b, "\n%s %s %s %s", q.Method, q.URL, q.Type, st)
	}
	for _, d := range r.Downloads {
		fmt.Fprintf(&b, "\n%s %q %s %d bytes", d.GUID, d.Name, d.State, d.Size)
		if d.File != "" {
			fmt.Fprintf(&b, " saved as %s in the downloads folder", d.File)
		}
	}
	for _, t := range r.Tabs {
		fmt.Fprintf(&b, "\n%s %q %s", t.TargetID, t.Title, t.URL)
	}
	return strings.TrimRight(b.String(), "\n")
}
