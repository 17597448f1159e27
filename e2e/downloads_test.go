package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// downloadEvents records a connection's Browser.download* events, in order.
type downloadEvents struct {
	mu   sync.Mutex
	evs  []cdpclient.Event
	done chan struct{} // closed at the first progress event in a final state
	once sync.Once
}

func recordDownloads(c *cdpclient.Client) (*downloadEvents, func()) {
	d := &downloadEvents{done: make(chan struct{})}
	unsub := c.Subscribe(func(e cdpclient.Event) {
		if e.Method != "Browser.downloadWillBegin" && e.Method != "Browser.downloadProgress" {
			return
		}
		d.mu.Lock()
		d.evs = append(d.evs, e)
		d.mu.Unlock()
		var p struct {
			State string `json:"state"`
		}
		if json.Unmarshal(e.Params, &p) == nil && (p.State == "completed" || p.State == "canceled") {
			d.once.Do(func() { close(d.done) })
		}
	})
	return d, unsub
}

// TestDownloadEventsLikeChrome: a raw CDP client sets allowAndName with events on the browser
// session and clicks a download link in a tab; Chrome's own endpoint and tabrelay (the real
// extension) send the same Browser.downloadWillBegin (frameId = the page's main frame, guid, url,
// suggestedFilename) and Browser.downloadProgress (the same fields, ending "completed" with the
// whole size), on the same session, and the file is in downloadPath under the guid, byte for byte.
func TestDownloadEventsLikeChrome(t *testing.T) {
	e := shared(t)
	const name, size = "notes.txt", 300
	likeChrome(t, e.site.URL("/downloads.html?raw"), func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string {
		dir := t.TempDir()
		rec, unsub := recordDownloads(c)
		defer unsub()
		if err := c.Call(ctx, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true}, nil); err != nil {
			t.Fatalf("Browser.setDownloadBehavior: %v", err)
		}
		// leave the browser as it was (Chrome's own endpoint keeps it for the browser's lifetime)
		defer func() {
			_ = c.Call(context.Background(), "", "Browser.setDownloadBehavior", map[string]any{"behavior": "default"}, nil)
		}()
		var a struct {
			SessionID string `json:"sessionId"`
		}
		if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": pageTarget, "flatten": true}, &a); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = c.Call(context.Background(), "", "Target.detachFromTarget", map[string]any{"sessionId": a.SessionID}, nil)
		}()
		if err := c.Call(ctx, a.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('small').click()", "userGesture": true}, nil); err != nil {
			t.Fatal(err)
		}
		wait, stop := context.WithTimeout(ctx, 20*time.Second)
		defer stop()
		select {
		case <-rec.done:
		case <-wait.Done():
			rec.mu.Lock()
			t.Fatalf("no final Browser.downloadProgress in 20 s; got %d download events", len(rec.evs))
		}
		rec.mu.Lock()
		evs := append([]cdpclient.Event(nil), rec.evs...)
		rec.mu.Unlock()
		var out []string
		var guid string
		lastState := ""
		for _, ev := range evs {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(ev.Params, &m); err != nil {
				t.Fatal(err)
			}
			var p struct {
				FrameID, GUID, URL, SuggestedFilename, State, FilePath string
				TotalBytes, ReceivedBytes                              float64
			}
			_ = json.Unmarshal(ev.Params, &p)
			line := fmt.Sprintf("%s session=%q fields: %s", ev.Method, ev.SessionID, jsonShape(m))
			switch ev.Method {
			case "Browser.downloadWillBegin":
				guid = p.GUID
				line += fmt.Sprintf(" mainFrame=%v url=%v name=%s", p.FrameID == pageTarget, p.URL == e.site.URL(fmt.Sprintf("/download?name=%s&size=%d", name, size)), p.SuggestedFilename)
			case "Browser.downloadProgress":
				if p.GUID != guid {
					line += " (another guid)"
				}
				if p.State == lastState && p.State == "inProgress" {
					continue // how many in-progress reports Chrome sends depends on timing
				}
				lastState = p.State
				line += fmt.Sprintf(" state=%s total=%v", p.State, p.TotalBytes)
				if p.State == "completed" {
					line += fmt.Sprintf(" received=%v filePath=<downloadPath>/<guid>:%v", p.ReceivedBytes, p.FilePath == filepath.Join(dir, guid))
				}
			}
			out = append(out, line)
		}
		got, err := os.ReadFile(filepath.Join(dir, guid))
		out = append(out, fmt.Sprintf("file %s: read error %v, same bytes %v", "<downloadPath>/<guid>", err != nil, bytes.Equal(got, fixtures.DownloadBytes(name, size))))
		for _, l := range out {
			t.Log(l)
		}
		return out
	})
}

// invoice is the file downloads.html's #invoice link serves.
const invoiceName, invoiceSize = "invoice-2026-10.pdf", 20000

func invoiceSum() string {
	s := sha256.Sum256(fixtures.DownloadBytes(invoiceName, invoiceSize))
	return hex.EncodeToString(s[:])
}

// openDownloadsPage shares a fresh downloads.html tab (Chrome lets a page start one download
// without asking, so each test gets its own) and closes it when the test ends.
func openDownloadsPage(t *testing.T, e *env, marker string) (string, browser.Tab) {
	t.Helper()
	url := e.site.URL("/downloads.html?" + marker)
	tab := e.share(t, url)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.b.CloseTab(ctx, tab)
	})
	return url, tab
}

