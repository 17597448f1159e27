package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/relay"
)

// playwrightDefaultTimeout is Playwright's default timeout for waitForEvent.
const playwrightDefaultTimeout = 30 * time.Second

// readmePlaywrightLines returns the README's Playwright lines, as written: from the
// "// Playwright (playwright-core)" comment to the blank line that ends them.
func readmePlaywrightLines(readme string) (string, error) {
	const head = "// Playwright (playwright-core)\n"
	i := strings.Index(readme, head)
	if i < 0 {
		return "", fmt.Errorf("README.md has no %q lines", strings.TrimSpace(head))
	}
	block := readme[i:]
	end := strings.Index(block, "\n\n")
	if end < 0 {
		return "", fmt.Errorf("README.md's Playwright lines do not end with a blank line")
	}
	return block[:end+1], nil
}

// readmeScript writes the README's Playwright lines (the server's address and secret put in
// for 127.0.0.1:18792 and TOKEN) as a script in a folder of the Node clients (for their
// node_modules), with what a reader's script would do next: print the page it got and close.
// It returns the script's path relative to the clients' folder.
func readmeScript(t *testing.T, e *env) string {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	readme, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines, err := readmePlaywrightLines(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:18792/?token=TOKEN"
	if !strings.Contains(lines, url) {
		t.Fatalf("the README's Playwright lines no longer connect to %s:\n%s", url, lines)
	}
	lines = strings.Replace(lines, url, e.httpURL()+"/?token="+e.token(), 1)
	script := "import { chromium } from 'playwright-core';\nconst started = Date.now();\n" + lines +
		"console.log(JSON.stringify({ title: await page.title(), client: new URL(page.url()).searchParams.get('client'), waitedMs: Date.now() - started }));\nawait browser.close();\n"
	dir, err := os.MkdirTemp(clientsDir(t), ".readme-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "playwright.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(filepath.Base(dir), "playwright.mjs")
}

// TestReadmePlaywrightWaitsForChooser runs the README's Playwright lines as written while no tab
// is shared: the browser's tab chooser opens, and the person picks a tab only after Playwright's
// own default timeout (30 s) has passed. The lines still get that tab as their page: they wait
// as long as the chooser does.
func TestReadmePlaywrightWaitsForChooser(t *testing.T) {
	e := privateBrowser(t, func(o *browser.Options) { o.TabChooser = true })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tab, err := e.b.NewTab(ctx, e.site.URL("/?client=readme-playwright"))
	if err != nil {
		t.Fatal(err)
	}
	script := readmeScript(t, e)
	type result struct {
		out map[string]any
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := runNodeErr(t, ctx, script, nil)
		done <- result{out, err}
	}()
	chooser := waitExtensionPage(t, ctx, e.b, "chooser.html", 60*time.Second)
	opened := time.Now()
	button := fmt.Sprintf(`button[data-tab-id="%d"]`, tab.TabID)
	eventually(t, 10*time.Second, "the chooser lists the fixture tab", func() (bool, string) {
		var ok bool
		_ = e.b.PageEval(ctx, chooser, fmt.Sprintf(`!!document.querySelector(%q)`, button), &ok)
		return ok, pageText(t, ctx, e.b, chooser, "tabs")
	})
	// the person takes longer than Playwright's default: the script must still be waiting then
	waitUntil := opened.Add(playwrightDefaultTimeout + 3*time.Second)
	for time.Now().Before(waitUntil) {
		select {
		case r := <-done:
			t.Fatalf("the README's Playwright lines ended %v after the chooser opened, before the pick: %v %v", time.Since(opened).Round(time.Second), r.err, r.out)
		case <-time.After(time.Until(waitUntil)):
		}
	}
	if got := pageText(t, ctx, e.b, chooser, "gone"); got != "" {
		t.Fatalf("the chooser says nobody waits while the README's lines wait: %q", got)
	}
	realClick(t, ctx, e.b, chooser, button)
	var r result
	select {
	case r = <-done:
	case <-ctx.Done():
		t.Fatal("the README's Playwright lines did not finish after the pick")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.out["client"] != "readme-playwright" || r.out["title"] != "tabrelay fixture" {
		t.Fatalf("the README's Playwright lines got the wrong page: %v", r.out)
	}
	waited, _ := r.out["waitedMs"].(float64)
	if time.Duration(waited)*time.Millisecond <= playwrightDefaultTimeout {
		t.Fatalf("the lines waited %v, not past Playwright's default %v: the test proves nothing", time.Duration(waited)*time.Millisecond, playwrightDefaultTimeout)
	}
	t.Logf("the README's Playwright lines got the picked tab after %v", (time.Duration(waited) * time.Millisecond).Round(time.Millisecond))
}

// waitChooserGone waits until the chooser says nobody waits any more, with its tabs hidden.
func waitChooserGone(t *testing.T, ctx context.Context, e *env, chooser browser.Tab) {
	t.Helper()
	eventually(t, 20*time.Second, "the chooser says nobody waits any more and hides the tabs", func() (bool, string) {
		gone, tabs := pageText(t, ctx, e.b, chooser, "gone"), pageText(t, ctx, e.b, chooser, "tabs")
		return strings.Contains(gone, "Nobody is waiting for a tab any more") && tabs == "", gone + " | " + tabs
	})
}

// TestTabChooserEndsWhenClientLeaves: a CDP client connects while no tab is shared, the chooser
// opens, and the client disconnects before the person picks: the chooser says nobody waits any
// more, hides the tabs and nothing is shared. "Share a tab anyway" shows them again and shares
// the one picked; a client connecting later makes the chooser offer the tabs again.
func TestTabChooserEndsWhenClientLeaves(t *testing.T) {
	e := privateBrowser(t, func(o *browser.Options) { o.TabChooser = true })
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	tab, err := e.b.NewTab(ctx, e.site.URL("/?client=chooser-left"))
	if err != nil {
		t.Fatal(err)
	}
	c := e.dialCDP(t, ctx)
	chooser := waitExtensionPage(t, ctx, e.b, "chooser.html", 30*time.Second)
	button := fmt.Sprintf(`button[data-tab-id="%d"]`, tab.TabID)
	eventually(t, 10*time.Second, "the chooser lists the fixture tab", func() (bool, string) {
		var ok bool
		_ = e.b.PageEval(ctx, chooser, fmt.Sprintf(`!!document.querySelector(%q)`, button), &ok)
		return ok, pageText(t, ctx, e.b, chooser, "tabs")
	})
	if got := pageText(t, ctx, e.b, chooser, "gone"); got != "" {
		t.Fatalf("the chooser says nobody waits while a client waits: %q", got)
	}
	_ = c.Close()
	waitChooserGone(t, ctx, e, chooser)
	pageShot(t, ctx, e.b, chooser, 1000, 700, "chooser-nobody-waits")
	checkAxe(t, ctx, e.b, chooser, "tab chooser, nobody waiting")
	if n := len(e.srv.Hub().Tabs()); n != 0 {
		t.Fatalf("%d tabs shared after the client left", n)
	}

	// a client connecting again: the same page offers the tabs again
	c2 := e.dialCDP(t, ctx)
	eventually(t, 20*time.Second, "the chooser offers the tabs again", func() (bool, string) {
		gone, tabs := pageText(t, ctx, e.b, chooser, "gone"), pageText(t, ctx, e.b, chooser, "tabs")
		return gone == "" && tabs != "", gone + " | " + tabs
	})
	_ = c2.Close()
	waitChooserGone(t, ctx, e, chooser)

	// the person still wants to share one
	realClick(t, ctx, e.b, chooser, "#anyway")
	eventually(t, 10*time.Second, "the tabs shown again", func() (bool, string) {
		var ok bool
		_ = e.b.PageEval(ctx, chooser, fmt.Sprintf(`(() => { const b = document.querySelector(%q); return !!b && !b.closest('[hidden]'); })()`, button), &ok)
		return ok, pageText(t, ctx, e.b, chooser, "tabs")
	})
	realClick(t, ctx, e.b, chooser, button)
	eventually(t, 20*time.Second, "the tab picked anyway is shared", func() (bool, string) {
		for _, tb := range e.srv.Hub().Tabs() {
			if tb.TargetID == tab.TargetID {
				return true, ""
			}
		}
		return false, fmt.Sprint(e.srv.Hub().Tabs())
	})
}

// TestTabChooserEndsWhenMCPGivesUp: an MCP tool call that needs a tab while none is shared opens
// the chooser and waits; when the client gives up on the call (cancels it), the chooser says
// nobody waits any more and nothing is shared.
func TestTabChooserEndsWhenMCPGivesUp(t *testing.T) {
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{}, func(o *browser.Options) { o.TabChooser = true })
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if _, err := ae.b.NewTab(ctx, ae.site.URL("/?client=chooser-mcp-gives-up")); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ae.httpURL() + "/mcp",
		HTTPClient: &http.Client{Transport: mcpBearer{ae.token()}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	callCtx, giveUp := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "snapshot", Arguments: map[string]any{}})
		done <- err
	}()
	chooser := waitExtensionPage(t, ctx, ae.b, "chooser.html", 30*time.Second)
	eventually(t, 10*time.Second, "the chooser says the agent asks", func() (bool, string) {
		why := pageText(t, ctx, ae.b, chooser, "why")
		return strings.Contains(why, "tabrelay agent was asked"), why
	})
	if got := pageText(t, ctx, ae.b, chooser, "gone"); got != "" {
		t.Fatalf("the chooser says nobody waits while the tool call waits: %q", got)
	}
	giveUp()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the cancelled tool call did not return")
	}
	waitChooserGone(t, ctx, ae.env, chooser)
	if n := len(ae.srv.Hub().Tabs()); n != 0 {
		t.Fatalf("%d tabs shared after the tool call gave up", n)
	}
}
