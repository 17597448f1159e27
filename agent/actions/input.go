package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot"
)

// callFn runs a JavaScript function with this = objectID and returns its JSON value.
func (s *Service) callFn(ctx context.Context, session, objectID, fn string, args ...any) (json.RawMessage, error) {
	cargs := make([]*runtime.CallArgument, len(args))
	for i, a := range args {
		v, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode argument %d of a page function: %w", i+1, err)
		}
		cargs[i] = &runtime.CallArgument{Value: v}
	}
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exc *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := s.c.Call(ctx, session, runtime.CommandCallFunctionOn, &runtime.CallFunctionOnParams{
		ObjectID: runtime.RemoteObjectID(objectID), FunctionDeclaration: fn, Arguments: cargs, ReturnByValue: new(true), AwaitPromise: new(true),
	}, &r); err != nil {
		return nil, err
	}
	if r.Exc != nil {
		d := r.Exc.Exception.Description
		if d == "" {
			d = r.Exc.Text
		}
		return nil, &scriptError{clip(d, 300)}
	}
	return r.Result.Value, nil
}

// observe runs an input action, then waits briefly for a navigation it started or a dialog it
// opened, and reports URL and title changes.
func (s *Service) observe(ctx context.Context, ts *tabState, fn func() (string, error)) (*Result, error) {
	before := s.targetInfo(ctx, ts.id)
	ts.times.mark("info_before")
	session := ts.tab.Session()
	nav := make(chan struct{}, 1)
	loaded := make(chan struct{}, 1)
	unsub := s.c.Subscribe(func(e cdpclient.Event) {
		if e.SessionID != session {
			return
		}
		switch e.Method {
		case "Page.frameRequestedNavigation", "Page.frameStartedLoading", "Page.frameStartedNavigating":
			if mainFrameEvent(e, ts.id) {
				select {
				case nav <- struct{}{}:
				default:
				}
			}
		case "Page.loadEventFired", "Page.frameStoppedLoading":
			if e.Method == "Page.loadEventFired" || mainFrameEvent(e, ts.id) {
				select {
				case loaded <- struct{}{}:
				default:
				}
			}
		}
	})
	defer unsub()
	msg, err := fn()
	if err != nil {
		return nil, err
	}
	ts.times.mark("input")
	r := &Result{Message: msg}
	// A navigation the input started is announced by the time the page has run the task after
	// the input (a link, a form submission, location.href in a handler): wait for that
	// (afterInput), at most 120 ms (an alert blocks the page), and for the load if a navigation
	// began.
	// Events arrive in order, so a navigation begun before the probe's answer is seen.
	waitLoad := func() {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-loaded:
				return
			case <-t.C:
				if ts.tab.Dialog() != nil {
					return
				}
			case <-wctx.Done():
				r.Message += "; the page is still loading"
				return
			}
		}
	}
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		s.afterInput(ctx, ts)
	}()
	select {
	case <-nav:
		waitLoad()
		ts.takeProbe() // about the document that was left: settling looks at the new one
	case <-settled:
		select {
		case <-nav:
			waitLoad()
			ts.takeProbe()
		default:
		}
	case <-ctx.Done():
	}
	ts.times.mark("after")
	if d := ts.tab.Dialog(); d != nil {
		r.Dialog = d
		r.Message += fmt.Sprintf("; it opened a %s dialog %q: accept or dismiss it", d.Type, clip(d.Message, 200))
		return r, nil
	}
	after := s.targetInfo(ctx, ts.id)
	ts.times.mark("info_after")
	if after.URL != "" && after.URL != before.URL {
		r.URL, r.Title = after.URL, after.Title
		r.Message += "; the page is now " + after.URL
	} else if after.Title != before.Title {
		r.Title = after.Title
	}
	return r, nil
}

// settle waits until the page in session has rendered its next frame and run the task after
// it (afterFrameJS), at most 120 ms (an alert blocks the page).
func (s *Service) settle(ctx context.Context, session string) {
	pctx, cancel := context.WithTimeout(ctx, 120*time.Millisecond)
	defer cancel()
	_ = s.c.Call(pctx, session, runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: settleJS, AwaitPromise: new(true)}, nil)
}

// settleJS resolves after the page's next frame and the task after it (afterFrameJS).
const settleJS = `new Promise(r => {
	let done = false;
	const f = () => { if (!done) { done = true; r(0); } };
	` + afterFrameJS + `
})`

func mainFrameEvent(e cdpclient.Event, targetID string) bool {
	var p struct {
		FrameID string `json:"frameId"`
	}
	return json.Unmarshal(e.Params, &p) == nil && p.FrameID == targetID
}

func (s *Service) targetInfo(ctx context.Context, id string) TabInfo {
	var r struct {
		TargetInfo TabInfo `json:"targetInfo"`
	}
	c2, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = s.c.Call(c2, "", target.CommandGetTargetInfo, &target.GetTargetInfoParams{TargetID: target.ID(id)}, &r)
	return r.TargetInfo
}

// aim is an element ready for pointer input.
type aim struct {
	el   *snapshot.Element
	x, y float64 // center in the main frame's viewport (CSS pixels)
	// lx, ly are that point in the element's own frame's viewport (x, y in the main frame)
	lx, ly float64
	w, h   float64
	// background: the page is not visible (see moveMouse)
	background bool
}

const measureJS = `function() {
	const el = this.nodeType === 1 ? this : this.parentElement;
	if (!el || !el.isConnected) return {detached: true};
	let r = el.getBoundingClientRect();
	if (r.width === 0 && r.height === 0) {
		const rs = el.getClientRects();
		if (rs.length) r = rs[0];
	}
	const st = getComputedStyle(el);
	const hidden = st.visibility !== 'visible' || r.width === 0 || r.height === 0 ||
		(el.checkVisibility && !el.checkVisibility({visibilityProperty: true}));
	let disabled = false;
	for (let n = el; n && n.nodeType === 1; n = n.parentElement) {
		if (n.disabled === true || n.matches(':disabled') || n.getAttribute('aria-disabled') === 'true') { disabled = true; break; }
		if (n.tagName === 'FIELDSET' && n.disabled) { disabled = true; break; }
	}
	const x0 = Math.max(r.left, 0), y0 = Math.max(r.top, 0);
	const x1 = Math.min(r.right, innerWidth), y1 = Math.min(r.bottom, innerHeight);
	return {x: (x0 + x1) / 2, y: (y0 + y1) / 2, w: r.width, h: r.height, hidden, disabled,
		outside: x1 <= x0 || y1 <= y0, tag: el.tagName, background: document.visibilityState !== 'visible'};
}`

// measureHitJS is measureJS and, for an element it finds shown, hitJS at its centre (as hit).
const measureHitJS = `function() {
	const m = (` + measureJS + `).call(this);
	if (!m.detached && !m.hidden && !m.outside) m.hit = (` + hitJS + `).call(this, m.x, m.y);
	return m;
}`

// originJS returns the position of an iframe element's content box in its frame's viewport.
const originJS = `function() {
	const r = this.getBoundingClientRect(), st = getComputedStyle(this);
	return {x: r.left + this.clientLeft + parseFloat(st.paddingLeft), y: r.top + this.clientTop + parseFloat(st.paddingTop)};
}`

