package actions

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot"
)

// evalValue evaluates expr in the tab's main frame and returns its JSON value.
func (s *Service) evalValue(ctx context.Context, ts *tabState, expr string) (json.RawMessage, error) {
	var r struct {
		Result struct {
			Type        string          `json:"type"`
			Value       json.RawMessage `json:"value"`
			Description string          `json:"description"`
		} `json:"result"`
		Exc *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := s.c.Call(ctx, ts.tab.Session(), runtime.CommandEvaluate, &runtime.EvaluateParams{
		Expression: expr, ReturnByValue: new(true), AwaitPromise: new(true), UserGesture: new(true),
	}, &r); err != nil {
		return nil, err
	}
	if r.Exc != nil {
		d := r.Exc.Exception.Description
		if d == "" {
			d = r.Exc.Text
		}
		return nil, &scriptError{clip(d, 500)}
	}
	if len(r.Result.Value) == 0 {
		if r.Result.Type == "undefined" {
			return json.RawMessage("null"), nil
		}
		b, _ := json.Marshal(r.Result.Description)
		return b, nil
	}
	return r.Result.Value, nil
}

const maxValue = 20000

func (r *runner) evaluate(ctx context.Context, a *Evaluate) (*Result, error) {
	s, ts := r.Service, r.ts
	var v json.RawMessage
	var err error
	if a.Ref != "" {
		el, rerr := ts.resolve(ctx, a.Ref)
		if rerr != nil {
			return nil, rerr
		}
		defer ts.tab.Release(ctx, el)
		v, err = s.callFn(ctx, el.Frame.Session, el.ObjectID, "function(){ return ("+a.Expression+")(this) }")
	} else {
		v, err = s.evalValue(ctx, ts, a.Expression)
	}
	if err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	if len(v) > maxValue {
		b, _ := json.Marshal(string(v[:maxValue]) + "… (truncated)")
		v = b
	}
	return &Result{Message: "evaluated", Value: v}, nil
}

// pageText is a script that tells whether text is visible anywhere in the main frame,
// including open shadow roots and same-origin frames.
const pageTextJS = `(t => {
	const seen = (root) => {
		if (root.body && root.body.innerText && root.body.innerText.includes(t)) return true;
		for (const el of root.querySelectorAll('*')) {
			if (el.shadowRoot && ((el.shadowRoot.textContent || '').includes(t) || seen(el.shadowRoot))) return true;
			if (el.tagName === 'IFRAME') { try { if (el.contentDocument && seen(el.contentDocument)) return true; } catch (e) {} }
		}
		return false;
	};
	return seen(document);
})`

func (r *runner) wait(ctx context.Context, a *Wait) (*Result, error) {
	s, ts := r.Service, r.ts
	if a.Seconds > 0 {
		select {
		case <-time.After(time.Duration(a.Seconds * float64(time.Second))):
			return &Result{Message: fmt.Sprintf("waited %gs", a.Seconds)}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var what, done string // what is awaited (for a timeout's error), what happened (the caller named it)
	var check func() (bool, error)
	switch {
	case a.Text != "" || a.TextGone != "":
		t, gone := a.Text, false
		if t == "" {
			t, gone = a.TextGone, true
		}
		b, _ := json.Marshal(t)
		expr := pageTextJS + "(" + string(b) + ")"
		what, done = fmt.Sprintf("text %q to appear", t), "the text appeared"
		if gone {
			what, done = fmt.Sprintf("text %q to disappear", t), "the text is gone"
		}
		check = func() (bool, error) {
			v, err := s.evalValue(ctx, ts, expr)
			if err != nil {
				return false, nil // navigating: try again
			}
			return (string(v) == "true") != gone, nil
		}
	case a.URL != "":
		what, done = fmt.Sprintf("the URL to match %q", a.URL), "the URL matches"
		check = func() (bool, error) {
			u := s.targetInfo(ctx, ts.id).URL
			return u == a.URL || strings.Contains(u, a.URL), nil
		}
	case a.State != "":
		st := strings.ToLower(a.State)
		what, done = "load state "+st, "the page reached "+st
		check = func() (bool, error) {
			v, err := s.evalValue(ctx, ts, "document.readyState")
			if err != nil {
				return false, nil
			}
			rs := strings.Trim(string(v), `"`)
			switch st {
			case "domcontentloaded":
				return rs == "interactive" || rs == "complete", nil
			case "load":
				return rs == "complete", nil
			default:
				return rs == "complete" && ts.networkIdle(500*time.Millisecond), nil
			}
		}
	default:
		what, done = fmt.Sprintf("%s to be true", clip(a.Expression, 80)), "the expression is true"
		check = func() (bool, error) {
			v, err := s.evalValue(ctx, ts, a.Expression)
			if err != nil {
				if errors.Is(err, ErrScript) {
					return false, fmt.Errorf("wait: %w", err)
				}
				return false, nil
			}
			switch strings.TrimSpace(string(v)) {
			case "false", "null", "0", `""`, "":
				return false, nil
			}
			return true, nil
		}
	}
	start := time.Now()
	for {
		if d := ts.tab.Dialog(); d != nil {
			return nil, ts.tab.DialogError()
		}
		ok, err := check()
		if err != nil {
			return nil, err
		}
		if ok {
			res := &Result{Message: fmt.Sprintf("done waiting (%.1fs): %s", time.Since(start).Seconds(), done)}
			info := s.targetInfo(ctx, ts.id)
			res.URL, res.Title = info.URL, info.Title
			return res, nil
		}
		select {
		case <-time.After(150 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("gave up waiting for %s after %.0fs", what, time.Since(start).Seconds())
		}
	}
}

func (r *runner) resize(ctx context.Context, a *Resize) (*Result, error) {
	s, ts := r.Service, r.ts
	if a.Width == 0 {
		if err := s.c.Call(ctx, ts.tab.Session(), "Emulation.clearDeviceMetricsOverride", nil, nil); err != nil {
			return nil, fmt.Errorf("resize: %w", err)
		}
		return &Result{Message: "viewport back to the window size"}, nil
	}
	if err := s.c.Call(ctx, ts.tab.Session(), emulation.CommandSetDeviceMetricsOverride, &emulation.SetDeviceMetricsOverrideParams{
		Width: int64(a.Width), Height: int64(a.Height), DeviceScaleFactor: 0, Mobile: false,
	}, nil); err != nil {
		return nil, fmt.Errorf("resize: %w", err)
	}
	return &Result{Message: fmt.Sprintf("viewport is now %dx%d", a.Width, a.Height)}, nil
}

func (r *runner) navigate(ctx context.Context, p *Navigate) (*Result, error) {
	u, err := r.checkURL(p.URL, r.targetInfo(ctx, r.ts.id).URL)
	if err != nil {
		return nil, err
	}
	session := r.ts.tab.Session()
	loaded := r.c.Expect(session, "Page.loadEventFired", nil)
	var res struct {
		ErrorText string `json:"errorText"`
		LoaderID  string `json:"loaderId"`
	}
	if err := r.c.Call(ctx, session, page.CommandNavigate, &page.NavigateParams{URL: u}, &res); err != nil {
		return nil, fmt.Errorf("navigate to %s: %w", u, err)
	}
	if res.ErrorText != "" {
		return nil, fmt.Errorf("navigate to %s failed: %s", u, res.ErrorText)
	}
	if res.LoaderID == "" { // same-document navigation: no load event
		return r.navResult(ctx, r.ts, "navigated"), nil
	}
	return r.awaitLoad(ctx, loaded, "navigated", false)
}

func (r *runner) reload(ctx context.Context, _ *Reload) (*Result, error) {
	loaded := r.c.Expect(r.ts.tab.Session(), "Page.loadEventFired", nil)
	if err := r.c.Call(ctx, r.ts.tab.Session(), "Page.reload", nil, nil); err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	return r.awaitLoad(ctx, loaded, "reloaded", false)
}

// history goes step entries back (-1) or forward (1) in the tab's history.
func (r *runner) history(ctx context.Context, step int) (*Result, error) {
	session := r.ts.tab.Session()
	loaded := r.c.Expect(session, "Page.loadEventFired", nil)
	var h struct {
		CurrentIndex int `json:"currentIndex"`
		Entries      []struct {
			ID  int    `json:"id"`
			URL string `json:"url"`
		} `json:"entries"`
	}
	if err := r.c.Call(ctx, session, "Page.getNavigationHistory", nil, &h); err != nil {
		return nil, fmt.Errorf("%s: %w", r.kind, err)
	}
	i := h.CurrentIndex + step
	if i < 0 || i >= len(h.Entries) {
		return nil, fmt.Errorf("cannot go %s: no page there in this tab's history", r.kind)
	}
	if err := r.c.Call(ctx, session, page.CommandNavigateToHistoryEntry, &page.NavigateToHistoryEntryParams{EntryID: int64(h.Entries[i].ID)}, nil); err != nil {
		return nil, fmt.Errorf("%s: %w", r.kind, err)
	}
	msg := "went back"
	if step > 0 {
		msg = "went forward"
	}
	return r.awaitLoad(ctx, loaded, msg, true)
}

// awaitLoad waits for a navigation's load event (or, for same-document history entries, a
// complete document), and reports a dialog the page opened meanwhile.
func (r *runner) awaitLoad(ctx context.Context, loaded *cdpclient.Waiter, msg string, sameDocument bool) (*Result, error) {
	ts := r.ts
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := loaded.Wait(wctx); done <- err }()
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				msg += "; the page is still loading"
			}
			return r.navResult(ctx, ts, msg), nil
		case <-t.C:
			// same-document history entries fire no load event
			if sameDocument {
				if v, err := r.evalValue(ctx, ts, "document.readyState"); err == nil && string(v) == `"complete"` {
					time.Sleep(50 * time.Millisecond)
					return r.navResult(ctx, ts, msg), nil
				}
			}
			if d := ts.tab.Dialog(); d != nil {
				res := r.navResult(ctx, ts, msg)
				res.Dialog = d
				res.Message += fmt.Sprintf("; a %s dialog %q is open: accept or dismiss it", d.Type, clip(d.Message, 200))
				return res, nil
			}
		}
	}
}

