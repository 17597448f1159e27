package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"github.com/coder/websocket"
	mcdp "github.com/mafredri/cdp"
	"github.com/mafredri/cdp/devtool"
	"github.com/mafredri/cdp/protocol/input"
	"github.com/mafredri/cdp/protocol/page"
	mruntime "github.com/mafredri/cdp/protocol/runtime"
	"github.com/mafredri/cdp/rpcc"
)

// TestChromedp drives a shared tab with chromedp's remote allocator (browser-level endpoint,
// unmodified): title, click, type, evaluate, cross-origin iframe, a new tab with a > 1 MiB
// screenshot, navigate, close; cancelling the user's tab context must not close the user's tab.
func TestChromedp(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.pageURL("chromedp"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	actx, acancel := remote.NewAllocator(ctx, e.httpURL()+"/?token="+e.token())
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	infos, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatalf("chromedp.Targets: %v", err)
	}
	var id string
	for _, in := range infos {
		if in.Type == "page" && strings.Contains(in.URL, "client=chromedp") {
			id = string(in.TargetID)
		}
	}
	if id != tab.TargetID {
		t.Fatalf("chromedp found %q among %d targets, want %s", id, len(infos), tab.TargetID)
	}
	tctx, tcancel := chromedp.NewContext(bctx, chromedp.WithTargetID(target.ID(id)))
	defer tcancel()
	title, err := chromedp.Run(tctx, chromedp.Title())
	if err != nil {
		t.Fatalf("chromedp on the shared tab: %v", err)
	}
	if err := chromedp.Do(tctx, chromedp.Click("#clicker"), chromedp.SendKeys("#name", "typed by chromedp")); err != nil {
		t.Fatalf("chromedp click and type: %v", err)
	}
	out, err := chromedp.Run(tctx, chromedp.Text("#out"))
	if err != nil {
		t.Fatal(err)
	}
	echo, err := chromedp.Run(tctx, chromedp.Text("#echo"))
	if err != nil {
		t.Fatal(err)
	}
	evaluated, err := chromedp.Run(tctx, chromedp.Evaluate[string](`6*7 + " " + location.hostname`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string][2]string{"title": {title, "tabrelay fixture"}, "clicked": {out, "clicked 1"}, "echo": {echo, "typed by chromedp"}, "evaluated": {evaluated, "42 127.0.0.1"}} {
		if v[0] != v[1] {
			t.Errorf("chromedp %s = %q, want %q", k, v[0], v[1])
		}
	}
	// chromedp reaches a cross-site iframe by attaching to the iframe's own target by id
	// (FromNode does not cross processes): the relay lists it in Target.getTargets as Chrome does.
	var frameID target.ID
	eventually(t, 10*time.Second, "the cross-origin iframe listed as a target", func() (bool, string) {
		infos, err := chromedp.Targets(bctx)
		if err != nil {
			return false, err.Error()
		}
		for _, in := range infos {
			if in.Type == "iframe" && strings.Contains(in.URL, "/frame.html") {
				frameID = in.TargetID
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d targets, no iframe", len(infos))
	})
	fctx, fcancel := chromedp.NewContext(bctx, chromedp.WithTargetID(frameID))
	inner, err := chromedp.Run(fctx, chromedp.Text("#inner"))
	if err != nil {
		t.Fatalf("chromedp in the cross-origin iframe: %v", err)
	}
	if inner != "inside the frame" {
		t.Errorf("chromedp read %q inside the iframe", inner)
	}
	fcancel()

	// A new tab: screenshot, navigate, close (cancel its context).
	nctx, ncancel := chromedp.NewContext(bctx)
	if err := chromedp.Do(nctx, chromedp.Navigate(e.site.URL("/noise.html"))); err != nil {
		t.Fatalf("chromedp new tab: %v", err)
	}
	png, err := chromedp.Run(nctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("chromedp screenshot: %v", err)
	}
	if err := chromedp.Do(nctx, chromedp.Navigate(e.site.URL("/other.html"))); err != nil {
		t.Fatalf("chromedp navigate: %v", err)
	}
	newTitle, err := chromedp.Run(nctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if len(png) <= 1<<20 || newTitle != "Other page" {
		t.Errorf("chromedp new tab: screenshot %d bytes (want > 1 MiB), title %q", len(png), newTitle)
	}
	ncancel()
	eventually(t, 10*time.Second, "chromedp's tab closed and unlisted", func() (bool, string) {
		for _, l := range e.list(t) {
			if strings.HasSuffix(l.URL, "/other.html") {
				return false, l.URL
			}
		}
		return true, ""
	})
	// Cancelling the user's tab context asks to close the user's tab: the relay refuses.
	tcancel()
	bcancel()
	time.Sleep(300 * time.Millisecond)
	if !e.tabOpen(t, tab) {
		t.Fatal("chromedp closed the user's tab")
	}
	if _, listed := e.listedIDs(t)[tab.TargetID]; !listed {
		t.Fatal("the user's tab is no longer shared after chromedp left")
	}
}

// bearer adds the secret to every discovery request, as a user configures an http.Client.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func mafrediDial(ctx context.Context, wsURL string) (*rpcc.Conn, error) {
	dial := func(ctx context.Context, addr string) (io.ReadWriteCloser, error) {
		c, _, err := websocket.Dial(ctx, addr, nil)
		if err != nil {
			return nil, err
		}
		c.SetReadLimit(-1)
		return websocket.NetConn(context.Background(), c, websocket.MessageText), nil
	}
	return rpcc.DialContext(ctx, wsURL, rpcc.WithDialer(dial))
}

func mEval(ctx context.Context, c *mcdp.Client, expr string) (string, error) {
	r, err := c.Runtime.Evaluate(ctx, mruntime.NewEvaluateArgs(expr).SetReturnByValue(true).SetAwaitPromise(true))
	if err != nil {
		return "", err
	}
	if r.ExceptionDetails != nil {
		return "", fmt.Errorf("evaluate %q: %s", expr, r.ExceptionDetails.Text)
	}
	var v any
	_ = json.Unmarshal(r.Result.Value, &v)
	return fmt.Sprint(v), nil
}

// TestMafrediCDP drives a shared tab with mafredri/cdp v0.35.0 through /json/list and the
// per-tab endpoint, reads text inside the cross-origin iframe through the iframe's own page
// endpoint (its tagged release has no flattened-session support: as with Chrome, /json/list
// lists out-of-process iframes as targets of type "iframe"), and opens, drives and closes a tab
// through /json/new and /json/close.
func TestMafrediCDP(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.pageURL("mafredi"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	devt := devtool.New(e.httpURL(), devtool.WithClient(&http.Client{Transport: bearer{e.token()}}))
	targets, err := devt.List(ctx)
	if err != nil {
		t.Fatalf("devtool.List: %v", err)
	}
	var pt *devtool.Target
	for _, x := range targets {
		if x.Type == devtool.Page && strings.Contains(x.URL, "client=mafredi") {
			pt = x
		}
	}
	if pt == nil || pt.ID != tab.TargetID {
		t.Fatalf("mafredi/cdp did not find the shared tab %s in /json/list", tab.TargetID)
	}
	conn, err := mafrediDial(ctx, pt.WebSocketDebuggerURL)
	if err != nil {
		t.Fatalf("rpcc dial: %v", err)
	}
	c := mcdp.NewClient(conn)
	check := func(what, expr, want string) {
		t.Helper()
		got, err := mEval(ctx, c, expr)
		if err != nil || got != want {
			t.Errorf("mafredi/cdp %s: %q (%v), want %q", what, got, err, want)
		}
	}
	check("title", "document.title", "tabrelay fixture")
	// A real mouse click at the button's centre.
	rect, err := mEval(ctx, c, `(() => { const r = document.getElementById('clicker').getBoundingClientRect(); return (r.x + r.width/2) + ',' + (r.y + r.height/2); })()`)
	if err != nil {
		t.Fatal(err)
	}
	var x, y float64
	fmt.Sscanf(rect, "%g,%g", &x, &y)
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		if err := c.Input.DispatchMouseEvent(ctx, input.NewDispatchMouseEventArgs(typ, x, y).SetButton(input.MouseButtonLeft).SetClickCount(1)); err != nil {
			t.Fatalf("mouse %s: %v", typ, err)
		}
	}
	check("click", "document.getElementById('out').textContent", "clicked 1")
	check("focus", "document.getElementById('name').focus(), 'ok'", "ok")
	if err := c.Input.InsertText(ctx, input.NewInsertTextArgs("typed by mafredi")); err != nil {
		t.Fatal(err)
	}
	check("type", "document.getElementById('echo').textContent", "typed by mafredi")
	check("evaluate", "6*7 + ' ' + location.hostname", "42 127.0.0.1")
	conn.Close()

	// The cross-origin iframe: its own entry in /json/list, driven on its own page endpoint.
	var ft *devtool.Target
	eventually(t, 10*time.Second, "the cross-origin iframe listed in /json/list", func() (bool, string) {
		targets, err := devt.List(ctx)
		if err != nil {
			return false, err.Error()
		}
		for _, x := range targets {
			if x.Type == "iframe" && strings.Contains(x.URL, "/frame.html") {
				ft = x
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d targets, no iframe", len(targets))
	})
	fconn, err := mafrediDial(ctx, ft.WebSocketDebuggerURL)
	if err != nil {
		t.Fatalf("rpcc dial the iframe's endpoint: %v", err)
	}
	fc := mcdp.NewClient(fconn)
	if got, err := mEval(ctx, fc, "document.getElementById('inner').textContent"); err != nil || got != "inside the frame" {
		t.Errorf("mafredi/cdp read %q (%v) inside the cross-origin iframe, want %q", got, err, "inside the frame")
	}
	if got, err := mEval(ctx, fc, "document.getElementById('frame-button').click(), document.getElementById('frame-button').textContent"); err != nil || got != "frame clicked" {
		t.Errorf("mafredi/cdp clicked the iframe's button: %q (%v), want %q", got, err, "frame clicked")
	}
	fconn.Close()

	// A new tab through /json/new, driven on its own endpoint, closed through /json/close.
	nt, err := devt.Create(ctx)
	if err != nil {
		t.Fatalf("devtool.Create (PUT /json/new): %v", err)
	}
	nconn, err := mafrediDial(ctx, nt.WebSocketDebuggerURL)
	if err != nil {
		t.Fatal(err)
	}
	nc := mcdp.NewClient(nconn)
	if err := nc.Page.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	load, err := nc.Page.LoadEventFired(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Page.Navigate(ctx, page.NewNavigateArgs(e.site.URL("/noise.html"))); err != nil {
		t.Fatal(err)
	}
	if _, err := load.Recv(); err != nil {
		t.Fatal(err)
	}
	shot, err := nc.Page.CaptureScreenshot(ctx, page.NewCaptureScreenshotArgs())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(shot.Data) <= 1<<20 {
		t.Errorf("screenshot is %d bytes, want > 1 MiB", len(shot.Data))
	}
	if _, err := nc.Page.Navigate(ctx, page.NewNavigateArgs(e.site.URL("/other.html"))); err != nil {
		t.Fatal(err)
	}
	if _, err := load.Recv(); err != nil {
		t.Fatal(err)
	}
	if got, _ := mEval(ctx, nc, "document.title"); got != "Other page" {
		t.Errorf("new tab title %q", got)
	}
	load.Close()
	nconn.Close()
	if err := devt.Close(ctx, nt); err != nil {
		t.Fatalf("devtool.Close (/json/close): %v", err)
	}
	eventually(t, 10*time.Second, "the new tab is gone", func() (bool, string) {
		_, listed := e.listedIDs(t)[nt.ID]
		return !listed, "still listed"
	})
	if !e.tabOpen(t, tab) {
		t.Fatal("the user's tab was closed")
	}
}

// TestChromeRemoteInterface drives a shared tab with chrome-remote-interface through /json/list
// and the per-tab endpoint, including the cross-origin iframe through a flat child session.
func TestChromeRemoteInterface(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.pageURL("cri"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := runNode(t, ctx, "cri.mjs", e.clientEnv("cri"))
	checkScenario(t, e, tab, "cri", out)
}
