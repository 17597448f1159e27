package relay_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// TestSetDownloadBehaviorParams: Browser.setDownloadBehavior refuses what Chrome refuses (a
// missing downloadPath, an unknown behavior or browser context) and a relative downloadPath,
// which the relay could not copy to, with words that say what to change.
func TestSetDownloadBehaviorParams(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	c := e.client("/cdp")
	for _, tc := range []struct {
		params map[string]any
		want   string // "" for success
	}{
		{map[string]any{"behavior": "allow"}, "downloadPath not provided"},
		{map[string]any{"behavior": "allowAndName", "downloadPath": "rel/dir"}, "must be an absolute path"},
		{map[string]any{"behavior": "sometimes", "downloadPath": t.TempDir()}, `unknown value "sometimes"`},
		{map[string]any{"behavior": "deny", "browserContextId": "NOPE"}, "Failed to find browser context for id NOPE"},
		{map[string]any{"behavior": "allowAndName", "downloadPath": t.TempDir(), "eventsEnabled": true}, ""},
		{map[string]any{"behavior": "default"}, ""},
	} {
		err := c.Call(ctx(t), "", "Browser.setDownloadBehavior", tc.params, nil)
		var ce *cdpclient.Error
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v, want success", tc.params, err)
		case tc.want != "" && (!errors.As(err, &ce) || !strings.Contains(ce.Message, tc.want)):
			t.Errorf("%v: %v, want an error with %q", tc.params, err, tc.want)
		}
	}
}