func (s *Service) navResult(ctx context.Context, ts *tabState, msg string) *Result {
	info := s.targetInfo(ctx, ts.id)
	return &Result{Message: msg + " to " + info.URL, URL: info.URL, Title: info.Title}
}

func (r *runner) handleDialog(ctx context.Context, a *Dialog) (*Result, error) {
	s, ts := r.Service, r.ts
	d := ts.tab.Dialog()
	if d == nil {
		return nil, fmt.Errorf("no JavaScript dialog is open")
	}
	accept := a.Accept == nil || *a.Accept
	p := &page.HandleJavaScriptDialogParams{Accept: accept, PromptText: a.PromptText}
	session := d.Session
	if session == "" {
		session = ts.tab.Session()
	}
	if err := s.c.Call(ctx, session, page.CommandHandleJavaScriptDialog, p, nil); err != nil {
		return nil, fmt.Errorf("handle dialog: %w", err)
	}
	ts.tab.DialogClosed()
	verb := "accepted"
	if !accept {
		verb = "dismissed"
	}
	return &Result{Message: fmt.Sprintf("%s the %s dialog %q", verb, d.Type, clip(d.Message, 200))}, nil
}

const labelsJS = `function(boxes) {
	const root = document.createElement('div');
	root.id = '__tabrelay_labels';
	root.style.cssText = 'position:fixed;inset:0;pointer-events:none;z-index:2147483647';
	for (const b of boxes) {
		const o = document.createElement('div');
		o.style.cssText = 'position:fixed;border:2px solid #e11;box-sizing:border-box;left:' + b.x + 'px;top:' + b.y + 'px;width:' + b.w + 'px;height:' + b.h + 'px';
		const l = document.createElement('span');
		l.textContent = b.ref;
		l.style.cssText = 'position:absolute;left:-2px;top:-16px;background:#e11;color:#fff;font:bold 11px/14px monospace;padding:0 3px;border-radius:2px';
		o.append(l); root.append(o);
	}
	document.documentElement.append(root);
	return boxes.length;
}`

