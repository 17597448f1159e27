package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// extLink is the one live extension connection.
type extLink struct {
	out      *outbox
	once     sync.Once
	onKill   func(code int, reason string)
	greeted  bool
	onDemand bool // its hello said it attaches the debugger only when asked
	// batches: its hello said it takes batch frames; read by the write loop's join
	batches atomic.Bool
	// batched: it sent a batch frame (noted in the log once)
	batched  bool
	lastSeen time.Time
	// chunks holds the large messages arriving in chunk frames, by stream (see wire.ChunkPrefix);
	// only the connection's reading goroutine touches it.
	chunks map[string]*chunked
}

// chunked is a large message being received in pieces.
type chunked struct {
	buf     []byte
	discard bool // it passed ReadLimit: its pieces are dropped
}

// assemble takes one chunk frame and returns the whole message once its last piece came.
func (l *extLink) assemble(h *Hub, frame []byte) ([]byte, bool) {
	header, piece, ok := bytes.Cut(frame[len(wire.ChunkPrefix):], []byte("\n"))
	stream, state, ok2 := strings.Cut(string(header), " ")
	if !ok || !ok2 || stream == "" || (state != "more" && state != "end") {
		h.log.Warn().Int("bytes", len(frame)).Msg("malformed chunk frame from the extension; ignored")
		return nil, false
	}
	if l.chunks == nil {
		l.chunks = map[string]*chunked{}
	}
	c := l.chunks[stream]
	if c == nil {
		c = &chunked{}
		l.chunks[stream] = c
	}
	if !c.discard {
		if len(c.buf)+len(piece) > ReadLimit {
			h.log.Warn().Str("stream", stream).Msg("a message from the extension passed the size limit; dropped (its command will time out)")
			c.buf, c.discard = nil, true
		} else {
			if c.buf == nil && state == "more" {
				c.buf = make([]byte, 0, 4*len(piece))
			}
			c.buf = append(c.buf, piece...)
		}
	}
	if state == "more" {
		return nil, false
	}
	delete(l.chunks, stream)
	if !c.discard {
		h.log.Debug().Str("stream", stream).Int("bytes", len(c.buf)).Msg("reassembled a chunked message from the extension")
	}
	return c.buf, !c.discard
}

func (l *extLink) kill(code int, reason string) {
	l.once.Do(func() {
		// hand over the close code before closing the outbox: the write loop reads it as soon
		// as the outbox reports closed
		if l.onKill != nil {
			l.onKill(code, reason)
		}
		l.out.close()
	})
}

// batchFrames joins messages queued together into batch frames (JSON arrays of at most max
// bytes, see wire.MaxBatchBytes), in order; a message of max bytes or more, and one that
// would be alone in its frame, stays as it is.
func batchFrames(msgs [][]byte, max int) [][]byte {
	out := msgs[:0:0]
	start, size := 0, 1 // the frame being built: msgs[start:i], its bytes with brackets and commas
	flush := func(end int) {
		switch end - start {
		case 0:
		case 1:
			out = append(out, msgs[start])
		default:
			b := make([]byte, 0, size)
			b = append(b, '[')
			for k, m := range msgs[start:end] {
				if k > 0 {
					b = append(b, ',')
				}
				b = append(b, m...)
			}
			out = append(out, append(b, ']'))
		}
		start, size = end, 1
	}
	for i, m := range msgs {
		if size+len(m)+1 > max && i > start {
			flush(i)
		}
		size += len(m) + 1
	}
	flush(len(msgs))
	return out
}

// Extension is the hub's side of an extension connection, for the transport.
type Extension struct {
	h *Hub
	l *extLink
}