// hitJS checks that the point (frame viewport coordinates) hits this element (or a descendant,
// across open shadow roots). When something else covers that point, it looks for another point
// of the element that is not covered (as Playwright does: elementFromPoint at points spread over
// each of its boxes) and answers that point; only when none is visible does it describe what
// covers the element.
const hitJS = `function(x, y) {
	const at = (px, py) => {
		let h = document.elementFromPoint(px, py);
		while (h && h.shadowRoot) { const d = h.shadowRoot.elementFromPoint(px, py); if (!d || d === h) break; h = d; }
		return h;
	};
	const up = n => n.parentNode || n.host || null;
	const hits = h => {
		for (let n = h; n; n = up(n)) if (n === this) return true;
		for (let n = this; n; n = up(n)) if (n === h && (h.tagName === 'SELECT' || h.tagName === 'LABEL')) return true;
		return h.tagName === 'LABEL' && h.control === this;
	};
	const h = at(x, y);
	if (!h) return {ok: false, by: 'nothing (the point is outside the page)'};
	if (hits(h)) return {ok: true, x, y};
	const own = this.nodeType === 1 ? this : this.parentElement;
	const spread = [0.5, 0.25, 0.75, 0.1, 0.9, 0.4, 0.6, 0.03, 0.97];
	for (const r of own ? own.getClientRects() : []) {
		const x0 = Math.max(r.left, 0), y0 = Math.max(r.top, 0);
		const x1 = Math.min(r.right, innerWidth), y1 = Math.min(r.bottom, innerHeight);
		if (x1 <= x0 || y1 <= y0) continue;
		for (const fy of spread) for (const fx of spread) {
			const px = x0 + (x1 - x0) * fx, py = y0 + (y1 - y0) * fy;
			const g = at(px, py);
			if (g && hits(g)) return {ok: true, x: px, y: py};
		}
	}
	const name = e => {
		const l = e.getAttribute && (e.getAttribute('aria-label') || '');
		if (l) return l;
		const by = e.getAttribute && e.getAttribute('aria-labelledby');
		if (by) { const t = by.split(/\s+/).map(id => (e.getRootNode().getElementById ? e.getRootNode().getElementById(id) : document.getElementById(id))).filter(Boolean).map(x => x.textContent).join(' ').trim(); if (t) return t; }
		const hd = e.querySelector && e.querySelector('h1,h2,h3,h4,h5,h6');
		if (hd) return hd.textContent.trim();
		return (e.innerText || e.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
	};
	const role = e => e.getAttribute('role') || ({DIALOG: 'dialog', BUTTON: 'button', A: 'link', IMG: 'img', IFRAME: 'iframe'}[e.tagName] || e.tagName.toLowerCase());
	for (let n = h; n && n.nodeType === 1; n = up(n)) {
		if (n.tagName === 'DIALOG' || ['dialog', 'alertdialog'].includes(n.getAttribute('role')) || n.getAttribute('aria-modal') === 'true') {
			return {ok: false, by: role(n) + ' "' + name(n) + '"', dialog: true};
		}
	}
	// an overlay: describe the dialog inside it if there is one
	const d = h.querySelector && h.querySelector('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true]');
	if (d) return {ok: false, by: role(d) + ' "' + name(d) + '"', dialog: true};
	let desc = role(h);
	if (h.id) desc += '#' + h.id;
	const nm = name(h);
	if (nm) desc += ' "' + nm + '"';
	return {ok: false, by: desc};
}`

type measure struct {
	X, Y, W, H float64
	// Background: the page is not visible (a background tab, a minimized window): Chrome
	// answers mouse moves there only after 5 s (see moveMouse).
	Background bool
	Hidden     bool
	Disabled   bool
	Outside    bool
	Detached   bool
	// Hit is the hit test at (X, Y), for an element shown
	Hit *hit
}

type frameHop struct {
	session  string
	objectID string // the iframe element in the parent frame
}

// aimAt resolves ref, scrolls it into view and finds the point to click, checking that the
// element is visible, enabled (if needed) and not covered, in its frame and every parent frame.
func (s *Service) aimAt(ctx context.Context, ts *tabState, ref string, needEnabled bool) (*aim, error) {
	a, err := s.aimOnce(ctx, ts, ref, needEnabled)
	if err != nil && errors.Is(err, errRerendered) {
		// scrolling made the page re-render the element (virtualized lists): find its twin
		a, err = s.aimOnce(ctx, ts, ref, needEnabled)
	}
	if errors.Is(err, errRerendered) {
		return nil, fmt.Errorf("%s %w: the page changed; take a new snapshot", ref, snapshot.ErrGone)
	}
	return a, err
}

var errRerendered = errors.New("element replaced while scrolling")

// aimOnce aims at ref: at once when aimShown can, else resolving it, scrolling it and its
// frames into view and measuring it there.
func (s *Service) aimOnce(ctx context.Context, ts *tabState, ref string, needEnabled bool) (*aim, error) {
	if ts.held[ref] == nil {
		if a, err := s.aimShown(ctx, ts, ref, needEnabled); a != nil || err != nil {
			return a, err
		}
	}
	el, err := ts.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	ok := false
	var hops []frameHop
	defer func() {
		if !ok {
			ts.tab.Release(ctx, el)
		}
		for _, h := range hops {
			ts.tab.Release(ctx, &snapshot.Element{ObjectID: h.objectID, Frame: snapshot.Frame{Session: h.session}})
		}
	}()
	desc := el.Describe()
	// the chain of iframe elements from the element's frame up to the main frame
	if el.Frame.ID != ts.id {
		frames, err := ts.tab.Frames(ctx)
		if err != nil {
			return nil, err
		}
		byID := map[string]snapshot.Frame{}
		for _, f := range frames {
			byID[f.ID] = f
		}
		for f := el.Frame.ID; f != "" && f != ts.id; {
			fr, ok := byID[f]
			if !ok || fr.ParentID == "" {
				break
			}
			parent, ok := byID[fr.ParentID]
			if !ok {
				return nil, fmt.Errorf("%s: its frame is gone; take a new snapshot", desc)
			}
			var owner struct {
				BackendNodeID int `json:"backendNodeId"`
			}
			if err := s.c.Call(ctx, parent.Session, dom.CommandGetFrameOwner, &dom.GetFrameOwnerParams{FrameID: cdp.FrameID(f)}, &owner); err != nil {
				return nil, fmt.Errorf("%s: find its frame: %w", desc, err)
			}
			var rn struct {
				Object struct {
					ObjectID string `json:"objectId"`
				} `json:"object"`
			}
			if err := s.c.Call(ctx, parent.Session, dom.CommandResolveNode, &dom.ResolveNodeParams{BackendNodeID: cdp.BackendNodeID(owner.BackendNodeID)}, &rn); err != nil {
				return nil, fmt.Errorf("%s: find its frame: %w", desc, err)
			}
			hops = append(hops, frameHop{session: parent.Session, objectID: rn.Object.ObjectID})
			f = fr.ParentID
		}
	}
	// An element of the main frame that shows a point where it can be clicked is clicked there
	// as it is: no scrolling, and no frame to wait for. Otherwise scroll it into view, from the
	// inside out, and measure once the page has drawn a frame (scroll handlers run then: a
	// virtualized list re-renders its rows).
	var m measure
	if len(hops) == 0 {
		if m, err = s.measure(ctx, el, desc); err != nil {
			return nil, err
		}
	}
	if len(hops) > 0 || m.Detached || m.Hidden || m.Outside || m.Hit == nil || !m.Hit.OK {
		_ = s.c.Call(ctx, el.Frame.Session, dom.CommandScrollIntoViewIfNeeded, &dom.ScrollIntoViewIfNeededParams{BackendNodeID: cdp.BackendNodeID(el.BackendID)}, nil)
		for _, h := range hops {
			_ = s.c.Call(ctx, h.session, dom.CommandScrollIntoViewIfNeeded, &dom.ScrollIntoViewIfNeededParams{ObjectID: runtime.RemoteObjectID(h.objectID)}, nil)
		}
		s.settle(ctx, el.Frame.Session)
		if m, err = s.measure(ctx, el, desc); err != nil {
			return nil, err
		}
	}
	if err := m.usable(desc, needEnabled); err != nil {
		return nil, err
	}
	// the element's hit test in its frame, then the iframe element's in each parent
	lx, ly, err := m.Hit.point(m.X, m.Y, desc)
	if err != nil {
		// a page that re-renders on scroll (virtualized lists) may still be moving: look again
		// once it has drawn a frame
		s.settle(ctx, el.Frame.Session)
		if m, err = s.measure(ctx, el, desc); err != nil {
			return nil, err
		}
		if err := m.usable(desc, needEnabled); err != nil {
			return nil, err
		}
		if lx, ly, err = m.Hit.point(m.X, m.Y, desc); err != nil {
			return nil, err
		}
	}
	x, y := lx, ly
	for _, h := range hops {
		raw, err := s.callFn(ctx, h.session, h.objectID, originJS)
		if err != nil {
			return nil, fmt.Errorf("%s: frame position: %w", desc, err)
		}
		var o struct{ X, Y float64 }
		if err := json.Unmarshal(raw, &o); err != nil {
			return nil, err
		}
		x, y = x+o.X, y+o.Y
		hx, hy, err := s.hitTest(ctx, h.session, h.objectID, x, y, desc)
		if err != nil {
			return nil, err
		}
		if hx != x || hy != y {
			// the frame is covered where the element is: no other point of the frame will do
			return nil, &coveredError{fmt.Sprintf("%s is covered where it shows in its frame; close or scroll what covers it away first", desc)}
		}
	}
	ok = true
	return &aim{el: el, x: x, y: y, lx: lx, ly: ly, w: m.W, h: m.H, background: m.Background}, nil
}

