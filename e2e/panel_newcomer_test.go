package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/relay"
)

// openRealSidePanel opens the extension's real side panel in the window of tab (as the
// extension's context menu does: chrome.sidePanel.open in a click's user gesture, here a mouse
// click on a button of an extension page of that window), brings tab forward, and returns the
// panel's page.
func openRealSidePanel(t *testing.T, ctx context.Context, ae *agentEnv, tab browser.Tab) browser.Tab {
	t.Helper()
	opener, err := ae.b.NewTab(ctx, fmt.Sprintf("chrome-extension://%s/welcome.html", ae.b.ExtensionID))
	if err != nil {
		t.Fatal(err)
	}
	if err := ae.b.PageEval(ctx, opener, `(() => { const b = document.createElement('button'); b.id = 'open-panel'; b.textContent = 'Open the side panel';
		b.style = 'position:fixed;top:10px;left:10px;z-index:99;padding:20px';
		b.addEventListener('click', () => { chrome.windows.getCurrent().then(() => {}); chrome.sidePanel.open({ windowId: window.__win }); });
		document.body.append(b); return chrome.windows.getCurrent().then((w) => { window.__win = w.id; return true; }); })()`, nil); err != nil {
		t.Fatal(err)
	}
	realClick(t, ctx, ae.b, opener, "#open-panel")
	var panel browser.Tab
	eventually(t, 20*time.Second, "the real side panel is open", func() (bool, string) {
		var r struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
				URL      string `json:"url"`
			} `json:"targetInfos"`
		}
		if err := ae.b.CDP.Call(ctx, "", "Target.getTargets", map[string]any{"filter": []map[string]any{{}}}, &r); err != nil {
			return false, err.Error()
		}
		for _, ti := range r.TargetInfos {
			if strings.HasSuffix(ti.URL, "/sidepanel.html") {
				panel = browser.Tab{TargetID: ti.TargetID, URL: ti.URL}
				return true, ""
			}
		}
		return false, fmt.Sprint(r.TargetInfos)
	})
	if err := ae.b.CDP.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": opener.TargetID}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ae.b.CDP.Call(ctx, "", "Target.activateTarget", map[string]any{"targetId": tab.TargetID}, nil); err != nil {
		t.Fatal(err)
	}
	return panel
}

// tabsAt lists the browser's tabs whose URL starts with prefix: id, group and window.
func tabsAt(t *testing.T, ctx context.Context, b *browser.Browser, prefix string) []struct{ ID, GroupID, WindowID int } {
	t.Helper()
	var out []struct{ ID, GroupID, WindowID int }
	if err := b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.query({}).then((ts) => ts.filter((x) => (x.url || x.pendingUrl || '').startsWith(%q)).map((x) => ({ID: x.id, GroupID: x.groupId, WindowID: x.windowId})))`, prefix), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPanelSettingsOutsideGroup: in the real side panel beside a shared tab (in the blue
// tabrelay group), the footer's "Settings and model" link opens the options page in the same
// window but outside the group, and the page is not shared.
func TestPanelSettingsOutsideGroup(t *testing.T) {
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	page := ae.share(t, ae.site.URL("/?client=panel-settings"))
	var shared struct{ GroupID, WindowID int }
	eventually(t, 20*time.Second, "the shared tab is in the tabrelay group", func() (bool, string) {
		if err := ae.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then((x) => ({GroupID: x.groupId, WindowID: x.windowId}))`, page.TabID), &shared); err != nil {
			return false, err.Error()
		}
		return shared.GroupID >= 0, fmt.Sprint(shared)
	})
	panel := openRealSidePanel(t, ctx, ae, page)
	eventually(t, 20*time.Second, "the panel names the shared tab", func() (bool, string) {
		s := pageText(t, ctx, ae.b, panel, "tabstate")
		return strings.HasPrefix(s, "This tab is shared"), s
	})
	options := fmt.Sprintf("chrome-extension://%s/options.html", ae.b.ExtensionID)
	if n := len(tabsAt(t, ctx, ae.b, options)); n != 0 {
		t.Fatalf("%d options pages open before the click", n)
	}
	realClick(t, ctx, ae.b, panel, `footer a[href="options.html"]`)
	var opened []struct{ ID, GroupID, WindowID int }
	eventually(t, 20*time.Second, "the options page opens", func() (bool, string) {
		opened = tabsAt(t, ctx, ae.b, options)
		return len(opened) == 1, fmt.Sprint(opened)
	})
	o := opened[0]
	if o.GroupID >= 0 {
		t.Errorf("the options page opened in tab group %d (the shared tab's is %d)", o.GroupID, shared.GroupID)
	}
	if o.WindowID != shared.WindowID {
		t.Errorf("the options page opened in window %d, not the panel's %d", o.WindowID, shared.WindowID)
	}
	// it stays outside: the group's handling (which shares tabs dragged in) has had its moment
	// once the worker answers after the tab's events
	var settled bool
	if err := ae.b.ServiceWorkerEval(ctx, `new Promise((r) => setTimeout(() => r(true), 0))`, &settled); err != nil {
		t.Fatal(err)
	}
	if ids := ae.sharedTabIDs(t); ids[o.ID] != "" {
		t.Errorf("the options page is shared: %v", ids)
	}
	if again := tabsAt(t, ctx, ae.b, options); len(again) != 1 || again[0].GroupID >= 0 {
		t.Errorf("the options page afterwards: %v", again)
	}
}