// ConnectExtension makes a new extension connection the live one; an older one is closed with
// wire.CloseReplaced. onKill is called once when the hub drops this connection.
func (h *Hub) ConnectExtension(onKill func(code int, reason string)) *Extension {
	l := &extLink{out: newOutbox(1 << 30), onKill: onKill, lastSeen: time.Now()}
	if h.legs != nil {
		l.out.sending = h.legs.wroteExtension
	}
	l.out.join = func(msgs [][]byte) [][]byte {
		if !l.batches.Load() {
			return msgs
		}
		return batchFrames(msgs, wire.MaxBatchBytes)
	}
	h.mu.Lock()
	old := h.ext
	if old != nil {
		h.extGone(old)
	}
	h.ext = l
	if h.graceEnd != nil {
		h.graceEnd.Stop()
		h.graceEnd = nil
	}
	h.mu.Unlock()
	if old != nil {
		h.log.Info().Msg("a newer extension connection replaced the previous one")
		old.kill(wire.CloseReplaced, "replaced by a newer extension connection")
	}
	return &Extension{h: h, l: l}
}

// Outbox gives the transport the messages to write to the extension.
func (e *Extension) Outbox() *Outbox { return &Outbox{e.l.out} }

// Disconnected tells the hub the connection ended.
func (e *Extension) Disconnected() {
	h := e.h
	h.mu.Lock()
	if h.ext == e.l {
		h.extGone(e.l)
		h.ext = nil
		clear(h.late) // their answers cannot come any more
		h.log.Info().Dur("grace", h.opts.Grace).Msg("browser extension disconnected; shared tabs wait for it to come back")
		h.graceEnd = time.AfterFunc(h.opts.Grace, h.expireGrace)
		h.setGap(time.Now().Add(h.opts.Grace))
	}
	h.mu.Unlock()
	e.l.kill(1000, "")
}

// extGone fails everything pending on l and puts the tabs in their grace period. Call with h.mu held.
func (h *Hub) extGone(l *extLink) {
	for id, p := range h.pending {
		delete(h.pending, id)
		h.failPending(p, codeNoSession, "tabrelay: the browser extension disconnected; the command was not delivered or its result was lost")
	}
	for _, t := range h.targets {
		t.live = false
		for _, rs := range t.runtime {
			rs.enabler = nil // already settled by failPending above
		}
	}
	h.notifyChanged()
}

// expireGrace removes the tabs the extension did not announce again in time.
func (h *Hub) expireGrace() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.targets {
		if !t.live {
			h.removeTarget(t, wire.ReasonDetached)
		}
	}
}

// Handle processes one frame from the extension: a message, a batch frame of them (a JSON
// array, see wire.MaxBatchBytes) or a chunk frame.
//
// Frames come from one goroutine, in the order the extension sent them; a chunk frame
// (wire.ChunkPrefix) is kept until its message is whole; a batch frame's messages are handled
// in their order under one lock.
func (e *Extension) Handle(msg []byte) {
	h := e.h
	var recv int64
	if h.legs != nil {
		recv = time.Now().UnixNano()
	}
	if bytes.HasPrefix(msg, []byte(wire.ChunkPrefix)) {
		whole, ok := e.l.assemble(h, msg)
		if !ok {
			return
		}
		msg = whole
	}
	// parsed before the lock, which other connections wait for; a lone message (most frames)
	// without allocating
	var one [1]parsedMsg
	ps := one[:0]
	var batchErr error
	if i := skipWS(msg, 0); i < len(msg) && msg[i] == '[' {
		var msgs [][]byte
		msgs, batchErr = splitBatch(msg)
		ps = make([]parsedMsg, 0, len(msgs))
		for _, m := range msgs {
			ps = append(ps, parseMsg(m))
		}
	} else {
		ps = append(ps, parseMsg(msg))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ext != e.l {
		return // replaced
	}
	e.l.lastSeen = time.Now()
	if batchErr != nil {
		h.log.Warn().Err(batchErr).Msg("malformed batch frame from the extension; ignored")
		return
	}
	if len(ps) > 1 && !e.l.batched {
		e.l.batched = true
		h.log.Debug().Int("messages", len(ps)).Msg("the extension sends batch frames")
	}
	for _, p := range ps {
		if p.err != nil {
			h.log.Warn().Err(p.err).Msg("malformed message from the extension; ignored")
			continue
		}
		e.handle(p.msg, p.env, recv)
	}
}

// parsedMsg is one message from the extension with its envelope (or why it has none).
type parsedMsg struct {
	msg []byte
	env envelope
	err error
}

func parseMsg(m []byte) parsedMsg {
	env, err := parseEnvelope(m)
	return parsedMsg{m, env, err}
}

// splitBatch returns the elements of a batch frame (a JSON array) as sub-slices of b.
func splitBatch(b []byte) ([][]byte, error) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, errors.New("a batch frame must be a JSON array")
	}
	var out [][]byte
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			end, err := skipValue(b, i, 1)
			if err != nil {
				return nil, err
			}
			out = append(out, b[i:end])
			i = skipWS(b, end)
			if i >= len(b) {
				return nil, errors.New("unterminated batch frame")
			}
			if b[i] == ']' {
				i++
				break
			}
			if b[i] != ',' {
				return nil, errors.New("expected ',' or ']' in a batch frame")
			}
			i = skipWS(b, i+1)
		}
	}
	if skipWS(b, i) != len(b) {
		return nil, errors.New("trailing data after a batch frame")
	}
	return out, nil
}

