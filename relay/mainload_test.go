package relay_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// TestReattachGivesLostLoad: when a tab comes back re-attached (its debugger session ended for a
// moment, as a frame navigating to an unknown scheme makes it), its clients get the end of a
// main-frame load whose events were lost meanwhile, as Chrome's endpoint would have sent it; and
// nothing when the load ended before, or is still going on. The lifecycle events a client had
// switched on are switched on again in the new debugger session.
func TestReattachGivesLostLoad(t *testing.T) {
	const (
		loader = "LOADER1"
		newURL = "https://a.example/next"
		badURL = "bad://a.example/next"
	)
	started := func(url string) [][2]any {
		return [][2]any{
			{"Page.frameStartedNavigating", map[string]any{"frameId": tabA, "loaderId": loader, "url": url, "navigationType": "differentDocument"}},
			{"Page.frameStartedLoading", map[string]any{"frameId": tabA}},
		}
	}
	committed := append(started(newURL),
		[2]any{"Network.requestWillBeSent", map[string]any{"requestId": loader, "loaderId": loader, "frameId": tabA, "type": "Document", "timestamp": 12.5, "request": map[string]any{"url": newURL}}},
		[2]any{"Page.lifecycleEvent", map[string]any{"frameId": tabA, "loaderId": loader, "name": "init", "timestamp": 12.6}},
		[2]any{"Page.frameNavigated", map[string]any{"frame": map[string]any{"id": tabA, "loaderId": loader, "url": newURL}, "type": "Navigation"}},
	)
	loaded := append(slices.Clone(committed),
		[2]any{"Page.domContentEventFired", map[string]any{"timestamp": 13.0}},
		[2]any{"Page.loadEventFired", map[string]any{"timestamp": 13.1}},
		[2]any{"Page.frameStoppedLoading", map[string]any{"frameId": tabA}},
	)
	for _, tc := range []struct {
		name    string
		before  [][2]any // the events of the tab before its session ended
		url     string   // the tab's address when it is back
		loading bool     // still loading when it is back
		update  bool     // then an update says it no longer loads
		want    []string
	}{
		{
			name: "the page committed and loaded while the debugger was away", before: committed, url: newURL,
			want: []string{"Page.domContentEventFired", "Page.loadEventFired", "Page.frameStoppedLoading " + tabA},
		},
		{
			name: "the page loaded its document but not yet its load event", before: append(slices.Clone(committed), [2]any{"Page.domContentEventFired", map[string]any{"timestamp": 13.0}}), url: newURL,
			want: []string{"Page.loadEventFired", "Page.frameStoppedLoading " + tabA},
		},
		{
			name: "a navigation that never committed (an unknown scheme)", before: started(badURL), url: "https://a.example/",
			want: []string{"Network.requestWillBeSent " + loader + " Document " + badURL, "Network.loadingFailed " + loader + " net::ERR_ABORTED canceled", "Page.frameStoppedLoading " + tabA},
		},
		{name: "the load ended before the session did", before: loaded, url: newURL},
		{name: "the tab is still loading: the rest comes from the tab", before: committed, url: newURL, loading: true},
		{
			name: "the tab said it was loading, and its next update says it no longer is", before: committed, url: newURL, loading: true, update: true,
			want: []string{"Page.domContentEventFired", "Page.loadEventFired", "Page.frameStoppedLoading " + tabA},
		},
		{name: "no navigation", url: "https://a.example/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{})
			e.share(tabA, "https://a.example/")
			c := e.client("/cdp")
			sid := attach(t, c, tabA)
			for _, m := range []string{"Page.enable", "Network.enable"} {
				if err := c.Call(ctx(t), sid, m, nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Call(ctx(t), sid, "Page.setLifecycleEventsEnabled", map[string]any{"enabled": true}, nil); err != nil {
				t.Fatal(err)
			}
			rec := recordLoad(c, sid)
			mark := func(n int) { // a mark after what was sent: what the hub gives for it comes before
				t.Helper()
				if err := e.ext.Event(tabA, "", "Page.frameResized", map[string]any{}); err != nil {
					t.Fatal(err)
				}
				e.waitFor(fmt.Sprintf("mark %d", n), func() bool { return count(rec.list(), "Page.frameResized") == n })
			}
			for _, ev := range tc.before {
				if err := e.ext.Event(tabA, "", ev[0].(string), ev[1]); err != nil {
					t.Fatal(err)
				}
			}
			mark(1)
			before := len(e.ext.Commands())
			if err := e.ext.ShareTab(wire.Tab{TabID: 1, TargetID: tabA, URL: tc.url, Title: "title " + tabA, Origin: wire.OriginUser, Active: true, Reattached: true, Loading: tc.loading}); err != nil {
				t.Fatal(err)
			}
			if tc.update {
				if err := e.ext.UpdateTab(wire.Tab{TabID: 1, TargetID: tabA, URL: tc.url, Title: "title " + tabA, Origin: wire.OriginUser, Active: true}); err != nil {
					t.Fatal(err)
				}
			}
			mark(2)
			got := rec.list()
			got = got[slices.Index(got, "Page.frameResized")+1 : len(got)-1]
			if !slices.Equal(got, tc.want) {
				t.Errorf("events after the re-attach:\n  got  %q\n  want %q", got, tc.want)
			}
			e.waitFor("lifecycle events switched on again", func() bool {
				for _, cmd := range e.sentSince(before, "Page.setLifecycleEventsEnabled") {
					if string(cmd.Params) == `{"enabled":true}` {
						return true
					}
				}
				return false
			})
		})
	}
}

// TestNavigationWithoutInitGetsIt: a client with lifecycle events on gets "init" before each
// main-frame navigation's Page.frameNavigated, as Chrome gives it, also for a navigation whose
// "init" the browser did not send (it started while the debugger attached again, before the
// lifecycle events were on again in the new session); never twice, and none for a client that
// has them off.
func TestNavigationWithoutInitGetsIt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		init      bool // the browser sends "init" itself
		lifecycle bool // the client has lifecycle events on
		want      []string
	}{
		{name: "the browser sent no init", lifecycle: true, want: []string{"Page.lifecycleEvent init L2", "Page.frameNavigated", "Page.lifecycleEvent commit L2"}},
		{name: "the browser sent init", init: true, lifecycle: true, want: []string{"Page.lifecycleEvent init L2", "Page.frameNavigated", "Page.lifecycleEvent commit L2"}},
		{name: "lifecycle events off", want: []string{"Page.frameNavigated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{})
			e.share(tabA, "https://a.example/")
			c := e.client("/cdp")
			sid := attach(t, c, tabA)
			if err := c.Call(ctx(t), sid, "Page.enable", nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := c.Call(ctx(t), sid, "Page.setLifecycleEventsEnabled", map[string]any{"enabled": tc.lifecycle}, nil); err != nil {
				t.Fatal(err)
			}
			rec := recordLoad(c, sid)
			events := [][2]any{{"Page.frameStartedNavigating", map[string]any{"frameId": tabA, "loaderId": "L2", "url": "https://a.example/2", "navigationType": "differentDocument"}}}
			if tc.init {
				events = append(events, [2]any{"Page.lifecycleEvent", map[string]any{"frameId": tabA, "loaderId": "L2", "name": "init", "timestamp": 1.0}})
			}
			events = append(events,
				[2]any{"Page.frameNavigated", map[string]any{"frame": map[string]any{"id": tabA, "loaderId": "L2", "url": "https://a.example/2"}, "type": "Navigation"}},
				[2]any{"Page.lifecycleEvent", map[string]any{"frameId": tabA, "loaderId": "L2", "name": "commit", "timestamp": 1.1}},
				[2]any{"Page.frameResized", map[string]any{}},
			)
			for _, ev := range events {
				if err := e.ext.Event(tabA, "", ev[0].(string), ev[1]); err != nil {
					t.Fatal(err)
				}
			}
			e.waitFor("the mark", func() bool { return slices.Contains(rec.list(), "Page.frameResized") })
			got := rec.list()
			if got = got[:len(got)-1]; !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// loadEvents records, in order, the load events a client receives on one session, with the
// fields that identify them.
type loadEvents struct {
	mu  sync.Mutex
	got []string
}

func recordLoad(c *cdpclient.Client, sid string) *loadEvents {
	r := &loadEvents{}
	c.Subscribe(func(ev cdpclient.Event) {
		if ev.SessionID != sid {
			return
		}
		var p struct {
			FrameID   string `json:"frameId"`
			RequestID string `json:"requestId"`
			Type      string `json:"type"`
			ErrorText string `json:"errorText"`
			Canceled  bool   `json:"canceled"`
			Request   struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		_ = json.Unmarshal(ev.Params, &p)
		var s string
		switch ev.Method {
		case "Page.domContentEventFired", "Page.loadEventFired", "Page.frameResized":
			s = ev.Method
		case "Page.lifecycleEvent":
			var lc struct{ Name, LoaderID string }
			_ = json.Unmarshal(ev.Params, &lc)
			s = fmt.Sprintf("%s %s %s", ev.Method, lc.Name, lc.LoaderID)
		case "Page.frameNavigated":
			s = ev.Method
		case "Page.frameStoppedLoading":
			s = ev.Method + " " + p.FrameID
		case "Network.requestWillBeSent":
			s = fmt.Sprintf("%s %s %s %s", ev.Method, p.RequestID, p.Type, p.Request.URL)
		case "Network.loadingFailed":
			s = fmt.Sprintf("%s %s %s", ev.Method, p.RequestID, p.ErrorText)
			if p.Canceled {
				s += " canceled"
			}
		default:
			return
		}
		r.mu.Lock()
		r.got = append(r.got, s)
		r.mu.Unlock()
	})
	return r
}

// count is how many times s is in list.
func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func (r *loadEvents) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// TestCreateTargetLateTabClosed: a tab the browser opens after the client's Target.createTarget
// timed out (a loaded browser) is closed again: the client was told it did not open, and does
// not know of it.
func TestCreateTargetLateTabClosed(t *testing.T) {
	e := newEnv(t, relay.HubOptions{TabTimeout: 300 * time.Millisecond})
	e.share(tabA, "https://a.example/")
	release := e.ext.HoldCreates()
	defer release()
	c := e.client("/cdp")
	err := c.Call(ctx(t), "", "Target.createTarget", map[string]any{"url": "about:blank"}, nil)
	if err == nil {
		t.Fatal("Target.createTarget answered while the browser had not opened the tab")
	}
	t.Logf("Target.createTarget: %v", err)
	release()
	e.waitFor("the late tab closed again", func() bool {
		closes := e.ext.Closes()
		return len(closes) == 1 && strings.HasPrefix(closes[0], "NEWTAB")
	})
	e.waitFor("the late tab no longer listed", func() bool {
		for _, tb := range e.srv.Hub().Tabs() {
			if strings.HasPrefix(tb.TargetID, "NEWTAB") {
				return false
			}
		}
		return true
	})
	if !e.hasTab(tabA) {
		t.Error("the user's tab went too")
	}
}
