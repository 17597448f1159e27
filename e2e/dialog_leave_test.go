package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/relay"
)

// TestLeavePromptAnswersFast: a "leave site?" prompt raised while nothing drives the tab
// cannot be closed by a debugger (a fresh session's Page.handleJavaScriptDialog answers "No
// dialog is showing", a reload and Page.stopLoading leave it up). The dialog action then says
// so, exactly, without waiting out the reload: it takes about what the snapshot takes to find
// the page blocked, plus a moment to see that the reload did not close the dialog, where it
// used to wait the whole reload time on top. Both calls go through the same attach-and-probe
// path, so the difference is what the action adds.
func TestLeavePromptAnswersFast(t *testing.T) {
	const detachAfter = 2 * time.Second
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{DetachAfter: detachAfter})
	site := alertSite(t)
	tab := ae.share(t, site.URL+"/alert?after=99999999&leave=1")
	ctx := t.Context()
	c := ae.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	// the handler asks only after the user used the page (sticky activation)
	if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "addEventListener('beforeunload', e => { e.preventDefault(); e.returnValue = '' }); 1", "userGesture": true}, nil); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	eventually(t, detachAfter+10*time.Second, "the tab's debugger is detached", func() (bool, string) {
		att, _ := ae.debuggerAttached(t, ctx, tab.TargetID)
		return !att, fmt.Sprint(att)
	})
	ae.swDo(t, ctx, fmt.Sprintf(`chrome.tabs.update(%d, {url: %q}).then(() => true)`, tab.TabID, site.URL+"/alert?after=99999999&next=1"))

	type body struct {
		Error      string `json:"error"`
		DialogOpen bool   `json:"dialogOpen"`
	}
	r, snapTook := ae.timedCall(t, http.MethodGet, "/api/snapshot?tab="+tab.TargetID, nil)
	var b body
	if r.Status != http.StatusConflict || json.Unmarshal(r.Body, &b) != nil || !b.DialogOpen {
		t.Fatalf("snapshot behind the leave prompt (%v): HTTP %d %s", snapTook, r.Status, r.Body)
	}
	r, actTook := ae.timedCall(t, http.MethodPost, "/api/act?tab="+tab.TargetID, map[string]any{"kind": "dialog", "accept": true})
	b = body{}
	if r.Status != http.StatusConflict || json.Unmarshal(r.Body, &b) != nil || !b.DialogOpen ||
		!strings.Contains(b.Error, `"leave site?" prompt`) || !strings.Contains(b.Error, "answer it in the browser window") {
		t.Fatalf("the dialog action behind the leave prompt (%v): HTTP %d %s", actTook, r.Status, r.Body)
	}
	t.Logf("snapshot %v, dialog action %v: %s", snapTook.Round(time.Millisecond), actTook.Round(time.Millisecond), b.Error)
	if extra := actTook - snapTook; extra >= reloadWaitE2E {
		t.Fatalf("the dialog action took %v more than the snapshot (%v against %v): it waited out the reload", extra.Round(time.Millisecond), actTook, snapTook)
	}
}