// handle processes one message from the extension, parsed as env; recv is when its frame was
// read (0 unless legs are traced). Call with h.mu held, e the live extension.
func (e *Extension) handle(msg []byte, env envelope, recv int64) {
	h := e.h
	if !e.l.greeted && env.typ != wire.TypeHello {
		h.log.Warn().Str("type", env.typ).Msg("extension spoke before hello; ignored")
		return
	}
	switch env.typ {
	case wire.TypeHello:
		if env.protocol != wire.Version {
			go e.l.kill(wire.CloseBadVersion, fmt.Sprintf("protocol %d not supported; this relay speaks %d: update tabrelay or the extension", env.protocol, wire.Version))
			return
		}
		e.l.greeted = true
		e.l.onDemand = env.onDemand
		e.l.batches.Store(env.batches)
		// it announces its tabs right after: requests for them wait a moment more at most
		settle := time.Now().Add(min(gapSettle, h.opts.Grace))
		if h.gapUntil.After(settle) || !h.gapUntil.After(time.Now()) {
			h.setGap(settle)
		}
		// once it has announced the tabs it still shares: clients that connected with none
		// shared (before it, say) get their choice of tab now
		l := e.l
		time.AfterFunc(time.Until(settle), func() { h.offerWaiting(l) })
		if env.product != "" {
			h.product = env.product
		}
		if env.userAgent != "" {
			h.userAgent = env.userAgent
		}
		e.l.out.push(mustJSON(wire.Welcome{Type: wire.TypeWelcome, Protocol: wire.Version, RelayVersion: Version, BrowserID: h.browserID, Chunks: true, Batches: true}))
		h.log.Info().Str("browser", h.product).Str("extension", env.extVer).Bool("onDemand", env.onDemand).Msg("browser extension connected")
		if len(h.wantedPermissions()) > 0 {
			// it cleared its content settings on connecting: the clients' overrides again
			h.syncPermissions(nil)
		}
	case wire.TypePing:
		e.l.out.push([]byte(`{"type":"pong"}`))
	case wire.TypeTabShared, wire.TypeTabUpdated:
		var tab wire.Tab
		if err := json.Unmarshal(env.tab, &tab); err != nil || tab.TargetID == "" {
			h.log.Warn().Msg("extension sent a tab without targetId; ignored")
			return
		}
		var children []wire.Child
		if len(env.children) > 0 {
			_ = json.Unmarshal(env.children, &children)
		}
		h.share(tab, children, env.typ == wire.TypeTabShared)
	case wire.TypeTabUnshared:
		if t := h.targets[env.targetID]; t != nil {
			h.removeTarget(t, env.reason)
		}
	case wire.TypeEvent:
		h.route(env)
	case wire.TypeDownload:
		var d wire.Download
		if err := json.Unmarshal(msg, &d); err != nil || d.GUID == "" {
			h.log.Warn().Msg("extension sent a download report without guid; ignored")
			return
		}
		h.downloadReport(d)
	case wire.TypeResponse:
		p := h.pending[env.id]
		if p == nil { // timed out already
			if late := h.late[env.id]; late != nil {
				delete(h.late, env.id)
				if len(env.errRaw) == 0 {
					late(env.result)
				}
			}
			return
		}
		delete(h.pending, env.id)
		if h.legs != nil && p.c != nil {
			h.legs.answered(env.id, recv, env.trace)
		}
		if len(env.errRaw) > 0 {
			h.complete(p, nil, env.errRaw)
		} else {
			h.complete(p, env.result, nil)
		}
	}
}

