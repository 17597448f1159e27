package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
)

// checkDrive checks what playwright-drive.mjs reports: it evaluated, filled and clicked.
func checkDrive(t *testing.T, out map[string]any) {
	t.Helper()
	if v, _ := out["evaluated"].(string); !strings.HasPrefix(v, "42 ") {
		t.Errorf("page.evaluate = %v, want 42 and the host name", out["evaluated"])
	}
	if out["echo"] != "filled by playwright" {
		t.Errorf("after page.fill, #echo = %v", out["echo"])
	}
	if v, _ := out["clicked"].(string); !strings.HasPrefix(v, "clicked ") {
		t.Errorf("after page.click, #out = %v", out["clicked"])
	}
}

// driveEnv gives playwright-drive.mjs 45 s: it hung for good before (Playwright never learned
// the main world of a tab another client had Runtime on in).
func driveEnv(e *env, marker string) map[string]string {
	m := e.clientEnv(marker)
	m["CLIENT_TIMEOUT_MS"] = "45000"
	return m
}

// TestPlaywrightAfterAgentSnapshot: Playwright drives a tab on which the in-process agent took
// a snapshot a moment before (what `tabrelay snapshot` and the side panel do). The agent leaves
// Runtime on in the tab; Playwright's Runtime.enable must still be answered after its
// Page.getFrameTree, with the replayed main-world context in between.
func TestPlaywrightAfterAgentSnapshot(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	tab := ae.share(t, ae.pageURL("after-agent"))
	r := ae.call(t, http.MethodGet, "/api/snapshot?tab="+tab.TargetID, nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "Click me") {
		t.Fatalf("GET /api/snapshot: HTTP %d %s", r.Status, r.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	checkDrive(t, runNode(t, ctx, "playwright-drive.mjs", driveEnv(ae.env, "after-agent")))
}

// TestPlaywrightBesideRawRuntimeClient: Playwright drives a tab on which another raw CDP client
// has Runtime enabled and stays connected.
func TestPlaywrightBesideRawRuntimeClient(t *testing.T) {
	e := shared(t)
	tab := e.share(t, e.pageURL("beside-raw"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	raw := e.dialCDP(t, ctx)
	sid := attachPage(t, ctx, raw, tab.TargetID)
	if err := raw.Call(ctx, sid, "Runtime.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	checkDrive(t, runNode(t, ctx, "playwright-drive.mjs", driveEnv(e, "beside-raw")))
	if got := evalString(t, ctx, raw, sid, "document.getElementById('echo').textContent"); got != "filled by playwright" {
		t.Errorf("the raw client, still there, reads #echo = %q", got)
	}
}
