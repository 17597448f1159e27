package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
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
			if strings.Contains(fmt.Sprint(p), "other.html") || strings.Contains(fmt.Sprint(p), "noise.html") {
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
