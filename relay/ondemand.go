package relay

import (
	"context"
	"time"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// The debugger on demand (wire.Welcome's counterpart: the extension's hello says "onDemand").
//
// Such an extension shares a tab without attaching chrome.debugger, and attaches it when the
// relay asks (wire.TypeAttachTab) or a command for the tab arrives. The hub asks when the first
// client session binds to the tab (a client attaching to it, its page endpoint, the agent) and,
// DetachAfter after the last one ended, tells the extension to detach again
// (wire.TypeDetachTab), so that Chrome's "started debugging this browser" bar shows only while
// something drives a tab. The tab stays listed throughout, under the same target id.
//
// This is the one place that decides when a tab's debugger goes. A session of an ordinary
// client holds the tab for as long as it exists. A session of a releasing client (the
// in-process agent, see Pipe) holds it only while it acts: while a command of it is unanswered,
// while it has a binding the page may call (a recording), and for DetachAfter after its last
// command. Then the hub ends it, tells its client (Target.detachedFromTarget, as for a tab that
// is no longer shared) and detaches the debugger if no other session holds the tab; the client
// drops what it kept of the session and attaches again when it acts again.

// boundSessions counts the client sessions bound to the tab or to any of its child targets.
func (t *target) boundSessions() int {
	n := 0
	for _, m := range t.bound {
		n += len(m)
	}
	return n
}

// onDemand reports whether the live extension attaches the debugger only when asked. Call
// with h.mu held.
func (h *Hub) onDemand() bool { return h.ext != nil && h.ext.onDemand }

// holding counts the sessions bound to t whose client holds a tab while attached (not a
// releasing client's).
func (t *target) holding() int {
	n := 0
	for _, m := range t.bound {
		for s := range m {
			if !s.c.releases {
				n++
			}
		}
	}
	return n
}

// leaseLeft is how long the releasing clients' sessions on t still hold it: DetachAfter while
// one has a command unanswered or a binding, else what is left of DetachAfter since the last
// command or answer; 0 when none holds it any more.
func (h *Hub) leaseLeft(t *target, now time.Time) time.Duration {
	if t.held > 0 {
		return h.opts.DetachAfter
	}
	var left time.Duration
	for _, m := range t.bound {
		for s := range m {
			if !s.c.releases {
				continue
			}
			if len(s.open) > 0 || len(s.bindings) > 0 {
				return h.opts.DetachAfter
			}
			left = max(left, s.lastUse.Add(h.opts.DetachAfter).Sub(now))
		}
	}
	return left
}

// HoldWhile keeps the shared tab targetID's debugger attached, and the releasing clients'
// sessions on it, until ctx ends: an agent's task holds the tabs it works in while it waits for
// its model or for the person (a model may think for minutes, and the refs it was shown must
// still work when it answers). When ctx ends the usual countdown starts. An unknown target is
// not held.
func (h *Hub) HoldWhile(ctx context.Context, targetID string) {
	h.mu.Lock()
	t := h.targets[targetID]
	if t == nil {
		h.mu.Unlock()
		return
	}
	t.held++
	h.mu.Unlock()
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		t.held--
		if t.held == 0 && h.targets[t.id] == t && t.holding() == 0 {
			h.armIdle(t)
		}
	})
}

// releaseSessions ends the releasing clients' sessions on t and tells each client, on the
// session it attached from, that its session is detached. Call with h.mu held.
func (h *Hub) releaseSessions(t *target) {
	var ending []*session
	for _, m := range t.bound {
		for s := range m {
			if s.c.releases && (s.parent == nil || s.parent.t != t) { // children end with their page session
				ending = append(ending, s)
			}
		}
	}
	for _, s := range ending {
		if _, still := s.c.sessions[s.id]; !still {
			continue
		}
		parent, tid := s.parent, t.id
		if s.kind == kindChild {
			tid = s.childTID
		}
		h.endSession(s, false) // the debugger's detaching resets what the session switched on
		if parent != nil {
			if _, ok := s.c.sessions[parent.id]; ok {
				parent.emit("Target.detachedFromTarget", mustJSON(map[string]string{"sessionId": s.id, "targetId": tid}))
			}
		}
	}
}

