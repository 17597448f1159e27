package relay

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// filterEntry is one entry of a CDP TargetFilter.
type filterEntry struct {
	Type    string `json:"type,omitempty"`
	Exclude bool   `json:"exclude,omitempty"`
}

// defaultFilter is what Chrome applies when a client gives none: everything but the browser
// and tab targets.
var defaultFilter = []filterEntry{{Type: "browser", Exclude: true}, {Type: "tab", Exclude: true}, {}}

// matches applies a TargetFilter: the first entry whose type matches decides; no match excludes.
func matches(f []filterEntry, typ string) bool {
	if f == nil {
		f = defaultFilter
	}
	for _, e := range f {
		if e.Type == "" || e.Type == typ {
			return !e.Exclude
		}
	}
	return false
}

// emulate answers the Target and Browser methods chrome.debugger refuses, on any session
// (SystemInfo: see systemInfo).
// Call with h.mu held.
func (h *Hub) emulate(r *req) {
	switch r.method {
	case "Browser.getVersion":
		r.ok(mustJSON(map[string]string{
			"protocolVersion": "1.3", "product": h.product, "revision": "@tabrelay",
			"userAgent": h.userAgent, "jsVersion": "",
		}))
	case "Browser.setDownloadBehavior":
		h.setDownloadBehavior(r)
	case "Browser.cancelDownload":
		h.cancelDownloadCmd(r)
	case "Browser.grantPermissions", "Browser.setPermission", "Browser.resetPermissions":
		h.permissions(r)
	case "Browser.getWindowForTarget":
		h.windowForTarget(r)
	case "Browser.close":
		r.ok(nil)
		r.c.closed = true
		r.c.kill(closeNormal, "Browser.close: tabrelay ends this client's connection and leaves the user's browser open")
	case "Target.setDiscoverTargets":
		h.setDiscoverTargets(r)
	case "Target.getTargets":
		h.getTargets(r)
	case "Target.setAutoAttach":
		h.setAutoAttach(r)
	case "Target.attachToTarget":
		h.attachToTarget(r)
	case "Target.attachToBrowserTarget":
		s := r.c.newSession(kindBrowser, nil, "", r.s)
		r.s.emit("Target.attachedToTarget", mustJSON(map[string]any{"sessionId": s.id, "targetInfo": json.RawMessage(h.browserInfo()), "waitingForDebugger": false}))
		r.ok(mustJSON(map[string]string{"sessionId": s.id}))
	case "Target.detachFromTarget":
		h.detachFromTarget(r)
	case "Target.sendMessageToTarget":
		h.sendMessageToTarget(r)
	case "Target.getTargetInfo":
		h.getTargetInfo(r)
	case "Target.getBrowserContexts":
		// as Chrome: the default context is named apart, browserContextIds lists the others
		r.ok(mustJSON(map[string]any{"browserContextIds": []string{}, "defaultBrowserContextId": h.contextID}))
	case "Target.createTarget":
		h.createTarget(r)
	case "Target.closeTarget", "Target.activateTarget":
		h.tabOp(r)
	default:
		if refuse(r) {
			return
		}
		r.fail(codeMethodNotFound, fmt.Sprintf("'%s' wasn't found (tabrelay emulates the Target and Browser methods that Chrome extensions cannot use; this one is not among them)", r.method))
	}
}

func (h *Hub) setDiscoverTargets(r *req) {
	var p struct {
		Discover bool          `json:"discover"`
		Filter   []filterEntry `json:"filter"`
	}
	if !r.decode(&p) {
		return
	}
	s := r.s
	was := s.discover
	s.discover, s.dFilter = p.Discover, p.Filter
	if p.Discover && !was {
		// Chrome announces the targets it has in the order of their ids (its hosts are kept in a
		// map keyed by id), not newest first as it lists them: chromedp's first context of a
		// browser attaches to the first page announced.
		type known struct {
			id, typ string
			info    []byte
		}
		var all []known
		for _, t := range h.liveTargets() {
			all = append(all, known{t.tabID, "tab", h.tabInfo(t)}, known{t.id, "page", h.pageInfo(t)})
		}
		slices.SortStableFunc(all, func(a, b known) int { return strings.Compare(a.id, b.id) })
		for _, k := range all {
			announceInfo(s, k.typ, k.info)
		}
	}
	r.ok(nil)
}

