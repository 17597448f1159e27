package actions

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

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
	if err := s.c.Call(ctx, ts.tab.Session(), "Runtime.evaluate", map[string]any{
		"expression": expr, "returnByValue": true, "awaitPromise": true, "userGesture": true,
	}, &r); err != nil {
		return nil, err
	}
	if r.Exc != nil {
		d := r.Exc.Exception.Description
		if d == "" {
			d = r.Exc.Text
		}
		return nil, fmt.Errorf("script error: %s", clip(d, 500))
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

func (s *Service) evaluate(ctx context.Context, ts *tabState, a Action) (*Result, error) {
	var v json.RawMessage
	var err error
	if a.Ref != "" {
		el, rerr := ts.tab.Resolve(ctx, a.Ref)
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

func (s *Service) wait(ctx context.Context, ts *tabState, a Action) (*Result, error) {
	if a.Seconds > 0 {
		select {
		case <-time.After(time.Duration(a.Seconds * float64(time.Second))):
			return &Result{Message: fmt.Sprintf("waited %gs", a.Seconds)}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var what string
	var check func() (bool, error)
	switch {
	case a.Text != "" || a.TextGone != "":
		t, gone := a.Text, false
		if t == "" {
			t, gone = a.TextGone, true
		}
		b, _ := json.Marshal(t)
		expr := pageTextJS + "(" + string(b) + ")"
		what = fmt.Sprintf("text %q to appear", t)
		if gone {
			what = fmt.Sprintf("text %q to disappear", t)
		}
		check = func() (bool, error) {
			v, err := s.evalValue(ctx, ts, expr)
			if err != nil {
				return false, nil // navigating: try again
			}
			return (string(v) == "true") != gone, nil
		}
	case a.URL != "":
		what = fmt.Sprintf("the URL to match %q", a.URL)
		check = func() (bool, error) {
			u := s.targetInfo(ctx, ts.id).URL
			return u == a.URL || strings.Contains(u, a.URL), nil
		}
	case a.State != "":
		st := strings.ToLower(a.State)
		what = "load state " + st
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
		what = fmt.Sprintf("%s to be true", clip(a.Expression, 80))
		check = func() (bool, error) {
			v, err := s.evalValue(ctx, ts, a.Expression)
			if err != nil {
				if strings.HasPrefix(err.Error(), "script error") {
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
			r := &Result{Message: fmt.Sprintf("done waiting for %s (%.1fs)", what, time.Since(start).Seconds())}
			info := s.targetInfo(ctx, ts.id)
			r.URL, r.Title = info.URL, info.Title
			return r, nil
		}
		select {
		case <-time.After(150 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("gave up waiting for %s after %.0fs", what, time.Since(start).Seconds())
		}
	}
}

func (s *Service) resize(ctx context.Context, ts *tabState, a Action) (*Result, error) {
	if a.Width == 0 {
		if err := s.c.Call(ctx, ts.tab.Session(), "Emulation.clearDeviceMetricsOverride", nil, nil); err != nil {
			return nil, fmt.Errorf("resize: %w", err)
		}
		return &Result{Message: "viewport back to the window size"}, nil
	}
	if err := s.c.Call(ctx, ts.tab.Session(), "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": a.Width, "height": a.Height, "deviceScaleFactor": 0, "mobile": false,
	}, nil); err != nil {
		return nil, fmt.Errorf("resize: %w", err)
	}
	return &Result{Message: fmt.Sprintf("viewport is now %dx%d", a.Width, a.Height)}, nil
}

func (s *Service) navigate(ctx context.Context, ts *tabState, a Action) (*Result, error) {
	session := ts.tab.Session()
	u := ""
	if a.Kind == "navigate" {
		var err error
		if u, err = s.checkURL(a.URL, s.targetInfo(ctx, ts.id).URL); err != nil {
			return nil, err
		}
	}
	loaded := s.c.Expect(session, "Page.loadEventFired", nil)
	switch a.Kind {
	case "navigate":
		var r struct {
			ErrorText string `json:"errorText"`
			LoaderID  string `json:"loaderId"`
		}
		if err := s.c.Call(ctx, session, "Page.navigate", map[string]any{"url": u}, &r); err != nil {
			return nil, fmt.Errorf("navigate to %s: %w", u, err)
		}
		if r.ErrorText != "" {
			return nil, fmt.Errorf("navigate to %s failed: %s", u, r.ErrorText)
		}
		if r.LoaderID == "" { // same-document navigation: no load event
			return s.navResult(ctx, ts, "navigated"), nil
		}
	case "reload":
		if err := s.c.Call(ctx, session, "Page.reload", nil, nil); err != nil {
			return nil, fmt.Errorf("reload: %w", err)
		}
	default:
		var h struct {
			CurrentIndex int `json:"currentIndex"`
			Entries      []struct {
				ID  int    `json:"id"`
				URL string `json:"url"`
			} `json:"entries"`
		}
		if err := s.c.Call(ctx, session, "Page.getNavigationHistory", nil, &h); err != nil {
			return nil, fmt.Errorf("%s: %w", a.Kind, err)
		}
		i := h.CurrentIndex - 1
		if a.Kind == "forward" {
			i = h.CurrentIndex + 1
		}
		if i < 0 || i >= len(h.Entries) {
			return nil, fmt.Errorf("cannot go %s: no page there in this tab's history", a.Kind)
		}
		if err := s.c.Call(ctx, session, "Page.navigateToHistoryEntry", map[string]any{"entryId": h.Entries[i].ID}, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", a.Kind, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	msg := map[string]string{"navigate": "navigated", "reload": "reloaded", "back": "went back", "forward": "went forward"}[a.Kind]
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
			return s.navResult(ctx, ts, msg), nil
		case <-t.C:
			// same-document history entries fire no load event
			if a.Kind != "navigate" && a.Kind != "reload" {
				if v, err := s.evalValue(ctx, ts, "document.readyState"); err == nil && string(v) == `"complete"` {
					time.Sleep(50 * time.Millisecond)
					return s.navResult(ctx, ts, msg), nil
				}
			}
			if d := ts.tab.Dialog(); d != nil {
				r := s.navResult(ctx, ts, msg)
				r.Dialog = d
				r.Message += fmt.Sprintf("; a %s dialog %q is open: accept or dismiss it", d.Type, clip(d.Message, 200))
				return r, nil
			}
		}
	}
}

func (s *Service) navResult(ctx context.Context, ts *tabState, msg string) *Result {
	info := s.targetInfo(ctx, ts.id)
	return &Result{Message: msg + " to " + info.URL, URL: info.URL, Title: info.Title}
}

func (s *Service) handleDialog(ctx context.Context, ts *tabState, a Action) (*Result, error) {
	d := ts.tab.Dialog()
	if d == nil {
		return nil, fmt.Errorf("no JavaScript dialog is open")
	}
	accept := a.Accept == nil || *a.Accept
	p := map[string]any{"accept": accept}
	if a.PromptText != "" {
		p["promptText"] = a.PromptText
	}
	session := d.Session
	if session == "" {
		session = ts.tab.Session()
	}
	if err := s.c.Call(ctx, session, "Page.handleJavaScriptDialog", p, nil); err != nil {
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

func (s *Service) screenshot(ctx context.Context, ts *tabState, a Action) (*Result, error) {
	session := ts.tab.Session()
	format := strings.ToLower(a.Format)
	if format == "jpg" {
		format = "jpeg"
	}
	if format == "" {
		format = "png"
	}
	p := map[string]any{"format": format}
	if format == "jpeg" {
		p["quality"] = 80
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
		if err != nil && !strings.Contains(err.Error(), "covered") {
			return nil, err
		}
		if t == nil { // covered: still show it
			el, err := ts.tab.Resolve(ctx, a.Ref)
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
		p["clip"] = map[string]any{"x": lm.V.PageX + t.x - t.w/2, "y": lm.V.PageY + t.y - t.h/2, "width": t.w, "height": t.h, "scale": 1}
		what = t.el.Describe()
	case a.FullPage:
		if err := s.c.Call(ctx, session, "Page.getLayoutMetrics", nil, &lm); err != nil {
			return nil, err
		}
		p["captureBeyondViewport"] = true
		p["clip"] = map[string]any{"x": 0, "y": 0, "width": lm.Content.Width, "height": lm.Content.Height, "scale": 1}
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
	var r struct {
		Data string `json:"data"`
	}
	if err := s.c.Call(ctx, session, "Page.captureScreenshot", p, &r); err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	data, err := base64.StdEncoding.DecodeString(r.Data)
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
		el, err := ts.tab.Resolve(ctx, r.Ref)
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
	if err := s.c.Call(ctx, ts.tab.Session(), "Runtime.evaluate", map[string]any{"expression": "document"}, &r); err != nil {
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
		if s.c.Call(ctx, parent.Session, "DOM.getFrameOwner", map[string]any{"frameId": f}, &owner) != nil {
			return 0, 0, false
		}
		var rn struct {
			Object struct {
				ObjectID string `json:"objectId"`
			} `json:"object"`
		}
		if s.c.Call(ctx, parent.Session, "DOM.resolveNode", map[string]any{"backendNodeId": owner.BackendNodeID}, &rn) != nil {
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

func (s *Service) pdf(ctx context.Context, ts *tabState) (*Result, error) {
	var r struct {
		Data string `json:"data"`
	}
	if err := s.c.Call(ctx, ts.tab.Session(), "Page.printToPDF", map[string]any{"printBackground": true}, &r); err != nil {
		return nil, fmt.Errorf("pdf: %w (Chrome makes PDFs of headless tabs only)", err)
	}
	data, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		return nil, fmt.Errorf("pdf: %w", err)
	}
	return &Result{Message: fmt.Sprintf("PDF of %d bytes", len(data)), Data: data, MIME: "application/pdf"}, nil
}
