package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
)

// TestTabChooserWhenExtensionComesLater: a CDP client connects while the extension is away (its
// service worker stopped, as when the browser comes up after the client, or the worker
// restarts); nothing can be offered then. When the extension connects and shares no tab, the
// chooser opens for the waiting client, and the tab the person picks reaches it.
func TestTabChooserWhenExtensionComesLater(t *testing.T) {
	e := privateBrowser(t, func(o *browser.Options) { o.TabChooser = true })
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	tab, err := e.b.NewTab(ctx, e.site.URL("/?client=chooser-later"))
	if err != nil {
		t.Fatal(err)
	}
	release := stopServiceWorkerHolding(t, ctx, e)
	eventually(t, 20*time.Second, "the relay sees the extension go", func() (bool, string) {
		return !e.srv.Hub().ExtensionConnected(), ""
	})
	c := e.dialCDP(t, ctx)
	if err := c.Call(ctx, "", "Target.getTargets", nil, nil); err != nil {
		t.Fatal(err)
	}
	const asked = "no tab shared: asked the extension to offer a choice of tab"
	if e.relayLogged(asked, nil) {
		t.Fatal("the relay says it asked an extension that is not connected")
	}
	release() // the worker starts again (a tab event) and connects
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	chooser := waitExtensionPage(t, ctx, e.b, "chooser.html", 30*time.Second)
	button := fmt.Sprintf(`button[data-tab-id="%d"]`, tab.TabID)
	eventually(t, 10*time.Second, "the chooser lists the fixture tab", func() (bool, string) {
		var ok bool
		_ = e.b.PageEval(ctx, chooser, fmt.Sprintf(`!!document.querySelector(%q)`, button), &ok)
		return ok, pageText(t, ctx, e.b, chooser, "tabs")
	})
	realClick(t, ctx, e.b, chooser, button)
	eventually(t, 20*time.Second, "the waiting client drives the chosen tab", func() (bool, string) {
		var r struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
			} `json:"targetInfos"`
		}
		if err := c.Call(ctx, "", "Target.getTargets", nil, &r); err != nil {
			return false, err.Error()
		}
		for _, ti := range r.TargetInfos {
			if ti.TargetID == tab.TargetID {
				return true, ""
			}
		}
		return false, fmt.Sprint(r.TargetInfos)
	})
	sid := attachPage(t, ctx, c, tab.TargetID)
	if got := evalString(t, ctx, c, sid, "new URL(location.href).searchParams.get('client')"); got != "chooser-later" {
		t.Errorf("the client drives the wrong page: client=%q", got)
	}
	if n := len(e.relayLog.entries(asked, map[string]string{"client": "cdp"})); n != 1 {
		t.Errorf("the relay asked the extension %d times to offer a tab, want 1", n)
	}
}