// sessionBound is called after a client session was bound to t: the first one wakes the
// debugger. A releasing client's session starts the countdown unless another session holds
// the tab. Call with h.mu held.
func (h *Hub) sessionBound(t *target) {
	if t.holding() > 0 {
		h.stopIdle(t)
	} else if t.idle == nil {
		h.armIdle(t)
	}
	if t.boundSessions() != 1 {
		return
	}
	if h.onDemand() && t.live {
		h.tabDebugger(t, wire.TypeAttachTab)
		h.attachedForDownloads(t)
	}
}

// sessionUnbound is called after a client session was unbound from t: the last one holding
// the tab starts the countdown to detaching the debugger. Call with h.mu held.
func (h *Hub) sessionUnbound(t *target) {
	if t.holding() == 0 {
		h.armIdle(t)
	}
}

// armIdle starts (or restarts) the countdown to detaching t's debugger, when the extension
// detaches on request. Call with h.mu held.
func (h *Hub) armIdle(t *target) {
	h.stopIdle(t)
	if !h.onDemand() || h.targets[t.id] != t {
		return
	}
	t.idle = time.AfterFunc(h.opts.DetachAfter, func() { h.idleFired(t) })
}

// stopIdle cancels t's countdown. Call with h.mu held.
func (h *Hub) stopIdle(t *target) {
	if t.idle != nil {
		t.idle.Stop()
		t.idle = nil
	}
}

// idleFired detaches the debugger of a tab no client session used for DetachAfter, ending the
// releasing clients' sessions on it first.
func (h *Hub) idleFired(t *target) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.targets[t.id] != t || !t.live || t.holding() > 0 || !h.onDemand() {
		return
	}
	if left := h.leaseLeft(t, time.Now()); left > 0 {
		h.stopIdle(t)
		t.idle = time.AfterFunc(left, func() { h.idleFired(t) })
		return
	}
	if t.dialogOpen() {
		// only this debugger session can answer the dialog (see dialog.go): keep it
		h.log.Debug().Str("target", t.id).Msg("a JavaScript dialog is open in the tab: keeping its debugger until the dialog is answered")
		h.armIdle(t)
		return
	}
	h.releaseSessions(t)
	h.stopIdle(t) // ending them armed it again
	t.idle = nil
	h.log.Debug().Str("target", t.id).Dur("idle", h.opts.DetachAfter).Msg("no client used the tab for a while: detaching its debugger")
	// The debugger session's state goes with it: its child targets (they come back, attached
	// anew, when it is attached again) and what the hub kept of that session.
	for ext, ch := range t.children {
		if ch.parentExt == "" {
			h.removeChild(t, ext, ch)
		}
	}
	t.runtime = map[string]*runtimeState{}
	t.dialogs = nil
	t.caches = map[string]map[string]*eventCache{}
	t.docs = map[string]*domDoc{}
	t.owners = map[string]map[string]*session{}
	t.baselines = map[string]map[string]*baseline{}
	h.tabDebugger(t, wire.TypeDetachTab)
	h.detachedForDownloads(t)
	h.notifyChanged()
}

// tabDebugger asks the extension to attach (wire.TypeAttachTab) or detach
// (wire.TypeDetachTab) t's debugger; a failure is logged (a command to the tab attaches it
// anyway). Call with h.mu held.
func (h *Hub) tabDebugger(t *target, typ string) {
	p := &pending{target: t, done: func(_, errRaw []byte) {
		if errRaw != nil {
			h.log.Warn().Str("target", t.id).Str("request", typ).RawJSON("error", errRaw).Msg("the extension could not switch the tab's debugger")
		}
	}}
	h.request(p, func(id int64) []byte {
		return mustJSON(wire.TabRequest{Type: typ, ID: id, TargetID: t.id})
	}, h.opts.TabTimeout)
}
