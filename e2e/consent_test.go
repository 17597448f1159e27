package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
)

// groupOf returns the tab's group id (-1 for none) and that group's title, read in the
// extension's service worker.
func (e *env) groupOf(t *testing.T, ctx context.Context, tabID int) (int, string) {
	t.Helper()
	var r struct {
		ID    int    `json:"id"`
		Title string `json:"title"`
	}
	expr := fmt.Sprintf(`chrome.tabs.get(%d).then(async (t) => ({id: t.groupId, title: t.groupId < 0 ? '' : (await chrome.tabGroups.get(t.groupId)).title}))`, tabID)
	if err := e.b.ServiceWorkerEval(ctx, expr, &r); err != nil {
		t.Fatalf("read the group of tab %d: %v", tabID, err)
	}
	return r.ID, r.Title
}

// swDo runs expression in the extension's service worker (as the extension's own pages can:
// chrome.tabs.group and ungroup do what dragging a tab in or out of a group does).
func (e *env) swDo(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if err := e.b.ServiceWorkerEval(ctx, expr, nil); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
}

// debuggerAttached reads chrome.debugger.getTargets() for a page target: whether a debugger is
// attached to it and the chrome.tabs id it belongs to.
func (e *env) debuggerAttached(t *testing.T, ctx context.Context, targetID string) (attached bool, tabID int) {
	t.Helper()
	var r struct {
		Found    bool `json:"found"`
		Attached bool `json:"attached"`
		TabID    int  `json:"tabId"`
	}
	expr := fmt.Sprintf(`chrome.debugger.getTargets().then((ts) => { const x = ts.find((t) => t.id === %q); return {found: !!x, attached: !!x?.attached, tabId: x?.tabId ?? -1}; })`, targetID)
	if err := e.b.ServiceWorkerEval(ctx, expr, &r); err != nil {
		t.Fatalf("chrome.debugger.getTargets: %v", err)
	}
	if !r.Found {
		t.Fatalf("chrome.debugger.getTargets has no target %s", targetID)
	}
	return r.Attached, r.TabID
}