// share registers a newly shared tab, resumes one that comes back, or updates one.
func (h *Hub) share(tab wire.Tab, children []wire.Child, announce bool) {
	t := h.targets[tab.TargetID]
	h.seq++
	if t == nil {
		if !announce {
			return // update of a tab we do not know
		}
		t = newTarget(tab)
		t.seq = h.seq
		h.targets[t.id] = t
		h.tabIDs[t.tabID] = t
		for _, ch := range children {
			h.addChild(t, "", ch.SessionID, ch.TargetInfo)
		}
		h.log.Info().Str("target", t.id).Str("origin", tab.Origin).Bool("detached", tab.Detached).Msg("tab shared")
		h.sharedForDownloads(t, false)
		for c := range h.clients {
			for _, s := range c.sessions {
				if s.discover {
					h.announceCreated(s, t)
				}
			}
			for _, s := range c.sessions {
				if s.kind == kindBrowser {
					h.autoAttachTarget(s, t, true)
				}
			}
		}
		if !tab.Detached && t.boundSessions() == 0 {
			h.armIdle(t) // attached (created for a client, say) but nobody uses it yet
		}
		h.notifyChanged()
		return
	}
	resumed := !t.live
	t.live = true
	if tab.Active || announce {
		t.seq = h.seq
	}
	if tab.Origin == "" {
		tab.Origin = t.tab.Origin
	}
	changed := t.tab.URL != tab.URL || t.tab.Title != tab.Title
	t.tab = tab
	if tab.Reattached {
		h.reattached(t)
		h.reswitchEvents(t)
		h.rebuildLoad(t, tab)
		h.sharedForDownloads(t, true)
		for _, ch := range children {
			h.addChild(t, "", ch.SessionID, ch.TargetInfo)
		}
	} else if t.load.gap {
		h.rebuildLoad(t, tab)
	}
	if resumed {
		h.log.Info().Str("target", t.id).Msg("shared tab is back")
		switch {
		case t.boundSessions() == 0 && !tab.Detached:
			h.armIdle(t)
		case t.boundSessions() > 0 && h.onDemand():
			h.tabDebugger(t, wire.TypeAttachTab) // its clients kept their sessions
			if t.holding() == 0 {
				h.armIdle(t) // only releasing clients' sessions: they let go in time
			}
		}
	}
	if changed || resumed {
		info := mustJSON(map[string]any{"targetInfo": json.RawMessage(h.pageInfo(t))})
		for c := range h.clients {
			for _, s := range c.discoverers("page") {
				s.emit("Target.targetInfoChanged", info)
			}
		}
	}
	h.notifyChanged()
}

