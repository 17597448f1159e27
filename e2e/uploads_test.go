package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
)

// pageFile is one file as upload.html saw it.
type pageFile struct {
	Name string  `json:"name"`
	Size float64 `json:"size"`
	Type string  `json:"type"`
	Sum  float64 `json:"sum"`
}

// uploadFixture writes two files to upload (a text file and a larger binary one) and returns
// their paths and what upload.html must see.
func uploadFixture(t *testing.T) ([]string, []pageFile) {
	t.Helper()
	dir := t.TempDir()
	text := []byte(strings.Repeat("tabrelay upload, line of text\n", 200))
	bin := make([]byte, 300_000)
	for i := range bin {
		bin[i] = byte(i*13) ^ byte(i>>9)
	}
	var paths []string
	var want []pageFile
	for _, f := range []struct {
		name, typ string
		data      []byte
	}{{"notes.txt", "text/plain", text}, {"scan.pdf", "application/pdf", bin}} {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, f.data, 0o600); err != nil {
			t.Fatal(err)
		}
		var sum uint32
		for _, b := range f.data {
			sum = sum*31 + uint32(b)
		}
		paths = append(paths, p)
		want = append(want, pageFile{Name: f.name, Size: float64(len(f.data)), Type: f.typ, Sum: float64(sum)})
	}
	return paths, want
}

// uploadWithClients runs Playwright's setInputFiles and Puppeteer's uploadFile, each on an
// upload.html tab of its own, and checks the page got the files' bytes and saw input then
// change, as when a person chooses files.
func uploadWithClients(t *testing.T, e *env, label string) {
	paths, want := uploadFixture(t)
	for _, client := range []string{"playwright", "puppeteer"} {
		t.Run(client, func(t *testing.T) {
			url := e.site.URL("/upload.html?" + label + "-" + client)
			tab := e.share(t, url)
			defer func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = e.b.CloseTab(ctx, tab)
			}()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			env := e.clientEnv("uploads-" + client)
			env["CLIENT"], env["PAGE_URL"], env["FILES"] = client, url, strings.Join(paths, "|")
			out := runNode(t, ctx, "uploads.mjs", env)
			if out["uploadError"] != nil {
				t.Fatalf("%s: the upload failed: %v", client, out["uploadError"])
			}
			page, _ := out["page"].(map[string]any)
			var got []pageFile
			if ups, _ := page["uploads"].([]any); len(ups) == 1 {
				for _, f := range ups[0].([]any) {
					m := f.(map[string]any)
					got = append(got, pageFile{Name: fmt.Sprint(m["name"]), Size: m["size"].(float64), Type: fmt.Sprint(m["type"]), Sum: m["sum"].(float64)})
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the page got %+v, want %+v", client, got, want)
			}
			var names []string
			for _, ev := range page["events"].([]any) {
				name, _, _ := strings.Cut(fmt.Sprint(ev), ":")
				names = append(names, name)
			}
			if strings.Join(names, ",") != "input,change" {
				t.Errorf("%s: the page saw events %v, want input then change", client, page["events"])
			}
		})
	}
}

// TestUploadWithFileAccess: with the extension's file access on (an unpacked extension's
// default), Chrome sets the files itself; Playwright and Puppeteer uploads reach the page.
func TestUploadWithFileAccess(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var on bool
	if err := e.b.ServiceWorkerEval(ctx, "chrome.extension.isAllowedFileSchemeAccess()", &on); err != nil || !on {
		t.Fatalf("file access of the unpacked extension = %v (%v), want on", on, err)
	}
	options, tooltip := fileAccessWords(t, e)
	if !strings.HasPrefix(options, "File access is on") || strings.Contains(tooltip, "File access") {
		t.Errorf("with file access on, the options page says %q and the tooltip %q; want the options page to say it is on and the tooltip nothing about it", options, tooltip)
	}
	uploadWithClients(t, e, "fileaccess")
	if e.relayLogged("DOM.setFileInputFiles: Chrome says the extension has no file access", nil) {
		t.Error("the relay set the files itself although Chrome could")
	}
}

