package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/relay"
)

// A tab with an open JavaScript dialog is never stuck: with the debugger on demand (the
// extension's default), a page calls alert() while nothing acts on it, and the agent's calls
// through the HTTP API answer in seconds, report the dialog and the way out, and the dialog
// action closes it.

// alertSite serves /alert?after=MS: a page that calls alert("from the page") MS milliseconds
// after it first loaded (titled "alerting now" while the alert is up, "after the alert" once it
// returned), and counts its loads in sessionStorage.
func alertSite(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/alert" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `<!doctype html><title>alerting page</title><h1>A page that alerts</h1><button>Go on</button>
<script>
sessionStorage.loads = String(Number(sessionStorage.loads || 0) + 1);
if (sessionStorage.loads === '1') setTimeout(() => { document.title = 'alerting now'; alert('from the page'); document.title = 'after the alert'; }, %s);
</script>`, r.URL.Query().Get("after"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// timedCall is ae.call that also returns how long the answer took.
func (ae *agentEnv) timedCall(t *testing.T, method, path string, body any) (apiResp, time.Duration) {
	t.Helper()
	start := time.Now()
	r := ae.call(t, method, path, body)
	return r, time.Since(start)
}

// answerLimit is how long a call on a blocked tab may take: seconds, never the 30 s timeout.
const answerLimit = 12 * time.Second

// TestDialogOpenedWhileIdle: the agent took a snapshot (its session holds the tab for
// DetachAfter), the page alerts a moment later, and nothing acts on the tab for several
// DetachAfter periods. The tab keeps its debugger meanwhile, so the snapshot still reports the
// alert, and the dialog action accepts it (the page's script goes on after alert()).
func TestDialogOpenedWhileIdle(t *testing.T) {
	const detachAfter = 2 * time.Second
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{DetachAfter: detachAfter})
	site := alertSite(t)
	tab := ae.share(t, site.URL+"/alert?after=1000")
	r := ae.call(t, http.MethodGet, "/api/snapshot?tab="+tab.TargetID, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("first snapshot: HTTP %d %s", r.Status, r.Body)
	}
	eventually(t, 15*time.Second, "the snapshot reports the alert", func() (bool, string) {
		r := ae.call(t, http.MethodGet, "/api/snapshot?format=json&tab="+tab.TargetID, nil)
		return r.Status == http.StatusOK && strings.Contains(string(r.Body), "from the page"), fmt.Sprintf("HTTP %d %.300s", r.Status, r.Body)
	})
	time.Sleep(3 * detachAfter) // nothing acts on the tab: the debugger would be let go by now

	r, took := ae.timedCall(t, http.MethodGet, "/api/snapshot?format=json&tab="+tab.TargetID, nil)
	var snap struct {
		Dialog *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"dialog"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &snap) != nil || snap.Dialog == nil || snap.Dialog.Message != "from the page" || took > answerLimit {
		t.Fatalf("snapshot %v after the alert opened, nothing acting: HTTP %d %.400s", took.Round(time.Millisecond), r.Status, r.Body)
	}
	r, took = ae.timedCall(t, http.MethodPost, "/api/act?tab="+tab.TargetID, map[string]any{"kind": "dialog", "accept": true})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "accepted the alert dialog") || took > answerLimit {
		t.Fatalf("dialog action (%v): HTTP %d %s", took.Round(time.Millisecond), r.Status, r.Body)
	}
	var title string
	eventually(t, 10*time.Second, "the page's script goes on after alert()", func() (bool, string) {
		ae.pageEval(t, tab, "document.title", &title)
		return title == "after the alert", title
	})
	r = ae.call(t, http.MethodGet, "/api/snapshot?tab="+tab.TargetID, nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `button "Go on"`) {
		t.Fatalf("snapshot after the dialog: HTTP %d %s", r.Status, r.Body)
	}
}

// TestDialogOpenedWhileDetached: the page alerts while its debugger is detached (nothing ever
// drove it). Chrome tells no debugger that comes later about that dialog, and the page answers
// nothing until it closes: the snapshot, a navigation and a click answer within seconds with
// 409, "dialogOpen" and the way out; the dialog action closes the dialog (by reloading the
// page), and the tab works again.
func TestDialogOpenedWhileDetached(t *testing.T) {
	const detachAfter = 2 * time.Second
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{DetachAfter: detachAfter})
	site := alertSite(t)
	tab := ae.share(t, site.URL+"/alert?after=300")
	if att, _ := ae.debuggerAttached(t, t.Context(), tab.TargetID); att {
		t.Fatal("the tab's debugger is attached before anything drove it")
	}
	// The title set just before alert() reaches the browser before the dialog does.
	eventually(t, 10*time.Second, "the page calls alert()", func() (bool, string) {
		var title string
		err := ae.b.ServiceWorkerEval(t.Context(), fmt.Sprintf("chrome.tabs.get(%d).then(t => t.title)", tab.TabID), &title)
		return err == nil && title == "alerting now", fmt.Sprint(title, err)
	})

	for _, call := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, "/api/snapshot?tab=" + tab.TargetID, nil},
		{http.MethodPost, "/api/act?tab=" + tab.TargetID, map[string]any{"kind": "navigate", "url": site.URL + "/alert?after=99999"}},
		{http.MethodPost, "/api/act?tab=" + tab.TargetID, map[string]any{"kind": "click", "ref": "e1"}},
	} {
		r, took := ae.timedCall(t, call.method, call.path, call.body)
		var body struct {
			Error      string `json:"error"`
			DialogOpen bool   `json:"dialogOpen"`
		}
		_ = json.Unmarshal(r.Body, &body)
		if r.Status != http.StatusConflict || !body.DialogOpen || !strings.Contains(body.Error, "dialog action") || took > answerLimit {
			t.Fatalf("%s %s on the blocked tab took %v: HTTP %d %s", call.method, call.path, took.Round(time.Millisecond), r.Status, r.Body)
		}
		t.Logf("%s %s: %v, HTTP %d %s", call.method, call.path, took.Round(time.Millisecond), r.Status, body.Error)
	}

	r, took := ae.timedCall(t, http.MethodPost, "/api/act?tab="+tab.TargetID, map[string]any{"kind": "dialog", "accept": false})
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "closed the JavaScript dialog") || took > answerLimit {
		t.Fatalf("dialog action on the blocked tab (%v): HTTP %d %s", took.Round(time.Millisecond), r.Status, r.Body)
	}
	t.Logf("dialog action: %v, %s", took.Round(time.Millisecond), r.Body)
	r = ae.call(t, http.MethodGet, "/api/snapshot?tab="+tab.TargetID, nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `button "Go on"`) {
		t.Fatalf("snapshot after the dialog action: HTTP %d %s", r.Status, r.Body)
	}
	var loads string
	ae.pageEval(t, tab, "sessionStorage.loads", &loads)
	if loads != "2" {
		t.Fatalf("the page loaded %s times, want 2 (once, then the reload that closed the dialog)", loads)
	}
}

// TestPausedDebuggerResumesWhenClientLeaves: a client pauses the page in the debugger and
// leaves without resuming; the page runs again (the hub switches the Debugger domain off when
// its last user leaves, which resumes it), and the agent's snapshot answers at once.
func TestPausedDebuggerResumesWhenClientLeaves(t *testing.T) {
	const detachAfter = 2 * time.Second
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{DetachAfter: detachAfter})
	site := alertSite(t)
	tab := ae.share(t, site.URL+"/alert?after=99999999")
	ctx := t.Context()
	c := ae.dialCDP(t, ctx)
	sid := attachPage(t, ctx, c, tab.TargetID)
	paused := c.Expect(sid, "Debugger.paused", nil)
	if err := c.Call(ctx, sid, "Debugger.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "debugger; window.resumed = true"}); err != nil {
		t.Fatal(err)
	}
	if _, err := paused.Wait(ctx); err != nil {
		t.Fatalf("the page did not pause: %v", err)
	}
	_ = c.Close() // the client leaves the page paused

	var resumed bool
	eventually(t, 10*time.Second, "the page runs again", func() (bool, string) {
		ae.pageEval(t, tab, "window.resumed === true", &resumed)
		return resumed, fmt.Sprint(resumed)
	})
	r, took := ae.timedCall(t, http.MethodGet, "/api/snapshot?tab="+tab.TargetID, nil)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Body), `button "Go on"`) || took > answerLimit {
		t.Fatalf("snapshot after the paused client left (%v): HTTP %d %s", took.Round(time.Millisecond), r.Status, r.Body)
	}
}

// TestLeavePromptOpenedWhileDetached: a page with a beforeunload handler (and the user's
// activation) is navigated away in the browser while its debugger is detached, and Chrome asks
// "leave site?". No debugger can answer that prompt (Chrome's own endpoint cannot either, and a
// reload does not close it): the agent's calls answer within seconds, and the dialog action
// says to answer the prompt in the browser window.
func TestLeavePromptOpenedWhileDetached(t *testing.T) {
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
	next := site.URL + "/alert?after=99999999&next=1"
	ae.swDo(t, ctx, fmt.Sprintf(`chrome.tabs.update(%d, {url: %q}).then(() => true)`, tab.TabID, next))

	for _, call := range []struct {
		method, path string
		body         any
		want         string
	}{
		{http.MethodGet, "/api/snapshot?tab=" + tab.TargetID, nil, "the dialog action closes it"},
		{http.MethodPost, "/api/act?tab=" + tab.TargetID, map[string]any{"kind": "dialog", "accept": true}, "answer it in the browser window"},
	} {
		r, took := ae.timedCall(t, call.method, call.path, call.body)
		var body struct {
			Error      string `json:"error"`
			DialogOpen bool   `json:"dialogOpen"`
		}
		_ = json.Unmarshal(r.Body, &body)
		if r.Status != http.StatusConflict || !body.DialogOpen || !strings.Contains(body.Error, call.want) || took > answerLimit+reloadWaitE2E {
			t.Fatalf("%s %s behind the leave prompt took %v: HTTP %d %s", call.method, call.path, took.Round(time.Millisecond), r.Status, r.Body)
		}
		t.Logf("%s %s: %v, HTTP %d %s", call.method, call.path, took.Round(time.Millisecond), r.Status, body.Error)
	}
}

// reloadWaitE2E is the dialog action's wait for a reload to close a dialog (actions.reloadWait).
const reloadWaitE2E = 5 * time.Second

// TestBusyPageNamedInError: a page whose script never yields is waited for up to the action's
// time limit (it may come back), and the error then says a script keeps it busy.
func TestBusyPageNamedInError(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	site := alertSite(t)
	tab := ae.share(t, site.URL+"/alert?after=99999999&busy=1")
	var ok bool
	ae.pageEval(t, tab, "setTimeout(() => { document.title = 'busy now'; for (;;) {} }, 200), true", &ok)
	eventually(t, 10*time.Second, "the page's script starts its endless loop", func() (bool, string) {
		var title string
		err := ae.b.ServiceWorkerEval(t.Context(), fmt.Sprintf("chrome.tabs.get(%d).then(t => t.title)", tab.TabID), &title)
		return err == nil && title == "busy now", fmt.Sprint(title, err)
	})
	const limit = 8
	r, took := ae.timedCall(t, http.MethodPost, "/api/act?tab="+tab.TargetID, map[string]any{"kind": "snapshot", "timeout": limit})
	var body struct {
		Error      string `json:"error"`
		DialogOpen bool   `json:"dialogOpen"`
	}
	_ = json.Unmarshal(r.Body, &body)
	if r.Status != http.StatusGatewayTimeout || body.DialogOpen || !strings.Contains(body.Error, "a script keeps the page") || took > limit*time.Second+answerLimit {
		t.Fatalf("snapshot of a busy page (%v): HTTP %d %s", took.Round(time.Millisecond), r.Status, r.Body)
	}
	t.Logf("%v: HTTP %d %s", took.Round(time.Millisecond), r.Status, body.Error)
}