// panelFor opens the side panel as a tab, in a window of its own, about tab.
func panelFor(t *testing.T, ctx context.Context, ae *agentEnv, tab browser.Tab) *panelEnv {
	t.Helper()
	panel, err := ae.b.NewWindowTab(ctx, fmt.Sprintf("chrome-extension://%s/sidepanel.html?tabId=%d", ae.b.ExtensionID, tab.TabID))
	if err != nil {
		t.Fatal(err)
	}
	return &panelEnv{agentEnv: ae, page: tab, panel: panel}
}

// TestPanelSendOnUnsharedTab: Send on a tab that is not shared does not send, says why, keeps the
// request in the box and offers to share the tab and send it; that button shares the tab and the
// request runs on it.
func TestPanelSendOnUnsharedTab(t *testing.T) {
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	page, err := ae.b.NewTab(ctx, ae.site.URL("/?client=panel-unshared"))
	if err != nil {
		t.Fatal(err)
	}
	pe := panelFor(t, ctx, ae, page)
	pe.waitText(t, "tabstate", "This tab is not shared", 20*time.Second)
	const request = "click Click me"
	pe.ask(t, request)
	got := pe.waitText(t, "notice", "Not sent: this tab is not shared with tabrelay", 15*time.Second)
	if !strings.Contains(got, "Your request is kept") {
		t.Errorf("the notice does not say the request is kept: %q", got)
	}
	var box string
	pe.js(t, `document.getElementById('request').value`, &box)
	if box != request {
		t.Errorf("the request box holds %q after Send on an unshared tab, want %q", box, request)
	}
	pe.shot(t, "send-not-shared")
	checkAxe(t, ctx, ae.b, pe.panel, "side panel, request kept on an unshared tab")
	// the panel's periodic reading (every 3 s) keeps the offer
	pe.js(t, `tabrelayPanel.refresh().then(() => tabrelayPanel.refresh()).then(() => true)`, nil)
	if got := pe.text(t, "notice"); !strings.Contains(got, "Not sent") || !strings.Contains(got, "Share this tab and send") {
		t.Fatalf("the offer to share and send went with the next reading: %q", got)
	}
	if n := len(ae.sharedTabIDs(t)); n != 0 {
		t.Fatalf("%d tabs shared before the person chose to", n)
	}
	realClick(t, ctx, ae.b, pe.panel, "#share-send")
	eventually(t, 30*time.Second, "the kept request ran on the tab once shared", func() (bool, string) {
		var out string
		if err := ae.b.PageEval(ctx, page, `document.getElementById('out').textContent`, &out); err != nil {
			return false, err.Error()
		}
		return out == "clicked 1", out
	})
	pe.waitText(t, "tabstate", "This tab is shared", 10*time.Second)
	pe.waitText(t, "task-status", "succeeded", 20*time.Second)
	if got := pe.text(t, "notice"); got != "" {
		t.Errorf("a notice stays after the tab was shared and the request sent: %q", got)
	}
}