// announceCreated tells s, which discovers targets, of t's tab and page targets (as its filter
// lets through).
func (h *Hub) announceCreated(s *session, t *target) {
	announceInfo(s, "tab", h.tabInfo(t))
	announceInfo(s, "page", h.pageInfo(t))
}

// announceInfo tells s of a target of type typ described by info, if its filter lets it through.
func announceInfo(s *session, typ string, info []byte) {
	if matches(s.dFilter, typ) {
		s.emit("Target.targetCreated", mustJSON(map[string]any{"targetInfo": json.RawMessage(info)}))
	}
}

// discoverers returns the sessions of c that discover targets whose type is typ.
func (c *Client) discoverers(typ string) []*session {
	var ss []*session
	for _, s := range c.sessions {
		if s.discover && matches(s.dFilter, typ) {
			ss = append(ss, s)
		}
	}
	return ss
}

func (h *Hub) getTargets(r *req) {
	var p struct {
		Filter []filterEntry `json:"filter"`
	}
	if !r.decode(&p) {
		return
	}
	infos := []json.RawMessage{}
	for _, t := range h.liveTargets() {
		if matches(p.Filter, "tab") {
			infos = append(infos, h.tabInfo(t))
		}
		if matches(p.Filter, "page") {
			infos = append(infos, h.pageInfo(t))
		}
		for _, ch := range t.children { // out-of-process iframes and workers, as Chrome lists them
			if matches(p.Filter, ch.typ) {
				infos = append(infos, ch.info)
			}
		}
	}
	if matches(p.Filter, "browser") {
		infos = append(infos, h.browserInfo())
	}
	r.ok(mustJSON(map[string]any{"targetInfos": infos}))
}

func (h *Hub) setAutoAttach(r *req) {
	var p struct {
		AutoAttach  bool          `json:"autoAttach"`
		WaitOnStart bool          `json:"waitForDebuggerOnStart"`
		Flatten     bool          `json:"flatten"`
		Filter      []filterEntry `json:"filter"`
	}
	if !r.decode(&p) {
		return
	}
	s := r.s
	if p.AutoAttach && !p.Flatten && s.kind == kindBrowser {
		r.fail(codeInvalidParams, "Only flatten protocol is supported with browser level auto-attach")
		return
	}
	s.autoAttach, s.aFilter, s.waitOnStart = p.AutoAttach, p.Filter, p.WaitOnStart
	r.c.nf.setAutoFlat(s, p.Flatten)
	if p.AutoAttach {
		// the targets there already are running: Chrome announces them not waiting
		switch s.kind {
		case kindBrowser:
			for _, t := range h.liveTargets() {
				h.autoAttachTarget(s, t, false)
			}
		case kindTab:
			if matches(p.Filter, "page") && !s.announced[s.t.id] {
				s.announced[s.t.id] = true
				if !p.Flatten {
					h.attachPageNonFlat(s, s.t, s.t.id, false)
				} else {
					h.attachPage(r.c, s.t, s, false)
				}
			}
		case kindPage, kindChild:
			for _, ch := range s.t.children {
				if ch.parentExt == s.ext {
					h.autoAttachChild(s, ch, false)
				}
			}
		}
	}
	r.ok(nil)
}

// autoAttachTarget announces a shared tab to a browser session with auto-attach on; isNew
// says it appeared after the session's setAutoAttach (see session.waitOnStart).
func (h *Hub) autoAttachTarget(s *session, t *target, isNew bool) {
	if !s.autoAttach || s.announced[t.id] {
		return
	}
	switch {
	case matches(s.aFilter, "page"):
		s.announced[t.id] = true
		h.attachPage(s.c, t, s, isNew && s.waitOnStart)
	case matches(s.aFilter, "tab"):
		s.announced[t.id] = true
		h.attachTab(s.c, t, s, isNew && s.waitOnStart)
	}
}

