package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"
	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"
)

// The Go clients of the compatibility suite (see compat_test.go): go-rod, chromedp (with a raw
// client on the same tab) and a raw WebSocket client (coder/websocket).

const (
	compatTitle     = "Every input"
	compatEvalExpr  = "6 * 7 + ' ' + location.hostname"
	compatEvalWant  = "42 127.0.0.1"
	compatFormValue = "Ada Lovelace"
	compatFormWant  = "name=Ada+Lovelace"
	compatClearForm = "document.getElementById('result').textContent = document.querySelector('input[name=name]').value = ''"
	compatVisible   = "document.visibilityState"
	// compatActiveWait is how long the user's tab gets to come back in front after a close (the
	// Node clients wait as long: harness.mjs waitFor).
	compatActiveWait = 8 * time.Second
)

func wantEq(what string, got, want any) error {
	if got != want {
		return fmt.Errorf("%s: got %q, want %q", what, got, want)
	}
	return nil
}

func checkPNG(png []byte) error {
	if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		return fmt.Errorf("not a PNG screenshot (%d bytes)", len(png))
	}
	return nil
}

// pollUntil calls cond until it returns true, an error, or ctx ends.
func pollUntil(ctx context.Context, what string, cond func() (bool, error)) error {
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w (last error: %v)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// runRodCompat: go-rod as its docs show, rod.New().ControlURL(ws URL).Connect(). On tabrelay the
// URL carries the secret (?token=); NoDefaultDevice keeps the user's viewport.
func runRodCompat(t *testing.T, ep *compatEndpoint, _ string) []compatResult {
	marker := compatMarker("go-rod", ep.name)
	tab := ep.openUserTab(t, ep.site.URL("/hard/form.html?"+marker))
	defer ep.closeUserTab(t, tab)
	control := ep.browserWS
	if ep.token != "" {
		control += "?token=" + url.QueryEscape(ep.token)
	}
	s := &compatScenarios{ep: ep.name}
	var b *rod.Browser
	var page *rod.Page
	conn := func(ctx context.Context) (*rod.Browser, error) {
		if b == nil {
			nb := rod.New().ControlURL(control).NoDefaultDevice()
			if err := nb.Connect(); err != nil {
				return nil, fmt.Errorf("connect: %w", err)
			}
			b = nb
		}
		return b.Context(ctx), nil
	}
	user := func(ctx context.Context) (*rod.Page, error) {
		if page != nil {
			return page.Context(ctx), nil
		}
		if _, err := conn(ctx); err != nil {
			return nil, err
		}
		// pages of the base browser (not of one scenario's context), each used with its scenario's
		pages, err := b.Pages()
		if err != nil {
			return nil, err
		}
		var urls []string
		for _, p := range pages {
			info, err := p.Info()
			if err != nil {
				return nil, err
			}
			if strings.Contains(info.URL, marker) {
				page = p
				return p.Context(ctx), nil
			}
			urls = append(urls, info.URL)
		}
		return nil, fmt.Errorf("no page with %s among %v", marker, urls)
	}
	eval := func(p *rod.Page, js string) (string, error) {
		obj, err := p.Eval("() => " + js)
		if err != nil {
			return "", err
		}
		return obj.Value.String(), nil
	}
	// A failed scenario leaves its connection (rod has no disconnect that keeps the browser: Close
	// sends Browser.close); the next scenario connects anew.
	run := func(name string, fn func(ctx context.Context, step func(string)) error) {
		if !s.run(name, fn) {
			b, page = nil, nil
		}
	}
	run("connect: ControlURL", func(ctx context.Context, step func(string)) error {
		_, err := conn(ctx)
		return err
	})
	run(scenarioFind, func(ctx context.Context, step func(string)) error {
		_, err := user(ctx)
		return err
	})
	run(scenarioTitleEval, func(ctx context.Context, step func(string)) error {
		p, err := user(ctx)
		if err != nil {
			return err
		}
		step("title")
		title, err := eval(p, "document.title")
		if err != nil {
			return err
		}
		if err := wantEq("title", title, compatTitle); err != nil {
			return err
		}
		step("evaluate")
		got, err := eval(p, compatEvalExpr)
		if err != nil {
			return err
		}
		return wantEq("evaluate", got, compatEvalWant)
	})
	run(scenarioForm, func(ctx context.Context, step func(string)) error {
		p, err := user(ctx)
		if err != nil {
			return err
		}
		step("clear the result")
		if _, err := eval(p, "("+compatClearForm+", '')"); err != nil {
			return err
		}
		step("input")
		el, err := p.Element("input[name=name]")
		if err != nil {
			return err
		}
		if err := el.Input(compatFormValue); err != nil {
			return err
		}
		step("click")
		btn, err := p.Element("[data-testid=in-submit]")
		if err != nil {
			return err
		}
		if err := btn.Click(proto.InputMouseButtonLeft, 1); err != nil {
			return err
		}
		step("result")
		return pollUntil(ctx, "the form's result", func() (bool, error) {
			got, err := eval(p, "document.getElementById('result').textContent")
			return strings.Contains(got, compatFormWant), err
		})
	})
	run(scenarioScreenshot, func(ctx context.Context, step func(string)) error {
		p, err := user(ctx)
		if err != nil {
			return err
		}
		step("screenshot")
		png, err := p.Screenshot(false, nil)
		if err != nil {
			return err
		}
		return checkPNG(png)
	})
	run(scenarioNewPage, func(ctx context.Context, step func(string)) error {
		b, err := conn(ctx)
		if err != nil {
			return err
		}
		p, err := user(ctx)
		if err != nil {
			return err
		}
		step("new page")
		np, err := b.Page(proto.TargetCreateTarget{URL: ep.site.URL("/other.html")})
		if err != nil {
			return err
		}
		step("wait load")
		if err := np.WaitLoad(); err != nil {
			return err
		}
		if got, err := eval(np, "document.title"); err != nil || got != "Other page" {
			return fmt.Errorf("new page title %q (%v)", got, err)
		}
		step("close")
		if err := np.Close(); err != nil {
			return err
		}
		step("the user's tab is still there")
		if got, err := eval(p, "document.title"); err != nil || got != compatTitle {
			return fmt.Errorf("the user's tab after the close: title %q (%v)", got, err)
		}
		return nil
	})
	run(scenarioActiveAgain, func(ctx context.Context, step func(string)) error {
		up, err := user(ctx)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, compatActiveWait)
		defer cancel()
		return pollUntil(ctx, "the user's tab is the visible (active) tab again", func() (bool, error) {
			v, err := eval(up, compatVisible)
			return v == "visible", err
		})
	})
	return s.results
}

