package relay

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// This file keeps each client session's view of a tab as Chrome would give it if the client
// were alone: answers in the order of its commands, the events of the domains it enabled (and
// of the things it switched on with a command), and the replay Chrome does when it enables a
// domain that another client of the same tab had already switched on.

// deferred is an answer the hub made itself on a session, waiting for the session's earlier
// forwarded commands to be answered.
type deferred struct {
	after int64 // the session's last forwarded command when it was made
	send  func()
}

// afterEarlier runs send once every command forwarded on s before now has been answered: at
// once when none is open, else when the last of them is. Call with h.mu held.
func (s *session) afterEarlier(send func()) { s.inOrder(s.seq+1, send) }

// inOrder runs send, the answer to the session's command number n, once the session's
// commands before n are answered and the hub's own answers to them are sent. The extension
// passes Chrome's answers on in Chrome's order; this keeps the answers the hub makes or
// completes itself (replays) from overtaking them. Call with h.mu held.
func (s *session) inOrder(n int64, send func()) {
	d := deferred{after: n - 1, send: send}
	i := len(s.later)
	for i > 0 && s.later[i-1].after > d.after {
		i--
	}
	s.later = slices.Insert(s.later, i, d)
	s.flush()
}

// opened records a command forwarded on s and returns its number on the session.
func (s *session) opened() int64 {
	s.seq++
	s.open[s.seq] = struct{}{}
	return s.seq
}

// answered records that the forwarded command n of s was answered and sends the hub's own
// answers that waited for it. Call with h.mu held, after the command's answer was queued.
func (s *session) answered(n int64) {
	if n == 0 {
		return
	}
	delete(s.open, n)
	s.lastUse = time.Now() // a releasing client's countdown runs from its last answer (ondemand.go)
	s.flush()
}

// flush sends the waiting answers whose earlier commands are all answered.
func (s *session) flush() {
	for len(s.later) > 0 {
		d := s.later[0]
		for o := range s.open {
			if o <= d.after {
				return
			}
		}
		s.later[0] = deferred{}
		s.later = s.later[1:]
		d.send()
	}
}

// eventSwitches maps the commands that switch on events outside a domain's enable to those
// events. The command's "enabled" parameter says on or off; on means on for commands without
// it. Chrome sends these events only to the session that switched them on.
var eventSwitches = map[string]struct {
	events []string
	on     *bool // fixed on/off; nil reads params.enabled
}{
	"Page.setLifecycleEventsEnabled":     {events: []string{"Page.lifecycleEvent"}},
	"Page.setInterceptFileChooserDialog": {events: []string{"Page.fileChooserOpened"}},
	"Input.setInterceptDrags":            {events: []string{"Input.dragIntercepted"}},
	"Page.startScreencast":               {events: []string{"Page.screencastFrame", "Page.screencastVisibilityChanged"}, on: ptr(true)},
	"Page.stopScreencast":                {events: []string{"Page.screencastFrame", "Page.screencastVisibilityChanged"}, on: ptr(false)},
	"HeapProfiler.takeHeapSnapshot":      {events: []string{"HeapProfiler.addHeapSnapshotChunk", "HeapProfiler.reportHeapSnapshotProgress"}, on: ptr(true)},
}

// switchedEvents holds every event of eventSwitches: a session gets them only if it switched
// them on, whatever it enabled.
var switchedEvents = func() map[string]bool {
	m := map[string]bool{}
	for _, sw := range eventSwitches {
		for _, ev := range sw.events {
			m[ev] = true
		}
	}
	return m
}()

func ptr[T any](v T) *T { return &v }

// switchEvents records the events a forwarded command switches on or off for s.
func (s *session) switchEvents(method string, params []byte) {
	sw, ok := eventSwitches[method]
	if !ok {
		return
	}
	on := true
	if sw.on != nil {
		on = *sw.on
	} else {
		var p struct {
			Enabled bool `json:"enabled"`
		}
		_ = json.Unmarshal(params, &p)
		on = p.Enabled
	}
	for _, ev := range sw.events {
		if on {
			s.subs[ev] = true
		} else {
			delete(s.subs, ev)
		}
	}
}

// implicitEnable names the commands that switch their domain on in Chrome as a side effect:
// DOM.getDocument enables the DOM agent ("backward compatibility" in Blink), so its client
// gets DOM events (setChildNodes, childNodeInserted …) from then on.
var implicitEnable = map[string]bool{
	"DOM.getDocument":          true,
	"DOM.getFlattenedDocument": true,
}

