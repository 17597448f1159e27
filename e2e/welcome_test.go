package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

// extensionPage finds the open page whose URL starts with the extension's page (e.g.
// "welcome.html"), as a browser.Tab.
func extensionPage(ctx context.Context, b *browser.Browser, page string) (browser.Tab, bool, error) {
	var r struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
		} `json:"targetInfos"`
	}
	if err := b.CDP.Call(ctx, "", "Target.getTargets", map[string]any{"filter": []map[string]any{{}}}, &r); err != nil {
		return browser.Tab{}, false, err
	}
	prefix := "chrome-extension://" + b.ExtensionID + "/" + page
	for _, ti := range r.TargetInfos {
		if ti.Type == "page" && strings.HasPrefix(ti.URL, prefix) {
			return browser.Tab{TargetID: ti.TargetID, URL: ti.URL}, true, nil
		}
	}
	return browser.Tab{}, false, nil
}

// waitExtensionPage waits until the extension has a page open at page.
func waitExtensionPage(t *testing.T, ctx context.Context, b *browser.Browser, page string, timeout time.Duration) browser.Tab {
	t.Helper()
	var tab browser.Tab
	eventually(t, timeout, "the extension's "+page+" is open", func() (bool, string) {
		got, ok, err := extensionPage(ctx, b, page)
		tab = got
		return ok, fmt.Sprint(err)
	})
	return tab
}

// pageText is the visible text of the element with the id in tab ("" when it is hidden).
func pageText(t *testing.T, ctx context.Context, b *browser.Browser, tab browser.Tab, id string) string {
	t.Helper()
	var s string
	if err := b.PageEval(ctx, tab, fmt.Sprintf(`(() => { const e = document.getElementById(%q); return e && !e.hidden && !e.closest('[hidden]') ? e.innerText : ''; })()`, id), &s); err != nil {
		t.Fatalf("read #%s: %v", id, err)
	}
	return s
}

