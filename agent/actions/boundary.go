package actions

import (
	"context"
	"encoding/json"

	"github.com/chromedp/cdproto/runtime"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
)

// This file is the action service's side of the task's boundary (gate.Task): every action
// kind reaches the gate (complete mediation: gate.BoundaryRule names each kind's rule), the
// kinds whose steps the element checks do not read (navigation, history, closing, hovering)
// are judged here, and what the task's reads return is recorded on the task so that none of
// it leaves for another site unasked.

// checkBoundary asks the gate about the kinds checkAction does not propose (ts is nil for the
// browser's kinds, which no tab runs): navigate and open (where they go, judged against the
// task's sites, what they carry, and what the URL's words do), back, forward and reload (the
// history entry they load, and whether it sends a form again), close and hover (the tab's
// page). Other kinds pass (nil, nil).
func (s *Service) checkBoundary(ctx context.Context, ts *tabState, a Action) (*gate.Decision, error) {
	req := gate.From(ctx)
	if req.Who == gate.Caller {
		return nil, nil
	}
	var prop gate.Proposal
	if ts != nil {
		prop.URL = s.targetInfo(ctx, ts.id).URL
	}
	switch p := a.Params.(type) {
	case *Navigate:
		if p.URL == "" {
			return nil, nil
		}
		u, err := s.checkURL(p.URL, prop.URL)
		if err != nil {
			return nil, err
		}
		prop.Action = gate.Action{Kind: "navigate", URL: u}
	case *Open:
		if p.URL == "" {
			return nil, nil
		}
		u, err := s.checkURL(p.URL, "")
		if err != nil {
			return nil, err
		}
		prop.Action = gate.Action{Kind: "open", URL: u}
	case *Back, *Forward, *Reload:
		step := map[string]int{"back": -1, "forward": 1, "reload": 0}[a.Kind]
		entry, err := s.historyEntry(ctx, ts, step)
		if err != nil || entry == "" {
			return nil, err // no entry there: the handler says so
		}
		prop.Action = gate.Action{Kind: a.Kind, URL: entry, Resubmits: ts.posted(entry)}
	case *Close, *Hover:
		if ts == nil {
			return nil, nil
		}
		prop.Action = gate.Action{Kind: a.Kind}
	default:
		return nil, nil
	}
	return s.opts.Gate.CheckAll(ctx, []gate.Proposal{prop}, req, func(d gate.Decision) {
		if d.Level != gate.None {
			s.opts.Log.Info().Str("kind", a.Kind).Str("verdict", d.Verdict.String()).Str("reason", d.Reason).
				Bool("approved", d.Approved).Msg("safety gate")
		}
	})
}

// historyEntry is the URL of the entry step places from the current one in ts's history (0:
// the current one), "" when there is none.
func (s *Service) historyEntry(ctx context.Context, ts *tabState, step int) (string, error) {
	var h struct {
		CurrentIndex int `json:"currentIndex"`
		Entries      []struct {
			URL string `json:"url"`
		} `json:"entries"`
	}
	if err := s.c.Call(ctx, ts.tab.Session(), "Page.getNavigationHistory", nil, &h); err != nil {
		return "", err
	}
	i := h.CurrentIndex + step
	if i < 0 || i >= len(h.Entries) {
		return "", nil
	}
	return h.Entries[i].URL, nil
}

// keyReceiver sets what receives a press whose focused element is a frame the element reader
// could not enter (another site's): the frame's own document, where the keys go.
func (s *Service) keyReceiver(ctx context.Context, ts *tabState, prop *gate.Proposal) {
	if prop.Action.Kind != "press" || prop.Element == nil || prop.Element.Tag != "iframe" {
		return
	}
	var r struct {
		Result runtime.RemoteObject `json:"result"`
	}
	if err := s.c.Call(ctx, ts.tab.Session(), runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: focusedFrameJS, ReturnByValue: new(true)}, &r); err != nil {
		prop.Receiver = "about:unknown-frame" // unreadable: outside every task (fail closed)
		return
	}
	var u string
	if json.Unmarshal(r.Result.Value, &u) != nil || u == "" {
		prop.Receiver = "about:unknown-frame"
		return
	}
	prop.Receiver = u
}

// focusedFrameJS is the URL of the frame that has the focus when the reader stopped at it:
// its src (a frame of another site cannot be entered to ask its own).
const focusedFrameJS = `(() => {
	let a = document.activeElement;
	for (;;) {
		if (a && a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
		if (a && a.tagName === 'IFRAME') { try { if (a.contentDocument && a.contentDocument.activeElement) { a = a.contentDocument.activeElement; continue; } } catch (e) {} return a.src || ''; }
		return '';
	}
})()`

// reads are the kinds whose results carry the page's own words back to the caller.
var reads = map[string]bool{"snapshot": true, "extract": true, "evaluate": true, "search": true, "find": true,
	"console": true, "network": true, "errors": true, "wait": true}

// noteRead records on the task ctx carries (if any) the distinctive values of r, the result of
// an action of kind on tab ts (nil for the browser's kinds).
func (s *Service) noteRead(ctx context.Context, ts *tabState, kind string, r *Result) {
	t := gate.TaskFrom(ctx)
	if t == nil || r == nil {
		return
	}
	if ts == nil { // the browser's kinds: the tab list records itself (Service.Tabs)
		return
	}
	page := r.URL
	if page == "" {
		page = s.targetInfo(ctx, ts.id).URL
	}
	t.Begin(page)
	// the page's own address is read with it (a session token in its query)
	t.Read(page, page)
	if reads[kind] {
		t.Read(page, r.Text())
	}
}