// wants reports whether session s, attached to the tab an event comes from, gets the event:
// Chrome sends a domain's events to the sessions that enabled the domain, the events a command
// switched on to the session that sent it, and Inspector events to all.
func (s *session) wants(method, domain string, params []byte) bool {
	switch {
	case domain == "Inspector":
		return true
	case s.replaying[domain]:
		return false // the enable's answer replays them
	case switchedEvents[method]:
		return s.subs[method] && (method != "Page.lifecycleEvent" || s.enabled["Page"])
	case method == "Runtime.bindingCalled":
		// V8 reports a binding's calls to the sessions that added it, enabled or not
		var p struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(params, &p) != nil {
			return false
		}
		for _, b := range s.bindings {
			if b.name == p.Name {
				return true
			}
		}
		return false
	case domain == "Target":
		return s.autoAttach || s.discover || s.c.def.discover
	}
	return s.enabled[domain]
}

// replayable lists, per domain, the events Chrome replays from its own storage when a
// session enables the domain: V8's console message storage for Runtime (after the execution
// contexts), Blink's console storage for Log.
var replayable = map[string]map[string]bool{
	"Runtime": {"Runtime.consoleAPICalled": true, "Runtime.exceptionThrown": true},
	"Log":     {"Log.entryAdded": true},
}

// maxReplay bounds each replay cache, as V8 keeps at most 1000 console messages.
const maxReplay = 1000

// eventCache keeps, for one extension session and domain, the events Chrome would replay to
// a session enabling the domain while another client has it on (Chrome does not replay them
// to the shared debugger session a second time).
type eventCache struct {
	events []cachedEvent
}

type cachedEvent struct {
	method string
	params []byte
}

func (c *eventCache) add(method string, params []byte) {
	if len(c.events) >= maxReplay {
		c.events[0] = cachedEvent{}
		c.events = c.events[1:]
	}
	c.events = append(c.events, cachedEvent{method: method, params: append([]byte(nil), params...)})
}

// cacheFor returns the replay cache of domain in t's extension session ext, making it when
// create is set and the domain replays.
func (t *target) cacheFor(ext, domain string, create bool) *eventCache {
	if replayable[domain] == nil {
		return nil
	}
	m := t.caches[ext]
	if m == nil {
		if !create {
			return nil
		}
		m = map[string]*eventCache{}
		t.caches[ext] = m
	}
	c := m[domain]
	if c == nil && create {
		c = &eventCache{}
		m[domain] = c
	}
	return c
}

// dropCache forgets domain's replay cache in t's extension session ext (its last user left).
func (t *target) dropCache(ext, domain string) {
	if m := t.caches[ext]; m != nil {
		delete(m, domain)
		if len(m) == 0 {
			delete(t.caches, ext)
		}
	}
}

// recordReplayable updates the replay caches with an event from the tab. A main-frame
// navigation clears Chrome's storages, so it clears the caches too. Call with h.mu held.
func (t *target) recordReplayable(ext, method string, params []byte) {
	domain, _, _ := strings.Cut(method, ".")
	switch method {
	case "Runtime.executionContextsCleared":
		for _, c := range t.caches[ext] {
			c.events = nil
		}
		return
	case "Page.frameNavigated":
		var p struct {
			Frame struct {
				ParentID string `json:"parentId"`
			} `json:"frame"`
		}
		if json.Unmarshal(params, &p) == nil && p.Frame.ParentID == "" {
			if c := t.cacheFor(ext, "Log", false); c != nil {
				c.events = nil
			}
		}
		return
	}
	if replayable[domain][method] {
		if c := t.cacheFor(ext, domain, false); c != nil {
			c.add(method, params)
		}
	}
}

// replay sends session s what Chrome sends a session that enables domain: for Runtime the
// live execution contexts, then the stored console messages; for Log the stored entries.
// Call with h.mu held.
func (h *Hub) replay(s *session, domain string) {
	delete(s.replaying, domain)
	if domain == "Runtime" {
		if rs := s.t.runtime[s.ext]; rs != nil {
			h.replayContexts(s, rs)
		}
	}
	if c := s.t.cacheFor(s.ext, domain, false); c != nil {
		for _, ev := range c.events {
			s.emit(ev.method, ev.params)
		}
	}
}
