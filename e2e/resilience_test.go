package e2e

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// recordBadges makes the extension's worker keep a log of every badge text and tooltip it sets
// on tabID (wrapping chrome.action.setBadgeText and setTitle), so that short-lived states can be
// asserted after the fact; badgeLog reads it as "text|tooltip" entries.
func recordBadges(t *testing.T, ctx context.Context, e *env, tabID int) {
	t.Helper()
	expr := fmt.Sprintf(`(() => {
		const a = chrome.action, tabId = %d, texts = new Map();
		const setText = a.setBadgeText.bind(a), setTitle = a.setTitle.bind(a);
		globalThis.badgeLog = [];
		a.setBadgeText = (d) => { texts.set(d.tabId, d.text); return setText(d); };
		a.setTitle = (d) => {
			if (d.tabId === tabId) badgeLog.push((texts.get(tabId) ?? '') + '|' + d.title);
			return setTitle(d);
		};
		return a.setTitle !== setTitle;
	})()`, tabID)
	var ok bool
	if err := e.b.ServiceWorkerEval(ctx, expr, &ok); err != nil || !ok {
		t.Fatalf("record the badge in the worker: %v (wrapped %v)", err, ok)
	}
}

func badgeLog(t *testing.T, ctx context.Context, e *env) []string {
	t.Helper()
	var l []string
	if err := e.b.ServiceWorkerEval(ctx, "globalThis.badgeLog", &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestRelayRestart: the relay stops and starts again on the same address. The shared tab's
// badge goes to "…" (connecting, the tab will be shared once connected), then to "!" with the
// missing server named in plain words; the extension reconnects within a few seconds, the badge
// is ON again with the connected tooltip, and a client can drive the tab again.
func TestRelayRestart(t *testing.T) {
	e := private(t)
	tab := e.share(t, e.site.URL("/?client=restart"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	evalString(t, ctx, c, sid, "document.getElementById('clicker').click()")
	recordBadges(t, ctx, e, tab.TabID)

	addr := e.addr
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	// While it is down the badge and the tooltip say so in plain words.
	down := "tabrelay: tabrelay server not running at " + addr + " (retrying). This tab stays shared."
	eventually(t, 10*time.Second, "the badge names the missing server", func() (bool, string) {
		b, _ := e.b.Badge(ctx, tab)
		title, _ := e.b.Tooltip(ctx, tab)
		return b == "!" && title == down, b + " " + title
	})
	var global string
	if err := e.b.ServiceWorkerEval(ctx, "chrome.action.getTitle({})", &global); err != nil || !strings.Contains(global, "server not running at "+addr) {
		t.Errorf("tooltip of unshared tabs while the server is down = %q (%v)", global, err)
	}
	if err := e.startRelay(addr); err != nil {
		t.Fatalf("restart the relay on %s: %v", addr, err)
	}
	restarted := time.Now()
	rctx, rcancel := context.WithTimeout(ctx, 15*time.Second) // backoff of up to 5 s, on a loaded machine
	defer rcancel()
	if err := e.b.WaitBadge(rctx, tab, "ON"); err != nil {
		t.Fatalf("the extension did not reconnect within 15 s of the relay restart: %v", err)
	}
	took := time.Since(restarted)
	t.Logf("extension reconnected %v after the relay restarted", took.Round(time.Millisecond))
	up := "tabrelay: this tab is shared with the server at " + addr + " (click to stop sharing)"
	if title, err := e.b.Tooltip(ctx, tab); title != up {
		t.Errorf("tooltip after the reconnect = %q (%v), want %q", title, err, up)
	}
	if err := e.b.ServiceWorkerEval(ctx, "chrome.action.getTitle({})", &global); err != nil || global != "tabrelay: connected to "+addr+". Click to share this tab." {
		t.Errorf("tooltip of unshared tabs after the reconnect = %q (%v)", global, err)
	}
	// The states the badge went through, in order: connecting, server missing, shared.
	connecting := "…|tabrelay: connecting to the server at " + addr + "… This tab will be shared once connected."
	want := []string{connecting, "!|" + down, "ON|" + up}
	got := badgeLog(t, ctx, e)
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("the badge went through %q; want, in this order, %q", got, want)
	}
	if _, listed := e.listedIDs(t)[tab.TargetID]; !listed {
		t.Fatal("the shared tab is not listed by the restarted relay")
	}
	if got := clickAsNewClient(t, ctx, e, tab.TargetID); got != "clicked 2" {
		t.Fatalf("after the restart the client reads %q, want clicked 2", got)
	}
}

// TestCanceledByUser simulates the user dismissing Chrome's "started debugging this browser"
// bar. Headless Chromium shows no bar to click, so the test does what Chrome does then: it
// detaches the debugger from every shared tab (chrome.debugger.detach in the worker) and delivers
// onDetach with reason canceled_by_user to the extension's own handler (tabrelay.handleDetach,
// the function its chrome.debugger.onDetach listener calls). Everything after that is real. The
// notice survives a service-worker restart and the next click clears it.
func TestCanceledByUser(t *testing.T) {
	e := private(t)
	tabA := e.share(t, e.site.URL("/?client=cancel-a"))
	tabB := e.share(t, e.site.URL("/?client=cancel-b"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tabA.TargetID)
	detached := c.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), sid)
	})
	const simulate = `(async () => {
		const ids = [...tabrelay.state.shared.keys()];
		// a tab shared on demand that no client drives (tab B) has no debugger to detach
		for (const tabId of ids) await chrome.debugger.detach({tabId}).catch(() => {});
		for (const tabId of ids) await tabrelay.handleDetach({tabId}, 'canceled_by_user');
		return ids.length;
	})()`
	var n int
	if err := e.b.ServiceWorkerEval(ctx, simulate, &n); err != nil || n != 2 {
		t.Fatalf("simulate canceled_by_user: %v (tabs %d)", err, n)
	}
	if _, err := detached.Wait(ctx); err != nil {
		t.Fatalf("the client got no Target.detachedFromTarget: %v", err)
	}
	eventually(t, 5*time.Second, "relay unlists both tabs", func() (bool, string) {
		ids := e.listedIDs(t)
		_, a := ids[tabA.TargetID]
		_, b := ids[tabB.TargetID]
		return !a && !b, fmt.Sprint(ids)
	})
	badge, _ := e.b.Badge(ctx, tabA)
	title, _ := e.b.Tooltip(ctx, tabA)
	if badge != "!" || !strings.Contains(title, "canceled") {
		t.Fatalf("after canceled_by_user badge = %q, tooltip = %q; want ! and a word about the cancel", badge, title)
	}
	if !e.tabOpen(t, tabA) || !e.tabOpen(t, tabB) {
		t.Fatal("canceling closed tabs")
	}
	st, _ := e.b.Status(ctx)
	if len(st.SharedTabs) != 0 {
		t.Fatalf("extension still lists shared tabs: %+v", st.SharedTabs)
	}
	// The notice is kept in chrome.storage.session: a restarted worker still shows it.
	stopServiceWorker(t, ctx, e)
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ = e.b.Status(ctx)
	badge, _ = e.b.Badge(ctx, tabB)
	title, _ = e.b.Tooltip(ctx, tabB)
	if st.Connects != 1 || !strings.Contains(st.Notice, "canceled") || len(st.SharedTabs) != 0 || badge != "!" || !strings.Contains(title, "canceled") {
		t.Fatalf("after a worker restart: status %+v, badge %q, tooltip %q; want the cancel notice kept and nothing shared", st, badge, title)
	}
	// The next click shares again and clears the notice.
	if err := e.b.Share(ctx, tabA); err != nil {
		var dbg any
		_ = e.b.ServiceWorkerEval(ctx, `({errors: [...tabrelay.state.tabErrors], shared: [...tabrelay.state.shared.keys()], sharing: [...tabrelay.state.sharing.keys()], notice: tabrelay.state.notice})`, &dbg)
		t.Fatalf("%v (extension state: %v)", err, dbg)
	}
	if b, _ := e.b.Badge(ctx, tabB); b != "" {
		t.Errorf("badge of the other, unshared tab after the notice cleared = %q, want empty", b)
	}
}