// TestTabGroupIsTheConsentBoundary: shared tabs live in the "tabrelay" tab group. A tab moved
// into the group is shared; moved out, it is unlisted and its client gets
// Target.detachedFromTarget; the toolbar click moves a tab in and out; a tab a shared tab opens
// and a tab a client creates join the group.
func TestTabGroupIsTheConsentBoundary(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	first := e.share(t, e.pageURL("group-first"))
	defer e.b.CloseTab(ctx, first) //nolint:errcheck
	group, title := e.groupOf(t, ctx, first.TabID)
	if group < 0 || title != "tabrelay" {
		t.Fatalf("a tab shared by the toolbar click is in group %d %q, want the \"tabrelay\" group", group, title)
	}

	// Into the group: shared.
	tab, err := e.b.NewTab(ctx, e.site.URL("/other.html?group-drag"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck
	if _, listed := e.listedIDs(t)[tab.TargetID]; listed {
		t.Fatal("a tab outside the group is listed")
	}
	e.swDo(t, ctx, fmt.Sprintf(`chrome.tabs.group({groupId: %d, tabIds: [%d]})`, group, tab.TabID))
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	err = e.b.WaitBadge(wctx, tab, "ON")
	wcancel()
	if err != nil {
		t.Fatalf("a tab moved into the group is not shared: %v", err)
	}
	eventually(t, 10*time.Second, "the tab moved into the group is listed", func() (bool, string) {
		_, listed := e.listedIDs(t)[tab.TargetID]
		return listed, "not in /json/list"
	})

	// Out of the group: unshared, and its client is told.
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	if got := evalString(t, ctx, c, sid, "document.querySelector('h1').textContent"); got != "Other page" {
		t.Fatalf("evaluate in the tab shared by the group = %q", got)
	}
	detached := c.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), sid)
	})
	e.swDo(t, ctx, fmt.Sprintf(`chrome.tabs.ungroup(%d)`, tab.TabID))
	if _, err := detached.Wait(ctx); err != nil {
		t.Fatalf("the client got no Target.detachedFromTarget after the tab left the group: %v", err)
	}
	eventually(t, 10*time.Second, "the tab moved out of the group is unlisted", func() (bool, string) {
		_, listed := e.listedIDs(t)[tab.TargetID]
		return !listed, "still in /json/list"
	})
	if !e.tabOpen(t, tab) {
		t.Fatal("leaving the group closed the tab")
	}

	// The toolbar click moves the tab in, and out again.
	if err := e.b.Share(ctx, tab); err != nil {
		t.Fatal(err)
	}
	if g, _ := e.groupOf(t, ctx, tab.TabID); g != group {
		t.Fatalf("after the toolbar click the tab is in group %d, want the tabrelay group %d", g, group)
	}
	if err := e.b.Unshare(ctx, tab); err != nil {
		t.Fatal(err)
	}
	if g, _ := e.groupOf(t, ctx, tab.TabID); g != -1 {
		t.Fatalf("after the second toolbar click the tab is in group %d, want none", g)
	}
	eventually(t, 10*time.Second, "the tab unshared by the click is unlisted", func() (bool, string) {
		_, listed := e.listedIDs(t)[tab.TargetID]
		return !listed, "still in /json/list"
	})

	// A tab the shared tab opens joins the group.
	popupURL, _ := json.Marshal(e.site.URL("/other.html"))
	attached := c.Expect("", "Target.attachedToTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), `"url":`+string(popupURL))
	})
	if err := c.Call(ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}, nil); err != nil {
		t.Fatal(err)
	}
	fsid := attachPage(t, ctx, c, first.TargetID)
	if err := c.Call(ctx, fsid, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('popup').click()", "userGesture": true}, nil); err != nil {
		t.Fatal(err)
	}
	ev, err := attached.Wait(ctx)
	if err != nil {
		t.Fatalf("the tab opened by the shared tab was not shared: %v", err)
	}
	var p struct {
		TargetInfo struct {
			TargetID string `json:"targetId"`
		} `json:"targetInfo"`
	}
	_ = json.Unmarshal(ev.Params, &p)
	_, popupTab := e.debuggerAttached(t, ctx, p.TargetInfo.TargetID)
	defer e.b.CloseTab(ctx, browser.Tab{TargetID: p.TargetInfo.TargetID, TabID: popupTab}) //nolint:errcheck
	eventually(t, 10*time.Second, "the opened tab joins the group", func() (bool, string) {
		g, _ := e.groupOf(t, ctx, popupTab)
		return g == group, fmt.Sprintf("group %d, want %d", g, group)
	})

	// A tab a client creates joins the group.
	var created struct {
		TargetID string `json:"targetId"`
	}
	if err := c.Call(ctx, "", "Target.createTarget", map[string]any{"url": e.site.URL("/other.html?group-created")}, &created); err != nil {
		t.Fatal(err)
	}
	defer c.Call(context.WithoutCancel(ctx), "", "Target.closeTarget", map[string]any{"targetId": created.TargetID}, nil) //nolint:errcheck
	_, createdTab := e.debuggerAttached(t, ctx, created.TargetID)
	eventually(t, 10*time.Second, "the tab a client created joins the group", func() (bool, string) {
		g, _ := e.groupOf(t, ctx, createdTab)
		return g == group, fmt.Sprintf("group %d, want %d", g, group)
	})
}