// realClick clicks the middle of the element selector finds in tab with the mouse, as a person
// would (Input.dispatchMouseEvent through the browser's own control connection).
func realClick(t *testing.T, ctx context.Context, b *browser.Browser, tab browser.Tab, selector string) {
	t.Helper()
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.CDP.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tab.TargetID, "flatten": true}, &att); err != nil {
		t.Fatalf("attach to %s: %v", tab.URL, err)
	}
	defer b.CDP.Call(context.WithoutCancel(ctx), "", "Target.detachFromTarget", map[string]any{"sessionId": att.SessionID}, nil) //nolint:errcheck // best effort
	var pos []float64
	if err := cdpEval(ctx, b.CDP, att.SessionID, fmt.Sprintf(`(() => { const e = document.querySelector(%q); if (!e) return null;
		e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, selector), &pos); err != nil || len(pos) != 2 {
		t.Fatalf("find %s in %s: %v", selector, tab.URL, err)
	}
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		if err := b.CDP.Call(ctx, att.SessionID, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": pos[0], "y": pos[1], "button": "left", "clickCount": 1}, nil); err != nil {
			t.Fatalf("click %s: %v", selector, err)
		}
	}
}

// cdpEval evaluates expression on a session and decodes its value into out.
func cdpEval(ctx context.Context, c *cdpclient.Client, sid, expression string, out any) error {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": expression, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("evaluate: %s", r.ExceptionDetails.Text)
	}
	b, err := json.Marshal(r.Result.Value)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// pageShot writes a PNG of tab at width×height to e2e/artifacts/<name>.png and returns its path.
func pageShot(t *testing.T, ctx context.Context, b *browser.Browser, tab browser.Tab, width, height int, name string) string {
	t.Helper()
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.CDP.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tab.TargetID, "flatten": true}, &att); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	defer b.CDP.Call(context.WithoutCancel(ctx), "", "Target.detachFromTarget", map[string]any{"sessionId": att.SessionID}, nil) //nolint:errcheck // best effort
	_ = b.CDP.Call(ctx, att.SessionID, "Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil)
	var shot struct {
		Data string `json:"data"`
	}
	if err := b.CDP.Call(ctx, att.SessionID, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactsDir(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// TestWelcomeOnInstall: installing the extension opens its welcome page by itself (no icon to
// find), which says it is not paired and how to pair, names every way to share a tab (the
// shortcut as the browser has it, the right-click menu, pinning the icon from the extensions
// menu, the tab group, the chooser), and turns to "paired and connected" once the extension is
// paired, with no reload.
func TestWelcomeOnInstall(t *testing.T) {
	requireChromium(t)
	e := &env{relayLog: &logBuffer{}}
	t.Cleanup(e.close)
	var err error
	if e.tmp, err = os.MkdirTemp("", "tabrelay-e2e-welcome-"); err != nil {
		t.Fatal(err)
	}
	e.home = filepath.Join(e.tmp, "home")
	if e.site, err = fixtures.Start(); err != nil {
		t.Fatal(err)
	}
	if e.store, err = secret.NewStore(e.home); err != nil {
		t.Fatal(err)
	}
	if err := e.startRelay("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	log := zerolog.Nop()
	if e.b, err = browser.Launch(ctx, browser.Options{Headless: true, Logger: &log, ExtensionDebugging: true, KeepWelcome: true}); err != nil {
		t.Fatal(err)
	}
	welcome := waitExtensionPage(t, ctx, e.b, browser.WelcomePage, 20*time.Second)
	eventually(t, 10*time.Second, "the welcome page says it is not paired and how to pair", func() (bool, string) {
		s, how := pageText(t, ctx, e.b, welcome, "pair-state"), pageText(t, ctx, e.b, welcome, "pair-how")
		return s == "Not paired yet." && strings.Contains(how, "tabrelay pair"), s + " | " + how
	})
	var stateClass string
	if err := e.b.PageEval(ctx, welcome, `document.getElementById('pair-state').className`, &stateClass); err != nil || strings.Contains(stateClass, "bad") {
		t.Errorf("a fresh install's first state is shown as an error (class %q): %v", stateClass, err)
	}
	var heading string
	if err := e.b.PageEval(ctx, welcome, `document.querySelector('main h1')?.innerText ?? ''`, &heading); err != nil || !strings.Contains(heading, "tabrelay") {
		t.Errorf("welcome page heading: %q %v", heading, err)
	}
	share := pageText(t, ctx, e.b, welcome, "share-title") + "\n" + func() string {
		var s string
		_ = e.b.PageEval(ctx, welcome, `document.querySelector('ol.ways').innerText`, &s)
		return s
	}() + "\n" + pageText(t, ctx, e.b, welcome, "way-chooser")
	for _, want := range []string{"Alt+Shift+S", "Right-click", "extensions menu", "pin", "tab group", "no tab is shared"} {
		if !strings.Contains(share, want) {
			t.Errorf("the welcome page's ways to share miss %q:\n%s", want, share)
		}
	}
	pageShot(t, ctx, e.b, welcome, 1000, 900, "welcome-unpaired")

	if err := e.b.Pair(ctx, e.addr, e.store.Token()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the welcome page says paired and connected", func() (bool, string) {
		s := pageText(t, ctx, e.b, welcome, "pair-state")
		return s == "Paired and connected to the tabrelay server at "+e.addr+".", s
	})
	if how := pageText(t, ctx, e.b, welcome, "pair-how"); how != "" {
		t.Errorf("paired, the welcome page still explains pairing: %q", how)
	}
	pageShot(t, ctx, e.b, welcome, 1000, 900, "welcome-paired")
}

// TestTabChooser: a CDP client connects while no tab is shared; the extension opens its tab
// chooser by itself, listing the open web pages; a mouse click on one's Share button shares it
// (the chooser closes and the tab comes forward) and the client, still connected, sees the tab
// among its targets and drives it. Like Playwright's extension, which offers the tabs when a
// client connects. With the chooser turned off (the options page's setting; the test
// harness's default) a client connecting changes nothing in the browser.
func TestTabChooser(t *testing.T) {
	e := privateBrowser(t, func(o *browser.Options) { o.TabChooser = true })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if n := len(e.srv.Hub().Tabs()); n != 0 {
		t.Fatalf("%d tabs shared before the test", n)
	}
	tab, err := e.b.NewTab(ctx, e.site.URL("/?client=chooser"))
	if err != nil {
		t.Fatal(err)
	}
	if _, open, _ := extensionPage(ctx, e.b, "chooser.html"); open {
		t.Fatal("the chooser is open before any client connected")
	}
	c := e.dialCDP(t, ctx)
	chooser := waitExtensionPage(t, ctx, e.b, "chooser.html", 20*time.Second)
	button := fmt.Sprintf(`button[data-tab-id="%d"]`, tab.TabID)
	eventually(t, 10*time.Second, "the chooser lists the fixture tab", func() (bool, string) {
		var ok bool
		_ = e.b.PageEval(ctx, chooser, fmt.Sprintf(`!!document.querySelector(%q)`, button), &ok)
		return ok, pageText(t, ctx, e.b, chooser, "tabs")
	})
	var listed string
	_ = e.b.PageEval(ctx, chooser, `document.getElementById('tabs').innerText`, &listed)
	if strings.Contains(listed, "chrome-extension://") {
		t.Errorf("the chooser offers extension pages:\n%s", listed)
	}
	pageShot(t, ctx, e.b, chooser, 1000, 700, "chooser")
	realClick(t, ctx, e.b, chooser, button)

	eventually(t, 20*time.Second, "the client sees the chosen tab", func() (bool, string) {
		var r struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
				Type     string `json:"type"`
			} `json:"targetInfos"`
		}
		if err := c.Call(ctx, "", "Target.getTargets", nil, &r); err != nil {
			return false, err.Error()
		}
		for _, ti := range r.TargetInfos {
			if ti.TargetID == tab.TargetID && ti.Type == "page" {
				return true, ""
			}
		}
		return false, fmt.Sprint(r.TargetInfos)
	})
	sid := attachPage(t, ctx, c, tab.TargetID)
	if got := evalString(t, ctx, c, sid, "new URL(location.href).searchParams.get('client')"); got != "chooser" {
		t.Errorf("the client drives the wrong page: client=%q", got)
	}
	eventually(t, 10*time.Second, "the chooser closes after the pick", func() (bool, string) {
		_, open, err := extensionPage(ctx, e.b, "chooser.html")
		return !open && err == nil, fmt.Sprint(err)
	})
	const asked = "no tab shared: asked the extension to offer a choice of tab"
	if n := len(e.relayLog.entries(asked, map[string]string{"client": "cdp"})); n != 1 {
		t.Errorf("the relay asked the extension %d times to offer a tab, want 1", n)
	}
	// with a tab shared, another client is not asked about tabs
	c2, err := cdpclient.Dial(ctx, e.cdpURL(), http.Header{"Authorization": {"Bearer " + e.token()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if err := c2.Call(ctx, "", "Target.getTargets", nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := len(e.relayLog.entries(asked, nil)); n != 1 {
		t.Errorf("a client connecting while a tab is shared made the relay ask for a tab (%d asks)", n)
	}

	// turned off in the options page: no chooser
	off := private(t)
	if _, err := off.b.NewTab(ctx, off.site.URL("/?client=chooser-off")); err != nil {
		t.Fatal(err)
	}
	c3 := off.dialCDP(t, ctx)
	if err := c3.Call(ctx, "", "Target.getTargets", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !off.relayLogged(asked, nil) {
		t.Fatal("the relay did not tell the extension that a client waits")
	}
	// the extension handles the notice in its order: a command sent after it is answered after
	// it, so once the worker answers, any chooser it meant to open has been asked for
	var settled bool
	if err := off.b.ServiceWorkerEval(ctx, `new Promise((r) => setTimeout(() => r(true), 0))`, &settled); err != nil {
		t.Fatal(err)
	}
	if _, open, _ := extensionPage(ctx, off.b, "chooser.html"); open {
		t.Error("the chooser opened although it is turned off")
	}
}

// TestTabChooserForAgent: a request to the agent while no tab is shared answers that the
// browser now asks which tab to share, and the chooser opens (saying the agent asks); once the
// person picks a tab, the same request runs on it.
func TestTabChooserForAgent(t *testing.T) {
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{}, func(o *browser.Options) { o.TabChooser = true })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	tab, err := ae.b.NewTab(ctx, ae.site.URL("/?client=chooser-agent"))
	if err != nil {
		t.Fatal(err)
	}
	r := ae.call(t, http.MethodGet, "/api/snapshot", nil)
	var eb api.ErrorBody
	if r.Status != http.StatusNotFound || json.Unmarshal(r.Body, &eb) != nil || !strings.Contains(eb.Error, "the browser now asks which tab to share") {
		t.Fatalf("a snapshot with no tab shared: HTTP %d %s", r.Status, r.Body)
	}
	chooser := waitExtensionPage(t, ctx, ae.b, "chooser.html", 20*time.Second)
	eventually(t, 10*time.Second, "the chooser says the agent asks", func() (bool, string) {
		why := pageText(t, ctx, ae.b, chooser, "why")
		return strings.Contains(why, "tabrelay agent was asked"), why
	})
	button := fmt.Sprintf(`button[data-tab-id="%d"]`, tab.TabID)
	eventually(t, 10*time.Second, "the chooser lists the fixture tab", func() (bool, string) {
		var ok bool
		_ = ae.b.PageEval(ctx, chooser, fmt.Sprintf(`!!document.querySelector(%q)`, button), &ok)
		return ok, pageText(t, ctx, ae.b, chooser, "tabs")
	})
	realClick(t, ctx, ae.b, chooser, button)
	eventually(t, 20*time.Second, "the agent reads the chosen tab", func() (bool, string) {
		r := ae.call(t, http.MethodGet, "/api/snapshot", nil)
		return r.Status == http.StatusOK && strings.Contains(string(r.Body), "tabrelay fixture"), fmt.Sprintf("HTTP %d %.200s", r.Status, r.Body)
	})
}

// TestTabChooserPlaywright: Playwright connects over CDP while no tab is shared (it sees no
// page), the chooser opens, and the tab the person picks arrives in Playwright's context as a
// new page it drives.
func TestTabChooserPlaywright(t *testing.T) {
	e := privateBrowser(t, func(o *browser.Options) { o.TabChooser = true })
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	tab, err := e.b.NewTab(ctx, e.site.URL("/?client=chooser-playwright"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan map[string]any, 1)
	ready := filepath.Join(t.TempDir(), "connected")
	go func() {
		done <- runNodeNoFatal(t, ctx, "chooser-playwright.mjs", map[string]string{
			"TABRELAY_HTTP": e.httpURL(), "TABRELAY_TOKEN": e.token(), "PAGE_MARKER": "chooser-playwright", "READY_FILE": ready,
		})
	}()
	chooser := waitExtensionPage(t, ctx, e.b, "chooser.html", 60*time.Second)
	// the person picks once Playwright has connected (a pick during its connection would be
	// among the pages it found, not a new page)
	eventually(t, 60*time.Second, "Playwright connected", func() (bool, string) {
		_, err := os.Stat(ready)
		return err == nil, fmt.Sprint(err)
	})
	button := fmt.Sprintf(`button[data-tab-id="%d"]`, tab.TabID)
	eventually(t, 10*time.Second, "the chooser lists the fixture tab", func() (bool, string) {
		var ok bool
		_ = e.b.PageEval(ctx, chooser, fmt.Sprintf(`!!document.querySelector(%q)`, button), &ok)
		return ok, pageText(t, ctx, e.b, chooser, "tabs")
	})
	realClick(t, ctx, e.b, chooser, button)
	var out map[string]any
	select {
	case out = <-done:
	case <-ctx.Done():
		t.Fatal("Playwright did not finish")
	}
	if out["pagesAtConnect"] != float64(0) || out["client"] != "chooser-playwright" || out["title"] != "tabrelay fixture" {
		t.Fatalf("Playwright: %v", out)
	}
}