// aimShown aims, in one call to the page (snapshot.Tab.Probe: the ref's check, measure and
// hit test together), at an element of the main frame that shows a point where it can be
// clicked, as it is: no scrolling, no frame to wait for. For any other element it answers
// nil and no error, and keeps what it resolved for aimOnce's full way (held).
func (s *Service) aimShown(ctx context.Context, ts *tabState, ref string, needEnabled bool) (*aim, error) {
	el, raw, err := ts.tab.Probe(ctx, ref, measureHitJS)
	if err != nil {
		return nil, err
	}
	var m measure
	if err := json.Unmarshal(raw, &m); err != nil {
		ts.tab.Release(ctx, el)
		return nil, fmt.Errorf("%s: measure: %w", el.Describe(), err)
	}
	if el.Frame.ID != ts.id || m.Detached || m.Hidden || m.Outside || m.Hit == nil || !m.Hit.OK {
		if el.ObjectID != "" {
			ts.hold(ref, el) // resolved already: aimOnce takes it on
		}
		return nil, nil
	}
	if err := m.usable(el.Describe(), needEnabled); err != nil {
		ts.tab.Release(ctx, el)
		return nil, err
	}
	return &aim{el: el, x: m.Hit.X, y: m.Hit.Y, lx: m.Hit.X, ly: m.Hit.Y, w: m.W, h: m.H, background: m.Background}, nil
}

// measure reads the element's position and state, and hit-tests its centre (m.Hit), in one
// call.
func (s *Service) measure(ctx context.Context, el *snapshot.Element, desc string) (measure, error) {
	raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, measureHitJS)
	if err != nil {
		return measure{}, fmt.Errorf("%s: %w", desc, err)
	}
	var m measure
	if err := json.Unmarshal(raw, &m); err != nil {
		return measure{}, fmt.Errorf("%s: measure: %w", desc, err)
	}
	return m, nil
}

// usable says why an element measured after scrolling cannot take pointer input (nil when it
// can); errRerendered when the page replaced it.
func (m measure) usable(desc string, needEnabled bool) error {
	switch {
	case m.Detached:
		return errRerendered
	case m.Hidden:
		return fmt.Errorf("%s is not visible (hidden or zero-size); take a new snapshot or act on a visible element", desc)
	case m.Outside:
		return fmt.Errorf("%s is outside the visible area even after scrolling; try scroll", desc)
	case needEnabled && m.Disabled:
		return fmt.Errorf("%s is disabled", desc)
	}
	return nil
}

// hitTest checks that the point (x, y) reaches the element, or finds another point of it that
// does (the element partly covered), and returns the point to click; a coveredError when no
// point of it is visible.
func (s *Service) hitTest(ctx context.Context, session, objectID string, x, y float64, desc string) (float64, float64, error) {
	raw, err := s.callFn(ctx, session, objectID, hitJS, x, y)
	if err != nil {
		return x, y, fmt.Errorf("%s: hit test: %w", desc, err)
	}
	var h *hit
	if err := json.Unmarshal(raw, &h); err != nil {
		return x, y, err
	}
	return h.point(x, y, desc)
}

// hit is hitJS's answer.
type hit struct {
	OK     bool    `json:"ok"`
	X, Y   float64 // the point that reaches the element, when OK
	By     string  `json:"by"`
	Dialog bool    `json:"dialog"`
}

// point is the point to click for a hit test at (x, y) that answered h: a coveredError when
// no point of the element is visible (h nil: the test did not run, an error too).
func (h *hit) point(x, y float64, desc string) (float64, float64, error) {
	switch {
	case h == nil:
		return x, y, fmt.Errorf("%s: hit test: no answer", desc)
	case h.OK:
		return h.X, h.Y, nil
	case h.Dialog:
		return x, y, &coveredError{fmt.Sprintf("%s is covered by %s; dismiss it first", desc, h.By)}
	}
	return x, y, &coveredError{fmt.Sprintf("%s is covered by %s; close or scroll it away first", desc, h.By)}
}