// runChromedpCompat: chromedp's remote allocator as its docs show (the README's URL with
// ?token= on tabrelay), the user's tab by WithTargetID (WithDetachOnCancel: leaving must not
// close it), and the two-client case with a raw client on the same tab.
func runChromedpCompat(t *testing.T, ep *compatEndpoint, _ string) []compatResult {
	marker := compatMarker("chromedp", ep.name)
	tab := ep.openUserTab(t, ep.site.URL("/hard/form.html?"+marker))
	defer ep.closeUserTab(t, tab)
	allocURL := ep.http
	if ep.token != "" {
		allocURL += "/?token=" + url.QueryEscape(ep.token)
	}
	s := &compatScenarios{ep: ep.name}
	var (
		mu      sync.Mutex
		bctx    context.Context
		cancels []context.CancelFunc
		tctx    context.Context
	)
	reset := func() {
		mu.Lock()
		defer mu.Unlock()
		for i := len(cancels) - 1; i >= 0; i-- {
			cancels[i]()
		}
		cancels, bctx, tctx = nil, nil, nil
	}
	defer reset()
	// chromedp's contexts live across scenarios; each action is bounded by the scenario's ctx.
	conn := func(ctx context.Context) (context.Context, error) {
		mu.Lock()
		defer mu.Unlock()
		if bctx != nil {
			return bctx, nil
		}
		actx, acancel := remote.NewAllocator(context.Background(), allocURL)
		nb, bcancel := chromedp.NewContext(actx)
		cancels = append(cancels, acancel, bcancel)
		if _, err := runCtx(ctx, nb, chromedp.Targets); err != nil {
			return nil, err
		}
		bctx = nb
		return bctx, nil
	}
	user := func(ctx context.Context) (context.Context, error) {
		b, err := conn(ctx)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if tctx != nil {
			return tctx, nil
		}
		infos, err := runCtx(ctx, b, chromedp.Targets)
		if err != nil {
			return nil, err
		}
		for _, in := range infos {
			if in.Type == "page" && strings.Contains(in.URL, marker) {
				nt, cancel := chromedp.NewContext(b, chromedp.WithTargetID(in.TargetID), chromedp.WithDetachOnCancel())
				cancels = append(cancels, cancel)
				tctx = nt
				return tctx, nil
			}
		}
		return nil, fmt.Errorf("no page with %s among %d targets", marker, len(infos))
	}
	run := func(name string, fn func(ctx context.Context, step func(string)) error) {
		if !s.run(name, fn) {
			reset()
		}
	}
	run("connect: remote allocator", func(ctx context.Context, step func(string)) error {
		_, err := conn(ctx)
		return err
	})
	run(scenarioFind, func(ctx context.Context, step func(string)) error {
		_, err := user(ctx)
		return err
	})
	run(scenarioTitleEval, func(ctx context.Context, step func(string)) error {
		tc, err := user(ctx)
		if err != nil {
			return err
		}
		step("title")
		title, err := runAction(ctx, tc, chromedp.Title())
		if err != nil {
			return err
		}
		if err := wantEq("title", title, compatTitle); err != nil {
			return err
		}
		step("evaluate")
		got, err := runAction(ctx, tc, chromedp.Evaluate[string](compatEvalExpr))
		if err != nil {
			return err
		}
		return wantEq("evaluate", got, compatEvalWant)
	})
	form := func(ctx context.Context, step func(string), tc context.Context) error {
		step("clear the result")
		if _, err := runAction(ctx, tc, chromedp.Evaluate[string](compatClearForm)); err != nil {
			return err
		}
		step("send keys")
		if _, err := runAction(ctx, tc, chromedp.SendKeys("input[name=name]", compatFormValue)); err != nil {
			return err
		}
		step("click")
		if _, err := runAction(ctx, tc, chromedp.Click("[data-testid=in-submit]")); err != nil {
			return err
		}
		step("result text")
		got, err := runAction(ctx, tc, chromedp.Text("#result"))
		if err != nil {
			return err
		}
		if !strings.HasPrefix(got, compatFormWant+"&") {
			return fmt.Errorf("the form's result: got %q, want it to start with %q", got, compatFormWant+"&")
		}
		return nil
	}
	run(scenarioForm, func(ctx context.Context, step func(string)) error {
		tc, err := user(ctx)
		if err != nil {
			return err
		}
		return form(ctx, step, tc)
	})
	run(scenarioScreenshot, func(ctx context.Context, step func(string)) error {
		tc, err := user(ctx)
		if err != nil {
			return err
		}
		step("screenshot")
		png, err := runAction(ctx, tc, chromedp.CaptureScreenshot())
		if err != nil {
			return err
		}
		return checkPNG(png)
	})
	run(scenarioNewPage, func(ctx context.Context, step func(string)) error {
		b, err := conn(ctx)
		if err != nil {
			return err
		}
		tc, err := user(ctx)
		if err != nil {
			return err
		}
		step("new page")
		nctx, ncancel := chromedp.NewContext(b)
		defer ncancel()
		if _, err := runAction(ctx, nctx, chromedp.Navigate(ep.site.URL("/other.html"))); err != nil {
			return err
		}
		title, err := runAction(ctx, nctx, chromedp.Title())
		if err != nil {
			return err
		}
		if err := wantEq("new page title", title, "Other page"); err != nil {
			return err
		}
		step("close (cancel its context)")
		ncancel()
		if err := chromedp.Cancel(nctx); err != nil && !errors.Is(err, context.Canceled) {
			return fmt.Errorf("close the new page: %w", err)
		}
		step("the user's tab is still there")
		if got, err := runAction(ctx, tc, chromedp.Title()); err != nil || got != compatTitle {
			return fmt.Errorf("the user's tab after the close: title %q (%v)", got, err)
		}
		return nil
	})
	run(scenarioActiveAgain, func(ctx context.Context, step func(string)) error {
		utc, err := user(ctx)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, compatActiveWait)
		defer cancel()
		return pollUntil(ctx, "the user's tab is the visible (active) tab again", func() (bool, error) {
			v, err := runAction(ctx, utc, chromedp.Evaluate[string](compatVisible))
			return v == "visible", err
		})
	})
	run(scenarioRawBetween, func(ctx context.Context, step func(string)) error {
		tc, err := user(ctx)
		if err != nil {
			return err
		}
		step("raw client: connect")
		raw, err := dialRaw(ctx, ep)
		if err != nil {
			return err
		}
		defer raw.close()
		step("raw client: attach")
		sid, err := raw.attach(ctx, tab.TargetID)
		if err != nil {
			return err
		}
		getDoc := func() error {
			_, err := raw.call(ctx, sid, "DOM.getDocument", map[string]any{"depth": -1})
			return err
		}
		for i := range 3 {
			step(fmt.Sprintf("round %d: raw DOM.getDocument", i+1))
			if err := getDoc(); err != nil {
				return err
			}
			step(fmt.Sprintf("round %d: chromedp Text(h1)", i+1))
			h1, err := runAction(ctx, tc, chromedp.Text("h1"))
			if err != nil {
				return err
			}
			if err := wantEq("h1", h1, "Sign up"); err != nil {
				return err
			}
		}
		step("raw DOM.getDocument before the form")
		if err := getDoc(); err != nil {
			return err
		}
		return form(ctx, step, tc)
	})
	return s.results
}