// idleResult is the outcome of the idle scenario, which runs in the background from TestMain so
// that its minute of silence overlaps the other tests.
type idleResult struct {
	err  error
	logs []string
}

var idleDone chan idleResult

const idleSilence = 65 * time.Second

// startIdleScenario starts the idle scenario if TestServiceWorkerStaysConnected will run.
func startIdleScenario() {
	if testing.Short() {
		return
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		top := strings.Split(f.Value.String(), "/")[0]
		re, err := regexp.Compile(top)
		if err != nil || !re.MatchString("TestServiceWorkerStaysConnected") {
			return
		}
	}
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() != "" { // another part's test, say
		top := strings.Split(f.Value.String(), "/")[0]
		if re, err := regexp.Compile(top); err == nil && re.MatchString("TestServiceWorkerStaysConnected") {
			return
		}
	}
	idleDone = make(chan idleResult, 1)
	go func() { idleDone <- runIdleScenario() }()
}

func runIdleScenario() (res idleResult) {
	logf := func(format string, a ...any) { res.logs = append(res.logs, fmt.Sprintf(format, a...)) }
	e, err := startEnv()
	if err != nil {
		res.err = fmt.Errorf("start environment: %w", err)
		return res
	}
	defer e.close()
	ctx, cancel := context.WithTimeout(context.Background(), idleSilence+60*time.Second)
	defer cancel()
	tab, err := e.b.ShareURL(ctx, e.site.URL("/?client=idle"))
	if err != nil {
		res.err = err
		return res
	}
	sw1, err := e.b.ServiceWorkerTargetID(ctx)
	if err != nil || sw1 == "" {
		res.err = fmt.Errorf("service worker target: %q %v", sw1, err)
		return res
	}
	st1, err := e.b.Status(ctx)
	if err != nil {
		res.err = err
		return res
	}
	// Silence: no client, no DevTools session on the worker, nothing but the extension's own
	// keepalive.
	start := time.Now()
	time.Sleep(idleSilence)
	sw2, err := e.b.ServiceWorkerTargetID(ctx)
	if err != nil {
		res.err = err
		return res
	}
	if sw2 != sw1 {
		res.err = fmt.Errorf("the service worker stopped during %v of silence (target %q before, %q after)", idleSilence, sw1, sw2)
		return res
	}
	st2, err := e.b.Status(ctx)
	if err != nil {
		res.err = err
		return res
	}
	if !st2.Connected || st2.Connects != st1.Connects {
		res.err = fmt.Errorf("after %v of silence the extension is %q (connected %v, connections %d, was %d): the link dropped", time.Since(start).Round(time.Second), st2.Text, st2.Connected, st2.Connects, st1.Connects)
		return res
	}
	c, err := cdpclient.Dial(ctx, e.cdpURL()+"?token="+e.token(), nil)
	if err != nil {
		res.err = err
		return res
	}
	defer c.Close()
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tab.TargetID, "flatten": true}, &r); err != nil {
		res.err = fmt.Errorf("attach after the silence: %w", err)
		return res
	}
	var ev struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	if err := c.Call(ctx, r.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true}, &ev); err != nil || ev.Result.Value != "tabrelay fixture" {
		res.err = fmt.Errorf("drive the tab after the silence: %q %v", ev.Result.Value, err)
		return res
	}
	logf("worker %s stayed up and connected for %v of silence", sw1, time.Since(start).Round(time.Second))
	return res
}