// dispatch sends an input event; if the event opens a JavaScript dialog (which blocks the
// reply until the dialog closes) it returns as soon as the dialog is seen.
func (s *Service) dispatch(ctx context.Context, ts *tabState, method string, params any) error {
	done := make(chan error, 1)
	go func() {
		c2, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		done <- s.c.Call(c2, ts.tab.Session(), method, params, nil)
	}()
	t := time.NewTicker(30 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-t.C:
			if ts.tab.Dialog() != nil {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// moveMouse moves the pointer to (x, y) with buttons held. In a page that is not visible
// Chrome answers Input.dispatchMouseEvent mouseMoved only once the page draws a frame, which a
// background tab never does (5 s later, on a timeout, also on Chrome's own endpoint), while it
// delivers the move to the page at once and runs later input after it in order: there the
// move is sent without waiting for its answer. So is a move that a press follows (moveBeforePress).
func (s *Service) moveMouse(ctx context.Context, ts *tabState, background bool, x, y float64, buttons, mods int) error {
	p := &input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y, Modifiers: int64(mods)}
	if buttons != 0 {
		p.Button, p.Buttons = input.MouseButtonLeft, int64(buttons)
	}
	if background {
		return s.c.Send(ctx, ts.tab.Session(), input.CommandDispatchMouseEvent, p)
	}
	return s.dispatch(ctx, ts, input.CommandDispatchMouseEvent, p)
}

// moveBeforePress moves the pointer to (x, y) for a press that follows at once, without
// waiting for the move's answer: a visible page answers a move only with its next frame (mouse
// moves are aligned to frames), while the press, discrete input, has the page handle the
// pending move first and runs after it in order; the press's answer says both were handled.
func (s *Service) moveBeforePress(ctx context.Context, ts *tabState, x, y float64, mods int) error {
	return s.c.Send(ctx, ts.tab.Session(), input.CommandDispatchMouseEvent,
		&input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y, Modifiers: int64(mods)})
}

// ErrSwapped is matched (errors.Is) by the error of a press not made because, once the
// pointer had moved onto the element, something else was at the point (a page that swaps
// what receives the press on mousemove): the element the safety gate judged is the one
// pressed, or nothing is.
var ErrSwapped = errors.New("the element under the pointer changed")

type swappedError struct{ msg string }

func (e *swappedError) Error() string        { return e.msg }
func (e *swappedError) Is(target error) bool { return target == ErrSwapped }

// moveOnto moves the pointer onto t for a press and, once the page has handled the move (its
// mousemove handlers ran), checks that the point still reaches t's element, in one call to the
// page: a *swappedError (nothing pressed) when the page put something else there.
//
// A page not shown (a background tab) answers a move only after seconds and handles it only
// with the next discrete input, the press itself (see moveMouse): there the move is sent
// without waiting and the check sees the page as it was before it; a swap made by its
// mousemove handlers is not caught.
//
// The check costs a frame (the move's answer) and a call to the page. A caller's own action
// (gate.Caller), which the gate does not judge, has nothing to check: its pointer moves without
// waiting, as a press follows (moveBeforePress).
func (s *Service) moveOnto(ctx context.Context, ts *tabState, t *aim, mods int) error {
	if gate.From(ctx).Who == gate.Caller {
		return s.moveBeforePress(ctx, ts, t.x, t.y, mods)
	}
	if t.background {
		if err := s.moveBeforePress(ctx, ts, t.x, t.y, mods); err != nil {
			return err
		}
	} else if err := s.mouse(ctx, ts, input.DispatchMouseEventTypeMouseMoved, t.x, t.y, "", 0, mods); err != nil {
		return err
	}
	if ts.tab.Dialog() != nil {
		return fmt.Errorf("%w: the page opened a dialog when the pointer moved onto %s; nothing was pressed", ErrSwapped, t.el.Describe())
	}
	var raw json.RawMessage
	var err error
	switch {
	case t.el.ObjectID != "":
		raw, err = s.callFn(ctx, t.el.Frame.Session, t.el.ObjectID, hitJS, t.lx, t.ly)
	default:
		// aimed in the snapshot's world (snapshot.Tab.Probe): the same element, checked there
		var el *snapshot.Element
		el, raw, err = ts.tab.Probe(ctx, t.el.Ref, hitJS, t.lx, t.ly)
		if el != nil {
			ts.tab.Release(ctx, el)
		}
	}
	if err != nil {
		return fmt.Errorf("hit test at the press: %w", err)
	}
	var h *hit
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("hit test at the press: %w", err)
	}
	if h == nil || !h.OK || h.X != t.lx || h.Y != t.ly {
		by := "something else"
		if h != nil && h.By != "" {
			by = h.By
		}
		return &swappedError{fmt.Sprintf("%s: when the pointer moved onto it the page put %s at that point; nothing was pressed (take a new snapshot and look again)", ErrSwapped, by)}
	}
	return nil
}

func (s *Service) mouse(ctx context.Context, ts *tabState, typ input.DispatchMouseEventType, x, y float64, button input.MouseButton, clicks, mods int) error {
	p := &input.DispatchMouseEventParams{Type: typ, X: x, Y: y, Modifiers: int64(mods)}
	if typ != input.DispatchMouseEventTypeMouseMoved {
		p.Button, p.ClickCount = button, int64(clicks)
	}
	return s.dispatch(ctx, ts, input.CommandDispatchMouseEvent, p)
}

func (s *Service) click(ctx context.Context, ts *tabState, a Click) (string, error) {
	t, err := s.aimAt(ctx, ts, a.Ref, true)
	if err != nil {
		return "", err
	}
	ts.times.mark("aim")
	defer ts.tab.Release(ctx, t.el)
	button := strings.ToLower(a.Button)
	if button == "" {
		button = "left"
	}
	mods, _ := parseModifiers(a.Modifiers)
	if err := s.moveOnto(ctx, ts, t, mods); err != nil {
		return "", fmt.Errorf("click %s: %w", t.el.Describe(), err)
	}
	ts.times.mark("move")
	n := 1
	if a.Double {
		n = 2
	}
	judged := ts.judged != nil && ts.judged.Action.Kind == "click" // not a click that focuses a field
	for i := 1; i <= n; i++ {
		err := s.commitInput(ctx, ts, judged, t.el,
			func() error {
				return s.mouse(ctx, ts, input.DispatchMouseEventTypeMousePressed, t.x, t.y, input.MouseButton(button), i, mods)
			},
			func() error {
				return s.mouse(ctx, ts, input.DispatchMouseEventTypeMouseReleased, t.x, t.y, input.MouseButton(button), i, mods)
			},
			func() error { return s.releaseAway(ctx, ts, t.background, input.MouseButton(button), i, mods) })
		if err != nil {
			return "", fmt.Errorf("click %s: %w", t.el.Describe(), err)
		}
		if ts.tab.Dialog() != nil {
			break
		}
	}
	verb := "clicked"
	if a.Double {
		verb = "double-clicked"
	}
	if button != "left" {
		verb = button + "-" + verb
	}
	return verb + " " + t.el.Describe(), nil
}

// commitInput carries out an input that may commit what the judged step's form or link says
// (ts.judged) so that what it commits is what the gate judged, read as the input lands: down
// lets the page's handlers see the input coming (pointerdown, keydown); the step's element
// (at; nil: the focused element) is read again; when it commits the same (gate.Proposal.Landed)
// up finishes the input (the release on the element, the key's press). When the page's
// handlers changed it (a hidden field set on pointerdown, a form pointed elsewhere), the step
// as it is now is judged as any step, the input still held (the button down, the key down
// without its character): allowed, up finishes it; else cancel ends it with nothing activated
// and the gate's answer is returned (the person or the critic may be asked: a
// *gate.ConfirmError, whose approval covers the state the page changed to). An input that is
// not the judged step's (judge false: a click that focuses a field to type into) or with
// nothing judged (a caller's own action) runs down and up.
//
// When down opens a JavaScript dialog the input stops there (as before: the dialog is answered
// first) and commitInput returns nil.
func (s *Service) commitInput(ctx context.Context, ts *tabState, judge bool, at *snapshot.Element, down, up, cancel func() error) error {
	if err := down(); err != nil {
		return err
	}
	if ts.tab.Dialog() != nil {
		return nil
	}
	if !judge || ts.judged == nil {
		return up()
	}
	ts.times.mark("down")
	now, err := s.landed(ctx, ts, at)
	ts.times.mark("landed")
	if err != nil {
		_ = cancel()
		return fmt.Errorf("%w; nothing was committed", err)
	}
	if now == nil {
		return up()
	}
	s.opts.Log.Info().Str("kind", now.Action.Kind).Msg("the page changed what the step commits as it was pressed: judging it again")
	if _, err := s.opts.Gate.CheckAll(ctx, []gate.Proposal{*now}, gate.From(ctx), s.logDecision(now.Action.Kind)); err != nil {
		if cerr := cancel(); cerr != nil {
			return fmt.Errorf("hold back a commit the page changed as it was pressed: %w (judged: %w)", cerr, err)
		}
		return fmt.Errorf("as it was pressed, the page changed what it commits, and nothing was committed: %w", err)
	}
	ts.judged = now
	return up()
}

