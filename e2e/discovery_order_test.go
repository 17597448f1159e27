package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/testlimit"
)

// TestDiscoveryOrderLikeChrome: a client that starts discovering targets is told of the pages in
// the order Chrome's own endpoint tells it, in the same browser: chromedp's first context of a
// browser attaches to the first page announced, so a different order makes it take a tab that
// another client opened (and closes).
func TestDiscoveryOrderLikeChrome(t *testing.T) {
	e := privateBrowser(t, func(o *browser.Options) { o.DebuggingPort = true })
	if e.b.ControlURL == "" {
		t.Fatal("the browser has no DevTools port of its own")
	}
	e.share(t, e.pageURL("order-first"))
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(60*time.Second))
	defer cancel()
	// order opens two more tabs through endpoint and returns the pages (marker:targetId) a new
	// client is told of when it starts discovering, and those Target.getTargets lists.
	order := func(endpoint, token string, marker string) (announced, listed []string) {
		h := http.Header{}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		opener, err := cdpclient.Dial(ctx, endpoint, h)
		if err != nil {
			t.Fatal(err)
		}
		defer opener.Close()
		for _, n := range []string{"second", "third"} {
			var r struct{ TargetID string }
			if err := opener.Call(ctx, "", "Target.createTarget", map[string]any{"url": e.pageURL(marker + "-" + n)}, &r); err != nil {
				t.Fatalf("%s: Target.createTarget: %v", endpoint, err)
			}
			defer opener.Call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": r.TargetID}, nil) //nolint:errcheck
		}
		c, err := cdpclient.Dial(ctx, endpoint, h)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var mu sync.Mutex
		unsub := c.Subscribe(func(ev cdpclient.Event) {
			if ev.Method != "Target.targetCreated" {
				return
			}
			var p struct {
				TargetInfo struct{ Type, URL, TargetID string }
			}
			if json.Unmarshal(ev.Params, &p) == nil && p.TargetInfo.Type == "page" && strings.Contains(p.TargetInfo.URL, "client=") {
				mu.Lock()
				announced = append(announced, clientMarker(p.TargetInfo.URL)+":"+p.TargetInfo.TargetID)
				mu.Unlock()
			}
		})
		defer unsub()
		if err := c.Call(ctx, "", "Target.setDiscoverTargets", map[string]any{"discover": true}, nil); err != nil {
			t.Fatal(err)
		}
		var r struct {
			TargetInfos []struct{ Type, URL, TargetID string }
		}
		if err := c.Call(ctx, "", "Target.getTargets", nil, &r); err != nil {
			t.Fatal(err)
		}
		for _, ti := range r.TargetInfos {
			if ti.Type == "page" && strings.Contains(ti.URL, "client=") {
				listed = append(listed, clientMarker(ti.URL)+":"+ti.TargetID)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(announced), listed
	}
	ca, cl := order(e.b.ControlURL, "", "chrome")
	ra, rl := order(e.cdpURL(), e.token(), "relay")
	t.Logf("Chrome announces %v, lists %v; tabrelay announces %v, lists %v", ca, cl, ra, rl)
	byID := func(a, b string) int {
		return strings.Compare(a[strings.IndexByte(a, ':'):], b[strings.IndexByte(b, ':'):])
	}
	for _, c := range []struct {
		who  string
		got  []string
		want func([]string) []string
	}{
		{"Chrome announces", ca, func(s []string) []string { return slices.SortedStableFunc(slices.Values(s), byID) }},
		{"tabrelay announces", ra, func(s []string) []string { return slices.SortedStableFunc(slices.Values(s), byID) }},
		{"Chrome lists", cl, func([]string) []string { return []string{"chrome-third", "chrome-second", "order-first"} }},
		{"tabrelay lists", rl, func([]string) []string { return []string{"relay-third", "relay-second", "order-first"} }},
	} {
		got := c.got
		if strings.HasSuffix(c.who, "lists") {
			got = nil
			for _, g := range c.got {
				got = append(got, g[:strings.IndexByte(g, ':')])
			}
		}
		if want := c.want(c.got); len(c.got) != 3 || !slices.Equal(got, want) {
			t.Errorf("%s the pages as %v, want %v (announced by target id, listed newest first)", c.who, got, want)
		}
	}
}

// clientMarker is the marker pageURL put in u.
func clientMarker(u string) string {
	i := strings.Index(u, "client=")
	s := u[i+len("client="):]
	if j := strings.IndexByte(s, '&'); j >= 0 {
		s = s[:j]
	}
	return s
}