// TestServiceWorkerStaysConnected: with no client and no DevTools session keeping it alive, the
// extension's MV3 service worker stays up and connected through more than 60 s of silence (its
// 20 s keepalive), and the tab can be driven afterwards. The scenario runs in the background
// from TestMain; this test reports it.
func TestServiceWorkerStaysConnected(t *testing.T) {
	requireChromium(t)
	if idleDone == nil {
		t.Fatal("the idle scenario was not started by TestMain")
	}
	select {
	case r := <-idleDone:
		for _, l := range r.logs {
			t.Log(l)
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
	case <-time.After(idleSilence + 90*time.Second):
		t.Fatal("the idle scenario did not finish")
	}
}

// stopServiceWorker stops the extension's service worker as the browser stops an idle MV3
// worker (DevTools' ServiceWorker.stopAllWorkers, sent from an extension page of the same
// storage partition) and waits until the worker that ran is gone. Any extension event (a
// debugger event, the keepalive alarm, a message) starts a new one.
func stopServiceWorker(t *testing.T, ctx context.Context, e *env) {
	t.Helper()
	stopWorker(t, ctx, e, false)()
}

// stopServiceWorkerHolding is stopServiceWorker for a test that needs the extension to stay
// down until it says so: it waits until no worker runs at all (stopping again a worker that an
// event started meanwhile, such as the extension page's own status message), and keeps that
// page open until release is called, since closing it is a tab event (chrome.tabs.onRemoved)
// that starts the worker again at once.
func stopServiceWorkerHolding(t *testing.T, ctx context.Context, e *env) (release func()) {
	t.Helper()
	return stopWorker(t, ctx, e, true)
}

func stopWorker(t *testing.T, ctx context.Context, e *env, none bool) (release func()) {
	t.Helper()
	sw1, err := e.b.ServiceWorkerTargetID(ctx)
	if err != nil || sw1 == "" {
		t.Fatalf("service worker target: %q %v", sw1, err)
	}
	var page struct {
		TargetID string `json:"targetId"`
	}
	if err := e.b.CDP.Call(ctx, "", "Target.createTarget", map[string]any{"url": "chrome-extension://" + e.b.ExtensionID + "/options.html", "background": true}, &page); err != nil {
		t.Fatal(err)
	}
	release = func() {
		_ = e.b.CDP.Call(context.WithoutCancel(ctx), "", "Target.closeTarget", map[string]any{"targetId": page.TargetID}, nil)
	}
	held := false
	defer func() {
		if !held {
			release()
		}
	}()
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := e.b.CDP.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": page.TargetID, "flatten": true}, &s); err != nil {
		t.Fatal(err)
	}
	// the page asks the worker for its status once as it loads: stopping before that answer
	// would have the question start a new worker
	eventually(t, 10*time.Second, "the extension page has the worker's status", func() (bool, string) {
		var got bool
		err := e.b.PageEval(ctx, browser.Tab{TargetID: page.TargetID}, `document.getElementById('status')?.textContent.startsWith('Extension:') === true`, &got)
		return err == nil && got, fmt.Sprint(err)
	})
	stop := func() {
		t.Helper()
		for _, m := range []string{"ServiceWorker.enable", "ServiceWorker.stopAllWorkers", "ServiceWorker.disable"} {
			if err := e.b.CDP.Call(ctx, s.SessionID, m, nil, nil); err != nil {
				t.Fatalf("stop the service worker: %v", err)
			}
		}
	}
	stop()
	eventually(t, 10*time.Second, "the service worker stops", func() (bool, string) {
		id, _ := e.b.ServiceWorkerTargetID(ctx)
		if none && id != "" && id != sw1 {
			stop() // an event started a new one
		}
		return id != sw1 && (!none || id == ""), id
	})
	held = none
	return release
}