// landed reads the judged step's element again as its input lands (at; nil: the focused
// element) and returns the step as it is now when it commits something else than what the
// gate judged; nil when the same.
func (s *Service) landed(ctx context.Context, ts *tabState, at *snapshot.Element) (*gate.Proposal, error) {
	j := ts.judged
	was := j.Element
	if was == nil {
		return nil, nil // a key pressed with nothing focused: no form or link to commit
	}
	var now *gate.Element
	var err error
	switch {
	case at == nil:
		now, err = s.readElement(ctx, ts, "")
		if err == nil && now == nil {
			now = &gate.Element{} // the focus left the element: not what was judged
		}
	default:
		var raw json.RawMessage
		if at.ObjectID != "" {
			raw, err = s.callFn(ctx, at.Frame.Session, at.ObjectID, probeJS)
		} else {
			var el *snapshot.Element
			el, raw, err = ts.tab.Probe(ctx, at.Ref, probeJS)
			if el != nil {
				ts.tab.Release(ctx, el)
			}
		}
		if err == nil {
			now, err = probed(raw, was.Ref, was.Role, was.Name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s again as the input landed: %w", orFocused(was.Ref), err)
	}
	now.Ref, now.Role, now.Name = was.Ref, was.Role, was.Name
	p := *j
	p.Element = now
	if j.Landed(p) {
		return nil, nil
	}
	return &p, nil
}

// orFocused names the element ref for a message: the focused element when ref is "".
func orFocused(ref string) string {
	if ref == "" {
		return "the focused element"
	}
	return ref
}

// releaseAway ends a mouse press without a click on what it pressed: the pointer moves, the
// button held, off the page (outside the viewport) and is released there. The page sees the
// pointer leave and the button go up; Chrome fires the click on the nearest common ancestor of
// where it went down and where it went up: the document's root element, which does nothing.
func (s *Service) releaseAway(ctx context.Context, ts *tabState, background bool, button input.MouseButton, clicks, mods int) error {
	const x, y = -1, -1
	if err := s.moveMouse(ctx, ts, background, x, y, 1, mods); err != nil {
		return err
	}
	return s.mouse(ctx, ts, input.DispatchMouseEventTypeMouseReleased, x, y, button, clicks, mods)
}

func (s *Service) hover(ctx context.Context, ts *tabState, a Hover) (string, error) {
	t, err := s.aimAt(ctx, ts, a.Ref, false)
	if err != nil {
		return "", err
	}
	defer ts.tab.Release(ctx, t.el)
	if err := s.moveMouse(ctx, ts, t.background, t.x, t.y, 0, 0); err != nil {
		return "", fmt.Errorf("hover %s: %w", t.el.Describe(), err)
	}
	return "hovering over " + t.el.Describe(), nil
}

func (s *Service) drag(ctx context.Context, ts *tabState, a Drag) (string, error) {
	from, err := s.aimAt(ctx, ts, a.Ref, true)
	if err != nil {
		return "", err
	}
	defer ts.tab.Release(ctx, from.el)
	if err := s.moveMouse(ctx, ts, from.background, from.x, from.y, 0, 0); err != nil {
		return "", err
	}
	if err := s.mouse(ctx, ts, input.DispatchMouseEventTypeMousePressed, from.x, from.y, input.MouseButtonLeft, 1, 0); err != nil {
		return "", err
	}
	// measure the target after pressing (the source may have moved it) without the hit test:
	// the dragged element may cover it
	to, err := s.aimAt(ctx, ts, a.To, false)
	if err != nil {
		_ = s.mouse(ctx, ts, input.DispatchMouseEventTypeMouseReleased, from.x, from.y, input.MouseButtonLeft, 1, 0)
		return "", err
	}
	defer ts.tab.Release(ctx, to.el)
	const steps = 8
	for i := 1; i <= steps; i++ {
		f := float64(i) / steps
		x, y := from.x+(to.x-from.x)*f, from.y+(to.y-from.y)*f
		if err := s.moveMouse(ctx, ts, from.background, x, y, 1, 0); err != nil {
			return "", err
		}
	}
	if err := s.mouse(ctx, ts, input.DispatchMouseEventTypeMouseReleased, to.x, to.y, input.MouseButtonLeft, 1, 0); err != nil {
		return "", err
	}
	return fmt.Sprintf("dragged %s to %s", from.el.Describe(), to.el.Describe()), nil
}

// key presses one combo (modifiers down, key down/up, modifiers up).
func (s *Service) key(ctx context.Context, ts *tabState, c Combo) error {
	return s.keyAt(ctx, ts, c, false, nil)
}

// keyAt presses one combo; with judge, as the judged step's key (ts.judged): Enter and Space,
// which commit a form or activate a button, are read as they land (commitInput) on the step's
// element at (nil: the focused element): key down without its character first, so that the
// page's keydown handlers run, then its character (the keypress that submits or activates)
// and key up only if what it commits is what was judged. Held back, the key goes up with the
// focus taken off the element, and nothing is activated.
func (s *Service) keyAt(ctx context.Context, ts *tabState, c Combo, judge bool, at *snapshot.Element) error {
	mods := []struct {
		bit int
		def keyDef
	}{{modCtrl, namedKeys["control"]}, {modShift, namedKeys["shift"]}, {modAlt, namedKeys["alt"]}, {modMeta, namedKeys["meta"]}}
	held := 0
	send := func(typ input.DispatchKeyEventType, k keyDef, m int) error {
		p := &input.DispatchKeyEventParams{Type: typ, Key: k.Key, Code: k.Code, WindowsVirtualKeyCode: int64(k.KeyCode), NativeVirtualKeyCode: int64(k.KeyCode), Modifiers: int64(m)}
		if typ == input.DispatchKeyEventTypeKeyDown && k.Text != "" {
			p.Text, p.UnmodifiedText = k.Text, k.Text
		}
		if typ == input.DispatchKeyEventTypeKeyDown && k.Text == "" {
			p.Type = input.DispatchKeyEventTypeRawKeyDown
		}
		if strings.HasPrefix(k.Code, "Arrow") || k.Code == "Home" || k.Code == "End" || k.Code == "PageUp" || k.Code == "PageDown" || k.Code == "Delete" || k.Code == "Insert" {
			p.IsKeypad = new(false)
		}
		return s.dispatch(ctx, ts, input.CommandDispatchKeyEvent, p)
	}
	for _, m := range mods {
		if c.Modifiers&m.bit != 0 {
			held |= m.bit
			if err := send(input.DispatchKeyEventTypeRawKeyDown, m.def, held); err != nil {
				return err
			}
		}
	}
	if judge && ts.judged != nil && landsLate(ts.judged.Element, c.Key) {
		err := s.commitInput(ctx, ts, true, at,
			func() error { return send(input.DispatchKeyEventTypeRawKeyDown, c.Key, held) },
			func() error {
				if c.Key.Text != "" {
					p := &input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeChar, Key: c.Key.Key, Code: c.Key.Code, Text: c.Key.Text, UnmodifiedText: c.Key.Text,
						WindowsVirtualKeyCode: int64(c.Key.KeyCode), NativeVirtualKeyCode: int64(c.Key.KeyCode), Modifiers: int64(held)}
					if err := s.dispatch(ctx, ts, input.CommandDispatchKeyEvent, p); err != nil {
						return err
					}
					if ts.tab.Dialog() != nil {
						return nil
					}
				}
				return send(input.DispatchKeyEventTypeKeyUp, c.Key, held)
			},
			func() error {
				s.blurFocused(ctx, ts, at)
				return send(input.DispatchKeyEventTypeKeyUp, c.Key, held)
			})
		if err != nil {
			s.liftModifiers(ctx, ts, c.Modifiers)
			return err
		}
		if ts.tab.Dialog() != nil {
			return nil
		}
	} else {
		if err := send(input.DispatchKeyEventTypeKeyDown, c.Key, held); err != nil {
			return err
		}
		if ts.tab.Dialog() != nil {
			return nil
		}
		if err := send(input.DispatchKeyEventTypeKeyUp, c.Key, held); err != nil {
			return err
		}
	}
	for i := len(mods) - 1; i >= 0; i-- {
		if c.Modifiers&mods[i].bit != 0 {
			held &^= mods[i].bit
			if err := send(input.DispatchKeyEventTypeKeyUp, mods[i].def, held); err != nil {
				return err
			}
		}
	}
	return nil
}

// landsLate reports whether key k, pressed in el (nil: nothing focused), commits after its
// keydown event, so that the page's keydown handlers run before the element is read again:
// Enter (a button activates and a field submits on the keypress that follows) and Space (a
// button or box activates on key up). A link follows Enter on keydown itself: there nothing
// lands later, and its href was judged before the key.
func landsLate(el *gate.Element, k keyDef) bool {
	switch k.Code {
	case "Space":
		return true
	case "Enter", "NumpadEnter":
		return el == nil || el.Href == ""
	}
	return false
}

// liftModifiers lets the modifier keys of bits go up (after a key not carried out), best effort.
func (s *Service) liftModifiers(ctx context.Context, ts *tabState, bits int) {
	for _, m := range []struct {
		bit int
		def keyDef
	}{{modMeta, namedKeys["meta"]}, {modAlt, namedKeys["alt"]}, {modShift, namedKeys["shift"]}, {modCtrl, namedKeys["control"]}} {
		if bits&m.bit != 0 {
			_ = s.dispatch(ctx, ts, input.CommandDispatchKeyEvent, &input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp,
				Key: m.def.Key, Code: m.def.Code, WindowsVirtualKeyCode: int64(m.def.KeyCode), NativeVirtualKeyCode: int64(m.def.KeyCode)})
		}
	}
}

