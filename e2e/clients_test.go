package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// checkScenario asserts the common client scenario's results (see e2e/clients/*.mjs) and that the
// user's tab is still open and shared afterwards.
func checkScenario(t *testing.T, e *env, tab browser.Tab, client string, out map[string]any) {
	t.Helper()
	want := map[string]string{
		"title":        "tabrelay fixture",
		"clicked":      "clicked 1",
		"echo":         "typed by " + client,
		"evaluated":    "42 127.0.0.1",
		"frameText":    "inside the frame",
		"frameButton":  "frame clicked",
		"newPageTitle": "Other page",
	}
	for k, v := range want {
		if _, ok := out[k]; !ok && (k == "frameText" || k == "frameButton") && out["frameSkipped"] != nil {
			continue
		}
		if got := fmt.Sprint(out[k]); got != v {
			t.Errorf("%s: %s = %q, want %q", client, k, got, v)
		}
	}
	if n, _ := out["screenshotBytes"].(float64); n <= 1<<20 {
		t.Errorf("%s: screenshot of noise.html is %v bytes, want > 1 MiB", client, out["screenshotBytes"])
	}
	if pages, ok := out["pagesAfterClose"].([]any); ok {
		for _, p := range pages {
			// the exact pages the scenario opens: other tests' tabs (other.html?…) may be listed
			if u := fmt.Sprint(p); strings.HasSuffix(u, "/other.html") || strings.HasSuffix(u, "/noise.html") {
				t.Errorf("%s: the page it opened is still listed after close: %v", client, pages)
			}
		}
	}
	// The user's tab stays open and shared; the page the client opened is gone.
	if !e.tabOpen(t, tab) {
		t.Errorf("%s closed the user's tab", client)
	}
	ids := e.listedIDs(t)
	if _, ok := ids[tab.TargetID]; !ok {
		t.Errorf("%s: the user's tab %s is no longer shared after the client left", client, tab.TargetID)
	}
	for _, l := range ids {
		if strings.HasSuffix(l.URL, "/other.html") || strings.HasSuffix(l.URL, "/noise.html") {
			t.Errorf("%s: the page it opened and closed is still shared: %+v", client, l)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if badge, err := e.b.Badge(ctx, tab); err != nil || badge != "ON" {
		t.Errorf("%s: badge of the user's tab after the client left = %q (%v), want ON", client, badge, err)
	}
}

func TestPlaywright(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.pageURL("playwright"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := runNode(t, ctx, "playwright.mjs", e.clientEnv("playwright"))
	if v := fmt.Sprint(out["version"]); !strings.HasPrefix(v, "156.") {
		t.Errorf("playwright: browser.version() = %q, want the real Chromium version", v)
	}
	checkScenario(t, e, tab, "playwright", out)
}

func TestPuppeteer(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.pageURL("puppeteer"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := runNode(t, ctx, "puppeteer.mjs", e.clientEnv("puppeteer"))
	if v := fmt.Sprint(out["version"]); !strings.Contains(v, "/156.") {
		t.Errorf("puppeteer: browser.version() = %q, want the real Chromium version", v)
	}
	checkScenario(t, e, tab, "puppeteer", out)
}

// TestDiscoveryClients runs e2e/clients/discovery.mjs (Node's fetch on /json/version without
// the secret and on /json/list with the Authorization header; Puppeteer's browserURL with the
// secret in headers, on a small scenario; a per-tab URL given ?token= again) against tabrelay,
// and the same discovery against Chrome's own endpoint in the same test, where the answers must
// agree except for the secret.
func TestDiscoveryClients(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.pageURL("discovery"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := runNode(t, ctx, "discovery.mjs", e.clientEnv("discovery"))
	t.Logf("Puppeteer's browserURL forwards headers to the socket: %v (else the same two steps by hand)", out["browserURLForwardsHeaders"])
	want := map[string]any{
		"versionStatus": 200.0, "versionHasBrowser": true, "versionURLHasToken": false, "versionURLIsBrowser": true,
		"listStatus": 200.0, "listHasPage": true,
		"puppeteerTitle": "tabrelay fixture", "puppeteerClicked": "clicked 1", "puppeteerEvaluated": "42 127.0.0.1",
		"doubledToken": 2.0, "doubledTokenTitle": "tabrelay fixture",
	}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("tabrelay: %s = %v, want %v (all: %v)", k, out[k], v, out)
		}
	}

	// The same calls against Chrome's own endpoint (a plain headless Chromium with its DevTools
	// port, the same page open; no secret there: no token added, the header is ignored).
	chrome, err := snapshottest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer chrome.Close()
	if _, err := chrome.NewTab(ctx, e.pageURL("discovery")); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(chrome.WSURL)
	if err != nil {
		t.Fatal(err)
	}
	env := e.clientEnv("discovery")
	env["TABRELAY_HTTP"], env["TABRELAY_TOKEN"] = "http://"+u.Host, ""
	ref := runNode(t, ctx, "discovery.mjs", env)
	for k := range want {
		if k == "doubledToken" { // no token on Chrome
			continue
		}
		if ref[k] != out[k] {
			t.Errorf("%s: tabrelay %v, Chrome's own endpoint %v", k, out[k], ref[k])
		}
	}
	if !e.tabOpen(t, tab) {
		t.Error("the user's tab was closed")
	}
}