// TestServiceWorkerRestartKeepsSharing: the browser stops the extension's service worker; the
// next extension event starts it again and the new worker resumes from chrome.storage.session:
// the relay takes the tab back under the same target id within its grace period (it is never
// reported unshared), and both a client attached before the restart and a new one can drive it,
// the cross-origin iframe included.
func TestServiceWorkerRestartKeepsSharing(t *testing.T) {
	e := private(t)
	tab := e.share(t, e.pageURL("sw-restart"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	evalString(t, ctx, c, sid, "document.getElementById('clicker').click()")

	stopServiceWorker(t, ctx, e)
	eventually(t, 10*time.Second, "the relay sees the old worker's connection end", func() (bool, string) {
		return e.relayLogged("browser extension disconnected", nil) || e.relayLogged("a newer extension connection replaced the previous one", nil), ""
	})
	// Status wakes a worker that is still stopped (it opens the options page).
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := e.b.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.SharedTabs) != 1 || st.SharedTabs[0].TargetID != tab.TargetID || st.SharedTabs[0].TabID != tab.TabID {
		t.Fatalf("the restarted worker shares %+v, want tab %d as %s", st.SharedTabs, tab.TabID, tab.TargetID)
	}
	if st.Connects != 1 {
		t.Fatalf("the worker reports %d connections: it was not restarted", st.Connects)
	}
	eventually(t, 10*time.Second, "the relay lists the tab again", func() (bool, string) {
		_, ok := e.listedIDs(t)[tab.TargetID]
		return ok, fmt.Sprint(e.list(t))
	})
	if e.relayLogged("tab no longer shared", map[string]string{"target": tab.TargetID}) || !e.relayLogged("shared tab is back", map[string]string{"target": tab.TargetID}) {
		t.Fatal("the relay did not take the tab back after the worker restart")
	}
	if err := e.b.WaitBadge(ctx, tab, "ON"); err != nil {
		t.Fatal(err)
	}
	stillDrivable(t, ctx, e, c, sid, tab.TargetID, "restart")
}

// TestTargetClosedOnLiveTabReattaches: the debugger session of a shared tab ends with
// target_closed while the tab lives on (Chrome does this on some process swaps). The test ends
// the session (chrome.debugger.detach in the worker) and hands target_closed to the extension's
// own onDetach handler, as TestCanceledByUser does; the extension attaches again, the relay keeps
// the tab under the same target id, and clients can drive it, its cross-origin iframe included.
func TestTargetClosedOnLiveTabReattaches(t *testing.T) {
	e := private(t)
	tab := e.share(t, e.pageURL("target-closed"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	evalString(t, ctx, c, sid, "document.getElementById('clicker').click()")
	simulate := fmt.Sprintf(`(async () => {
		await chrome.debugger.detach({tabId: %d});
		await tabrelay.handleDetach({tabId: %d}, 'target_closed');
		const ts = await chrome.debugger.getTargets();
		return ts.some(t => t.tabId === %d && t.attached);
	})()`, tab.TabID, tab.TabID, tab.TabID)
	var attached bool
	if err := e.b.ServiceWorkerEval(ctx, simulate, &attached); err != nil {
		t.Fatalf("simulate target_closed: %v", err)
	}
	if !attached {
		t.Fatal("after target_closed on a live tab the extension did not attach the debugger again")
	}
	st, err := e.b.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.SharedTabs) != 1 || st.SharedTabs[0].TargetID != tab.TargetID {
		t.Fatalf("after the re-attach the extension shares %+v, want %s", st.SharedTabs, tab.TargetID)
	}
	if _, ok := e.listedIDs(t)[tab.TargetID]; !ok {
		t.Fatal("after the re-attach the relay does not list the tab")
	}
	if e.relayLogged("tab no longer shared", map[string]string{"target": tab.TargetID}) {
		t.Fatal("the relay was told the tab is no longer shared")
	}
	if b, _ := e.b.Badge(ctx, tab); b != "ON" {
		t.Fatalf("badge after the re-attach = %q, want ON", b)
	}
	stillDrivable(t, ctx, e, c, sid, tab.TargetID, "re-attach")
}

// TestDiscardedTabIsUnshared: the browser discards a shared background tab (chrome.tabs.discard,
// what memory saving does; Chromium replaces the tab with a discarded one under a new id). The
// extension reports the tab unshared with reason "discarded" (not "replaced"), does not attach to
// the discarded tab, the relay unlists it and the attached client is told.
func TestDiscardedTabIsUnshared(t *testing.T) {
	e := private(t)
	tab := e.share(t, e.site.URL("/?client=discard"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	detached := c.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), sid)
	})
	// A tab in front cannot be discarded: open another one over it.
	if _, err := e.b.NewTab(ctx, e.site.URL("/other.html?front")); err != nil {
		t.Fatal(err)
	}
	var discarded struct {
		ID        int  `json:"id"`
		Discarded bool `json:"discarded"`
	}
	if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.discard(%d).then(t => ({id: t.id, discarded: t.discarded}))`, tab.TabID), &discarded); err != nil {
		t.Fatalf("discard the shared tab: %v", err)
	}
	if !discarded.Discarded {
		t.Fatalf("chrome.tabs.discard left the tab undiscarded: %+v", discarded)
	}
	if _, err := detached.Wait(ctx); err != nil {
		t.Fatalf("the client got no Target.detachedFromTarget: %v", err)
	}
	eventually(t, 10*time.Second, "relay unlists the discarded tab", func() (bool, string) {
		_, ok := e.listedIDs(t)[tab.TargetID]
		return !ok, "still listed"
	})
	if got := e.relayLog.entries("tab no longer shared", map[string]string{"target": tab.TargetID}); len(got) != 1 || got[0]["reason"] != "discarded" {
		t.Fatalf("the relay logged %v, want the tab unshared once with reason discarded", got)
	}
	st, err := e.b.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.SharedTabs) != 0 {
		t.Fatalf("the extension still shares %+v", st.SharedTabs)
	}
	var still bool
	if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(t => t.discarded, () => false)`, discarded.ID), &still); err != nil || !still {
		t.Fatalf("the discarded tab %d is no longer discarded (%v): the extension woke it", discarded.ID, err)
	}
}