// reattached handles a tab whose debugger was attached anew: its child sessions are gone and
// enabled domains were reset, so the hub switches on again what clients had on.
//
// The execution contexts cached for Runtime.enable replays are stale: clients that had Runtime
// on are told Runtime.executionContextsCleared, and the hub's own Runtime.enable becomes the
// enable that fills a fresh cache from the contexts Chrome announces for it; enables that
// clients send meanwhile wait for its answer. When no client had Runtime on, there is no cache
// and the next client's Runtime.enable is forwarded to the tab.
func (h *Hub) reattached(t *target) {
	for ext, ch := range t.children {
		h.removeChild(t, ext, ch)
	}
	for ext := range t.enabled {
		if ext != "" {
			delete(t.enabled, ext)
		}
	}
	old := t.runtime[""]
	t.runtime = map[string]*runtimeState{}
	t.dialogs = nil               // a new debugger session cannot answer the old one's dialog
	t.docs = map[string]*domDoc{} // a new debugger session: no node id is bound
	// Chrome's storages were kept, but the hub's re-enables below replay them anew
	t.caches = map[string]map[string]*eventCache{}
	for dom, users := range t.enabled[""] {
		if len(users) > 0 {
			t.cacheFor("", dom, true)
		}
	}
	runtimeOn := len(t.enabled[""]["Runtime"]) > 0
	if runtimeOn {
		// as Chrome would on navigation: the contexts clients know of are gone
		h.route(envelope{targetID: t.id, method: "Runtime.executionContextsCleared", params: []byte(`{}`)})
	}
	for dom, users := range t.enabled[""] {
		if len(users) == 0 || !disableable(dom) || dom == "Runtime" {
			continue
		}
		h.internal(t, "", dom+".enable", nil)
	}
	h.readdScriptsAndBindings(t)
	if !runtimeOn {
		return // no client waits on old (its waiters would be Runtime users)
	}
	rs := &runtimeState{}
	if old != nil {
		// enables waiting for one forwarded before the re-attach wait for the new one instead
		rs.waiters, old.waiters, old.enabler = old.waiters, nil, nil
	}
	t.runtime[""] = rs
	p := &pending{method: "Runtime.enable", target: t, rs: rs, done: func(_, errRaw []byte) {
		if errRaw != nil {
			h.log.Warn().Str("target", t.id).RawJSON("error", errRaw).Msg("re-enabling Runtime in a re-attached tab failed; its clients may miss execution contexts")
		}
	}}
	rs.enabler = p
	if !h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, "", "Runtime.enable", nil) }, h.opts.CommandTimeout) {
		h.settleRuntime(p, mustJSON(wire.Error{Code: codeServerError, Message: "tabrelay: could not re-enable Runtime in the re-attached tab: the browser extension is not connected; retry when it is back"}))
	}
}

// readdScriptsAndBindings adds again, in a re-attached tab, the scripts to evaluate on new
// documents and the bindings its clients' page sessions added, with the params they sent; the
// clients keep the script identifiers they know (see translateRemoveScript). Call with h.mu held.
func (h *Hub) readdScriptsAndBindings(t *target) {
	sessions := make([]*session, 0, len(t.bound[""]))
	for s := range t.bound[""] {
		sessions = append(sessions, s)
	}
	// a deterministic order: by client, then by session
	sort.Slice(sessions, func(i, j int) bool {
		if sessions[i].c.id != sessions[j].c.id {
			return sessions[i].c.id < sessions[j].c.id
		}
		return sessions[i].id < sessions[j].id
	})
	bound := map[string]bool{}
	for _, s := range sessions {
		for _, b := range s.bindings {
			if key := string(b.params); !bound[key] {
				bound[key] = true
				h.internal(t, "", "Runtime.addBinding", b.params)
			}
		}
		for _, sc := range s.scripts {
			h.readdScript(t, "", sc)
		}
	}
}

