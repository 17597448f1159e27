package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// dialCDP connects a Go CDP client to the relay's browser-level endpoint.
func (e *env) dialCDP(t *testing.T, ctx context.Context) *cdpclient.Client {
	t.Helper()
	c, err := cdpclient.Dial(ctx, e.cdpURL(), http.Header{"Authorization": {"Bearer " + e.token()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// attachPage attaches a flat session to a shared page through the relay.
func attachPage(t *testing.T, ctx context.Context, c *cdpclient.Client, targetID string) string {
	t.Helper()
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}, &r); err != nil {
		t.Fatalf("attach to %s through the relay: %v", targetID, err)
	}
	return r.SessionID
}

func evalString(t *testing.T, ctx context.Context, c *cdpclient.Client, sid, expr string) string {
	t.Helper()
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &r); err != nil {
		t.Fatalf("evaluate %q through the relay: %v", expr, err)
	}
	if r.ExceptionDetails != nil {
		t.Fatalf("evaluate %q: %v", expr, r.ExceptionDetails)
	}
	return fmt.Sprint(r.Result.Value)
}

// TestToolbarClickSharesAndUnshares: a click shares (badge ON, listed, Target.getTargets names it
// first), a second click unshares (badge empty, unlisted, the attached client gets
// Target.detachedFromTarget).
func TestToolbarClickSharesAndUnshares(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab, err := e.b.NewTab(ctx, e.site.URL("/other.html?toolbar"))
	if err != nil {
		t.Fatal(err)
	}
	if badge, _ := e.b.Badge(ctx, tab); badge != "" {
		t.Fatalf("badge of an unshared tab = %q, want empty", badge)
	}
	if _, listed := e.listedIDs(t)[tab.TargetID]; listed {
		t.Fatal("an unshared tab is listed by the relay")
	}
	if err := e.b.Share(ctx, tab); err != nil {
		t.Fatal(err)
	}
	l, listed := e.listedIDs(t)[tab.TargetID]
	if !listed || l.Type != "page" || l.Title != "Other page" || !strings.Contains(l.WebSocketDebuggerURL, "/devtools/page/"+tab.TargetID) {
		t.Fatalf("after the click /json/list has %+v (listed %v)", l, listed)
	}
	title, _ := e.b.Tooltip(ctx, tab)
	if !strings.Contains(title, "shared") {
		t.Errorf("tooltip of a shared tab = %q", title)
	}

	c := e.dialCDP(t, ctx)
	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := c.Call(ctx, "", "Target.getTargets", nil, &targets); err != nil {
		t.Fatal(err)
	}
	if len(targets.TargetInfos) == 0 || targets.TargetInfos[0].TargetID != tab.TargetID {
		t.Fatalf("Target.getTargets = %+v, want the most recently shared tab %s first", targets.TargetInfos, tab.TargetID)
	}
	sid := attachPage(t, ctx, c, tab.TargetID)
	if got := evalString(t, ctx, c, sid, "document.querySelector('h1').textContent"); got != "Other page" {
		t.Fatalf("evaluate through the relay = %q", got)
	}

	detached := c.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), sid)
	})
	if err := e.b.Unshare(ctx, tab); err != nil {
		t.Fatal(err)
	}
	if _, err := detached.Wait(ctx); err != nil {
		t.Fatalf("the client got no Target.detachedFromTarget after the user unshared the tab: %v", err)
	}
	eventually(t, 5*time.Second, "tab unlisted after unshare", func() (bool, string) {
		_, listed := e.listedIDs(t)[tab.TargetID]
		return !listed, "still listed"
	})
	if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "1"}, nil); err == nil {
		t.Fatal("a command on the unshared tab's old session succeeded")
	}
	if !e.tabOpen(t, tab) {
		t.Fatal("unsharing closed the tab")
	}
	_ = e.b.CloseTab(ctx, tab)
}