// TestDebuggerOnDemand: with the debugger on demand (the extension's default) a shared tab is
// listed without the debugger attached; a client attaching attaches it, and it is detached
// DetachAfter after the last client session ended, the tab listed throughout under the same
// target id; Playwright (which attaches to every page on connect) works and keeps it attached
// while connected.
func TestDebuggerOnDemand(t *testing.T) {
	const detachAfter = 2 * time.Second
	e := privateWith(t, relay.HubOptions{DetachAfter: detachAfter})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	tab := e.share(t, e.pageURL("ondemand"))
	if att, _ := e.debuggerAttached(t, ctx, tab.TargetID); att {
		t.Fatal("a tab shared with the debugger on demand has the debugger attached before any client came")
	}
	if l, ok := e.listedIDs(t)[tab.TargetID]; !ok || l.Type != "page" || !strings.Contains(l.WebSocketDebuggerURL, "/devtools/page/"+tab.TargetID) {
		t.Fatalf("/json/list has %+v (listed %v) for the tab shared on demand", l, ok)
	}

	detaches := func() int {
		return len(e.relayLog.entries("no client used the tab for a while", map[string]string{"target": tab.TargetID}))
	}
	// A client comes: the debugger is attached, under the same target id.
	for round := 1; round <= 2; round++ {
		c := e.dialCDP(t, ctx)
		var targets struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
			} `json:"targetInfos"`
		}
		if err := c.Call(ctx, "", "Target.getTargets", nil, &targets); err != nil {
			t.Fatal(err)
		}
		if len(targets.TargetInfos) != 1 || targets.TargetInfos[0].TargetID != tab.TargetID {
			t.Fatalf("round %d: Target.getTargets = %+v, want the one shared tab %s", round, targets.TargetInfos, tab.TargetID)
		}
		sid := attachPage(t, ctx, c, tab.TargetID)
		if got := evalString(t, ctx, c, sid, "document.querySelector('h1').textContent"); got != "tabrelay fixture" {
			t.Fatalf("round %d: evaluate through the relay = %q", round, got)
		}
		if att, _ := e.debuggerAttached(t, ctx, tab.TargetID); !att {
			t.Fatalf("round %d: a client drives the tab but chrome.debugger.getTargets says it is not attached", round)
		}
		// The client leaves: the debugger is detached DetachAfter later.
		before := detaches()
		if err := c.Call(ctx, "", "Target.detachFromTarget", map[string]any{"sessionId": sid}, nil); err != nil {
			t.Fatal(err)
		}
		eventually(t, detachAfter+10*time.Second, fmt.Sprintf("round %d: the debugger is detached after the last client left", round), func() (bool, string) {
			att, _ := e.debuggerAttached(t, ctx, tab.TargetID)
			return !att && detaches() == before+1, fmt.Sprintf("attached %v, detaches %d", att, detaches())
		})
		if _, ok := e.listedIDs(t)[tab.TargetID]; !ok {
			t.Fatalf("round %d: the tab is no longer listed once its debugger was detached", round)
		}
		_ = c.Close()
	}

	// Detached, the tab navigates to another site: the relay lists it under the target id
	// Chrome reports for it now (the same one, unless Chrome gave the page a new target).
	cross := e.site.CrossURL("/?client=ondemand")
	e.swDo(t, ctx, fmt.Sprintf(`chrome.tabs.update(%d, {url: %q}).then(() => true)`, tab.TabID, cross))
	eventually(t, 15*time.Second, "the navigated tab listed at its new URL under its current target id", func() (bool, string) {
		var id string
		if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.debugger.getTargets().then(ts => (ts.find(t => t.tabId === %d && t.type === 'page') || {}).id)`, tab.TabID), &id); err != nil {
			return false, err.Error()
		}
		l, ok := e.listedIDs(t)[id]
		return ok && l.URL == cross, fmt.Sprintf("target %s listed %v at %q", id, ok, l.URL)
	})
	oldID := tab.TargetID
	if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.debugger.getTargets().then(ts => (ts.find(t => t.tabId === %d && t.type === 'page') || {}).id)`, tab.TabID), &tab.TargetID); err != nil {
		t.Fatal(err)
	}
	t.Logf("target id before the cross-site navigation %s, after %s", oldID, tab.TargetID)
	if att, _ := e.debuggerAttached(t, ctx, tab.TargetID); att {
		t.Fatal("a navigation attached the debugger of a tab nobody drives")
	}

	// Playwright connects (attaching to every page), holds the connection past DetachAfter,
	// and the tab stays attached meanwhile; it is detached after Playwright left.
	before := detaches()
	env := e.clientEnv("ondemand")
	env["HOLD_MS"] = fmt.Sprint((detachAfter + time.Second).Milliseconds())
	out := runNode(t, ctx, "playwright-hold.mjs", env)
	if out["first"] != "tabrelay fixture" || out["second"] != "42" {
		t.Fatalf("Playwright through the relay: %v", out)
	}
	if n := detaches(); n != before {
		t.Fatalf("the debugger was detached %d time(s) while Playwright was connected", n-before)
	}
	eventually(t, detachAfter+10*time.Second, "the debugger is detached after Playwright left", func() (bool, string) {
		att, _ := e.debuggerAttached(t, ctx, tab.TargetID)
		return !att, "still attached"
	})
}

