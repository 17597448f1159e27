package relay

import (
	"encoding/json"
	"slices"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// A frame that navigates to a URL the extension's debugger may not follow (an unknown scheme
// such as badurl://, in the page or in a frame of it) ends the debugger session for a moment;
// the extension attaches again at once, but the events of that moment are lost. A client that
// waits for the navigation to end (chromedp's RunResponse, a page load wait) would wait forever
// for them. The hub follows the tab's main-frame load in the events that pass, and when the tab
// comes back re-attached and no longer loading, it gives what Chrome's endpoint would have sent:
// the load (Page.domContentEventFired, Page.loadEventFired, Page.frameStoppedLoading), or, for
// a navigation that never committed (the tab still shows the page it had), its document
// request's failure as Chrome reports a canceled navigation (net::ERR_ABORTED).

// mainLoad is what the hub saw of a tab's main-frame load since its last navigation started.
type mainLoad struct {
	loading   bool    // Page.frameStartedLoading seen, Page.frameStoppedLoading not yet
	loaderID  string  // the navigation Page.frameStartedNavigating announced
	url       string  // where it goes
	committed bool    // Page.frameNavigated seen for it
	requested bool    // its document's Network.requestWillBeSent seen
	failed    bool    // its document's Network.loadingFailed seen
	dcl       bool    // Page.domContentEventFired seen since it committed
	loaded    bool    // Page.loadEventFired seen since it committed
	timestamp float64 // the last event timestamp seen (Chrome's monotonic seconds)
	// lifecycle: a page session of the tab had lifecycle events on when the navigation started;
	// inited: its "init" lifecycle event was seen (see missingInit).
	lifecycle, inited bool
	// gap: the debugger was away while it loaded and the tab was still loading when it came
	// back; the end may have been lost all the same (chrome.tabs says so a moment late), so the
	// tab's next update that says it no longer loads gives it.
	gap bool
}

// abortedNavigation is the errorText of a navigation Chrome canceled (an unknown scheme, a
// download, a 204 response): the failure of a navigation that left the tab on its page.
const abortedNavigation = "net::ERR_ABORTED"

// noteLoad follows the main frame's load in an event of the tab's own session. Call with h.mu
// held.
func (t *target) noteLoad(method string, params []byte) {
	switch method {
	case "Page.frameStartedNavigating", "Page.frameStartedLoading", "Page.frameNavigated", "Page.frameStoppedLoading",
		"Page.domContentEventFired", "Page.loadEventFired", "Network.requestWillBeSent", "Network.loadingFailed",
		"Page.lifecycleEvent":
	default:
		return
	}
	var p struct {
		FrameID   string  `json:"frameId"`
		LoaderID  string  `json:"loaderId"`
		RequestID string  `json:"requestId"`
		Name      string  `json:"name"`
		URL       string  `json:"url"`
		Type      string  `json:"type"`
		Timestamp float64 `json:"timestamp"`
		Frame     struct {
			ID       string `json:"id"`
			ParentID string `json:"parentId"`
			LoaderID string `json:"loaderId"`
		} `json:"frame"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	l := &t.load
	if p.Timestamp > 0 {
		l.timestamp = p.Timestamp
	}
	main := p.FrameID == t.id // a tab's main frame has the tab's target id
	switch method {
	case "Page.frameStartedNavigating":
		if main {
			*l = mainLoad{loading: l.loading, loaderID: p.LoaderID, url: p.URL, timestamp: l.timestamp, lifecycle: t.lifecycleOn()}
		}
	case "Page.lifecycleEvent":
		if main && p.Name == "init" && p.LoaderID == l.loaderID {
			l.inited = true
		}
	case "Page.frameStartedLoading":
		if main {
			l.loading = true
		}
	case "Page.frameNavigated":
		if p.Frame.ParentID == "" && p.Frame.ID == t.id {
			l.committed, l.dcl, l.loaded = true, false, false
		}
	case "Page.frameStoppedLoading":
		if main {
			l.loading, l.gap = false, false
		}
	case "Page.domContentEventFired":
		l.dcl = true
	case "Page.loadEventFired":
		l.loaded = true
	case "Network.requestWillBeSent":
		if main && p.Type == "Document" && p.LoaderID == l.loaderID {
			l.requested = true
		}
	case "Network.loadingFailed":
		if p.RequestID == l.loaderID {
			l.failed = true
		}
	}
}

// lifecycleOn reports whether a client's page session of t has lifecycle events on.
func (t *target) lifecycleOn() bool {
	for s := range t.bound[""] {
		if s.subs["Page.lifecycleEvent"] {
			return true
		}
	}
	return false
}

// missingInit returns the "init" lifecycle event to give before an event of the tab's own
// session, or nil. Chrome gives "init" for every main-frame navigation of a session that has
// lifecycle events on, just before Page.frameNavigated. A navigation that starts while the
// debugger attaches again (after a frame of the page went to an unknown scheme) reaches the new
// session before the extension has switched its lifecycle events on again, and Chrome, once they
// are on, replays "commit", "DOMContentLoaded", "load"… but never "init": a client that had them
// on all along (chromedp's RunResponse waits for "init", then for the load) would never see its
// navigation begin.
func (t *target) missingInit(method string, params []byte) []byte {
	if method != "Page.frameNavigated" {
		return nil
	}
	l := &t.load
	if !l.lifecycle || l.inited || l.loaderID == "" {
		return nil
	}
	var p struct {
		Frame struct {
			ID       string `json:"id"`
			ParentID string `json:"parentId"`
			LoaderID string `json:"loaderId"`
		} `json:"frame"`
	}
	if json.Unmarshal(params, &p) != nil || p.Frame.ID != t.id || p.Frame.ParentID != "" || p.Frame.LoaderID != l.loaderID {
		return nil
	}
	return mustJSON(map[string]any{"frameId": t.id, "loaderId": l.loaderID, "name": "init", "timestamp": l.timestamp})
}

// rebuildLoad gives the clients of a re-attached tab the end of a main-frame load whose events
// were lost while the debugger was away, when the tab (as the extension saw it once attached
// again, or in its next update) is no longer loading. Call with h.mu held, after the tab's
// domains were switched on again.
func (h *Hub) rebuildLoad(t *target, tab wire.Tab) {
	l := t.load
	if !l.loading {
		return // nothing was lost
	}
	if tab.Loading {
		t.load.gap = true // the rest is still to come, or its end was lost too: see the next update
		return
	}
	t.load.loading, t.load.gap = false, false
	ts := mustJSON(map[string]any{"timestamp": l.timestamp})
	h.log.Debug().Str("target", t.id).Bool("committed", l.committed).Msg("re-attached tab: giving the end of a load whose events were lost")
	if l.loaderID != "" && !l.committed && !l.failed && tab.URL != l.url {
		// the navigation never committed: the tab still shows its page
		if !l.requested {
			h.route(envelope{targetID: t.id, method: "Network.requestWillBeSent", params: mustJSON(map[string]any{
				"requestId": l.loaderID, "loaderId": l.loaderID, "documentURL": l.url,
				"request": map[string]any{
					"url": l.url, "method": "GET", "headers": map[string]any{},
					"initialPriority": "VeryHigh", "referrerPolicy": "strict-origin-when-cross-origin",
				},
				"timestamp": l.timestamp, "wallTime": 0, "initiator": map[string]any{"type": "other"},
				"redirectHasExtraInfo": false, "type": "Document", "frameId": t.id, "hasUserGesture": false,
			})})
		}
		h.route(envelope{targetID: t.id, method: "Network.loadingFailed", params: mustJSON(map[string]any{
			"requestId": l.loaderID, "timestamp": l.timestamp, "type": "Document",
			"errorText": abortedNavigation, "canceled": true,
		})})
	} else {
		if !l.dcl {
			h.route(envelope{targetID: t.id, method: "Page.domContentEventFired", params: ts})
		}
		if !l.loaded {
			h.route(envelope{targetID: t.id, method: "Page.loadEventFired", params: ts})
		}
	}
	h.route(envelope{targetID: t.id, method: "Page.frameStoppedLoading", params: mustJSON(map[string]any{"frameId": t.id})})
}

// reswitchEvents switches on again, in a re-attached tab, the events its clients' page sessions
// had switched on outside a domain's enable (lifecycle events, say: see eventSwitches), which
// the new debugger session does not have. Call with h.mu held, after the domains' enables.
func (h *Hub) reswitchEvents(t *target) {
	for _, method := range switchMethods {
		sw := eventSwitches[method]
		on := false
		for s := range t.bound[""] {
			for _, ev := range sw.events {
				on = on || s.subs[ev]
			}
		}
		if on {
			h.internal(t, "", method, []byte(`{"enabled":true}`))
		}
	}
}

// switchMethods are the commands of eventSwitches that take an "enabled" parameter, in a fixed
// order.
var switchMethods = func() []string {
	var out []string
	for m, sw := range eventSwitches {
		if sw.on == nil {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}()
