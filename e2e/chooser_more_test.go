package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/relay"
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

// TestTabChooserForMCP: an MCP client (the official Go SDK's, as Claude Code or Cursor would
// connect) asks for a snapshot while no tab is shared. The browser opens its tab chooser
// (saying the agent asks), the tool call waits and says so in progress notifications, and once
// the person picks a tab the same call answers with that tab's snapshot.
func TestTabChooserForMCP(t *testing.T) {
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{}, func(o *browser.Options) { o.TabChooser = true })
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	tab, err := ae.b.NewTab(ctx, ae.site.URL("/?client=chooser-mcp"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var progress []string
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, req.Params.Message)
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ae.httpURL() + "/mcp",
		HTTPClient: &http.Client{Transport: mcpBearer{ae.token()}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		params := &mcp.CallToolParams{Name: "snapshot", Arguments: map[string]any{}}
		params.SetProgressToken("pick")
		res, err := cs.CallTool(ctx, params)
		done <- answer{res, err}
	}()
	chooser := waitExtensionPage(t, ctx, ae.b, "chooser.html", 30*time.Second)
	eventually(t, 10*time.Second, "the chooser says the agent asks", func() (bool, string) {
		why := pageText(t, ctx, ae.b, chooser, "why")
		return strings.Contains(why, "tabrelay agent was asked"), why
	})
	eventually(t, 20*time.Second, "the MCP client hears that the call waits for the pick", func() (bool, string) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range progress {
			if strings.Contains(m, "asks the user which tab to share") {
				return true, ""
			}
		}
		return false, fmt.Sprint(progress)
	})
	select {
	case a := <-done:
		t.Fatalf("the call answered before the person picked a tab: %v %s", a.err, mcpText(a.res))
	default:
	}
	button := fmt.Sprintf(`button[data-tab-id="%d"]`, tab.TabID)
	eventually(t, 10*time.Second, "the chooser lists the fixture tab", func() (bool, string) {
		var ok bool
		_ = ae.b.PageEval(ctx, chooser, fmt.Sprintf(`!!document.querySelector(%q)`, button), &ok)
		return ok, pageText(t, ctx, ae.b, chooser, "tabs")
	})
	realClick(t, ctx, ae.b, chooser, button)
	var a answer
	select {
	case a = <-done:
	case <-ctx.Done():
		t.Fatal("the snapshot call did not answer after the pick")
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	if text := mcpText(a.res); a.res.IsError || !strings.Contains(text, "tabrelay fixture") {
		t.Fatalf("the call after the pick: isError=%v\n%.600s", a.res.IsError, text)
	}
}