func (r *runner) screenshot(ctx context.Context, a *Screenshot) (*Result, error) {
	s, ts := r.Service, r.ts
	session := ts.tab.Session()
	format := strings.ToLower(a.Format)
	if format == "jpg" {
		format = "jpeg"
	}
	if format == "" {
		format = "png"
	}
	p := &page.CaptureScreenshotParams{Format: page.CaptureScreenshotFormat(format)}
	if format == "jpeg" {
		p.Quality = new(int64(80))
	}
	what := "the viewport"
	var lm struct {
		V struct {
			PageX float64 `json:"pageX"`
			PageY float64 `json:"pageY"`
		} `json:"cssVisualViewport"`
		Content struct {
			Width  float64 `json:"width"`
			Height float64 `json:"height"`
		} `json:"cssContentSize"`
	}
	switch {
	case a.Ref != "":
		t, err := s.aimAt(ctx, ts, a.Ref, false)
		if err != nil && !errors.Is(err, ErrCovered) {
			return nil, err
		}
		if t == nil { // covered: still show it
			el, err := ts.resolve(ctx, a.Ref)
			if err != nil {
				return nil, err
			}
			raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, measureJS)
			ts.tab.Release(ctx, el)
			if err != nil {
				return nil, err
			}
			var m measure
			json.Unmarshal(raw, &m)
			t = &aim{el: el, x: m.X, y: m.Y, w: m.W, h: m.H}
		}
		ts.tab.Release(ctx, t.el)
		if err := s.c.Call(ctx, session, "Page.getLayoutMetrics", nil, &lm); err != nil {
			return nil, err
		}
		p.Clip = &page.Viewport{X: lm.V.PageX + t.x - t.w/2, Y: lm.V.PageY + t.y - t.h/2, Width: t.w, Height: t.h, Scale: 1}
		what = t.el.Describe()
	case a.FullPage:
		if err := s.c.Call(ctx, session, "Page.getLayoutMetrics", nil, &lm); err != nil {
			return nil, err
		}
		p.CaptureBeyondViewport = new(true)
		p.Clip = &page.Viewport{X: 0, Y: 0, Width: lm.Content.Width, Height: lm.Content.Height, Scale: 1}
		what = "the full page"
	}
	labelled := 0
	if a.Labels {
		n, err := s.drawLabels(ctx, ts)
		if err != nil {
			return nil, err
		}
		labelled = n
		defer func() {
			c2, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_, _ = s.evalValue(c2, ts, "document.getElementById('__tabrelay_labels')?.remove()")
		}()
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := s.c.Call(ctx, session, page.CommandCaptureScreenshot, p, &shot); err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	data, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	msg := "screenshot of " + what
	if a.Labels {
		msg += fmt.Sprintf(" with %d ref labels", labelled)
	}
	return &Result{Message: msg, Data: data, MIME: "image/" + format}, nil
}