// runCtx runs a chromedp function that takes a context (like chromedp.Targets) bounded by ctx.
func runCtx[T any](ctx context.Context, c context.Context, fn func(context.Context) (T, error)) (T, error) {
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() { v, err := fn(c); ch <- res{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// runAction runs a chromedp action on the long-lived context c, bounded by ctx.
func runAction[T any](ctx context.Context, c context.Context, a chromedp.Action[T]) (T, error) {
	return runCtx(ctx, c, func(c context.Context) (T, error) { return chromedp.Run(c, a) })
}

// rawCDP is a raw CDP client over coder/websocket: JSON messages, ids matched by hand.
type rawCDP struct {
	c      *websocket.Conn
	nextID atomic.Int64
	mu     sync.Mutex
	wait   map[int64]chan rawReply
	done   chan struct{}
	cancel context.CancelFunc
}

type rawReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// dialRaw finds the browser endpoint through /json/version (the secret in the Authorization
// header on tabrelay, as a raw client would send it) and dials it with the same header.
func dialRaw(ctx context.Context, ep *compatEndpoint) (*rawCDP, error) {
	h := http.Header{}
	if ep.token != "" {
		h.Set("Authorization", "Bearer "+ep.token)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ep.http+"/json/version", nil)
	if err != nil {
		return nil, err
	}
	req.Header = h.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET /json/version: %w", err)
	}
	defer resp.Body.Close()
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /json/version: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.WS == "" {
		return nil, fmt.Errorf("GET /json/version: no webSocketDebuggerUrl (%v)", err)
	}
	c, _, err := websocket.Dial(ctx, v.WS, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", v.WS, err)
	}
	c.SetReadLimit(-1)
	rctx, cancel := context.WithCancel(context.Background())
	r := &rawCDP{c: c, wait: map[int64]chan rawReply{}, done: make(chan struct{}), cancel: cancel}
	go r.read(rctx)
	return r, nil
}

func (r *rawCDP) read(ctx context.Context) {
	defer close(r.done)
	for {
		_, data, err := r.c.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			ID int64 `json:"id"`
			rawReply
		}
		if json.Unmarshal(data, &m) != nil || m.ID == 0 {
			continue
		}
		r.mu.Lock()
		ch := r.wait[m.ID]
		delete(r.wait, m.ID)
		r.mu.Unlock()
		if ch != nil {
			ch <- m.rawReply
		}
	}
}

func (r *rawCDP) call(ctx context.Context, sid, method string, params any) (json.RawMessage, error) {
	id := r.nextID.Add(1)
	ch := make(chan rawReply, 1)
	r.mu.Lock()
	r.wait[id] = ch
	r.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if sid != "" {
		msg["sessionId"] = sid
	}
	data, _ := json.Marshal(msg)
	if err := r.c.Write(ctx, websocket.MessageText, data); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case rep := <-ch:
		if rep.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, rep.Error.Message, rep.Error.Code)
		}
		return rep.Result, nil
	case <-r.done:
		return nil, fmt.Errorf("%s: the connection closed", method)
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

