package relay

import (
	"encoding/json"
	"fmt"
)

// Non-flat sessions, as Chrome still serves them (pyppeteer, mafredri/cdp's session package):
// Target.attachToTarget and Target.setAutoAttach without flatten attach a session whose messages
// travel inside the session that attached it: commands as Target.sendMessageToTarget
// {sessionId, message}, answers and events as Target.receivedMessageFromTarget {sessionId,
// message, targetId}. Such a session is a client of its own, as a second connection to the
// target would be in Chrome: its own message ids, its own enabled domains and events, its own
// cleanup when it is detached; what it sends out goes, wrapped, to the session it hangs from.
// Flat and non-flat sessions mix on one connection; a non-flat session can itself attach flat
// or non-flat sessions.

// nonFlat is a client's part in non-flat sessions.
type nonFlat struct {
	// via is set on the client of a non-flat session: where its messages go.
	via *nonFlatLink
	// inner holds the non-flat sessions attached from this client's sessions, by session id.
	inner map[string]*Client
	// autoNonFlat holds this client's sessions whose Target.setAutoAttach asked for non-flat
	// sessions (flatten false or absent).
	autoNonFlat map[*session]bool
}

// setAutoFlat records whether s auto-attaches flat sessions (Target.setAutoAttach's flatten).
func (n *nonFlat) setAutoFlat(s *session, flatten bool) {
	if flatten {
		delete(n.autoNonFlat, s)
		return
	}
	if n.autoNonFlat == nil {
		n.autoNonFlat = map[*session]bool{}
	}
	n.autoNonFlat[s] = true
}

// autoFlat reports whether s auto-attaches flat sessions.
func (n *nonFlat) autoFlat(s *session) bool { return !n.autoNonFlat[s] }

// nonFlatLink ties a non-flat session's client to the session that attached it.
type nonFlatLink struct {
	id       string   // the sessionId the parent knows the session by
	parent   *session // the session its messages travel in
	targetID string   // the attached target, as receivedMessageFromTarget names it
	key      string   // the parent's announced key for it (auto-attach)
}

// deliver wraps a message of the non-flat session into Target.receivedMessageFromTarget on the
// session that attached it. Call with h.mu held.
func (l *nonFlatLink) deliver(msg []byte) {
	params := mustJSON(struct {
		SessionID string `json:"sessionId"`
		Message   string `json:"message"`
		TargetID  string `json:"targetId"`
	}{l.id, string(msg), l.targetID})
	l.parent.emit("Target.receivedMessageFromTarget", params)
}

// attachNonFlat opens a non-flat session on a target for parent and announces it with
// Target.attachedToTarget, as Chrome does for non-flat sessions too. open makes the new
// client's default session (the target's page, tab, child or browser session). key is what
// parent.announced records for auto-attach ("" for an explicit attach). Call with h.mu held.
func (h *Hub) attachNonFlat(parent *session, targetID, key string, info []byte, waiting bool, open func(c *Client) *session) *Client {
	pc := parent.c
	h.nextCID++
	c := &Client{h: h, id: h.nextCID, name: fmt.Sprintf("%s/nonflat#%d", pc.name, h.nextCID), out: newOutbox(h.opts.MaxQueueBytes), sessions: map[string]*session{}}
	link := &nonFlatLink{id: randomID(), parent: parent, targetID: targetID, key: key}
	c.nf.via = link
	c.onKill = func(code int, _ string) {
		if code == closeNormal { // the target is gone, or Browser.close: h.mu is held (see detachDefault)
			h.detachNonFlat(c, true)
		}
	}
	c.def = open(c)
	h.clients[c] = struct{}{}
	if pc.nf.inner == nil {
		pc.nf.inner = map[string]*Client{}
	}
	pc.nf.inner[link.id] = c
	parent.emit("Target.attachedToTarget", mustJSON(map[string]any{"sessionId": link.id, "targetInfo": json.RawMessage(info), "waitingForDebugger": waiting}))
	return c
}

// detachNonFlat ends a non-flat session: its client leaves (undoing what it switched on) and,
// with announce, the session that attached it is told Target.detachedFromTarget. Call with
// h.mu held.
func (h *Hub) detachNonFlat(c *Client, announce bool) {
	l := c.nf.via
	pc := l.parent.c
	if pc.nf.inner[l.id] != c {
		return // detached already
	}
	delete(pc.nf.inner, l.id)
	if l.key != "" {
		delete(l.parent.announced, l.key)
	}
	c.leave()
	if _, ok := pc.sessions[l.parent.id]; announce && ok {
		l.parent.emit("Target.detachedFromTarget", mustJSON(map[string]string{"sessionId": l.id, "targetId": l.targetID}))
	}
}

