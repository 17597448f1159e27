package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/testlimit"
)

// A page that navigates a frame of it, or itself, to an unknown URL scheme (badurl://, bad://)
// ends the extension's debugger session for a moment; a client that waits for the page's load
// (chromedp's RunResponse) still sees the load or the failure as on Chrome.

// badSchemeSite serves /index (links to /badiframe and to bad://), /reloading (the same with a
// frame that loads again every 100 ms) and /badiframe (a page whose frame has an unknown
// scheme), as chromedp's own RunResponse test does.
func badSchemeSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	index := func(w http.ResponseWriter, reloading string) {
		w.Header().Set("Content-Type", "text/html")
		bad := strings.Replace(srv.URL, "http://", "bad://", 1) + "/index"
		fmt.Fprintf(w, `<html><body><a id="badiframe" href="/badiframe">badiframe</a> <a id="bad" href="%s">bad</a>%s</body></html>`, bad, reloading)
	}
	mux.HandleFunc("/index", func(w http.ResponseWriter, r *http.Request) { index(w, "") })
	// the same with a frame that loads again every 100 ms: the tab is loading most of the time
	mux.HandleFunc("/reloading", func(w http.ResponseWriter, r *http.Request) {
		index(w, `<iframe id="reloadingframe" src="/frame"></iframe>
			<script>setInterval(() => { document.getElementById("reloadingframe").src += ""; }, 100);</script>`)
	})
	mux.HandleFunc("/frame", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<p>frame</p>`)
	})
	mux.HandleFunc("/badiframe", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><iframe src="badurl://localhost/"></iframe></body></html>`)
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// loadWatch follows one page session's events as chromedp's RunResponse does: the main frame's
// "init" lifecycle event (or a lone document request) names the navigation's loader; the
// navigation ends with the main frame's load after that init (Page.loadEventFired or
// Page.frameStoppedLoading), or with its document request failing as canceled.
type loadWatch struct {
	mu       sync.Mutex
	frameID  string
	loaderID string
	early    []loadEvent
	reqID    string
	hasInit  bool
	loadErr  string
	result   string // "" while the navigation goes on
	done     chan struct{}
	seen     []string // every event, to say what came when the navigation did not end
}

// loadEvent is the part of an event loadWatch reads.
type loadEvent struct {
	method    string
	Name      string `json:"name"`
	FrameID   string `json:"frameId"`
	LoaderID  string `json:"loaderId"`
	RequestID string `json:"requestId"`
	Type      string `json:"type"`
	ErrorText string `json:"errorText"`
	Canceled  bool   `json:"canceled"`
	Frame     struct {
		ID       string `json:"id"`
		ParentID string `json:"parentId"`
	} `json:"frame"`
}