// blurFocused takes the keyboard focus off el (nil: the focused element), so that a key held
// back goes up elsewhere (a button activated by Space's key up is not), best effort.
func (s *Service) blurFocused(ctx context.Context, ts *tabState, el *snapshot.Element) {
	if el != nil && el.ObjectID != "" {
		_, _ = s.callFn(ctx, el.Frame.Session, el.ObjectID, blurJS)
		return
	}
	_ = s.c.Call(ctx, ts.tab.Session(), runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: "(" + blurJS + ").call(" + focusedJS + ")"}, nil)
}

// blurJS takes the focus off the element it is called on, and off the field inside it that has
// it (nothing when called on null).
const blurJS = `function() {
	if (!this || !this.ownerDocument) return;
	let a = this.ownerDocument.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	if (a && a.blur) a.blur();
	if (this.blur) this.blur();
}`

// focus puts keyboard focus in ref's element. An element that takes no focus itself (a
// wrapper carrying the textbox role around the real field, a label, the host of a shadow
// root holding an input) has its field focused instead; failing that, it is clicked, as a
// person would.
func (s *Service) focus(ctx context.Context, ts *tabState, ref string) (*snapshot.Element, error) {
	el, err := ts.resolve(ctx, ref)
	if err != nil {
		return nil, err
	}
	_ = s.c.Call(ctx, el.Frame.Session, dom.CommandScrollIntoViewIfNeeded, &dom.ScrollIntoViewIfNeededParams{BackendNodeID: cdp.BackendNodeID(el.BackendID)}, nil)
	ferr := s.c.Call(ctx, el.Frame.Session, dom.CommandFocus, &dom.FocusParams{BackendNodeID: cdp.BackendNodeID(el.BackendID)}, nil)
	if ferr == nil || s.focusInside(ctx, el, true) {
		return el, nil
	}
	if _, err := s.click(ctx, ts, Click{Ref: ref}); err == nil && s.focusInside(ctx, el, false) {
		return el, nil
	}
	ts.tab.Release(ctx, el)
	return nil, fmt.Errorf("focus %s: neither it nor anything in it takes keyboard focus, and a click on it put none there (%w)", el.Describe(), ferr)
}

// focusInsideJS reports whether keyboard focus is in the element (itself, a node of its shadow
// tree, its label's control), moving it first, when move is set, to the element's field: a
// label's control, else the first field inside it (open shadow roots included).
const focusInsideJS = `function(move) {
	const root = this;
	const inside = (a) => {
		for (let n = a; n; n = n.parentNode || n.host) if (n === root) return true;
		return root.control === a;
	};
	const field = (e) => !e.disabled && ((e.tagName === 'INPUT' && e.type !== 'hidden') || e.tagName === 'TEXTAREA' || e.tagName === 'SELECT' ||
		(e.isContentEditable && e.contentEditable !== 'inherit') || (e.hasAttribute('tabindex') && e.tabIndex >= 0));
	if (move) {
		let t = root.control || null;
		const queue = [root];
		while (!t && queue.length) {
			const n = queue.shift();
			for (const k of (n.shadowRoot || n).children) {
				if (field(k)) { t = k; break; }
				queue.push(k);
			}
		}
		if (t) t.focus();
	}
	let a = root.ownerDocument.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	return !!a && a !== root.ownerDocument.body && inside(a);
}`

// focusInside runs focusInsideJS on el: whether focus is in it after moving it to its field
// (move) or as it is.
func (s *Service) focusInside(ctx context.Context, el *snapshot.Element, move bool) bool {
	raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, focusInsideJS, move)
	var in bool
	return err == nil && json.Unmarshal(raw, &in) == nil && in
}

func (s *Service) press(ctx context.Context, ts *tabState, a Press) (string, error) {
	c, err := ParseKeys(a.Key)
	if err != nil {
		return "", err
	}
	where := ""
	var focused *snapshot.Element
	if a.Ref != "" {
		el, err := s.focus(ctx, ts, a.Ref)
		if err != nil {
			return "", err
		}
		defer ts.tab.Release(ctx, el)
		where, focused = " in "+el.Describe(), el
	}
	if err := s.keyAt(ctx, ts, c, ts.judged != nil && ts.judged.Action.Kind == "press", focused); err != nil {
		return "", fmt.Errorf("press %s: %w", a.Key, err)
	}
	return "pressed " + a.Key + where, nil
}

// prepareTypeJS focuses the element and selects its content (replace) or puts the caret at the
// end (append). It reports the kind of field: text, value (date, color, range…: set directly),
// or none (not editable).
const prepareTypeJS = `function(append) {
	// the field focus is in: the element, or the field inside it that took focus for it
	let el = this, a = el.ownerDocument.activeElement;
	while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
	if (a && a !== el && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA' || a.isContentEditable)) {
		for (let n = a; n; n = n.parentNode || n.host) if (n === el || el.control === a) { el = a; break; }
	}
	const valueTypes = ['date', 'time', 'datetime-local', 'month', 'week', 'color', 'range'];
	if (el.tagName === 'INPUT' && valueTypes.includes(el.type)) return 'value';
	if (el.disabled) return 'disabled';
	if (el.readOnly) return 'readonly';
	el.focus();
	if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
		if (['checkbox', 'radio', 'file', 'button', 'submit', 'reset', 'image'].includes(el.type)) return 'none';
		const n = el.value.length;
		if (append) { try { el.setSelectionRange(n, n); } catch (e) {} } else { el.select(); }
		return 'text';
	}
	if (el.isContentEditable) {
		const sel = el.ownerDocument.getSelection(), r = el.ownerDocument.createRange();
		r.selectNodeContents(el);
		if (append) r.collapse(false);
		sel.removeAllRanges(); sel.addRange(r);
		return 'text';
	}
	return 'none';
}`