// TestDownloadEventsAndCopy: with allowAndName and events, the hub switches Page on in the
// shared tab (and keeps it on when a client that enabled Page too switches it off), turns the
// tab's Page.download* events into Browser ones on the client's session, and sends "completed"
// only once the file the extension reports is copied into downloadPath under the guid, with
// filePath naming the copy. A client that asked nothing gets nothing.
func TestDownloadEventsAndCopy(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://example.com/")
	c := e.client("/cdp")
	quiet := e.client("/cdp")
	var mu sync.Mutex
	var got, heard []cdpclient.Event
	c.Subscribe(func(ev cdpclient.Event) {
		if strings.HasPrefix(ev.Method, "Browser.download") {
			mu.Lock()
			got = append(got, ev)
			mu.Unlock()
		}
	})
	quiet.Subscribe(func(ev cdpclient.Event) {
		if strings.HasPrefix(ev.Method, "Browser.download") {
			mu.Lock()
			heard = append(heard, ev)
			mu.Unlock()
		}
	})
	dir := t.TempDir()
	if err := c.Call(ctx(t), "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true}, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor("Page on in the shared tab", func() bool { return e.ext.Enabled(tabA, "", "Page") })

	// a client's own Page.enable and Page.disable leave it on
	sid := attach(t, quiet, tabA)
	if err := quiet.Call(ctx(t), sid, "Page.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := quiet.Call(ctx(t), sid, "Page.disable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !e.ext.Enabled(tabA, "", "Page") {
		t.Fatal("a client's Page.disable switched Page off in the tab: downloads would go unseen")
	}

	src := filepath.Join(t.TempDir(), "saved.pdf")
	body := []byte("%PDF-1.4 the invoice")
	if err := os.WriteFile(src, body, 0o600); err != nil {
		t.Fatal(err)
	}
	const guid = "0c5e6d2a-guid"
	begin := map[string]any{"frameId": tabA, "guid": guid, "url": "https://example.com/invoice.pdf", "suggestedFilename": "invoice.pdf"}
	if err := e.ext.Event(tabA, "", "Page.downloadWillBegin", begin); err != nil {
		t.Fatal(err)
	}
	if err := e.ext.Event(tabA, "", "Page.downloadProgress", map[string]any{"guid": guid, "totalBytes": 20, "receivedBytes": 10, "state": "inProgress"}); err != nil {
		t.Fatal(err)
	}
	if err := e.ext.Event(tabA, "", "Page.downloadProgress", map[string]any{"guid": guid, "totalBytes": 20, "receivedBytes": 20, "state": "completed"}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("begin and progress", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
	report, _ := json.Marshal(wire.Download{Type: wire.TypeDownload, TargetID: tabA, GUID: guid, State: wire.DownloadStateComplete, Path: src, TotalBytes: 20, ReceivedBytes: 20})
	if err := e.ext.SendRaw(report); err != nil {
		t.Fatal(err)
	}
	e.waitFor("completed", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 })
	mu.Lock()
	defer mu.Unlock()
	var wb map[string]any
	_ = json.Unmarshal(got[0].Params, &wb)
	if got[0].Method != "Browser.downloadWillBegin" || got[0].SessionID != "" || wb["guid"] != guid || wb["frameId"] != tabA || wb["suggestedFilename"] != "invoice.pdf" {
		t.Errorf("first event %s %s on session %q, want Browser.downloadWillBegin with the tab's fields on the browser session", got[0].Method, got[0].Params, got[0].SessionID)
	}
	var done struct {
		State, FilePath string
		ReceivedBytes   float64
	}
	_ = json.Unmarshal(got[2].Params, &done)
	if got[2].Method != "Browser.downloadProgress" || done.State != "completed" || done.FilePath != filepath.Join(dir, guid) || done.ReceivedBytes != 20 {
		t.Errorf("last event %s %s, want completed with filePath %s", got[2].Method, got[2].Params, filepath.Join(dir, guid))
	}
	if copied, err := os.ReadFile(filepath.Join(dir, guid)); err != nil || !bytes.Equal(copied, body) {
		t.Errorf("downloadPath/<guid> = %q (%v), want the reported file's bytes", copied, err)
	}
	if len(heard) > 0 {
		t.Errorf("a client that set no download behavior got %d download events", len(heard))
	}
	mu.Unlock()

	// the client leaves: nobody wants downloads, the tab's Page goes off again
	c.Close()
	e.waitFor("Page off once no client wants downloads", func() bool { return !e.ext.Enabled(tabA, "", "Page") })
	mu.Lock()
}

// TestDownloadDeny: deny asks the extension to cancel the download at once; a download that
// finished before the cancel took effect is still reported canceled.
func TestDownloadDeny(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://example.com/")
	c := e.client("/cdp")
	states := make(chan string, 4)
	c.Subscribe(func(ev cdpclient.Event) {
		var p struct{ State string }
		if ev.Method == "Browser.downloadProgress" && json.Unmarshal(ev.Params, &p) == nil {
			states <- p.State
		}
	})
	if err := c.Call(ctx(t), "", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true}, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor("Page on", func() bool { return e.ext.Enabled(tabA, "", "Page") })
	if err := e.ext.Event(tabA, "", "Page.downloadWillBegin", map[string]any{"frameId": tabA, "guid": "g-deny", "url": "https://example.com/x", "suggestedFilename": "x"}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("cancelDownload sent", func() bool { return len(e.ext.Cancels()) == 1 && e.ext.Cancels()[0] == "g-deny" })
	if err := e.ext.Event(tabA, "", "Page.downloadProgress", map[string]any{"guid": "g-deny", "totalBytes": 1, "receivedBytes": 1, "state": "completed"}); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-states:
		if s != "canceled" {
			t.Errorf("a denied download ended %q, want canceled", s)
		}
	case <-ctx(t).Done():
		t.Fatal("no progress event for the denied download")
	}
}

// TestUploadFallback: when the extension answers DOM.setFileInputFiles with Chrome's "Not
// allowed", the relay reads the file and sets it through Runtime.callFunctionOn on the input
// resolved in an isolated world of the tab's frame; the client gets Chrome's {} answer. Files
// past MaxUploadBytes get an error naming the limit (relay.ErrUploadTooLarge's words).
func TestUploadFallback(t *testing.T) {
	e := newEnv(t, relay.HubOptions{MaxUploadBytes: 1 << 20})
	e.share(tabA, "https://example.com/")
	var mu sync.Mutex
	var calls []relaytest.Command
	e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
		mu.Lock()
		calls = append(calls, cmd)
		mu.Unlock()
		switch cmd.Method {
		case "DOM.setFileInputFiles":
			return nil, &wire.Error{Code: -32000, Message: "Not allowed"}, true
		case "Page.createIsolatedWorld":
			return map[string]any{"executionContextId": 7}, nil, true
		case "DOM.resolveNode":
			return map[string]any{"object": map[string]any{"type": "object", "objectId": "OBJ-7"}}, nil, true
		case "Runtime.callFunctionOn":
			return map[string]any{"result": map[string]any{"type": "undefined"}}, nil, true
		}
		return nil, nil, false
	})
	c := e.client("/devtools/page/" + tabA)
	file := filepath.Join(t.TempDir(), "note.txt")
	if err := os.WriteFile(file, []byte("hello page"), 0o600); err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	if err := c.Call(ctx(t), "", "DOM.setFileInputFiles", map[string]any{"backendNodeId": 42, "files": []string{file}}, &res); err != nil {
		t.Fatalf("DOM.setFileInputFiles without file access: %v", err)
	}
	if len(res) != 0 {
		t.Errorf("answer %v, want {} as Chrome's", res)
	}
	mu.Lock()
	var methods []string
	var fnArgs []string
	for _, cmd := range calls {
		if cmd.Method == "Runtime.releaseObjectGroup" {
			continue // the cleanup may or may not have arrived yet
		}
		methods = append(methods, cmd.Method)
		if cmd.Method == "DOM.resolveNode" && !strings.Contains(string(cmd.Params), `"executionContextId":7`) {
			t.Errorf("DOM.resolveNode %s: not in the isolated world", cmd.Params)
		}
		if cmd.Method == "Runtime.callFunctionOn" {
			fnArgs = append(fnArgs, string(cmd.Params))
		}
	}
	mu.Unlock()
	if want := "DOM.setFileInputFiles,Page.createIsolatedWorld,DOM.resolveNode,Runtime.callFunctionOn,Runtime.callFunctionOn"; strings.Join(methods, ",") != want {
		t.Errorf("commands %v, want %s", methods, want)
	}
	if len(fnArgs) != 2 || !strings.Contains(fnArgs[0], base64.StdEncoding.EncodeToString([]byte("hello page"))) || !strings.Contains(fnArgs[1], `"name":"note.txt"`) || !strings.Contains(fnArgs[1], `"type":"text/plain"`) || !strings.Contains(fnArgs[1], `"objectId":"OBJ-7"`) {
		t.Errorf("Runtime.callFunctionOn calls %v: want the file's bytes, then its name and type set on the resolved input", fnArgs)
	}

	big := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	err := c.Call(ctx(t), "", "DOM.setFileInputFiles", map[string]any{"backendNodeId": 42, "files": []string{big}}, nil)
	var ce *cdpclient.Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "more than 1 MB") || !strings.Contains(ce.Message, "Allow access to file URLs") {
		t.Errorf("past the limit: %v, want an error naming the limit and the switch", err)
	}
}