// TestTwoClientsTwoTabs: Playwright and Puppeteer each click 15 times in their own tab at the
// same time; each tab counts exactly its own clicks.
func TestTwoClientsTwoTabs(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Each tab in its own window, so both are visible (a background tab does not render).
	var tabs []browser.Tab
	for _, m := range []string{"concurrent-a", "concurrent-b"} {
		tab, err := e.b.NewWindowTab(ctx, e.pageURL(m))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.b.Share(ctx, tab); err != nil {
			t.Fatal(err)
		}
		defer e.b.CloseTab(ctx, tab) //nolint:errcheck
		tabs = append(tabs, tab)
	}
	tabA, tabB := tabs[0], tabs[1]
	var wg sync.WaitGroup
	outs := make([]map[string]any, 2)
	for i, c := range []struct{ lib, marker string }{{"playwright", "concurrent-a"}, {"puppeteer", "concurrent-b"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := e.clientEnv(c.marker)
			env["CLIENT_LIB"] = c.lib
			env["CLICKS"] = "15"
			outs[i] = runNodeNoFatal(t, ctx, "clicker.mjs", env)
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, tab := range []browser.Tab{tabA, tabB} {
		if got := fmt.Sprint(outs[i]["out"]); got != "clicked 15" {
			t.Errorf("client %d saw %q, want clicked 15", i, got)
		}
		var clicks float64
		if err := e.b.PageEval(ctx, tab, "window.clicks", &clicks); err != nil || clicks != 15 {
			t.Errorf("tab %d counted %v clicks (%v), want 15", i, clicks, err)
		}
	}
}

// TestCrossOriginNavigationKeepsSharing: a shared tab navigating to another origin stays shared
// with the same target id, the relay sees the new URL, and a client can still drive it.
func TestCrossOriginNavigationKeepsSharing(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.site.URL("/other.html?nav"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	if err := c.Call(ctx, sid, "Page.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	loaded := c.Expect(sid, "Page.loadEventFired", nil)
	cross := e.site.CrossURL("/?client=navigated")
	if err := c.Call(ctx, sid, "Page.navigate", map[string]any{"url": cross}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := loaded.Wait(ctx); err != nil {
		t.Fatalf("no load event after the cross-origin navigation: %v", err)
	}
	if got := evalString(t, ctx, c, sid, "location.href"); got != cross {
		t.Fatalf("after navigation the page is at %q", got)
	}
	eventually(t, 5*time.Second, "relay lists the new URL", func() (bool, string) {
		l := e.listedIDs(t)[tab.TargetID]
		return l.URL == cross, fmt.Sprintf("%+v", l)
	})
	// Chrome clears a tab's badge on navigation; the extension sets it again a moment later
	bctx, bcancel := context.WithTimeout(ctx, 5*time.Second)
	defer bcancel()
	if err := e.b.WaitBadge(bctx, tab, "ON"); err != nil {
		t.Fatalf("badge after cross-origin navigation: %v", err)
	}
	// A new client still reaches it.
	c2 := e.dialCDP(t, ctx)
	sid2 := attachPage(t, ctx, c2, tab.TargetID)
	if got := evalString(t, ctx, c2, sid2, "document.title"); got != "tabrelay fixture" {
		t.Fatalf("title after navigation = %q", got)
	}
	_ = e.b.CloseTab(ctx, tab)
}

// TestClosingTabReportsItGone: the user closes a shared tab; the relay unlists it and the
// attached client learns it is gone.
func TestClosingTabReportsItGone(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.site.URL("/other.html?closing"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	if err := c.Call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
		t.Fatal(err)
	}
	sid := attachPage(t, ctx, c, tab.TargetID)
	destroyed := c.Expect("", "Target.targetDestroyed", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), tab.TargetID)
	})
	detached := c.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), sid)
	})
	if err := e.b.CloseTab(ctx, tab); err != nil {
		t.Fatal(err)
	}
	if _, err := detached.Wait(ctx); err != nil {
		t.Fatalf("no Target.detachedFromTarget after the tab closed: %v", err)
	}
	if _, err := destroyed.Wait(ctx); err != nil {
		t.Fatalf("no Target.targetDestroyed after the tab closed: %v", err)
	}
	if _, listed := e.listedIDs(t)[tab.TargetID]; listed {
		t.Fatal("a closed tab is still listed")
	}
}