// removeTarget forgets a tab and tells every client it is gone. Call with h.mu held.
func (h *Hub) removeTarget(t *target, reason string) {
	if h.targets[t.id] != t {
		return
	}
	delete(h.targets, t.id)
	delete(h.tabIDs, t.tabID)
	h.stopIdle(t)
	h.log.Info().Str("target", t.id).Str("reason", reason).Msg("tab no longer shared")
	for id, p := range h.pending {
		if p.closes == t { // closed as asked: answered before the sessions detach
			delete(h.pending, id)
			h.complete(p, nil, nil)
		}
	}
	pageGone := mustJSON(map[string]string{"targetId": t.id})
	tabGone := mustJSON(map[string]string{"targetId": t.tabID})
	for c := range h.clients {
		// pages first: a page attached under a tab session is reported on that session, so the
		// tab session must still exist then
		var pages, tabs []*session
		for _, s := range c.sessions {
			switch {
			case s.t != t:
			case s.kind == kindPage:
				pages = append(pages, s)
			case s.kind == kindTab:
				tabs = append(tabs, s)
			case s == c.def: // the page endpoint of one of the tab's iframes
				pages = append(pages, s)
			}
		}
		for _, s := range append(pages, tabs...) {
			if _, still := c.sessions[s.id]; !still {
				continue
			}
			if s == c.def {
				h.detachDefault(s, "the tab is no longer shared")
				continue
			}
			parent := s.parent
			tid := t.id
			if s.kind == kindTab {
				tid = t.tabID
			}
			h.endSession(s, false)
			if parent != nil {
				if _, ok := c.sessions[parent.id]; ok {
					parent.emit("Target.detachedFromTarget", mustJSON(map[string]string{"sessionId": s.id, "targetId": tid}))
				}
				delete(parent.announced, t.id)
			}
		}
		for _, s := range c.discoverers("page") {
			s.emit("Target.targetDestroyed", pageGone)
		}
		for _, s := range c.discoverers("tab") {
			s.emit("Target.targetDestroyed", tabGone)
		}
	}
	// Commands still pending on the tab fail after their sessions were detached: as in Chrome,
	// where a closing target's pending commands get no answer, a client learns from
	// Target.detachedFromTarget first (chromedp then reports its own "target detached").
	for id, p := range h.pending {
		if p.target == t {
			delete(h.pending, id)
			h.failPending(p, codeServerError, fmt.Sprintf("tabrelay: tab %s is no longer shared (%s)", t.id, reason))
		}
	}
	h.notifyChanged()
}

// detachDefault ends the target of a page-endpoint client (/devtools/page/<id>), whose default
// session it is: as Chrome does, the client is told Inspector.detached and disconnected.
// Call with h.mu held.
func (h *Hub) detachDefault(s *session, reason string) {
	c := s.c
	s.emit("Inspector.detached", []byte(`{"reason":"target_closed"}`))
	h.endSession(s, false)
	c.closed = true
	c.kill(closeNormal, reason) // the close reason reaches the client: kill hands it over before closing the outbox
}

