package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// Small differences to Chrome that clients read (issue 21's "minor" list): each scenario runs
// against Chrome's own endpoint (a plain headless Chromium) and against tabrelay (the real
// extension) in the same test, and returns lines that must be equal.

// likeChrome runs scenario on both endpoints, on a browser-level connection and a tab showing
// url, and compares what it reports.
func likeChrome(t *testing.T, url string, scenario func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string) {
	t.Helper()
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	chrome, err := snapshottest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer chrome.Close()
	chromeTab, err := chrome.NewTab(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	waitLoaded(t, ctx, chrome.WSURL, nil, chromeTab, url)
	cc, err := cdpclient.Dial(ctx, chrome.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	t.Log("Chrome's endpoint")
	want := scenario(t, ctx, cc, chromeTab)

	tab := e.share(t, url)
	auth := http.Header{"Authorization": {"Bearer " + e.token()}}
	waitLoaded(t, ctx, e.cdpURL(), auth, tab.TargetID, url)
	tc, err := cdpclient.Dial(ctx, e.cdpURL(), auth)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	t.Log("tabrelay")
	got := scenario(t, ctx, tc, tab.TargetID)

	if !reflect.DeepEqual(got, want) {
		t.Errorf("tabrelay and Chrome differ\n  tabrelay:\n    %s\n  chrome:\n    %s", strings.Join(got, "\n    "), strings.Join(want, "\n    "))
	}
}

// TestSystemInfoLikeChrome: SystemInfo.getInfo on the browser session has Chrome's fields with
// Chrome's JSON types (tabrelay's lists are empty: it cannot see the GPU, and invents none),
// getProcessInfo gives a processInfo list, and a page session refuses both with Chrome's words.
func TestSystemInfoLikeChrome(t *testing.T) {
	e := shared(t)
	likeChrome(t, e.site.URL("/other.html?systeminfo"), func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string {
		var info map[string]json.RawMessage
		if err := c.Call(ctx, "", "SystemInfo.getInfo", nil, &info); err != nil {
			t.Fatalf("SystemInfo.getInfo: %v", err)
		}
		var gpu map[string]json.RawMessage
		if err := json.Unmarshal(info["gpu"], &gpu); err != nil {
			t.Fatalf("SystemInfo.getInfo: gpu %s: %v", info["gpu"], err)
		}
		out := []string{"getInfo: " + jsonShape(info), "getInfo gpu: " + jsonShape(gpu)}
		var procs map[string]json.RawMessage
		if err := c.Call(ctx, "", "SystemInfo.getProcessInfo", nil, &procs); err != nil {
			t.Fatalf("SystemInfo.getProcessInfo: %v", err)
		}
		out = append(out, "getProcessInfo: "+jsonShape(procs))
		var a struct {
			SessionID string `json:"sessionId"`
		}
		if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": pageTarget, "flatten": true}, &a); err != nil {
			t.Fatal(err)
		}
		for _, m := range []string{"SystemInfo.getInfo", "SystemInfo.getProcessInfo"} {
			out = append(out, "page session "+m+": "+cdpOutcome(c.Call(ctx, a.SessionID, m, nil, nil)))
		}
		return out
	})
}

// jsonShape names each field of an object with its JSON type, sorted.
func jsonShape(m map[string]json.RawMessage) string {
	var parts []string
	for k, v := range m {
		typ := "null"
		switch s := strings.TrimSpace(string(v)); {
		case strings.HasPrefix(s, "{"):
			typ = "object"
		case strings.HasPrefix(s, "["):
			typ = "array"
		case strings.HasPrefix(s, `"`):
			typ = "string"
		case s == "true" || s == "false":
			typ = "boolean"
		case s != "null":
			typ = "number"
		}
		parts = append(parts, k+":"+typ)
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// cdpOutcome is "ok" or the CDP error's code and message.
func cdpOutcome(err error) string {
	var ce *cdpclient.Error
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &ce):
		return fmt.Sprintf("error %d %s", ce.Code, ce.Message)
	default:
		return "failed: " + err.Error()
	}
}

// attachEvents records the Target.attachedToTarget events a connection receives, per parent
// session ("" for the root).
type attachEvents struct {
	mu  sync.Mutex
	evs []attachEvent
}

type attachEvent struct {
	parent     string
	SessionID  string `json:"sessionId"`
	TargetInfo struct {
		TargetID string `json:"targetId"`
		Type     string `json:"type"`
		URL      string `json:"url"`
	} `json:"targetInfo"`
	Waiting bool `json:"waitingForDebugger"`
}

func recordAttaches(c *cdpclient.Client) *attachEvents {
	r := &attachEvents{}
	c.Subscribe(func(ev cdpclient.Event) {
		var a attachEvent
		if ev.Method == "Target.attachedToTarget" && json.Unmarshal(ev.Params, &a) == nil {
			a.parent = ev.SessionID
			r.mu.Lock()
			r.evs = append(r.evs, a)
			r.mu.Unlock()
		}
	})
	return r
}

func (r *attachEvents) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.evs)
}