// TestPlaywrightDownload: Playwright over connectOverCDP, as its docs show:
// page.waitForEvent('download') fires for a click on a link in a shared tab, download.path()
// is a file with the served bytes, under the served name.
func TestPlaywrightDownload(t *testing.T) {
	e := shared(t)
	url, _ := openDownloadsPage(t, e, "playwright")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := e.clientEnv("downloads-playwright")
	env["PAGE_URL"] = url
	out := runNode(t, ctx, "downloads-playwright.mjs", env)
	if out["suggestedFilename"] != invoiceName || out["failure"] != nil || out["sha256"] != invoiceSum() || out["size"] != float64(invoiceSize) {
		t.Errorf("playwright download = %v; want %s, no failure, %d bytes with SHA-256 %s", out, invoiceName, invoiceSize, invoiceSum())
	}
}

// TestPuppeteerDownload: Puppeteer's connect option downloadBehavior {policy: 'allow',
// downloadPath} (its docs' way): the file a click in a shared tab downloads appears in
// downloadPath under its suggested name, with the served bytes.
func TestPuppeteerDownload(t *testing.T) {
	e := shared(t)
	url, _ := openDownloadsPage(t, e, "puppeteer")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := e.clientEnv("downloads-puppeteer")
	env["PAGE_URL"] = url
	env["DOWNLOAD_DIR"] = t.TempDir()
	env["DOWNLOAD_NAME"] = invoiceName
	out := runNode(t, ctx, "downloads-puppeteer.mjs", env)
	if out["sha256"] != invoiceSum() || out["size"] != float64(invoiceSize) {
		t.Errorf("puppeteer download = %v; want %d bytes with SHA-256 %s", out, invoiceSize, invoiceSum())
	}
}

// TestDownloadDenyLikeChrome: with behavior deny and events on, Chrome's own endpoint and
// tabrelay both report the download and then its cancelation; in the user's browser the file is
// not left behind (the extension cancels it, or removes it if it finished first).
func TestDownloadDenyLikeChrome(t *testing.T) {
	e := shared(t)
	likeChrome(t, e.site.URL("/downloads.html?deny"), func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string {
		rec, unsub := recordDownloads(c)
		defer unsub()
		if err := c.Call(ctx, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "deny", "eventsEnabled": true}, nil); err != nil {
			t.Fatalf("Browser.setDownloadBehavior: %v", err)
		}
		defer func() {
			_ = c.Call(context.Background(), "", "Browser.setDownloadBehavior", map[string]any{"behavior": "default"}, nil)
		}()
		var a struct {
			SessionID string `json:"sessionId"`
		}
		if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": pageTarget, "flatten": true}, &a); err != nil {
			t.Fatal(err)
		}
		defer func() {
			_ = c.Call(context.Background(), "", "Target.detachFromTarget", map[string]any{"sessionId": a.SessionID}, nil)
		}()
		if err := c.Call(ctx, a.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('refused').click()", "userGesture": true}, nil); err != nil {
			t.Fatal(err)
		}
		wait, stop := context.WithTimeout(ctx, 20*time.Second)
		defer stop()
		select {
		case <-rec.done:
		case <-wait.Done():
			t.Fatal("no final Browser.downloadProgress in 20 s")
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		var out []string
		for _, ev := range rec.evs {
			var p struct{ State string }
			_ = json.Unmarshal(ev.Params, &p)
			if p.State == "inProgress" {
				continue // whether any comes before the cancel depends on timing
			}
			out = append(out, ev.Method+" "+p.State)
		}
		t.Log(out)
		return out
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	eventually(t, 10*time.Second, "the denied download gone from the user's browser", func() (bool, string) {
		var left []map[string]any
		if err := e.b.ServiceWorkerEval(ctx, `chrome.downloads.search({urlRegex: 'name=refused.bin'}).then(items => items.filter(i => i.state !== 'interrupted' && i.exists))`, &left); err != nil {
			return false, err.Error()
		}
		return len(left) == 0, fmt.Sprint(left)
	})
}

// TestDownloadWithoutClientAsking: when no client set a download behavior, a download in a
// shared tab goes where the browser always puts it (chrome.downloads has it, complete), and a
// connected client gets no download events.
func TestDownloadWithoutClientAsking(t *testing.T) {
	e := shared(t)
	url, tab := openDownloadsPage(t, e, "default")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := cdpclient.Dial(ctx, e.cdpURL(), http.Header{"Authorization": {"Bearer " + e.token()}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	rec, unsub := recordDownloads(c)
	defer unsub()
	var a struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tab.TargetID, "flatten": true}, &a); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, a.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('small').click()", "userGesture": true}, nil); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "the download saved by the browser", func() (bool, string) {
		var items []map[string]any
		if err := e.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.downloads.search({}).then(items => items.filter(i => i.referrer === %q && i.state === 'complete' && i.exists))`, url), &items); err != nil {
			return false, err.Error()
		}
		return len(items) == 1, fmt.Sprint(items)
	})
	// the events would have come before the browser finished (they go out as Chrome reports)
	if err := c.Call(ctx, "", "Target.getTargets", nil, nil); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.evs) > 0 {
		t.Errorf("a client that asked for nothing got download events: %v", rec.evs)
	}
}