// autoAttachChild announces a child target (an out-of-process iframe or a worker) to a
// session with auto-attach on; isNew as for autoAttachTarget.
func (h *Hub) autoAttachChild(s *session, ch *child, isNew bool) {
	if !s.autoAttach || s.announced[ch.ext] || !matches(s.aFilter, ch.typ) {
		return
	}
	s.announced[ch.ext] = true
	if !s.c.nf.autoFlat(s) {
		h.attachChildNonFlat(s, s.t, ch, ch.ext, isNew && s.waitOnStart)
		return
	}
	cs := s.c.newSession(kindChild, s.t, ch.ext, s)
	cs.childTID = ch.targetID
	s.children[cs.id] = cs
	s.emit("Target.attachedToTarget", mustJSON(map[string]any{"sessionId": cs.id, "targetInfo": ch.info, "waitingForDebugger": isNew && s.waitOnStart}))
}

// attachPage opens a session on t's page for parent and announces it; waiting is the
// announcement's waitingForDebugger.
func (h *Hub) attachPage(c *Client, t *target, parent *session, waiting bool) *session {
	s := c.newSession(kindPage, t, "", parent)
	parent.emit("Target.attachedToTarget", mustJSON(map[string]any{"sessionId": s.id, "targetInfo": json.RawMessage(h.pageInfo(t)), "waitingForDebugger": waiting}))
	return s
}

// attachTab opens a session on t's tab target for parent and announces it, as attachPage.
func (h *Hub) attachTab(c *Client, t *target, parent *session, waiting bool) *session {
	s := c.newSession(kindTab, t, "", parent)
	parent.emit("Target.attachedToTarget", mustJSON(map[string]any{"sessionId": s.id, "targetInfo": json.RawMessage(h.tabInfo(t)), "waitingForDebugger": waiting}))
	return s
}

// lookup finds a shared tab by its page or tab target id.
func (h *Hub) lookup(id string) (t *target, isTab bool) {
	if t := h.targets[id]; t != nil && t.live {
		return t, false
	}
	if t := h.tabIDs[id]; t != nil && t.live {
		return t, true
	}
	return nil, false
}

// lookupChild finds a child target (an out-of-process iframe or a worker) of a shared tab.
func (h *Hub) lookupChild(id string) (*target, *child) {
	for _, t := range h.targets {
		if !t.live {
			continue
		}
		for _, ch := range t.children {
			if ch.targetID == id {
				return t, ch
			}
		}
	}
	return nil, nil
}

func (h *Hub) attachToTarget(r *req) {
	var p struct {
		TargetID string `json:"targetId"`
		Flatten  bool   `json:"flatten"`
	}
	if !r.decode(&p) {
		return
	}
	if !p.Flatten {
		h.attachToTargetNonFlat(r, p.TargetID)
		return
	}
	if p.TargetID == h.browserID {
		s := r.c.newSession(kindBrowser, nil, "", r.s)
		r.s.emit("Target.attachedToTarget", mustJSON(map[string]any{"sessionId": s.id, "targetInfo": json.RawMessage(h.browserInfo()), "waitingForDebugger": false}))
		r.ok(mustJSON(map[string]string{"sessionId": s.id}))
		return
	}
	t, isTab := h.lookup(p.TargetID)
	if t == nil {
		if t, ch := h.lookupChild(p.TargetID); ch != nil {
			s := r.c.newSession(kindChild, t, ch.ext, r.s)
			s.childTID = ch.targetID
			r.s.children[s.id] = s
			r.s.emit("Target.attachedToTarget", mustJSON(map[string]any{"sessionId": s.id, "targetInfo": ch.info, "waitingForDebugger": false}))
			r.ok(mustJSON(map[string]string{"sessionId": s.id}))
			return
		}
		if h.park(r.c, func() { h.attachToTarget(r) }) {
			return // the tab may be about to come back (see gap.go)
		}
		r.fail(codeInvalidParams, fmt.Sprintf("No target with given id found (%s is not a tab shared with tabrelay)", p.TargetID))
		return
	}
	var s *session
	if isTab {
		s = h.attachTab(r.c, t, r.s, false)
	} else {
		s = h.attachPage(r.c, t, r.s, false)
	}
	r.ok(mustJSON(map[string]string{"sessionId": s.id}))
}