func watchLoad(c *cdpclient.Client, sid, frameID string) (*loadWatch, func()) {
	w := &loadWatch{frameID: frameID, done: make(chan struct{})}
	unsub := c.Subscribe(func(e cdpclient.Event) {
		if e.SessionID != sid {
			return
		}
		ev := loadEvent{method: e.Method}
		if json.Unmarshal(e.Params, &ev) != nil {
			return
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.result != "" {
			return
		}
		w.seen = append(w.seen, fmt.Sprintf("%s %s frame=%s%s loader=%s request=%s %s", e.Method, ev.Name, ev.FrameID, ev.Frame.ID, ev.LoaderID, ev.RequestID, ev.ErrorText))
		if w.loaderID != "" {
			w.handle(ev)
			return
		}
		w.early = append(w.early, ev)
		switch ev.method {
		case "Page.frameNavigated":
			if ev.Frame.ParentID == "" {
				w.frameID = ev.Frame.ID
			}
		case "Network.requestWillBeSent":
			if ev.FrameID == w.frameID && ev.LoaderID == ev.RequestID {
				w.loaderID = ev.LoaderID
			}
		case "Page.lifecycleEvent":
			if ev.FrameID == w.frameID && ev.Name == "init" {
				w.loaderID = ev.LoaderID
			}
		}
		if w.loaderID != "" {
			for _, ev := range w.early {
				w.handle(ev)
			}
			w.early = nil
		}
	})
	return w, unsub
}

// handle is RunResponse's handling of an event once the loader is known. Call with w.mu held.
func (w *loadWatch) handle(ev loadEvent) {
	if w.result != "" {
		return
	}
	end := func() {
		w.result = "loaded"
		if w.loadErr != "" {
			w.result = "failed: " + w.loadErr
		}
		close(w.done)
	}
	switch ev.method {
	case "Network.requestWillBeSent":
		if ev.LoaderID == w.loaderID && ev.Type == "Document" {
			w.reqID = ev.RequestID
		}
	case "Network.loadingFailed":
		if ev.RequestID == w.reqID {
			w.loadErr = ev.ErrorText
			if ev.Canceled {
				end()
			}
		}
	case "Page.lifecycleEvent":
		if ev.FrameID == w.frameID && ev.Name == "init" {
			w.hasInit = true
		}
	case "Page.loadEventFired":
		if w.hasInit {
			end()
		}
	case "Page.frameStoppedLoading":
		if w.hasInit && ev.FrameID == w.frameID {
			end()
		}
	}
}

// wait returns how the navigation ended, or "no end in …" when it did not.
func (w *loadWatch) wait(ctx context.Context, d time.Duration) string {
	select {
	case <-w.done:
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.result
	case <-time.After(d):
		return fmt.Sprintf("no end within %v", d)
	case <-ctx.Done():
		return "no end: " + ctx.Err().Error()
	}
}

// TestBadSchemeLoadLikeChrome: a navigation to a page whose frame has an unknown scheme ends
// with the page's load, and a click on a link with an unknown scheme ends with its document
// request canceled (net::ERR_ABORTED), also on a page whose frame keeps loading, through
// tabrelay as on Chrome, each in its time.
func TestBadSchemeLoadLikeChrome(t *testing.T) {
	site := badSchemeSite(t)
	likeChrome(t, site.URL+"/index", func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string {
		sid := attachPage(t, ctx, c, pageTarget)
		for _, m := range []string{"Page.enable", "Network.enable", "Runtime.enable"} {
			if err := c.Call(ctx, sid, m, nil, nil); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
		}
		if err := c.Call(ctx, sid, "Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}, nil); err != nil {
			t.Fatal(err)
		}
		var tree struct {
			FrameTree struct {
				Frame struct {
					ID string `json:"id"`
				} `json:"frame"`
			} `json:"frameTree"`
		}
		if err := c.Call(ctx, sid, "Page.getFrameTree", nil, &tree); err != nil {
			t.Fatal(err)
		}
		frame := tree.FrameTree.Frame.ID
		limit := testlimit.Scale(5 * time.Second)
		var out []string
		step := func(name string, act func() error) {
			w, unsub := watchLoad(c, sid, frame)
			defer unsub()
			if err := act(); err != nil {
				out = append(out, fmt.Sprintf("%s: %s", name, cdpOutcome(err)))
				return
			}
			res := w.wait(ctx, limit)
			if strings.HasPrefix(res, "no end") {
				w.mu.Lock()
				t.Logf("%s: no end; the events that came:\n%s", name, strings.Join(w.seen, "\n"))
				w.mu.Unlock()
			}
			out = append(out, fmt.Sprintf("%s: %s", name, res))
		}
		navigate := func(path string) func() error {
			return func() error {
				return c.Call(ctx, sid, "Page.navigate", map[string]any{"url": site.URL + path}, nil)
			}
		}
		click := func(id string) func() error {
			return func() error {
				return c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": "document.getElementById('" + id + "').click()"}, nil)
			}
		}
		for i := range 2 { // the second round after the first's re-attaches
			step(fmt.Sprintf("%d navigate to a page whose frame has an unknown scheme", i), navigate("/badiframe"))
			step(fmt.Sprintf("%d navigate back", i), navigate("/index"))
			step(fmt.Sprintf("%d click a link to a page whose frame has an unknown scheme", i), click("badiframe"))
			step(fmt.Sprintf("%d navigate back", i), navigate("/index"))
			step(fmt.Sprintf("%d click a link with an unknown scheme", i), click("bad"))
		}
		// the tab is loading (its frame) when the debugger comes back: the end of the main
		// frame's navigation is given all the same
		step("navigate to a page whose frame loads again every 100 ms", navigate("/reloading"))
		step("click a link with an unknown scheme there", click("bad"))
		return out
	})
}