// TestOpenedTabIsShared: a link with target=_blank in a shared tab opens a tab that is shared
// automatically (origin "opener"), and a client sees it attach.
func TestOpenedTabIsShared(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.pageURL("opener"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	// the popup's URL exactly: other tests' tabs on /other.html?… attach too
	popupURL, _ := json.Marshal(e.site.URL("/other.html"))
	attached := c.Expect("", "Target.attachedToTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), `"url":`+string(popupURL))
	})
	if err := c.Call(ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}, nil); err != nil {
		t.Fatal(err)
	}
	sid := attachPage(t, ctx, c, tab.TargetID)
	// A click with a user gesture, as a person's click (a script click would be popup-blocked).
	if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('popup').click()", "userGesture": true}, nil); err != nil {
		t.Fatal(err)
	}
	ev, err := attached.Wait(ctx)
	if err != nil {
		t.Fatalf("the tab opened by the shared tab was not attached for the client: %v", err)
	}
	var p struct {
		SessionID  string `json:"sessionId"`
		TargetInfo struct {
			TargetID string `json:"targetId"`
		} `json:"targetInfo"`
	}
	_ = json.Unmarshal(ev.Params, &p)
	st, err := e.b.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	origin := ""
	for _, s := range st.SharedTabs {
		if s.TargetID == p.TargetInfo.TargetID {
			origin = s.Origin
		}
	}
	if origin != "opener" {
		t.Fatalf("opened tab %s shared with origin %q, want opener (%+v)", p.TargetInfo.TargetID, origin, st.SharedTabs)
	}
	eventually(t, 10*time.Second, "opened tab loaded", func() (bool, string) {
		got := evalString(t, ctx, c, p.SessionID, "document.readyState + ' ' + document.title")
		return got == "complete Other page", got
	})
	opened, err := e.b.TabOf(ctx, p.TargetInfo.TargetID)
	if err != nil {
		t.Fatal(err)
	}
	octx, ocancel := context.WithTimeout(ctx, 5*time.Second)
	defer ocancel()
	if err := e.b.WaitBadge(octx, opened, "ON"); err != nil {
		t.Errorf("badge of the opened tab: %v", err)
	}
	_ = e.b.CloseTab(ctx, opened)
	_ = e.b.CloseTab(ctx, tab)
}