// TestDownloadsWithDebuggerOnDemand: with an extension that attaches the debugger on demand, a
// client's download behavior never attaches a tab nobody uses (no command goes to it); Page is
// switched on in a tab a client uses, when a client session attaches a tab, and again after a
// detach and a new attach.
func TestDownloadsWithDebuggerOnDemand(t *testing.T) {
	e := onDemandEnv(t, true, 50*time.Millisecond)
	if err := e.ext.ShareTab(wire.Tab{TabID: 1, TargetID: tabA, URL: "https://a.example/", Title: "A", Detached: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.ext.ShareTab(wire.Tab{TabID: 2, TargetID: tabB, URL: "https://b.example/", Title: "B"}); err != nil {
		t.Fatal(err)
	}
	e.waitFor("tabs shared", func() bool { return e.hasTab(tabA) && e.hasTab(tabB) })
	pageEnables := func(target string) int {
		n := 0
		for _, cmd := range e.ext.Commands() {
			if cmd.TargetID == target && cmd.SessionID == "" && cmd.Method == "Page.enable" {
				n++
			}
		}
		return n
	}

	c := e.client("/cdp")
	// B is a tab a client uses, so that the hub keeps its debugger: shared attached and
	// unused, B would be detached DetachAfter later, which a loaded machine can let pass
	// before the download behavior is set (then no Page.enable ever reaches B).
	attach(t, c, tabB)
	if err := c.Call(ctx(t), "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": t.TempDir(), "eventsEnabled": true}, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor("Page on in the attached tab B", func() bool { return pageEnables(tabB) == 1 })
	// a round trip through the extension: whatever the hub sent before has arrived
	if err := evaluate(e.client("/devtools/page/"+tabB), "", "1"); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range e.ext.Commands() {
		if cmd.TargetID == tabA {
			t.Fatalf("the download behavior sent %s to the detached tab A: it would attach its debugger", cmd.Method)
		}
	}

	sid := attach(t, c, tabA)
	e.waitFor("Page on in tab A once a client attached it", func() bool { return pageEnables(tabA) == 1 })
	if err := c.Call(ctx(t), "", "Target.detachFromTarget", map[string]string{"sessionId": sid}, nil); err != nil {
		t.Fatal(err)
	}
	e.waitFor("tab A detached", func() bool { return slices.Contains(e.ext.Debugger(), "detachTab "+tabA) })
	attach(t, c, tabA)
	e.waitFor("Page on again in tab A after a new attach", func() bool { return pageEnables(tabA) == 2 })
}