const setValueJS = `function(v) {
	const proto = Object.getPrototypeOf(this);
	const d = Object.getOwnPropertyDescriptor(proto, 'value');
	if (d && d.set) d.set.call(this, v); else this.value = v;
	this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
	this.dispatchEvent(new Event('change', {bubbles: true}));
	return this.value;
}`

func (s *Service) typeText(ctx context.Context, ts *tabState, a Type) (string, error) {
	el, err := s.focus(ctx, ts, a.Ref)
	if err != nil {
		return "", err
	}
	defer ts.tab.Release(ctx, el)
	desc := el.Describe()
	var kind string
	for try := range 2 {
		raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, prepareTypeJS, a.Append)
		if err != nil {
			return "", fmt.Errorf("type into %s: %w", desc, err)
		}
		json.Unmarshal(raw, &kind)
		// a focusable wrapper took the focus its field should have: give it to the field
		if kind != "none" || try > 0 || !s.focusInside(ctx, el, true) {
			break
		}
	}
	switch kind {
	case "value":
		raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, setValueJS, a.Text)
		if err != nil {
			return "", fmt.Errorf("set %s: %w", desc, err)
		}
		var got string
		json.Unmarshal(raw, &got)
		if got != a.Text {
			return "", fmt.Errorf("%s did not accept %q (its value is %q); check the format (e.g. 2024-05-31 for dates, #ff0000 for colours)", desc, a.Text, got)
		}
	case "text":
		if a.Slowly {
			for _, r := range a.Text {
				if err := s.key(ctx, ts, Combo{Key: charKey(r)}); err != nil {
					return "", fmt.Errorf("type into %s: %w", desc, err)
				}
			}
		} else if a.Text != "" {
			if err := s.dispatch(ctx, ts, input.CommandInsertText, &input.InsertTextParams{Text: a.Text}); err != nil {
				return "", fmt.Errorf("type into %s: %w", desc, err)
			}
		}
		if a.Text == "" && !a.Append {
			if err := s.key(ctx, ts, Combo{Key: namedKeys["delete"]}); err != nil {
				return "", err
			}
		}
	case "disabled":
		return "", fmt.Errorf("%s is disabled", desc)
	case "readonly":
		return "", fmt.Errorf("%s is read-only", desc)
	default:
		return "", fmt.Errorf("%s is not a text field; use click, select or fill", desc)
	}
	msg := fmt.Sprintf("typed %q into %s", clip(a.Text, 80), desc)
	if a.Submit {
		if err := s.keyAt(ctx, ts, Combo{Key: namedKeys["enter"]}, ts.judged != nil && ts.judged.Action.Kind == "type", el); err != nil {
			return "", err
		}
		msg += " and pressed Enter"
	}
	return msg, nil
}

const selectJS = `function(values) {
	if (this.tagName !== 'SELECT') return {native: false};
	const opts = Array.from(this.options);
	const want = values.map(v => v.trim().toLowerCase());
	const found = [], missing = [];
	for (const w of want) {
		const o = opts.find(o => o.value.toLowerCase() === w) || opts.find(o => o.label.trim().toLowerCase() === w) || opts.find(o => o.textContent.trim().toLowerCase() === w);
		if (o) found.push(o); else missing.push(w);
	}
	if (missing.length) return {native: true, missing, options: opts.map(o => o.label.trim())};
	if (found.length > 1 && !this.multiple) return {native: true, error: 'this select takes one option'};
	if (this.disabled) return {native: true, error: 'disabled'};
	for (const o of opts) o.selected = found.includes(o);
	this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
	this.dispatchEvent(new Event('change', {bubbles: true}));
	return {native: true, selected: found.map(o => o.label.trim())};
}`