func (h *Hub) detachFromTarget(r *req) {
	var p struct {
		SessionID string `json:"sessionId"`
		TargetID  string `json:"targetId"`
	}
	if !r.decode(&p) {
		return
	}
	if h.detachNonFlatByID(r, p.SessionID, p.TargetID) {
		return
	}
	var s *session
	if p.SessionID != "" {
		s = r.c.sessions[p.SessionID]
	} else if p.TargetID != "" {
		for _, cand := range r.c.sessions {
			if cand.t != nil && (cand.t.id == p.TargetID || cand.t.tabID == p.TargetID) && cand.kind != kindChild {
				s = cand
				break
			}
		}
	}
	if s == nil || s == r.c.def {
		r.ok(nil) // unknown sessions: no-op, as clients expect
		return
	}
	parent := s.parent
	tid, key := "", s.ext
	if s.t != nil && s.kind != kindChild {
		key = s.t.id
	}
	if s.t != nil {
		tid = s.t.id
		if s.kind == kindTab {
			tid = s.t.tabID
		}
		if s.kind == kindChild {
			tid = s.childTID
		}
	}
	h.endSession(s, true)
	if parent != nil {
		delete(parent.announced, key)
		parent.emit("Target.detachedFromTarget", mustJSON(map[string]string{"sessionId": s.id, "targetId": tid}))
	}
	r.ok(nil)
}

func (h *Hub) getTargetInfo(r *req) {
	var p struct {
		TargetID string `json:"targetId"`
	}
	if !r.decode(&p) {
		return
	}
	var info []byte
	switch {
	case p.TargetID == "" && r.s.kind == kindBrowser, p.TargetID == h.browserID:
		info = h.browserInfo()
	case p.TargetID == "" && r.s.kind == kindTab:
		info = h.tabInfo(r.s.t)
	case p.TargetID == "" && r.s.kind == kindPage:
		info = h.pageInfo(r.s.t)
	case p.TargetID == "" && r.s.kind == kindChild:
		if ch := r.s.t.children[r.s.ext]; ch != nil {
			info = ch.info
		}
	default:
		if t, isTab := h.lookup(p.TargetID); t != nil {
			if isTab {
				info = h.tabInfo(t)
			} else {
				info = h.pageInfo(t)
			}
		} else if _, ch := h.lookupChild(p.TargetID); ch != nil {
			info = ch.info
		}
	}
	if info == nil {
		r.fail(codeInvalidParams, "No target with given id found")
		return
	}
	r.ok(mustJSON(map[string]any{"targetInfo": json.RawMessage(info)}))
}

func (h *Hub) createTarget(r *req) {
	var p struct {
		URL        *string `json:"url"`
		Background bool    `json:"background"`
		NewWindow  bool    `json:"newWindow"`
	}
	if !r.decode(&p) {
		return
	}
	if p.URL == nil { // mandatory, as in Chrome
		r.fail(codeInvalidParams, "Invalid parameters: Failed to deserialize params.url - BINDINGS: mandatory field missing")
		return
	}
	u := *p.URL
	if u == "" {
		u = "about:blank"
	}
	c, id, sid := r.c, r.id, r.sid
	c.inflight++
	pd := &pending{method: "Target.createTarget", done: func(result, errRaw []byte) {
		c.inflight--
		if errRaw != nil {
			c.send(rawErrorMsg(id, sid, errRaw))
			return
		}
		var res struct {
			TargetID string `json:"targetId"`
		}
		_ = json.Unmarshal(result, &res)
		c.send(resultMsg(id, sid, mustJSON(map[string]string{"targetId": res.TargetID})))
	}}
	pd.late = func(result []byte) {
		// the client was told the tab did not open: a tab it does not know of must not stay
		var res struct {
			TargetID string `json:"targetId"`
		}
		_ = json.Unmarshal(result, &res)
		if t := h.targets[res.TargetID]; t != nil {
			h.log.Info().Str("target", t.id).Msg("closing a tab the browser opened after its Target.createTarget timed out")
			h.tabRequest(nil, wire.TypeCloseTab, t, func([]byte) {}, func() {})
		}
	}
	ok := h.request(pd, func(rid int64) []byte {
		return mustJSON(wire.TabRequest{Type: wire.TypeCreateTab, ID: rid, URL: u, Background: p.Background, NewWindow: p.NewWindow})
	}, h.opts.TabTimeout)
	if !ok {
		c.inflight--
		r.fail(codeServerError, "tabrelay: cannot open a tab: the browser extension is not connected")
	}
}