// TestUploadWithoutFileAccess: with "Allow access to file URLs" off (as for a store install),
// Chrome refuses DOM.setFileInputFiles from the extension ("Not allowed", checked here through
// chrome.debugger itself); through the relay Playwright's setInputFiles and Puppeteer's
// uploadFile still reach the page with the files' bytes, input and change fire, and files past
// the size limit get a clear error.
func TestUploadWithoutFileAccess(t *testing.T) {
	e := privateBrowser(t, func(o *browser.Options) { o.NoFileAccess = true })
	ctx, cancel := context.WithTimeout(gate.With(context.Background(), gate.Request{Who: gate.Caller}), 90*time.Second)
	defer cancel()
	var on bool
	if err := e.b.ServiceWorkerEval(ctx, "chrome.extension.isAllowedFileSchemeAccess()", &on); err != nil || on {
		t.Fatalf("file access = %v (%v), want off", on, err)
	}
	paths, _ := uploadFixture(t)
	options, tooltip := fileAccessWords(t, e)
	if !strings.HasPrefix(options, "File access is off") || !strings.Contains(options, "up to 50 MB") || !strings.Contains(tooltip, "File access is off") {
		t.Errorf("with file access off, the options page says %q and the tooltip %q; want both to say it is off and what that changes", options, tooltip)
	}

	url := e.site.URL("/upload.html?refused")
	tab := e.share(t, url)
	// a client on the tab: the debugger is attached (it is attached on demand)
	c := dialPage(t, ctx, e, tab.TargetID)
	if err := c.Call(ctx, "", "Runtime.evaluate", map[string]any{"expression": "1"}, nil); err != nil {
		t.Fatal(err)
	}
	var chromeSays string
	js := fmt.Sprintf(`(async () => {
  const tgt = {tabId: %d};
  const doc = await chrome.debugger.sendCommand(tgt, 'DOM.getDocument', {});
  const q = await chrome.debugger.sendCommand(tgt, 'DOM.querySelector', {nodeId: doc.root.nodeId, selector: '#doc'});
  try { await chrome.debugger.sendCommand(tgt, 'DOM.setFileInputFiles', {nodeId: q.nodeId, files: [%q]}); return 'set'; } catch (e) { return e.message; }
})()`, tab.TabID, paths[0])
	if err := e.b.ServiceWorkerEval(ctx, js, &chromeSays); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(chromeSays, "Not allowed") {
		t.Fatalf("chrome.debugger DOM.setFileInputFiles without file access: %q, want Chrome's \"Not allowed\"", chromeSays)
	}

	uploadWithClients(t, e, "nofileaccess")
	t.Run("agent", func(t *testing.T) {
		url := e.site.URL("/upload.html?nofileaccess-agent")
		tab := e.share(t, url)
		svc := agentActions(t, ctx, e)
		res, err := svc.Act(ctx, tab.TargetID, actions.Do(actions.Snapshot{}))
		if err != nil {
			t.Fatal(err)
		}
		ref := snapRef(t, res.Snapshot, "button", "Document")
		if _, err := svc.Act(ctx, tab.TargetID, actions.Do(actions.Upload{Ref: ref, Files: paths})); err != nil {
			t.Fatalf("the agent's upload without file access: %v", err)
		}
		var n int
		eventually(t, 10*time.Second, "the page got the agent's files", func() (bool, string) {
			if err := e.b.PageEval(ctx, tab, `window.uploads.length ? window.uploads[0].length : 0`, &n); err != nil {
				return false, err.Error()
			}
			return n == len(paths), fmt.Sprint(n)
		})
	})
	if !e.relayLogged("DOM.setFileInputFiles: Chrome says the extension has no file access", nil) {
		t.Error("the relay never set files itself: the uploads did not go through the fallback")
	}

	// past the limit: a clear error, and the input keeps what it had
	big := filepath.Join(t.TempDir(), "big.bin")
	if err := os.WriteFile(big, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, relay.DefaultMaxUploadBytes+1); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Root struct {
			NodeID int64 `json:"nodeId"`
		} `json:"root"`
	}
	var q struct {
		NodeID int64 `json:"nodeId"`
	}
	if err := c.Call(ctx, "", "DOM.getDocument", nil, &doc); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "", "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": "#doc"}, &q); err != nil {
		t.Fatal(err)
	}
	err := c.Call(ctx, "", "DOM.setFileInputFiles", map[string]any{"nodeId": q.NodeID, "files": []string{big}}, nil)
	var ce *cdpclient.Error
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "more than 50 MB") || !strings.Contains(ce.Message, "Allow access to file URLs") {
		t.Errorf("DOM.setFileInputFiles past the limit: %v, want an error naming the limit and the switch", err)
	}
	// a raw client's upload by node id works too
	if err := c.Call(ctx, "", "DOM.setFileInputFiles", map[string]any{"nodeId": q.NodeID, "files": []string{paths[0]}}, nil); err != nil {
		t.Errorf("DOM.setFileInputFiles by nodeId: %v", err)
	}
	var ev struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
	}
	if err := c.Call(ctx, "", "Runtime.evaluate", map[string]any{"expression": "[...document.getElementById('doc').files].map(f => f.name + ':' + f.size).join(',')", "returnByValue": true}, &ev); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("notes.txt:%d", len(strings.Repeat("tabrelay upload, line of text\n", 200))); ev.Result.Value != want {
		t.Errorf("the input holds %q after a raw client's upload, want %q", ev.Result.Value, want)
	}
}

// dialPage connects a raw CDP client to one shared tab's page endpoint on the relay.
func dialPage(t *testing.T, ctx context.Context, e *env, targetID string) *cdpclient.Client {
	t.Helper()
	c, err := cdpclient.Dial(ctx, "ws://"+e.addr+"/devtools/page/"+targetID, http.Header{"Authorization": {"Bearer " + e.token()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// fileAccessWords reads what the options page says about file access, and the toolbar tooltip
// of a tab that is not shared.
func fileAccessWords(t *testing.T, e *env) (options, tooltip string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tab, err := e.b.NewTab(ctx, "chrome-extension://"+e.b.ExtensionID+"/options.html")
	if err != nil {
		t.Fatal(err)
	}
	defer e.b.CloseTab(ctx, tab) //nolint:errcheck // best effort
	eventually(t, 10*time.Second, "the options page's file access line", func() (bool, string) {
		if err := e.b.PageEval(ctx, tab, `document.getElementById('file-access').textContent`, &options); err != nil {
			return false, err.Error()
		}
		return options != "", options
	})
	if tooltip, err = e.b.Tooltip(ctx, tab); err != nil {
		t.Fatal(err)
	}
	return options, tooltip
}