// TestForeignPageCannotOpenRelay: a web page in the same browser (another origin) cannot open
// the relay's CDP socket or use its HTTP endpoints, even knowing the secret. The HTTP half is
// checked on the relay's side: requests that need no CORS (a no-cors fetch, an <img>) reach the
// relay and would have effects even though the page cannot read the answer, so the relay must
// refuse them (403) rather than merely leave them unreadable; a tab a client opened stays open
// and in the background.
func TestForeignPageCannotOpenRelay(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// A tab opened by a client (PUT /json/new): /json/close and /json/activate work on it.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, e.httpURL()+"/json/new?"+e.site.URL("/other.html?victim"), nil)
	req.Header.Set("Authorization", "Bearer "+e.token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var victim listed
	err = json.NewDecoder(resp.Body).Decode(&victim)
	resp.Body.Close()
	if err != nil || victim.ID == "" {
		t.Fatalf("PUT /json/new: %v %+v", err, victim)
	}
	victimTab, err := e.b.TabOf(ctx, victim.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer e.b.CloseTab(ctx, victimTab) //nolint:errcheck

	tab, err := e.b.NewTab(ctx, e.site.URL("/other.html?foreign"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck
	for _, path := range []string{"/cdp", "/devtools/browser", "/extension"} {
		expr := fmt.Sprintf(`new Promise(res => {
			const ws = new WebSocket(%q);
			ws.onopen = () => { res('open'); ws.close(); };
			ws.onerror = () => res('error');
			setTimeout(() => res('timeout'), 5000);
		})`, "ws://"+e.addr+path+"?token="+e.token())
		var got string
		if err := e.b.PageEval(ctx, tab, expr, &got); err != nil {
			t.Fatal(err)
		}
		if got != "error" {
			t.Errorf("a page from %s opening %s got %q, want error", e.site.URL(""), path, got)
		}
	}

	// statuses returns how many requests the relay answered on path, by status.
	statuses := func(path string) map[string]int {
		m := map[string]int{}
		for _, l := range e.relayLog.entries("http", map[string]string{"path": path}) {
			m[fmt.Sprint(l["status"])]++
		}
		return m
	}
	for _, path := range []string{"/json/version", "/json/list", "/json/activate/" + victim.ID, "/json/close/" + victim.ID} {
		before := statuses(path)
		u := e.httpURL() + path + "?token=" + e.token()
		// Three requests: a CORS fetch (sends Origin), a no-cors fetch and an image (send no
		// Origin, only Sec-Fetch-*).
		expr := fmt.Sprintf(`Promise.all([
			fetch(%[1]q + '&via=cors').then(r => r.status + ' ' + r.type, () => 'blocked'),
			fetch(%[1]q + '&via=no-cors', {mode: 'no-cors'}).then(r => r.type, () => 'failed'),
			new Promise(res => { const img = new Image(); img.onload = () => res('load'); img.onerror = () => res('error'); img.src = %[1]q + '&via=img'; }),
		])`, u)
		var got []string
		if err := e.b.PageEval(ctx, tab, expr, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || got[0] != "blocked" {
			t.Errorf("a foreign page's requests to %s ended %q, want the CORS fetch blocked", path, got)
		}
		eventually(t, 5*time.Second, "the relay answers the page's three requests to "+path, func() (bool, string) {
			after := statuses(path)
			n := 0
			for k, v := range after {
				n += v - before[k]
			}
			return n >= 3, fmt.Sprint(after)
		})
		after := statuses(path)
		for k, v := range after {
			if k != "403" && v != before[k] {
				t.Errorf("the relay answered a foreign page's request to %s with %s (statuses before %v, after %v); want 403 for all", path, k, before, after)
			}
		}
	}
	if !e.tabOpen(t, victimTab) {
		t.Fatal("a foreign page closed a shared tab through /json/close")
	}
	if _, ok := e.listedIDs(t)[victim.ID]; !ok {
		t.Fatal("the tab a client opened is no longer shared")
	}
	var active bool
	if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(t => t.active)`, victimTab.TabID), &active); err != nil || active {
		t.Fatalf("a foreign page brought a shared tab to the front through /json/activate (active %v, %v)", active, err)
	}
}

// TestShortcutAndContextMenuToggle: the keyboard shortcut (manifest command toggle-share, bound
// to Alt+Shift+S) and the context-menu item share and unshare a tab just as the toolbar button
// does. Chrome has no way to press a shortcut or pick a menu item from a test, so the test calls
// the extension's own listeners (tabrelay.onCommand and tabrelay.onMenuClicked, which
// chrome.commands.onCommand and chrome.contextMenus.onClicked call) with what Chrome would pass.
func TestShortcutAndContextMenuToggle(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var cmds []struct {
		Name     string `json:"name"`
		Shortcut string `json:"shortcut"`
	}
	if err := e.b.ServiceWorkerEval(ctx, "chrome.commands.getAll()", &cmds); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fmt.Sprint(cmds), "{toggle-share Alt+Shift+S}") {
		t.Fatalf("commands = %+v, want toggle-share on Alt+Shift+S", cmds)
	}
	// The menu item exists (update rejects an unknown id).
	if err := e.b.ServiceWorkerEval(ctx, "chrome.contextMenus.update('tabrelay-toggle', {}).then(() => true)", nil); err != nil {
		t.Fatalf("the context-menu item is missing: %v", err)
	}
	tab, err := e.b.NewTab(ctx, e.site.URL("/other.html?shortcut"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck
	listed := func() bool { _, ok := e.listedIDs(t)[tab.TargetID]; return ok }
	steps := []struct {
		what, expr string
		shared     bool
	}{
		{"shortcut with the tab", `chrome.tabs.get(%d).then(tab => tabrelay.onCommand('toggle-share', tab))`, true},
		{"shortcut with the tab", `chrome.tabs.get(%d).then(tab => tabrelay.onCommand('toggle-share', tab))`, false},
		// Chrome may pass no tab: the active tab of the focused window is meant.
		{"shortcut without a tab", `chrome.tabs.update(%d, {active: true}).then(() => tabrelay.onCommand('toggle-share', undefined))`, true},
		{"context menu", `chrome.tabs.get(%d).then(tab => tabrelay.onMenuClicked({menuItemId: 'tabrelay-toggle', pageUrl: tab.url}, tab))`, false},
		{"context menu", `chrome.tabs.get(%d).then(tab => tabrelay.onMenuClicked({menuItemId: 'tabrelay-toggle', pageUrl: tab.url}, tab))`, true},
		{"other command", `chrome.tabs.get(%d).then(tab => tabrelay.onCommand('no-such-command', tab))`, true},
		{"shortcut with the tab", `chrome.tabs.get(%d).then(tab => tabrelay.onCommand('toggle-share', tab))`, false},
	}
	for i, s := range steps {
		if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(s.expr, tab.TabID), nil); err != nil {
			t.Fatalf("step %d (%s): %v", i, s.what, err)
		}
		want := ""
		if s.shared {
			want = "ON"
		}
		wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
		err := e.b.WaitBadge(wctx, tab, want)
		wcancel()
		if err != nil {
			t.Fatalf("step %d (%s): %v", i, s.what, err)
		}
		eventually(t, 5*time.Second, fmt.Sprintf("step %d (%s): relay lists the tab = %v", i, s.what, s.shared), func() (bool, string) {
			return listed() == s.shared, ""
		})
	}
}

// TestClickOnRestrictedPage: the toolbar button on a page the debugger may not attach to
// (chrome://version) shares nothing and says why on that tab's badge; other tabs are untouched.
func TestClickOnRestrictedPage(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tab, err := e.b.NewTab(ctx, "chrome://version")
	if err != nil {
		t.Fatal(err)
	}
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck
	if err := e.b.Click(ctx, tab); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the badge says the tab cannot be shared", func() (bool, string) {
		b, _ := e.b.Badge(ctx, tab)
		title, _ := e.b.Tooltip(ctx, tab)
		return b == "!" && strings.Contains(title, "cannot share this tab") && strings.Contains(title, "chrome://"), b + " " + title
	})
	// the list's length is no measure: the shared environment's iframes come and go
	for _, l := range e.list(t) {
		if l.ID == tab.TargetID || strings.HasPrefix(l.URL, "chrome://") {
			t.Fatalf("the relay lists a chrome:// page: %+v", l)
		}
	}
	st, err := e.b.Status(ctx)
	if err != nil || !st.Connected || st.Notice != "" {
		t.Fatalf("a failed share changed the extension's state: %+v %v", st, err)
	}
	var global string
	if err := e.b.ServiceWorkerEval(ctx, "chrome.action.getBadgeText({})", &global); err != nil || global != "" {
		t.Fatalf("the global badge after a failed share = %q (%v), want empty", global, err)
	}
}

// TestClientClosedTabReturnsFocus: a tab a client opens and closes again leaves the user's tab
// in front, as it was before (Chrome itself returns to a tab's opener; without one it picks a
// neighbour, and in headless a hidden tab's screenshots and clicks then stall).
func TestClientClosedTabReturnsFocus(t *testing.T) {
	e := shared(t)
	// The user's tab is not the last one: a new tab without an opener goes to the end, and
	// closing it would bring its neighbour (not the user's tab) to the front.
	tab := e.share(t, e.site.URL("/other.html?focus"))
	neighbour := e.share(t, e.site.URL("/other.html?neighbour"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer e.b.CloseTab(ctx, neighbour) //nolint:errcheck // other tests look for tabs by URL
	defer e.b.CloseTab(ctx, tab)       //nolint:errcheck
	c := e.dialCDP(t, ctx)
	if err := c.Call(ctx, "", "Target.activateTarget", map[string]any{"targetId": tab.TargetID}, nil); err != nil {
		t.Fatal(err)
	}
	sid := attachPage(t, ctx, c, tab.TargetID)
	waitVisible := func(want string) {
		t.Helper()
		for {
			got := evalString(t, ctx, c, sid, "document.visibilityState")
			if got == want {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("the user's tab stayed %q, want %q", got, want)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	waitVisible("visible")
	for round := range 2 { // twice: the second client tab must return focus as well
		var created struct {
			TargetID string `json:"targetId"`
		}
		if err := c.Call(ctx, "", "Target.createTarget", map[string]any{"url": e.site.URL(fmt.Sprintf("/other.html?client%d", round))}, &created); err != nil {
			t.Fatal(err)
		}
		waitVisible("hidden")
		if err := c.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": created.TargetID}, nil); err != nil {
			t.Fatal(err)
		}
		waitVisible("visible")
	}
}

// TestLargeAnswerDoesNotHoldOtherTabs: a 24 MB answer on one tab (text with characters of every
// UTF-8 length, emoji split across the extension's pieces included) reaches its client intact
// through the real extension's chunk frames, while a client of another tab keeps getting its
// small answers.
func TestLargeAnswerDoesNotHoldOtherTabs(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := e.share(t, e.site.URL("/?client=large-a"))
	b := e.share(t, e.site.URL("/?client=large-b"))
	defer e.b.CloseTab(ctx, a) //nolint:errcheck
	defer e.b.CloseTab(ctx, b) //nolint:errcheck
	ca, cb := e.dialCDP(t, ctx), e.dialCDP(t, ctx)
	sa, sb := attachPage(t, ctx, ca, a.TargetID), attachPage(t, ctx, cb, b.TargetID)
	// 'aé€😀' is 1+2+3+4 bytes and 1+1+1+2 UTF-16 units: pieces of 2^20 units end mid-emoji
	// unless the extension takes care
	const unit, reps = "aé€😀", 2_400_000
	type answer struct {
		value string
		err   error
	}
	big := make(chan answer, 1)
	go func() {
		var r struct {
			Result struct{ Value string } `json:"result"`
		}
		err := ca.Call(ctx, sa, "Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("'%s'.repeat(%d)", unit, reps), "returnByValue": true}, &r)
		big <- answer{r.Result.Value, err}
	}()
	small := 0
	for done := false; !done; {
		select {
		case got := <-big:
			if got.err != nil {
				t.Fatalf("the large answer: %v", got.err)
			}
			if got.value != strings.Repeat(unit, reps) {
				t.Fatalf("the large answer came back changed: %d bytes, want %d", len(got.value), len(unit)*reps)
			}
			done = true
		default:
			if got := evalString(t, ctx, cb, sb, "'small'"); got != "small" {
				t.Fatalf("a small answer on the other tab: %q", got)
			}
			small++
		}
	}
	if !e.relayLogged("reassembled a chunked message from the extension", nil) {
		t.Error("the relay got the large answer in one frame: the extension did not split it")
	}
	t.Logf("%d small answers on the other tab while the large one was on its way", small)
}