// TestPanelSharingStopsAtOnce: the panel says a tab is no longer shared as soon as the extension
// stops sharing it, from the service worker's own change (not its next periodic reading, every
// 3 s); the time from the stop to the panel showing it is logged.
func TestPanelSharingStopsAtOnce(t *testing.T) {
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	page := ae.share(t, ae.site.URL("/?client=panel-unshare"))
	pe := panelFor(t, ctx, ae, page)
	pe.waitText(t, "tabstate", "This tab is shared", 20*time.Second)
	var stopped float64
	if err := ae.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.ungroup(%d).then(() => Date.now())`, page.TabID), &stopped); err != nil {
		t.Fatal(err)
	}
	pe.waitText(t, "tabstate", "This tab is not shared", 10*time.Second)
	var marks struct {
		Changed float64 `json:"sharingChanged"`
		Shown   float64 `json:"sharingShown"`
	}
	pe.js(t, `tabrelayPanel.state.marks`, &marks)
	if marks.Changed < stopped || marks.Shown < marks.Changed {
		t.Fatalf("the panel did not update from the worker's change of its shared tabs (stopped at %v, marks %+v)", stopped, marks)
	}
	t.Logf("the panel showed the tab not shared %v after it stopped being shared", time.Duration(marks.Shown-stopped)*time.Millisecond)
}

// TestPanelKeepsFailedRequest: a request that needs a language model, with none chosen, fails
// in the panel with what to do (a link to choose one), and stays: in the recent list with its
// error and that link, after the panel is reopened, and shown again on a click, with the text
// back in the request box to send again.
func TestPanelKeepsFailedRequest(t *testing.T) {
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	page := ae.share(t, ae.site.URL("/?client=panel-failed"))
	pe := panelFor(t, ctx, ae, page)
	pe.waitText(t, "tabstate", "This tab is shared", 20*time.Second)
	const request = "compare the kettles and buy the cheapest"
	pe.ask(t, request)
	pe.waitText(t, "answer", "needs a language model", 30*time.Second)
	var box string
	pe.js(t, `document.getElementById('request').value`, &box)
	if box != request {
		t.Errorf("after the failure the request box holds %q, want the request to send again", box)
	}
	entry := pe.waitText(t, "recent", request, 15*time.Second)
	if !strings.Contains(entry, "failed") || !strings.Contains(entry, "needs a language model") || !strings.Contains(entry, "choose a model in Settings") {
		t.Errorf("the recent list's entry lacks the failure, its error or what to do:\n%s", entry)
	}
	pe.shot(t, "failed-request-kept")
	checkAxe(t, ctx, ae.b, pe.panel, "side panel, failed request kept")

	// the panel opened again (a new page): the request is still listed, and a click shows it
	reopened := panelFor(t, ctx, ae, page)
	reopened.waitText(t, "recent", request, 20*time.Second)
	reopened.js(t, `(document.querySelector('#recent li.unsent div').click(), true)`, nil)
	ans := reopened.waitText(t, "answer", "needs a language model", 10*time.Second)
	if !strings.Contains(ans, "choose a model in Settings") {
		t.Errorf("the failed request shown again does not say what to do: %q", ans)
	}
	if got := reopened.text(t, "task-goal"); got != request {
		t.Errorf("the failed request shown again asks %q", got)
	}
}