// since returns the waitingForDebugger values announced under parent after the n-th event, by
// target type, e.g. "page:false".
func (r *attachEvents) since(n int, parent string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, a := range r.evs[n:] {
		if a.parent != parent {
			continue
		}
		if a.TargetInfo.Type == "browser_ui" {
			continue // Chrome's own windows (the omnibox popup): tabrelay shares none
		}
		k := fmt.Sprintf("%s:%v", a.TargetInfo.Type, a.Waiting)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// wait returns the first event after the n-th under parent that match accepts.
func (r *attachEvents) wait(t *testing.T, ctx context.Context, n int, parent, what string, match func(attachEvent) bool) attachEvent {
	t.Helper()
	for {
		r.mu.Lock()
		for _, a := range r.evs[n:] {
			if a.parent == parent && match(a) {
				r.mu.Unlock()
				return a
			}
		}
		r.mu.Unlock()
		if ctx.Err() != nil {
			t.Fatalf("never attached: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWaitingForDebuggerLikeChrome: with waitForDebuggerOnStart, targets already there when
// Target.setAutoAttach is sent are announced not waiting and those that appear later (a page
// or tab a client opens, a cross-origin iframe) waiting, as Chrome announces them; the
// Runtime.runIfWaitingForDebugger that follows is answered and the page then works. Once with
// pages at the root (Playwright's way) and once with tab targets (Puppeteer's).
func TestWaitingForDebuggerLikeChrome(t *testing.T) {
	e := shared(t)
	newURL := e.site.URL("/other.html?waiting-for-debugger-new")
	for _, mode := range []struct {
		name   string
		filter any
	}{
		{"pages at the root", nil},
		{"tab targets", []any{map[string]any{"type": "page", "exclude": true}, map[string]any{}}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			likeChrome(t, e.site.URL("/other.html?waiting-for-debugger"), func(t *testing.T, ctx context.Context, c *cdpclient.Client, _ string) []string {
				rec := recordAttaches(c)
				params := map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}
				if mode.filter != nil {
					params["filter"] = mode.filter
				}
				if err := c.Call(ctx, "", "Target.setAutoAttach", params, nil); err != nil {
					t.Fatal(err)
				}
				out := []string{fmt.Sprintf("already there: %v", rec.since(0, ""))}
				n := rec.count()
				var created struct {
					TargetID string `json:"targetId"`
				}
				if err := c.Call(ctx, "", "Target.createTarget", map[string]any{"url": newURL}, &created); err != nil {
					t.Fatal(err)
				}
				defer func() {
					cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = c.Call(cctx, "", "Target.closeTarget", map[string]any{"targetId": created.TargetID}, nil)
				}()
				a := rec.wait(t, ctx, n, "", "the created target", func(a attachEvent) bool {
					return a.TargetInfo.Type == "tab" || a.TargetInfo.TargetID == created.TargetID
				})
				out = append(out, fmt.Sprintf("created: %s:%v", a.TargetInfo.Type, a.Waiting))
				page := a.SessionID
				if a.TargetInfo.Type == "tab" {
					n = rec.count()
					if err := c.Call(ctx, a.SessionID, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}, nil); err != nil {
						t.Fatal(err)
					}
					p := rec.wait(t, ctx, n, a.SessionID, "the page of the created tab", func(a attachEvent) bool { return a.TargetInfo.Type == "page" })
					out = append(out, fmt.Sprintf("its page: %v", rec.since(n, a.SessionID)))
					out = append(out, "tab session runIfWaitingForDebugger: "+cdpOutcome(c.Call(ctx, a.SessionID, "Runtime.runIfWaitingForDebugger", nil, nil)))
					page = p.SessionID
				}
				// as Playwright: auto-attach on the page first, then let it run; it loads, and a
				// cross-origin iframe added then is announced waiting
				n = rec.count()
				if err := c.Call(ctx, page, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}, nil); err != nil {
					t.Fatal(err)
				}
				out = append(out, fmt.Sprintf("under the page: %v", rec.since(n, page)))
				out = append(out, "runIfWaitingForDebugger: "+cdpOutcome(c.Call(ctx, page, "Runtime.runIfWaitingForDebugger", nil, nil)))
				for {
					var r struct {
						Result struct {
							Value bool `json:"value"`
						} `json:"result"`
					}
					if err := c.Call(ctx, page, "Runtime.evaluate", map[string]any{"expression": fmt.Sprintf("location.href === %q && document.readyState === 'complete'", newURL), "returnByValue": true}, &r); err != nil {
						t.Fatal(err)
					}
					if r.Result.Value {
						break
					}
					if ctx.Err() != nil {
						t.Fatal("the created page never loaded")
					}
					time.Sleep(20 * time.Millisecond)
				}
				n = rec.count()
				expr := fmt.Sprintf("(() => { const f = document.createElement('iframe'); f.src = %q; document.body.append(f); return 1 })()", e.site.CrossURL("/frame.html?new"))
				if err := c.Call(ctx, page, "Runtime.evaluate", map[string]any{"expression": expr}, nil); err != nil {
					t.Fatal(err)
				}
				fr := rec.wait(t, ctx, n, page, "the new cross-origin iframe", func(a attachEvent) bool { return a.TargetInfo.Type == "iframe" })
				out = append(out, fmt.Sprintf("new iframe: %s:%v", fr.TargetInfo.Type, fr.Waiting))
				out = append(out, "iframe runIfWaitingForDebugger: "+cdpOutcome(c.Call(ctx, fr.SessionID, "Runtime.runIfWaitingForDebugger", nil, nil)))
				return out
			})
		})
	}
}