// TestCrashedTabIsUnshared: a shared tab's renderer crashes (Page.crash sent by a client through
// the relay); the client sees Inspector.targetCrashed, the extension reports the tab unshared
// with reason "crashed", the relay unlists it, and the tab (showing Chrome's crash page) stays
// open with no badge.
func TestCrashedTabIsUnshared(t *testing.T) {
	e := private(t)
	tab := e.share(t, e.site.URL("/?client=crash"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	crashed := c.Expect(sid, "Inspector.targetCrashed", nil)
	if err := c.Call(ctx, sid, "Inspector.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	// Page.crash has no answer: the renderer dies first and the pending call fails.
	_ = c.Call(ctx, sid, "Page.crash", nil, nil)
	if _, err := crashed.Wait(ctx); err != nil {
		t.Fatalf("the client got no Inspector.targetCrashed: %v", err)
	}
	eventually(t, 10*time.Second, "relay unlists the crashed tab", func() (bool, string) {
		_, ok := e.listedIDs(t)[tab.TargetID]
		return !ok, "still listed"
	})
	if got := e.relayLog.entries("tab no longer shared", map[string]string{"target": tab.TargetID}); len(got) != 1 || got[0]["reason"] != "crashed" {
		t.Fatalf("the relay logged %v, want the tab unshared once with reason crashed", got)
	}
	st, err := e.b.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.SharedTabs) != 0 {
		t.Fatalf("the extension still shares %+v", st.SharedTabs)
	}
	if !e.tabOpen(t, tab) {
		t.Fatal("the crashed tab was closed")
	}
	if err := e.b.WaitBadge(ctx, tab, ""); err != nil {
		t.Fatal(err)
	}
}

// TestShareWhileServerDown: the user shares a tab while the server is not running. The click
// still shares it (badge "!" with the missing server named and the promise that the tab stays
// shared); once the server starts, the extension connects, announces the tab and a client can
// drive it.
func TestShareWhileServerDown(t *testing.T) {
	e := private(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab, err := e.b.NewTab(ctx, e.site.URL("/?client=share-while-down"))
	if err != nil {
		t.Fatal(err)
	}
	addr := e.addr
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the extension notices the server is gone", func() (bool, string) {
		st, _ := e.b.Status(ctx)
		return st.Status == "error", st.Text
	})
	if err := e.b.Click(ctx, tab); err != nil {
		t.Fatal(err)
	}
	down := "tabrelay: tabrelay server not running at " + addr + " (retrying). This tab stays shared."
	eventually(t, 10*time.Second, "the badge says the tab waits for the server", func() (bool, string) {
		b, _ := e.b.Badge(ctx, tab)
		title, _ := e.b.Tooltip(ctx, tab)
		return b == "!" && title == down, b + " " + title
	})
	if err := e.startRelay(addr); err != nil {
		t.Fatalf("start the relay on %s: %v", addr, err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := e.b.WaitBadge(wctx, tab, "ON"); err != nil {
		t.Fatalf("the tab shared while the server was down is not shared once it runs: %v", err)
	}
	eventually(t, 5*time.Second, "the relay lists the tab", func() (bool, string) {
		_, ok := e.listedIDs(t)[tab.TargetID]
		return ok, fmt.Sprint(e.list(t))
	})
	if got := clickAsNewClient(t, ctx, e, tab.TargetID); got != "clicked 1" {
		t.Fatalf("the client reads %q, want clicked 1", got)
	}
}

// TestRestrictedPageStopsSharing: a shared tab navigates to a page the debugger may not attach
// to (chrome://version, as a person typing it would); Chrome detaches with target_closed, the
// extension's re-attach fails, the tab is reported unshared ("detached") and its badge says why.
// Navigating to an ordinary page clears the notice, and a click shares the tab again.
func TestRestrictedPageStopsSharing(t *testing.T) {
	e := private(t)
	tab := e.share(t, e.site.URL("/?client=restricted"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	detached := c.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), sid)
	})
	if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.update(%d, {url: 'chrome://version'}).then(() => true)`, tab.TabID), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := detached.Wait(ctx); err != nil {
		t.Fatalf("the client got no Target.detachedFromTarget: %v", err)
	}
	eventually(t, 10*time.Second, "relay unlists the tab", func() (bool, string) {
		_, ok := e.listedIDs(t)[tab.TargetID]
		return !ok, "still listed"
	})
	if got := e.relayLog.entries("tab no longer shared", map[string]string{"target": tab.TargetID}); len(got) != 1 || got[0]["reason"] != "detached" {
		t.Fatalf("the relay logged %v, want the tab unshared once with reason detached", got)
	}
	eventually(t, 10*time.Second, "the badge says why sharing stopped", func() (bool, string) {
		b, _ := e.b.Badge(ctx, tab)
		title, _ := e.b.Tooltip(ctx, tab)
		return b == "!" && strings.Contains(title, "sharing stopped") && strings.Contains(title, "chrome://"), b + " " + title
	})
	if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.update(%d, {url: %q}).then(() => true)`, tab.TabID, e.site.URL("/?client=restricted-back")), nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the notice clears on navigation", func() (bool, string) {
		b, _ := e.b.Badge(ctx, tab)
		return b == "", b
	})
	var complete bool
	eventually(t, 10*time.Second, "the page loads", func() (bool, string) {
		_ = e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(t => t.status === 'complete')`, tab.TabID), &complete)
		return complete, ""
	})
	again, err := e.b.TabOf(ctx, tab.TargetID)
	if err != nil {
		// A cross-process navigation may give the page a new target id.
		var id string
		_ = e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.debugger.getTargets().then(ts => (ts.find(t => t.tabId === %d) || {}).id)`, tab.TabID), &id)
		if again, err = e.b.TabOf(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.b.Share(ctx, again); err != nil {
		t.Fatal(err)
	}
	c2 := e.dialCDP(t, ctx)
	sid2 := attachPage(t, ctx, c2, again.TargetID)
	if got := evalString(t, ctx, c2, sid2, "location.search"); got != "?client=restricted-back" {
		t.Fatalf("the re-shared tab is at %q", got)
	}
}