// route delivers an event from the extension. Call with h.mu held.
func (h *Hub) route(e envelope) {
	t := h.targets[e.targetID]
	if t == nil {
		return
	}
	switch e.method {
	case "Target.attachedToTarget":
		var p struct {
			SessionID  string          `json:"sessionId"`
			TargetInfo json.RawMessage `json:"targetInfo"`
		}
		if json.Unmarshal(e.params, &p) == nil && p.SessionID != "" {
			h.addChild(t, e.sessionID, p.SessionID, p.TargetInfo)
		}
		return
	case "Target.detachedFromTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(e.params, &p) == nil {
			if ch := t.children[p.SessionID]; ch != nil {
				h.removeChild(t, p.SessionID, ch)
			}
		}
		return
	case "Runtime.executionContextCreated":
		if rs := t.runtime[e.sessionID]; rs != nil {
			var p struct {
				Context struct {
					ID int64 `json:"id"`
				} `json:"context"`
			}
			if json.Unmarshal(e.params, &p) == nil {
				rs.contexts = append(rs.contexts, contextEntry{id: p.Context.ID, params: e.params})
			}
		}
	case "Runtime.executionContextDestroyed":
		if rs := t.runtime[e.sessionID]; rs != nil {
			var p struct {
				ID int64 `json:"executionContextId"`
			}
			if json.Unmarshal(e.params, &p) == nil {
				for i, ce := range rs.contexts {
					if ce.id == p.ID {
						rs.contexts = append(rs.contexts[:i:i], rs.contexts[i+1:]...)
						break
					}
				}
			}
		}
	case "Runtime.executionContextsCleared":
		if rs := t.runtime[e.sessionID]; rs != nil {
			rs.contexts = nil
		}
	case "DOM.documentUpdated":
		t.forgetDocument(e.sessionID) // every node id is gone, for every client
	case "Page.javascriptDialogOpening", "Page.javascriptDialogClosed", "Page.frameNavigated":
		t.noteDialog(e.sessionID, e.method, e.params)
	}
	if e.sessionID == "" {
		if init := t.missingInit(e.method, e.params); init != nil {
			h.route(envelope{targetID: t.id, method: "Page.lifecycleEvent", params: init})
		}
		t.noteLoad(e.method, e.params)
	}
	if e.method == "Page.downloadWillBegin" || e.method == "Page.downloadProgress" {
		h.downloadEvent(t, e.method, e.params)
	}
	t.recordReplayable(e.sessionID, e.method, e.params)
	domain, _, _ := strings.Cut(e.method, ".")
	var plain []byte // the event without sessionId, shared by page-endpoint clients
	for s := range t.bound[e.sessionID] {
		if !s.wants(e.method, domain, e.params) || s.quietEvent(e.method) {
			continue
		}
		if sid := s.sid(); sid != "" {
			s.c.send(eventMsg(e.method, e.params, sid))
			continue
		}
		if plain == nil {
			plain = eventMsg(e.method, e.params, "")
		}
		s.c.send(plain)
	}
}

// addChild records a child target of t and announces it to sessions with auto-attach on.
func (h *Hub) addChild(t *target, parentExt, ext string, info json.RawMessage) {
	var ti struct {
		TargetID string `json:"targetId"`
		Type     string `json:"type"`
	}
	_ = json.Unmarshal(info, &ti)
	info = h.inContext(info)
	t.childSeq++
	ch := &child{ext: ext, parentExt: parentExt, targetID: ti.TargetID, typ: ti.Type, info: info, order: t.childSeq}
	t.children[ext] = ch
	for s := range t.bound[parentExt] {
		h.autoAttachChild(s, ch, true)
	}
}

// inContext returns a child's TargetInfo with the browserContextId of the tabs that hold it
// (the relay's own id for the user's profile), as Chrome reports one context for a page and
// its iframes and workers.
func (h *Hub) inContext(info json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(info, &m) != nil {
		return info
	}
	m["browserContextId"] = mustJSON(h.contextID)
	return mustJSON(m)
}

// removeChild forgets a child target and tells the sessions attached to it.
func (h *Hub) removeChild(t *target, ext string, ch *child) {
	delete(t.children, ext)
	delete(t.dialogs, ext)
	delete(t.runtime, ext)
	delete(t.caches, ext)
	delete(t.enabled, ext)
	delete(t.owners, ext)
	delete(t.baselines, ext)
	t.forgetDocument(ext)
	for s := range t.bound[ext] {
		if s == s.c.def { // a client of the child's own page endpoint
			h.detachDefault(s, "the iframe is gone (it navigated, was removed, or its tab was re-attached)")
			continue
		}
		parent := s.parent
		h.endSession(s, false)
		if parent != nil {
			delete(parent.announced, ext)
			if _, ok := parent.c.sessions[parent.id]; ok {
				parent.emit("Target.detachedFromTarget", mustJSON(map[string]string{"sessionId": s.id, "targetId": ch.targetID}))
			}
		}
	}
	// grandchildren
	for gext, g := range t.children {
		if g.parentExt == ext {
			h.removeChild(t, gext, g)
		}
	}
}
