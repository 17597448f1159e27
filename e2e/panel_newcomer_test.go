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