// TestServiceWorkerRestartWhileServerDown: the server stops, then the browser stops the
// extension's service worker. The new worker restores the shared tab from chrome.storage.session,
// shows it waiting for the missing server, and shares it under the same target id once the
// server runs again.
func TestServiceWorkerRestartWhileServerDown(t *testing.T) {
	e := private(t)
	tab := e.share(t, e.site.URL("/?client=sw-restart-down"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := e.addr
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	stopServiceWorker(t, ctx, e)
	down := "tabrelay: tabrelay server not running at " + addr + " (retrying). This tab stays shared."
	eventually(t, 15*time.Second, "the new worker shows the tab waiting for the server", func() (bool, string) {
		st, _ := e.b.Status(ctx)
		b, _ := e.b.Badge(ctx, tab)
		title, _ := e.b.Tooltip(ctx, tab)
		ok := len(st.SharedTabs) == 1 && st.SharedTabs[0].TargetID == tab.TargetID && b == "!" && title == down
		return ok, fmt.Sprintf("%+v %s %s", st, b, title)
	})
	if err := e.startRelay(addr); err != nil {
		t.Fatalf("start the relay on %s: %v", addr, err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := e.b.WaitBadge(wctx, tab, "ON"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the relay lists the tab", func() (bool, string) {
		_, ok := e.listedIDs(t)[tab.TargetID]
		return ok, fmt.Sprint(e.list(t))
	})
	if got := clickAsNewClient(t, ctx, e, tab.TargetID); got != "clicked 1" {
		t.Fatalf("the client reads %q, want clicked 1", got)
	}
}

// stillDrivable checks a shared tab after an interruption (what names it in messages): the
// client c that was attached before it still drives the page (its second click), a new client
// does too (the third), and the page's cross-origin iframe is reachable through a child session.
// The page is the fixture's index.html with a cross-origin frame.html.
func stillDrivable(t *testing.T, ctx context.Context, e *env, c *cdpclient.Client, sid, targetID, what string) {
	t.Helper()
	if got := evalString(t, ctx, c, sid, clickExpr); got != "clicked 2" {
		t.Fatalf("the client attached before the %s reads %q, want clicked 2", what, got)
	}
	c2 := e.dialCDP(t, ctx)
	sid2 := attachPage(t, ctx, c2, targetID)
	if got := evalString(t, ctx, c2, sid2, clickExpr); got != "clicked 3" {
		t.Fatalf("after the %s a new client reads %q, want clicked 3", what, got)
	}
	frame := c2.Expect(sid2, "Target.attachedToTarget", func(ev cdpclient.Event) bool {
		return strings.Contains(string(ev.Params), "/frame.html")
	})
	if err := c2.Call(ctx, sid2, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}, nil); err != nil {
		t.Fatal(err)
	}
	ev, err := frame.Wait(ctx)
	if err != nil {
		t.Fatalf("the iframe was not attached after the %s: %v", what, err)
	}
	var child struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(ev.Params, &child)
	if got := evalString(t, ctx, c2, child.SessionID, "document.getElementById('inner').textContent"); got != "inside the frame" {
		t.Fatalf("inside the iframe after the %s the client reads %q", what, got)
	}
}

// clickExpr clicks the fixture index page's button and returns what the page shows for it
// ("clicked N").
const clickExpr = "document.getElementById('clicker').click(), document.getElementById('out').textContent"

// clickAsNewClient connects a new CDP client to the shared tab, clicks the fixture page's
// button through it and returns the page's answer.
func clickAsNewClient(t *testing.T, ctx context.Context, e *env, targetID string) string {
	t.Helper()
	c := e.dialCDP(t, ctx)
	return evalString(t, ctx, c, attachPage(t, ctx, c, targetID), clickExpr)
}

// TestPageEndpointDuringRelayRestart: the relay restarts after an outage and a client connects
// to the shared tab's page endpoint at once, before the extension is back: the connection waits
// for the tab instead of failing, and drives it once the extension has announced it again.
func TestPageEndpointDuringRelayRestart(t *testing.T) {
	e := private(t)
	tab := e.share(t, e.site.URL("/?client=page-endpoint-restart"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	addr := e.addr
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.b.WaitBadge(ctx, tab, "!"); err != nil { // the extension noticed the outage
		t.Fatal(err)
	}
	if err := e.startRelay(addr); err != nil {
		t.Fatalf("restart the relay on %s: %v", addr, err)
	}
	connected := e.srv.Hub().ExtensionConnected()
	c, err := cdpclient.Dial(ctx, "ws://"+addr+"/devtools/page/"+tab.TargetID, http.Header{"Authorization": {"Bearer " + e.token()}})
	if err != nil {
		t.Fatalf("connect to the page endpoint right after the restart (extension connected: %v): %v", connected, err)
	}
	defer c.Close()
	if got := evalString(t, ctx, c, "", clickExpr); got != "clicked 1" {
		t.Fatalf("through the page endpoint opened during the restart the client reads %q, want clicked 1", got)
	}
	t.Logf("extension connected when the client dialled: %v", connected)
}