// drawLabels overlays the refs of the latest snapshot that are in the viewport (taking a
// snapshot first if there is none).
func (s *Service) drawLabels(ctx context.Context, ts *tabState) (int, error) {
	refs := ts.tab.Refs()
	if len(refs) == 0 {
		if _, err := ts.tab.Snapshot(ctx, snapshot.Options{}); err != nil {
			return 0, err
		}
		refs = ts.tab.Refs()
	}
	var boxes []map[string]any
	for _, r := range refs {
		el, err := ts.resolve(ctx, r.Ref)
		if err != nil {
			continue
		}
		raw, err := s.callFn(ctx, el.Frame.Session, el.ObjectID, `function(){ const r = this.getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width, h: r.height, vw: innerWidth, vh: innerHeight} }`)
		ts.tab.Release(ctx, el)
		if err != nil {
			continue
		}
		var b struct{ X, Y, W, H, VW, VH float64 }
		json.Unmarshal(raw, &b)
		if el.Frame.ID != ts.id {
			ox, oy, ok := s.frameOffset(ctx, ts, el.Frame.ID)
			if !ok {
				continue
			}
			b.X, b.Y = b.X+ox, b.Y+oy
		}
		if b.W <= 0 || b.H <= 0 || b.X+b.W < 0 || b.Y+b.H < 0 {
			continue
		}
		boxes = append(boxes, map[string]any{"ref": r.Ref, "x": b.X, "y": b.Y, "w": b.W, "h": b.H})
	}
	var r struct {
		Result struct {
			ObjectID string `json:"objectId"`
		} `json:"result"`
	}
	if err := s.c.Call(ctx, ts.tab.Session(), runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: "document"}, &r); err != nil {
		return 0, err
	}
	if boxes == nil {
		boxes = []map[string]any{}
	}
	if _, err := s.callFn(ctx, ts.tab.Session(), r.Result.ObjectID, labelsJS, boxes); err != nil {
		return 0, fmt.Errorf("draw labels: %w", err)
	}
	return len(boxes), nil
}