func (s *Service) selectOption(ctx context.Context, ts *tabState, ref string, values []string) (string, error) {
	el, err := ts.resolve(ctx, ref)
	if err != nil {
		return "", err
	}
	desc := el.Describe()
	raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, selectJS, values)
	ts.tab.Release(ctx, el)
	if err != nil {
		return "", fmt.Errorf("select in %s: %w", desc, err)
	}
	var r struct {
		Native   bool     `json:"native"`
		Missing  []string `json:"missing"`
		Options  []string `json:"options"`
		Error    string   `json:"error"`
		Selected []string `json:"selected"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", err
	}
	if r.Native {
		switch {
		case len(r.Missing) > 0:
			return "", fmt.Errorf("%s has no option %q; its options are: %s", desc, r.Missing[0], strings.Join(r.Options, ", "))
		case r.Error != "":
			return "", fmt.Errorf("%s: %s", desc, r.Error)
		}
		return fmt.Sprintf("selected %s in %s", strings.Join(quoteAll(r.Selected), ", "), desc), nil
	}
	// ARIA combobox or listbox: open it if needed, then click each option by name.
	if el.Role == "combobox" {
		if _, err := s.click(ctx, ts, Click{Ref: ref}); err != nil {
			return "", err
		}
	}
	var picked []string
	for _, v := range values {
		var opt *snapshot.Info
		deadline := time.Now().Add(2 * time.Second)
		for opt == nil {
			opts, err := ts.tab.Find(ctx, "option", v)
			if err != nil {
				return "", err
			}
			if len(opts) > 1 {
				return "", fmt.Errorf("%d options named %q are open; click the right one by ref", len(opts), v)
			}
			if len(opts) == 1 {
				opt = &opts[0]
				break
			}
			if time.Now().After(deadline) {
				all, _ := ts.tab.Find(ctx, "option", "")
				var names []string
				for _, o := range all {
					names = append(names, o.Name)
				}
				if len(names) == 0 {
					return "", fmt.Errorf("no options appeared for %s; take a snapshot to see what opened", desc)
				}
				return "", fmt.Errorf("%s has no option %q; the options shown are: %s", desc, v, strings.Join(names, ", "))
			}
			time.Sleep(100 * time.Millisecond)
		}
		if _, err := s.click(ctx, ts, Click{Ref: opt.Ref}); err != nil {
			return "", err
		}
		picked = append(picked, opt.Name)
	}
	return fmt.Sprintf("selected %s in %s", strings.Join(quoteAll(picked), ", "), desc), nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

const checkStateJS = `function() {
	const el = this;
	if (el.tagName === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio')) return el.checked ? 'true' : 'false';
	const a = el.getAttribute('aria-checked') || el.getAttribute('aria-pressed') || el.getAttribute('aria-selected');
	return a === null ? 'none' : a;
}`

func (s *Service) fill(ctx context.Context, ts *tabState, a Fill) (string, error) {
	var done []string
	for _, f := range a.Fields {
		el, err := ts.resolve(ctx, f.Ref)
		if err != nil {
			return "", fillErr(done, err)
		}
		role := el.Role
		raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, checkStateJS)
		ts.tab.Release(ctx, el)
		if err != nil {
			return "", fillErr(done, err)
		}
		var state string
		json.Unmarshal(raw, &state)
		switch {
		case role == "checkbox" || role == "radio" || role == "switch" || role == "menuitemcheckbox" || state == "true" || state == "false":
			want, ok := parseBool(string(f.Value))
			if !ok {
				return "", fillErr(done, fmt.Errorf("%s is a %s: fill it with true or false, not %q", el.Describe(), role, f.Value))
			}
			if (state == "true") != want {
				if !want && role == "radio" {
					return "", fillErr(done, fmt.Errorf("%s: a radio button cannot be unchecked; check another one", el.Describe()))
				}
				if _, err := s.click(ctx, ts, Click{Ref: f.Ref}); err != nil {
					return "", fillErr(done, err)
				}
			}
			done = append(done, fmt.Sprintf("%s=%v", el.Describe(), want))
		case role == "combobox" || role == "listbox":
			if _, err := s.selectOption(ctx, ts, f.Ref, []string{string(f.Value)}); err != nil {
				// an editable combobox takes text
				if _, err2 := s.typeText(ctx, ts, Type{Ref: f.Ref, Text: string(f.Value)}); err2 != nil {
					return "", fillErr(done, err)
				}
			}
			done = append(done, fmt.Sprintf("%s=%q", el.Describe(), f.Value))
		default:
			if _, err := s.typeText(ctx, ts, Type{Ref: f.Ref, Text: string(f.Value)}); err != nil {
				return "", fillErr(done, err)
			}
			done = append(done, fmt.Sprintf("%s=%q", el.Describe(), clip(string(f.Value), 40)))
		}
	}
	return "filled " + strings.Join(done, ", "), nil
}

func fillErr(done []string, err error) error {
	if len(done) == 0 {
		return err
	}
	return fmt.Errorf("%w (already filled: %s)", err, strings.Join(done, ", "))
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "on", "yes", "checked", "1", "x", "check", "selected":
		return true, true
	case "false", "off", "no", "unchecked", "0", "", "uncheck":
		return false, true
	}
	return false, false
}

func (s *Service) upload(ctx context.Context, ts *tabState, a Upload) (string, error) {
	el, err := ts.resolve(ctx, a.Ref)
	if err != nil {
		return "", err
	}
	defer ts.tab.Release(ctx, el)
	var files []string
	for _, f := range a.Files {
		abs, err := filepath.Abs(f)
		if err != nil {
			return "", err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return "", fmt.Errorf("upload: %w", err)
		}
		if st.IsDir() {
			return "", fmt.Errorf("upload: %s is a directory", abs)
		}
		files = append(files, abs)
	}
	raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, `function(){ return this.tagName === 'INPUT' && this.type === 'file' ? (this.multiple ? 'multi' : 'single') : 'no' }`)
	if err != nil {
		return "", err
	}
	var kind string
	json.Unmarshal(raw, &kind)
	if kind == "no" {
		return "", fmt.Errorf("%s is not a file input", el.Describe())
	}
	if kind == "single" && len(files) > 1 {
		return "", fmt.Errorf("%s takes one file, not %d", el.Describe(), len(files))
	}
	if err := s.c.Call(ctx, el.Frame.Session, dom.CommandSetFileInputFiles, &dom.SetFileInputFilesParams{Files: files, BackendNodeID: cdp.BackendNodeID(el.BackendID)}, nil); err != nil {
		return "", fmt.Errorf("upload to %s: %w", el.Describe(), err)
	}
	return fmt.Sprintf("set %d file(s) on %s", len(files), el.Describe()), nil
}

// selectValues chooses a Select's values.
func (s *Service) selectValues(ctx context.Context, ts *tabState, a Select) (string, error) {
	return s.selectOption(ctx, ts, a.Ref, a.Values)
}

// check sets a checkbox, radio or switch as fill does for one field.
func (s *Service) check(ctx context.Context, ts *tabState, a Check) (string, error) {
	return s.fill(ctx, ts, Fill{Fields: []Field{{Ref: a.Ref, Value: Text(strconv.FormatBool(a.Checked))}}})
}

func (s *Service) scroll(ctx context.Context, ts *tabState, a Scroll) (string, error) {
	dir := strings.ToLower(a.Direction)
	switch dir {
	case "top":
		return s.press(ctx, ts, Press{Key: "Home", Ref: a.Ref})
	case "bottom":
		return s.press(ctx, ts, Press{Key: "End", Ref: a.Ref})
	}
	if a.Ref != "" && dir == "" {
		el, err := ts.resolve(ctx, a.Ref)
		if err != nil {
			return "", err
		}
		defer ts.tab.Release(ctx, el)
		if err := s.c.Call(ctx, el.Frame.Session, dom.CommandScrollIntoViewIfNeeded, &dom.ScrollIntoViewIfNeededParams{BackendNodeID: cdp.BackendNodeID(el.BackendID)}, nil); err != nil {
			return "", fmt.Errorf("scroll to %s: %w", el.Describe(), err)
		}
		return "scrolled " + el.Describe() + " into view", nil
	}
	dx, dy := 0.0, 0.0
	amt := a.Amount
	const js = `function(dx, dy, amt) {
		const page = this === document || this === document.documentElement || this === document.body || this === window;
		const t = page ? (document.scrollingElement || document.documentElement) : this;
		const h = page ? innerHeight : t.clientHeight, w = page ? innerWidth : t.clientWidth;
		const ax = dx * (amt || w * 0.8), ay = dy * (amt || h * 0.8);
		const bx = t.scrollLeft, by = t.scrollTop;
		t.scrollBy({left: ax, top: ay, behavior: 'instant'});
		return {x: t.scrollLeft, y: t.scrollTop, moved: t.scrollLeft !== bx || t.scrollTop !== by,
			maxY: t.scrollHeight - t.clientHeight, maxX: t.scrollWidth - t.clientWidth};
	}`
	switch dir {
	case "up":
		dy = -1
	case "down":
		dy = 1
	case "left":
		dx = -1
	case "right":
		dx = 1
	}
	var raw json.RawMessage
	what := "the page"
	if a.Ref != "" {
		el, err := ts.resolve(ctx, a.Ref)
		if err != nil {
			return "", err
		}
		defer ts.tab.Release(ctx, el)
		what = el.Describe()
		raw, err = s.callFn(ctx, el.Frame.Session, el.ObjectID, js, dx, dy, amt)
		if err != nil {
			return "", fmt.Errorf("scroll %s: %w", what, err)
		}
	} else {
		var r struct {
			Result struct {
				ObjectID string `json:"objectId"`
			} `json:"result"`
		}
		if err := s.c.Call(ctx, ts.tab.Session(), runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: "document"}, &r); err != nil {
			return "", err
		}
		var err error
		raw, err = s.callFn(ctx, ts.tab.Session(), r.Result.ObjectID, js, dx, dy, amt)
		if err != nil {
			return "", fmt.Errorf("scroll: %w", err)
		}
	}
	var p struct {
		X, Y, MaxX, MaxY float64
		Moved            bool
	}
	json.Unmarshal(raw, &p)
	if !p.Moved {
		return fmt.Sprintf("%s did not move: it is already at the %s end", what, dir), nil
	}
	pos := ""
	if p.MaxY > 0 {
		pos = fmt.Sprintf(" (%d%% down)", int(math.Round(100*p.Y/p.MaxY)))
	}
	return fmt.Sprintf("scrolled %s %s%s", what, dir, pos), nil
}