// endNonFlat ends the non-flat sessions attached from s, which is ending: s is told of each
// (as of a flat child session, before its own end). Call with h.mu held.
func (h *Hub) endNonFlat(s *session) {
	delete(s.c.nf.autoNonFlat, s)
	for _, c := range s.c.nf.inner {
		if c.nf.via.parent == s {
			h.detachNonFlat(c, true)
		}
	}
}

// findNonFlat returns the non-flat session attached from s with this session id or, without
// one, the only one on this target id.
func (s *session) findNonFlat(sessionID, targetID string) *Client {
	if sessionID != "" {
		if c := s.c.nf.inner[sessionID]; c != nil && c.nf.via.parent == s {
			return c
		}
		return nil
	}
	var found *Client
	for _, c := range s.c.nf.inner {
		if c.nf.via.parent == s && targetID != "" && c.nf.via.targetID == targetID {
			if found != nil {
				return nil // ambiguous: Chrome wants the session id then
			}
			found = c
		}
	}
	return found
}

// sendMessageToTarget handles Target.sendMessageToTarget: the message goes to the non-flat
// session as if that session's own connection had sent it, after the command is answered (as
// in Chrome, which answers it once the message is on its way). Call with h.mu held.
func (h *Hub) sendMessageToTarget(r *req) {
	var p struct {
		Message   *string `json:"message"`
		SessionID string  `json:"sessionId"`
		TargetID  string  `json:"targetId"`
	}
	if !r.decode(&p) {
		return
	}
	if p.Message == nil {
		r.fail(codeInvalidParams, "Invalid parameters: Failed to deserialize params.message - BINDINGS: mandatory field missing")
		return
	}
	c := r.s.findNonFlat(p.SessionID, p.TargetID)
	if c == nil {
		r.fail(codeInvalidParams, "No session with given id")
		return
	}
	r.ok(nil)
	msg := []byte(*p.Message)
	e, err := parseEnvelope(msg)
	if err == nil && !json.Valid(msg) {
		err = errInvalidJSON
	}
	c.handle(msg, e, err, 0)
}

// detachNonFlatByID handles Target.detachFromTarget for a non-flat session of r's session; it
// reports whether it found one (and answered). Call with h.mu held.
func (h *Hub) detachNonFlatByID(r *req, sessionID, targetID string) bool {
	c := r.s.findNonFlat(sessionID, targetID)
	if c == nil {
		return false
	}
	h.detachNonFlat(c, true)
	r.ok(nil)
	return true
}

// attachPageNonFlat attaches a non-flat session to t's page for parent.
func (h *Hub) attachPageNonFlat(parent *session, t *target, key string, waiting bool) {
	h.attachNonFlat(parent, t.id, key, h.pageInfo(t), waiting, func(c *Client) *session {
		return c.newSession(kindPage, t, "", nil)
	})
}

// attachChildNonFlat attaches a non-flat session to a child target (an out-of-process iframe,
// a worker) of t for parent.
func (h *Hub) attachChildNonFlat(parent *session, t *target, ch *child, key string, waiting bool) {
	h.attachNonFlat(parent, ch.targetID, key, ch.info, waiting, func(c *Client) *session {
		s := c.newSession(kindChild, t, ch.ext, nil)
		s.childTID = ch.targetID
		return s
	})
}

// attachToTargetNonFlat handles Target.attachToTarget without flatten: the browser, a shared
// tab's tab or page target, or one of its child targets. Call with h.mu held.
func (h *Hub) attachToTargetNonFlat(r *req, targetID string) {
	var c *Client
	switch t, isTab := h.lookup(targetID); {
	case targetID == h.browserID:
		c = h.attachNonFlat(r.s, targetID, "", h.browserInfo(), false, func(c *Client) *session {
			return c.newSession(kindBrowser, nil, "", nil)
		})
	case t != nil && isTab:
		c = h.attachNonFlat(r.s, t.tabID, "", h.tabInfo(t), false, func(c *Client) *session {
			return c.newSession(kindTab, t, "", nil)
		})
	case t != nil:
		c = h.attachNonFlat(r.s, t.id, "", h.pageInfo(t), false, func(c *Client) *session {
			return c.newSession(kindPage, t, "", nil)
		})
	default:
		if t, ch := h.lookupChild(targetID); ch != nil {
			c = h.attachNonFlat(r.s, ch.targetID, "", ch.info, false, func(c *Client) *session {
				s := c.newSession(kindChild, t, ch.ext, nil)
				s.childTID = ch.targetID
				return s
			})
			break
		}
		if h.park(r.c, func() { h.attachToTargetNonFlat(r, targetID) }) {
			return // the tab may be about to come back (see gap.go)
		}
		r.fail(codeInvalidParams, fmt.Sprintf("No target with given id found (%s is not a tab shared with tabrelay)", targetID))
		return
	}
	r.ok(mustJSON(map[string]string{"sessionId": c.nf.via.id}))
}