// frameOffset is the position of frame frameID's viewport in the main frame's viewport.
func (s *Service) frameOffset(ctx context.Context, ts *tabState, frameID string) (float64, float64, bool) {
	frames, err := ts.tab.Frames(ctx)
	if err != nil {
		return 0, 0, false
	}
	byID := map[string]snapshot.Frame{}
	for _, f := range frames {
		byID[f.ID] = f
	}
	x, y := 0.0, 0.0
	for f := frameID; f != ts.id; {
		fr, ok := byID[f]
		if !ok {
			return 0, 0, false
		}
		parent, ok := byID[fr.ParentID]
		if !ok {
			return 0, 0, false
		}
		var owner struct {
			BackendNodeID int `json:"backendNodeId"`
		}
		if s.c.Call(ctx, parent.Session, dom.CommandGetFrameOwner, &dom.GetFrameOwnerParams{FrameID: cdp.FrameID(f)}, &owner) != nil {
			return 0, 0, false
		}
		var rn struct {
			Object struct {
				ObjectID string `json:"objectId"`
			} `json:"object"`
		}
		if s.c.Call(ctx, parent.Session, dom.CommandResolveNode, &dom.ResolveNodeParams{BackendNodeID: cdp.BackendNodeID(owner.BackendNodeID)}, &rn) != nil {
			return 0, 0, false
		}
		raw, err := s.callFn(ctx, parent.Session, rn.Object.ObjectID, originJS)
		if err != nil {
			return 0, 0, false
		}
		var o struct{ X, Y float64 }
		json.Unmarshal(raw, &o)
		x, y = x+o.X, y+o.Y
		f = fr.ParentID
	}
	return x, y, true
}

func (r *runner) pdf(ctx context.Context, _ *PDF) (*Result, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := r.c.Call(ctx, r.ts.tab.Session(), page.CommandPrintToPDF, &page.PrintToPDFParams{PrintBackground: new(true)}, &res); err != nil {
		return nil, fmt.Errorf("pdf: %w (Chrome makes PDFs of headless tabs only)", err)
	}
	data, err := base64.StdEncoding.DecodeString(res.Data)
	if err != nil {
		return nil, fmt.Errorf("pdf: %w", err)
	}
	return &Result{Message: fmt.Sprintf("PDF of %d bytes", len(data)), Data: data, MIME: "application/pdf"}, nil
}