func (r *rawCDP) attach(ctx context.Context, targetID string) (string, error) {
	res, err := r.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		return "", err
	}
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &a); err != nil || a.SessionID == "" {
		return "", fmt.Errorf("Target.attachToTarget: no sessionId in %s", res)
	}
	return a.SessionID, nil
}

func (r *rawCDP) eval(ctx context.Context, sid, expr string) (string, error) {
	res, err := r.call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true})
	if err != nil {
		return "", err
	}
	var v struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return "", err
	}
	if v.Exception != nil {
		return "", fmt.Errorf("evaluate %q: %s", expr, v.Exception.Text)
	}
	return fmt.Sprint(v.Result.Value), nil
}

func (r *rawCDP) close() {
	_ = r.c.Close(websocket.StatusNormalClosure, "")
	r.cancel()
}

// runRawCompat: a raw WebSocket client (coder/websocket) speaking CDP by hand on the browser
// endpoint: flat sessions, DOM, Input, Page.captureScreenshot, Target.createTarget/closeTarget.
func runRawCompat(t *testing.T, ep *compatEndpoint, _ string) []compatResult {
	marker := compatMarker("raw", ep.name)
	tab := ep.openUserTab(t, ep.site.URL("/hard/form.html?"+marker))
	defer ep.closeUserTab(t, tab)
	s := &compatScenarios{ep: ep.name}
	var raw *rawCDP
	var sid string
	reset := func() {
		if raw != nil {
			raw.close()
		}
		raw, sid = nil, ""
	}
	defer reset()
	conn := func(ctx context.Context) (*rawCDP, error) {
		if raw == nil {
			r, err := dialRaw(ctx, ep)
			if err != nil {
				return nil, err
			}
			raw = r
		}
		return raw, nil
	}
	session := func(ctx context.Context) (*rawCDP, string, error) {
		r, err := conn(ctx)
		if err != nil {
			return nil, "", err
		}
		if sid == "" {
			res, err := r.call(ctx, "", "Target.getTargets", nil)
			if err != nil {
				return nil, "", err
			}
			var ts struct {
				TargetInfos []struct {
					TargetID, Type, URL string
				} `json:"targetInfos"`
			}
			_ = json.Unmarshal(res, &ts)
			var id string
			for _, ti := range ts.TargetInfos {
				if ti.Type == "page" && strings.Contains(ti.URL, marker) {
					id = ti.TargetID
				}
			}
			if id == "" {
				return nil, "", fmt.Errorf("Target.getTargets lists no page with %s (%d targets)", marker, len(ts.TargetInfos))
			}
			if sid, err = r.attach(ctx, id); err != nil {
				return nil, "", err
			}
		}
		return r, sid, nil
	}
	run := func(name string, fn func(ctx context.Context, step func(string)) error) {
		if !s.run(name, fn) {
			reset()
		}
	}
	run("connect: /json/version + WebSocket", func(ctx context.Context, step func(string)) error {
		r, err := conn(ctx)
		if err != nil {
			return err
		}
		_, err = r.call(ctx, "", "Browser.getVersion", nil)
		return err
	})
	run(scenarioFind, func(ctx context.Context, step func(string)) error {
		_, _, err := session(ctx)
		return err
	})
	run(scenarioTitleEval, func(ctx context.Context, step func(string)) error {
		r, sid, err := session(ctx)
		if err != nil {
			return err
		}
		step("title")
		title, err := r.eval(ctx, sid, "document.title")
		if err != nil {
			return err
		}
		if err := wantEq("title", title, compatTitle); err != nil {
			return err
		}
		step("evaluate")
		got, err := r.eval(ctx, sid, compatEvalExpr)
		if err != nil {
			return err
		}
		return wantEq("evaluate", got, compatEvalWant)
	})
	run(scenarioForm, func(ctx context.Context, step func(string)) error {
		r, sid, err := session(ctx)
		if err != nil {
			return err
		}
		step("clear the result")
		if _, err := r.eval(ctx, sid, compatClearForm); err != nil {
			return err
		}
		step("DOM.getDocument")
		res, err := r.call(ctx, sid, "DOM.getDocument", nil)
		if err != nil {
			return err
		}
		var doc struct {
			Root struct {
				NodeID int `json:"nodeId"`
			} `json:"root"`
		}
		_ = json.Unmarshal(res, &doc)
		query := func(sel string) (int, error) {
			res, err := r.call(ctx, sid, "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": sel})
			if err != nil {
				return 0, err
			}
			var n struct {
				NodeID int `json:"nodeId"`
			}
			_ = json.Unmarshal(res, &n)
			if n.NodeID == 0 {
				return 0, fmt.Errorf("no %s", sel)
			}
			return n.NodeID, nil
		}
		step("focus + Input.insertText")
		in, err := query("input[name=name]")
		if err != nil {
			return err
		}
		if _, err := r.call(ctx, sid, "DOM.focus", map[string]any{"nodeId": in}); err != nil {
			return err
		}
		if _, err := r.call(ctx, sid, "Input.insertText", map[string]any{"text": compatFormValue}); err != nil {
			return err
		}
		step("click the submit button")
		btn, err := query("[data-testid=in-submit]")
		if err != nil {
			return err
		}
		if _, err := r.call(ctx, sid, "DOM.scrollIntoViewIfNeeded", map[string]any{"nodeId": btn}); err != nil {
			return err
		}
		res, err = r.call(ctx, sid, "DOM.getBoxModel", map[string]any{"nodeId": btn})
		if err != nil {
			return err
		}
		var box struct {
			Model struct {
				Content []float64 `json:"content"`
			} `json:"model"`
		}
		if err := json.Unmarshal(res, &box); err != nil || len(box.Model.Content) < 8 {
			return fmt.Errorf("DOM.getBoxModel: %s", res)
		}
		c := box.Model.Content
		x, y := (c[0]+c[4])/2, (c[1]+c[5])/2
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			if _, err := r.call(ctx, sid, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}); err != nil {
				return err
			}
		}
		step("result")
		return pollUntil(ctx, "the form's result", func() (bool, error) {
			got, err := r.eval(ctx, sid, "document.getElementById('result').textContent")
			return strings.Contains(got, compatFormWant), err
		})
	})
	run(scenarioScreenshot, func(ctx context.Context, step func(string)) error {
		r, sid, err := session(ctx)
		if err != nil {
			return err
		}
		step("Page.captureScreenshot")
		res, err := r.call(ctx, sid, "Page.captureScreenshot", map[string]any{"format": "png"})
		if err != nil {
			return err
		}
		var shot struct {
			Data string `json:"data"`
		}
		_ = json.Unmarshal(res, &shot)
		png, err := base64.StdEncoding.DecodeString(shot.Data)
		if err != nil {
			return err
		}
		return checkPNG(png)
	})
	run(scenarioNewPage, func(ctx context.Context, step func(string)) error {
		r, sid, err := session(ctx)
		if err != nil {
			return err
		}
		step("Target.createTarget")
		res, err := r.call(ctx, "", "Target.createTarget", map[string]any{"url": ep.site.URL("/other.html")})
		if err != nil {
			return err
		}
		var nt struct {
			TargetID target.ID `json:"targetId"`
		}
		_ = json.Unmarshal(res, &nt)
		nsid, err := r.attach(ctx, string(nt.TargetID))
		if err != nil {
			return err
		}
		step("the new page's title")
		if err := pollUntil(ctx, "the new page loads", func() (bool, error) {
			got, err := r.eval(ctx, nsid, "document.title")
			return got == "Other page", err
		}); err != nil {
			return err
		}
		step("Target.closeTarget")
		if _, err := r.call(ctx, "", "Target.closeTarget", map[string]any{"targetId": nt.TargetID}); err != nil {
			return err
		}
		step("the user's tab is still there")
		if got, err := r.eval(ctx, sid, "document.title"); err != nil || got != compatTitle {
			return fmt.Errorf("the user's tab after the close: title %q (%v)", got, err)
		}
		return nil
	})
	run(scenarioActiveAgain, func(ctx context.Context, step func(string)) error {
		r, usid, err := session(ctx)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, compatActiveWait)
		defer cancel()
		return pollUntil(ctx, "the user's tab is the visible (active) tab again", func() (bool, error) {
			v, err := r.eval(ctx, usid, compatVisible)
			return v == "visible", err
		})
	})
	return s.results
}