// tabOp handles Target.closeTarget and Target.activateTarget through the extension.
func (h *Hub) tabOp(r *req) {
	var p struct {
		TargetID string `json:"targetId"`
	}
	if !r.decode(&p) {
		return
	}
	t, _ := h.lookup(p.TargetID)
	if t == nil {
		r.fail(codeInvalidParams, fmt.Sprintf("No target with given id found (%s is not a tab shared with tabrelay)", p.TargetID))
		return
	}
	typ, result := wire.TypeActivateTab, []byte(`{}`)
	if r.method == "Target.closeTarget" {
		if msg := h.closeRefusal(t); msg != "" {
			r.fail(codeServerError, msg)
			return
		}
		if !t.live || h.ext == nil {
			r.fail(codeServerError, fmt.Sprintf("tabrelay: tab %s is not reachable right now: the browser extension is not connected (it reconnects by itself; retry in a moment)", t.id))
			return
		}
		h.closeForClient(r.c, r.s, t, func() { r.ok([]byte(`{"success":true}`)) })
		return
	}
	h.tabRequest(r.c, typ, t, func(errRaw []byte) {
		if errRaw != nil {
			r.c.send(rawErrorMsg(r.id, r.sid, errRaw))
			return
		}
		r.ok(result)
	}, func() { r.fail(codeServerError, "tabrelay: the browser extension is not connected") })
}

// closeForClient closes t for a client's Target.closeTarget or Page.close, answered by answer
// (on s, after the session's earlier commands, when s is set). Chrome answers at once, then
// detaches the tab's sessions and reports it destroyed, and from then on no longer lists it. The
// extension takes a moment longer than Chrome to close a tab (on a loaded browser, seconds), and
// clients poll the list for it to go (chromedp for half a second, Stagehand for two, then each
// reads its pages from the events): so the tab is gone for every client once the answer is sent,
// while the extension closes it. Call with h.mu held.
func (h *Hub) closeForClient(c *Client, s *session, t *target, answer func()) {
	h.tabRequest(c, wire.TypeCloseTab, t, func(errRaw []byte) {
		if errRaw != nil {
			h.log.Warn().Str("target", t.id).RawJSON("error", errRaw).Msg("a client's close: the extension could not close the tab")
		}
	}, func() {})
	gone := func() {
		answer()
		h.removeTarget(t, wire.ReasonClosed)
	}
	if s != nil {
		s.afterEarlier(gone)
	} else {
		gone()
	}
}

// closeRefusal explains why t may not be closed by a client, or returns "".
func (h *Hub) closeRefusal(t *target) string {
	if t.tab.Origin == wire.OriginUser && !h.opts.AllowCloseUserTabs {
		return fmt.Sprintf("tabrelay: tab %s (%s) is the user's own tab; tabrelay does not close it (start tabrelay with --allow-close-user-tabs to allow this)", t.id, t.tab.URL)
	}
	return ""
}

// tabRequest sends a close/activate/unshare request for t. Call with h.mu held; done runs
// with h.mu held.
func (h *Hub) tabRequest(c *Client, typ string, t *target, done func(errRaw []byte), offline func()) {
	if c != nil {
		c.inflight++
	}
	pd := &pending{method: "", done: func(_, errRaw []byte) {
		if c != nil {
			c.inflight--
		}
		done(errRaw)
	}}
	if typ == wire.TypeCloseTab {
		pd.closes = t
	}
	if !h.request(pd, func(rid int64) []byte {
		return mustJSON(wire.TabRequest{Type: typ, ID: rid, TargetID: t.id})
	}, h.opts.TabTimeout) {
		if c != nil {
			c.inflight--
		}
		offline()
	}
}

// windowForTarget answers Browser.getWindowForTarget: the window of the shared tab its targetId
// names (as a browser session asks), else of the session's own tab, else window 1. Call with
// h.mu held.
func (h *Hub) windowForTarget(r *req) {
	var p struct {
		TargetID string `json:"targetId"`
	}
	if !r.decode(&p) {
		return
	}
	t := r.s.t
	if p.TargetID != "" {
		if named, _ := h.lookup(p.TargetID); named != nil {
			t = named
		}
	}
	win := int64(1)
	if t != nil && t.tab.WindowID != 0 {
		win = t.tab.WindowID
	}
	r.ok(mustJSON(map[string]any{"windowId": win, "bounds": map[string]any{"left": 0, "top": 0, "width": 1280, "height": 800, "windowState": "normal"}}))
}
