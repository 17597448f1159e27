package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// Behaviours the CDP client suites (chromedp's, chrome-remote-interface's) rely on: each runs
// against Chrome's own endpoint and against tabrelay in the same test (likeChrome).

// TestConsoleHelpersLikeChrome: Runtime.evaluate with includeCommandLineAPI has the console
// helpers ($, $$, $x, …) as on Chrome (chromedp's offscreen-click tests use them); without it
// they are undefined, as on Chrome.
func TestConsoleHelpersLikeChrome(t *testing.T) {
	e := shared(t)
	likeChrome(t, e.site.URL("/other.html?helpers"), func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string {
		sid := attachPage(t, ctx, c, pageTarget)
		var out []string
		for _, cli := range []bool{true, false} {
			for _, expr := range []string{
				"typeof $x", "typeof $", "typeof $$", "typeof keys", "typeof values", "typeof dir", "typeof table",
				"$x('//h1').length", "$x('//h1')[0].textContent", "$x('count(//h1)')", "$$('a').length === document.links.length",
				"$('h1') === document.querySelector('h1')", "keys({a: 1, b: 2}).join()", "var helpersVar = 7; helpersVar",
			} {
				var r struct {
					Result struct {
						Value any `json:"value"`
					} `json:"result"`
					ExceptionDetails *struct {
						Text string `json:"text"`
					} `json:"exceptionDetails"`
				}
				err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "includeCommandLineAPI": cli}, &r)
				got := fmt.Sprint(r.Result.Value)
				if r.ExceptionDetails != nil {
					got = "exception"
				}
				out = append(out, fmt.Sprintf("commandLineAPI=%v %s: %s %s", cli, expr, cdpOutcome(err), got))
			}
		}
		// A name the page defines itself wins over the helper, as in Chrome.
		for _, expr := range []string{"window.$ = () => 'page'; 0", "$('h1')", "typeof $x"} {
			out = append(out, fmt.Sprintf("page defines $: %s: %s", expr, evalOutcomeCLI(ctx, c, sid, expr)))
		}
		return out
	})
}

// evalOutcomeCLI evaluates expr with the console helpers and returns its value or what failed.
func evalOutcomeCLI(ctx context.Context, c *cdpclient.Client, sid, expr string) string {
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "includeCommandLineAPI": true}, &r); err != nil {
		return cdpOutcome(err)
	}
	return fmt.Sprint(r.Result.Value)
}

// countingSite serves a small page and counts the requests for each path.
type countingSite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func startCountingSite(t *testing.T) *countingSite {
	t.Helper()
	s := &countingSite{hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		if r.URL.Path == "/favicon.ico" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "<!doctype html><title>counted</title><h1>%s</h1>", r.URL.Path)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *countingSite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// TestReloadLoadsOnceLikeChrome: Page.reload requests the page once, as on Chrome.
func TestReloadLoadsOnceLikeChrome(t *testing.T) {
	site := startCountingSite(t)
	likeChrome(t, site.URL+"/reload", func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string {
		sid := attachPage(t, ctx, c, pageTarget)
		if err := c.Call(ctx, sid, "Page.enable", nil, nil); err != nil {
			t.Fatal(err)
		}
		before := site.count("/reload")
		loaded := c.Expect(sid, "Page.loadEventFired", nil)
		err := c.Call(ctx, sid, "Page.reload", nil, nil)
		if _, werr := loaded.Wait(ctx); werr != nil {
			t.Fatalf("no load after Page.reload: %v", werr)
		}
		// A second load, if one comes, comes at once: give it the time a load takes here.
		deadline := time.Now().Add(2 * time.Second)
		for time.Now().Before(deadline) && site.count("/reload")-before < 2 {
			time.Sleep(50 * time.Millisecond)
		}
		return []string{fmt.Sprintf("Page.reload: %s, requests %d", cdpOutcome(err), site.count("/reload")-before)}
	})
}

// TestNavigateErrorsLikeChrome: Page.navigate to a URL that cannot load answers a result with
// Chrome's errorText (an unknown scheme, a TLS error, a response that loads nothing), and the
// tab stays usable afterwards.
func TestNavigateErrorsLikeChrome(t *testing.T) {
	e := shared(t)
	tlsSite := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") }))
	t.Cleanup(tlsSite.Close)
	empty := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(empty.Close)
	home := e.site.URL("/other.html?navigate-errors")
	likeChrome(t, home, func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string {
		sid := attachPage(t, ctx, c, pageTarget)
		var out []string
		for _, u := range []string{"tabrelay-unknown-scheme://nowhere/", tlsSite.URL + "/", empty.URL + "/nothing", "http://127.0.0.1:1/refused"} {
			var r struct {
				FrameID   string `json:"frameId"`
				ErrorText string `json:"errorText"`
			}
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			err := c.Call(cctx, sid, "Page.navigate", map[string]any{"url": u}, &r)
			cancel()
			out = append(out, fmt.Sprintf("navigate %s: %s errorText=%q frameId set %v", u, cdpOutcome(err), r.ErrorText, r.FrameID != ""))
			if err != nil && !isCDPError(err) {
				// the session may be gone: attach anew so the next step is comparable
				sid = attachPage(t, ctx, c, pageTarget)
			}
			if u != tlsSite.URL+"/" {
				// nothing was loaded: the page is the one before, and answers at once
				out = append(out, "then location: "+evalOutcome(ctx, c, sid, "location.href"))
			}
			// The way back: a navigation to a page that loads, also from Chrome's error page after
			// the TLS error (Chrome can evaluate in that page; chrome.debugger may not).
			var back struct {
				ErrorText string `json:"errorText"`
			}
			err = c.Call(ctx, sid, "Page.navigate", map[string]any{"url": home}, &back)
			out = append(out, fmt.Sprintf("navigate back: %s errorText=%q", cdpOutcome(err), back.ErrorText))
			waitEval(t, ctx, c, sid, fmt.Sprintf("location.href === %q && document.readyState === 'complete'", home))
			out = append(out, "then evaluate: "+evalOutcome(ctx, c, sid, "1+1"))
		}
		return out
	})
}

func isCDPError(err error) bool {
	var ce *cdpclient.Error
	return errors.As(err, &ce)
}

// evalOutcome evaluates expr and returns its value or what failed.
func evalOutcome(ctx context.Context, c *cdpclient.Client, sid, expr string) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var r struct {
		Result struct {
			Value any `json:"value"`
		} `json:"result"`
	}
	if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &r); err != nil {
		return cdpOutcome(err)
	}
	return fmt.Sprint(r.Result.Value)
}

// waitEval waits until expr evaluates to true in the session (errors count as not yet).
func waitEval(t *testing.T, ctx context.Context, c *cdpclient.Client, sid, expr string) {
	t.Helper()
	for last := ""; last != "true"; last = evalOutcome(ctx, c, sid, expr) {
		if ctx.Err() != nil {
			t.Fatalf("%s never held (last: %s)", expr, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
