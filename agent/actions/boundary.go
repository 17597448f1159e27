package actions

import (
	"context"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
)

// This file is the action service's side of the task's boundary (gate.Task): navigation is
// judged by the gate like any other action, and what the task's reads return is recorded on
// the task so that none of it leaves for another site unasked.

// checkNavigation asks the gate about a navigate or open (ts is nil for open, which no tab
// runs): where it goes, judged against the task's sites, what it carries, and what the URL's
// words do. Other kinds pass (nil, nil).
func (s *Service) checkNavigation(ctx context.Context, ts *tabState, a Action) (*gate.Decision, error) {
	req := gate.From(ctx)
	if req.Who == gate.Caller {
		return nil, nil
	}
	var raw, kind, page string
	switch p := a.Params.(type) {
	case *Navigate:
		raw, kind = p.URL, "navigate"
		page = s.targetInfo(ctx, ts.id).URL
	case *Open:
		raw, kind = p.URL, "open"
	default:
		return nil, nil
	}
	if raw == "" {
		return nil, nil
	}
	u, err := s.checkURL(raw, page)
	if err != nil {
		return nil, err
	}
	prop := gate.Proposal{Action: gate.Action{Kind: kind, URL: u}, URL: page}
	return s.opts.Gate.CheckAll(ctx, []gate.Proposal{prop}, req, func(d gate.Decision) {
		if d.Level != gate.None {
			s.opts.Log.Info().Str("kind", kind).Str("verdict", d.Verdict.String()).Str("reason", d.Reason).
				Bool("approved", d.Approved).Msg("safety gate")
		}
	})
}

// reads are the kinds whose results carry the page's own words back to the caller.
var reads = map[string]bool{"snapshot": true, "extract": true, "evaluate": true, "search": true, "find": true,
	"console": true, "network": true, "errors": true}

// noteRead records on the task ctx carries (if any) the distinctive values of r, the result of
// an action of kind on tab ts.
func (s *Service) noteRead(ctx context.Context, ts *tabState, kind string, r *Result) {
	t := gate.TaskFrom(ctx)
	if t == nil || ts == nil || r == nil || !reads[kind] {
		return
	}
	page := r.URL
	if page == "" {
		page = s.targetInfo(ctx, ts.id).URL
	}
	t.Begin(page)
	t.Read(page, r.Text())
}