// TestSharingSettingsOff: the options page's two sharing settings, both on by default; turned
// off there, a shared tab joins no group and has the debugger attached at once, as before they
// existed. They are turned on again at the end (the environment is shared).
func TestSharingSettingsOff(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	opts, err := e.b.NewTab(ctx, fmt.Sprintf("chrome-extension://%s/options.html", e.b.ExtensionID))
	if err != nil {
		t.Fatal(err)
	}
	defer e.b.CloseTab(ctx, opts) //nolint:errcheck
	eval := func(expr string) string {
		t.Helper()
		var got string
		if err := e.b.PageEval(ctx, opts, expr, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	checked := func() string {
		return eval(`String(document.getElementById('tabGroup').checked) + ' ' + String(document.getElementById('onDemand').checked)`)
	}
	eventually(t, 5*time.Second, "both settings shown on", func() (bool, string) { return checked() == "true true", checked() })
	// toggle both by clicking, and wait for the extension's new connection (its hello says
	// whether it attaches on demand)
	toggle := func(want string) {
		t.Helper()
		before, err := e.b.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		eval(`(document.getElementById('tabGroup').click(), document.getElementById('onDemand').click(), '')`)
		if got := checked(); got != want {
			t.Fatalf("after the clicks the boxes read %q, want %q", got, want)
		}
		eventually(t, 10*time.Second, "the extension reconnected with the new setting", func() (bool, string) {
			st, err := e.b.Status(ctx)
			return err == nil && st.Connected && st.Connects > before.Connects, fmt.Sprintf("%+v %v", st, err)
		})
	}
	toggle("false false")
	defer toggle("true true")

	tab := e.share(t, e.site.URL("/other.html?settings-off"))
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck
	if g, _ := e.groupOf(t, ctx, tab.TabID); g != -1 {
		t.Errorf("with the tab group setting off, a shared tab is in group %d", g)
	}
	if att, _ := e.debuggerAttached(t, ctx, tab.TargetID); !att {
		t.Errorf("with the debugger-on-demand setting off, a shared tab has no debugger attached")
	}
}

// TestDetachedTabToRestrictedPage: a tab shared on demand and not driven that navigates to a
// page the debugger may not attach to (chrome://) stops being shared and says why, as an
// attached one does (TestRestrictedPageStopsSharing), and leaves the tabrelay group.
func TestDetachedTabToRestrictedPage(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := e.share(t, e.site.URL("/other.html?detached-restricted"))
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck
	if att, _ := e.debuggerAttached(t, ctx, tab.TargetID); att {
		t.Fatal("the tab has the debugger attached before any client came")
	}
	e.swDo(t, ctx, fmt.Sprintf(`chrome.tabs.update(%d, {url: 'chrome://version'}).then(() => true)`, tab.TabID))
	eventually(t, 10*time.Second, "the badge says why sharing stopped", func() (bool, string) {
		b, _ := e.b.Badge(ctx, tab)
		title, _ := e.b.Tooltip(ctx, tab)
		return b == "!" && strings.Contains(title, "sharing stopped") && strings.Contains(title, "chrome://"), b + " " + title
	})
	eventually(t, 10*time.Second, "relay unlists the tab", func() (bool, string) {
		_, ok := e.listedIDs(t)[tab.TargetID]
		return !ok, "still listed"
	})
	if g, _ := e.groupOf(t, ctx, tab.TabID); g != -1 {
		t.Errorf("the tab that stopped being shared is still in group %d", g)
	}
}
