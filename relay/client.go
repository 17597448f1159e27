package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Client is one CDP client connection (WebSocket or in-process). It has its own session ids and
// message ids; the hub remaps them to the extension's.
type Client struct {
	h    *Hub
	id   uint64
	name string
	out  *outbox
	// def is the session of messages without sessionId: the browser session on /cdp, the page
	// session on /devtools/page/<id>.
	def      *session
	sessions map[string]*session
	inflight int
	closed   bool
	cut      bool // disconnected as too slow (see cutSlow)
	// dl is the client's Browser.setDownloadBehavior, nil for Chrome's default (download.go).
	dl *dlBehavior
	// perms are the client's site permission overrides (permissions.go), nil for none.
	perms map[permKey]permOverride
	// nf: non-flat sessions attached from this client, or the one this client is (nonflat.go).
	nf nonFlat
	// releases marks a client whose sessions hold a tab only while it acts (the in-process
	// agent, see ondemand.go): the hub ends them DetachAfter after their last command.
	releases bool
	// wantsTab marks a client of the browser endpoint (/cdp) that connected while no tab was
	// shared: when an extension connects later and still shares none, the person is offered a
	// choice of tab for it (offerWaiting).
	wantsTab bool

	killOnce sync.Once
	onKill   func(code int, reason string)
}

type sessionKind int

const (
	kindBrowser sessionKind = iota
	kindTab
	kindPage
	kindChild
)

// session is a client's attachment to the browser, a tab target, a page or a child target.
type session struct {
	id       string
	c        *Client
	kind     sessionKind
	t        *target
	ext      string // extension child session id; "" for the page itself
	childTID string
	parent   *session

	autoAttach bool
	aFilter    []filterEntry
	// waitOnStart is the waitForDebuggerOnStart of the session's Target.setAutoAttach: targets
	// that appear later are announced with waitingForDebugger set to it, as Chrome does (those
	// announced by setAutoAttach itself, already running, with false). tabrelay never holds a
	// target paused (the extension attaches without waiting), so the client's
	// Runtime.runIfWaitingForDebugger that follows finds nothing to resume and is answered {}.
	waitOnStart bool
	announced   map[string]bool // targets this session auto-attached, by target id
	// discover is the session's Target.setDiscoverTargets, with its filter: as in Chrome, the
	// session that asked (the browser's, or a page's) gets the discovery events.
	discover bool
	dFilter  []filterEntry

	enabled map[string]bool // domains the client enabled here: their events are delivered
	// replaying holds the domains whose enable waits for its answer to replay what Chrome
	// replays on enable (contexts, console messages, log entries): their events wait too.
	replaying map[string]bool
	// subs holds the events the client asked for with a command rather than a domain's enable
	// (lifecycle events, screencast frames, intercepted drags …), see eventSwitches.
	subs map[string]bool
	// seq numbers the commands forwarded on this session; open holds those not yet answered.
	// Answers the hub makes itself wait in later until every earlier command is answered, as
	// Chrome answers one session's commands in order.
	seq   int64
	open  map[int64]struct{}
	later []deferred
	// emulating counts the session's commands the hub answers after several requests of its
	// own (see shareDocument): meanwhile the answers Chrome gives to its later commands wait
	// their turn too. quietDOM holds back the DOM.setChildNodes the hub's binding causes.
	emulating int
	quietDOM  int
	children  map[string]*session // child sessions by session id
	// lastUse is when the session last sent a command or got an answer (for a releasing
	// client, see ondemand.go)
	lastUse  time.Time
	scripts  []*script // Page.addScriptToEvaluateOnNewDocument the client added here
	bindings []binding // Runtime.addBinding the client added here
}

// script is a Page.addScriptToEvaluateOnNewDocument a client added. A re-attached tab has
// forgotten it: the hub adds it again (see reattached), and Chrome gives it a new identifier,
// so the hub translates the identifier the client knows into the tab's current one.
type script struct {
	orig   string // the identifier the client was given
	cur    string // the tab's identifier for it; "" while it is being added again or after that failed
	params []byte // the client's params, to add it again
	// readd is the hub's Page.addScriptToEvaluateOnNewDocument adding it again, until answered.
	readd *pending
	// dropped marks a script removed (by its client, or its client leaving) while being added
	// again: the re-add's answer removes it.
	dropped bool
}

// binding is a Runtime.addBinding a client made.
type binding struct {
	name   string
	params []byte // the client's params, to add it again in a re-attached tab
}

// takeScript removes from s the script the client knows by identifier id and returns it, or nil.
func (s *session) takeScript(id string) *script {
	for i, sc := range s.scripts {
		if sc.orig == id {
			s.scripts = append(s.scripts[:i:i], s.scripts[i+1:]...)
			return sc
		}
	}
	return nil
}

// dropBinding forgets the session's bindings called name.
func (s *session) dropBinding(name string) {
	kept := s.bindings[:0]
	for _, b := range s.bindings {
		if b.name != name {
			kept = append(kept, b)
		}
	}
	clear(s.bindings[len(kept):])
	s.bindings = kept
}

func (c *Client) newSession(kind sessionKind, t *target, ext string, parent *session) *session {
	s := &session{
		id: randomID(), c: c, kind: kind, t: t, ext: ext, parent: parent,
		announced: map[string]bool{}, enabled: map[string]bool{}, replaying: map[string]bool{}, subs: map[string]bool{},
		open: map[int64]struct{}{}, children: map[string]*session{},
	}
	c.sessions[s.id] = s
	if t != nil && (kind == kindPage || kind == kindChild) {
		t.bind(s)
		c.h.sessionBound(t)
	}
	return s
}

// sid is the sessionId to put on messages of s: none for the client's default session.
func (s *session) sid() string {
	if s == s.c.def {
		return ""
	}
	return s.id
}

// emit sends an event on session s.
func (s *session) emit(method string, params []byte) {
	s.c.send(eventMsg(method, params, s.sid()))
}

// send queues msg for the client; a client too far behind is disconnected.
func (c *Client) send(msg []byte) {
	if c.closed {
		return
	}
	if c.nf.via != nil { // a non-flat session: its messages travel inside its parent session
		c.nf.via.deliver(msg)
		return
	}
	if !c.out.push(msg) {
		if c.out.isClosed() { // already dropped (it left, the server is shutting down, or cut)
			c.closed = true
			return
		}
		c.cutSlow("its queue reached the per-client limit", c.out.size()+len(msg))
	}
}

// cutSlow disconnects a client that does not read its messages: its queue is discarded and its
// connection ends with 1008 and a reason saying how much was queued. Call with h.mu held.
func (c *Client) cutSlow(why string, held int) {
	if _, ok := c.h.clients[c]; !ok || c.cut {
		return // it left, or was cut already
	}
	c.cut, c.closed = true, true
	c.out.drop()
	mb := (held + 1<<20 - 1) >> 20
	c.h.log.Warn().Str("client", c.name).Int("queuedMB", mb).Str("why", why).Msg("client is not reading its messages fast enough; disconnecting it (1008)")
	go c.kill(closePolicy, fmt.Sprintf("tabrelay: client too slow: %d MB queued", mb))
}

// TooSlow disconnects the client as too slow to read (1008, its queue discarded): for transports
// whose writes to it stopped making progress.
func (c *Client) TooSlow(why string) {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	c.cutSlow(why, c.out.size())
}

// WebSocket close codes the hub ends client connections with.
const (
	closeNormal    = 1000 // Browser.close, the page endpoint's target is gone
	closeGoingAway = 1001 // the server is shutting down
	closePolicy    = 1008 // the client stopped reading
)

// kill ends the client's connection with a WebSocket close code and reason.
func (c *Client) kill(code int, reason string) {
	c.killOnce.Do(func() {
		// the reason first: the write loop picks it up as soon as the outbox reports closed
		if c.onKill != nil {
			c.onKill(code, reason)
		}
		c.out.close()
	})
}

// NewClient registers a client. pageTarget, when set, makes its default session that tab's page,
// or that out-of-process iframe of a shared tab (the /devtools/page/<id> endpoint). onKill is
// called once when the hub drops the client, with the WebSocket close code and reason to end
// its connection with, before its outbox reports closed; it must not block.
func (h *Hub) NewClient(name, pageTarget string, onKill func(code int, reason string)) (*Client, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, fmt.Errorf("tabrelay server is shutting down")
	}
	h.nextCID++
	c := &Client{h: h, id: h.nextCID, name: fmt.Sprintf("%s#%d", name, h.nextCID), out: newOutbox(h.opts.MaxQueueBytes), sessions: map[string]*session{}, onKill: onKill}
	if h.legs != nil {
		c.out.wrote = func(msg []byte) { h.legs.wroteClient(c, msg) }
	}
	h.budget.join(c.out, func(held int) {
		h.mu.Lock()
		defer h.mu.Unlock()
		c.cutSlow("all clients' queues together passed the relay's budget and this one was the largest", held)
	})
	if pageTarget != "" {
		if t := h.targets[pageTarget]; t != nil {
			c.def = c.newSession(kindPage, t, "", nil)
		} else if t, ch := h.lookupChild(pageTarget); ch != nil {
			c.def = c.newSession(kindChild, t, ch.ext, nil)
			c.def.childTID = ch.targetID
		} else {
			return nil, fmt.Errorf("no shared tab or iframe of one with target id %q: list the targets at /json/list", pageTarget)
		}
	} else {
		c.def = c.newSession(kindBrowser, nil, "", nil)
		if name == "cdp" && len(h.liveTargets()) == 0 { // a CDP client with nothing to drive: the person chooses a tab
			c.wantsTab = true
			h.offerTab(name)
		}
	}
	h.clients[c] = struct{}{}
	h.log.Debug().Str("client", c.name).Msg("client connected")
	return c, nil
}

// Outbox gives the transport the client's outgoing queue.
func (c *Client) Outbox() *Outbox { return &Outbox{c.out} }

// Name identifies the client in logs.
func (c *Client) Name() string { return c.name }

// Leave unregisters the client and undoes what it left switched on in the user's tabs.
func (c *Client) Leave() {
	c.h.mu.Lock()
	defer c.h.mu.Unlock()
	c.leave()
}

// leave is Leave with h.mu held.
func (c *Client) leave() {
	h := c.h
	if _, ok := h.clients[c]; !ok {
		return
	}
	delete(h.clients, c)
	c.closed = true
	if h.legs != nil {
		h.legs.forget(c)
	}
	if c.dl != nil { // its download behavior ends with it, as in Chrome (download.go)
		c.dl = nil
		h.unwatchDownloads()
	}
	h.dropPermissions(c) // its permission overrides end with it, as in Chrome
	for _, s := range c.sessions {
		if s.parent == nil || s.parent.c != c {
			h.endSession(s, true)
		}
	}
	for _, s := range c.sessions { // any left (defensive)
		h.endSession(s, true)
	}
	for id, p := range h.pending {
		if p.c != c {
			continue
		}
		if p.rs != nil && p.rs.enabler == p {
			// Other clients' Runtime.enable may wait for this one's answer: the hub keeps
			// the request as its own so that the answer still releases them.
			p.c, p.s = nil, nil
			p.done = func(_, _ []byte) {}
			continue
		}
		delete(h.pending, id)
	}
	c.out.drop() // nobody reads what is still queued
	c.out.close()
	if c.wantsTab { // it may have been the last one waiting for the person to pick a tab
		h.endOfferIfNobodyWaits()
	}
	h.log.Debug().Str("client", c.name).Msg("client left")
}

// endSession detaches s and its child sessions; with cleanup, it also undoes the session's
// effect on the tab (domains enabled, overrides, scripts, bindings). Call with h.mu held.
func (h *Hub) endSession(s *session, cleanup bool) {
	if _, ok := s.c.sessions[s.id]; !ok {
		return
	}
	h.endNonFlat(s)
	for _, ch := range s.children {
		h.endSession(ch, cleanup)
	}
	delete(s.c.sessions, s.id)
	if s.parent != nil {
		delete(s.parent.children, s.id)
	}
	t := s.t
	if t == nil || (s.kind != kindPage && s.kind != kindChild) {
		return
	}
	t.unbind(s)
	defer h.sessionUnbound(t) // after the cleanup commands below: they go to an attached tab
	if rs := t.runtime[s.ext]; rs != nil {
		h.dropWaiters(rs, s)
	}
	for dom := range s.enabled {
		users := t.enabled[s.ext][dom]
		delete(users, s)
		if len(users) == 0 {
			delete(t.enabled[s.ext], dom)
			t.dropCache(s.ext, dom)
			if dom == "Runtime" {
				delete(t.runtime, s.ext)
			}
			if dom == "DOM" {
				t.forgetDocument(s.ext)
			}
			if cleanup && disableable(dom) && !h.keepsDomain(t, s.ext, dom) {
				h.internal(t, s.ext, dom+".disable", nil)
			}
		}
	}
	if !cleanup {
		return
	}
	for method, owner := range t.owners[s.ext] {
		if owner != s {
			continue
		}
		delete(t.owners[s.ext], method)
		if u, ok := undoTable[method]; ok {
			params := u.params
			if params == "" { // the undo restores a value read from the tab before the override
				b := t.baselines[s.ext][method]
				switch {
				case b == nil:
					continue // never read: nothing known to restore
				case b.reading:
					b.undoOnRead = true // the read's answer sends the undo
					continue
				}
				params = b.params
			}
			h.internal(t, s.ext, u.method, []byte(params))
		}
	}
	for _, sc := range s.scripts {
		switch {
		case sc.cur != "":
			h.internal(t, s.ext, "Page.removeScriptToEvaluateOnNewDocument", mustJSON(map[string]string{"identifier": sc.cur}))
		case sc.readd != nil:
			sc.dropped = true // the re-add's answer removes it
		}
	}
	s.scripts = nil
	removed := map[string]bool{}
	for _, b := range s.bindings {
		if !removed[b.name] {
			removed[b.name] = true
			h.internal(t, s.ext, "Runtime.removeBinding", mustJSON(map[string]string{"name": b.name}))
		}
	}
	s.bindings = nil
}

// disableable lists the domains whose X.disable the hub sends when their last user leaves.
func disableable(domain string) bool {
	switch domain {
	case "Target", "Browser", "Input", "Emulation", "IO", "Storage", "SystemInfo", "Tracing":
		return false
	}
	return true
}

// undo is the command that takes an override back. Empty params mean the value to restore is
// read from the tab before the first override (see baselineReads).
type undo struct{ method, params string }

// baselineReads maps the overrides that have no "clear" command to an expression that reads the
// tab's own value, and to how the undo's params are built from it.
var baselineReads = map[string]struct {
	expr   string
	params func(value json.RawMessage) string
}{
	"Emulation.setHardwareConcurrencyOverride": {"navigator.hardwareConcurrency", func(v json.RawMessage) string {
		var n int64
		if json.Unmarshal(v, &n) != nil || n <= 0 {
			return ""
		}
		return fmt.Sprintf(`{"hardwareConcurrency":%d}`, n)
	}},
}

// baseline is the tab's own value that an override without a "clear" command replaced.
type baseline struct {
	params     string // the undo's params, once read
	reading    bool   // the read is under way
	undoOnRead bool   // the override's owner left during the read: undo when it answers
}

// readBaseline reads, once per tab session, the value an override without a "clear" command
// replaces, before the first such override is forwarded; commands to one session run in
// order, so the read sees the tab's own value. Call with h.mu held.
func (h *Hub) readBaseline(t *target, ext, method string) {
	b, ok := baselineReads[method]
	if !ok || t.owners[ext][method] != nil {
		return
	}
	m := t.baselines[ext]
	if m == nil {
		m = map[string]*baseline{}
		t.baselines[ext] = m
	}
	if m[method] != nil {
		return // known, or being read
	}
	bl := &baseline{reading: true}
	m[method] = bl
	p := &pending{method: "Runtime.evaluate", target: t, done: func(result, errRaw []byte) {
		var res struct {
			Result struct {
				Value json.RawMessage `json:"value"`
			} `json:"result"`
		}
		bl.reading = false
		if errRaw == nil && json.Unmarshal(result, &res) == nil {
			bl.params = b.params(res.Result.Value)
		}
		if bl.params == "" {
			delete(m, method) // try again with the next override
			return
		}
		// the owner left before the answer came, and nobody has set the override since
		if bl.undoOnRead && t.owners[ext][method] == nil {
			bl.undoOnRead = false
			h.internal(t, ext, undoTable[method].method, []byte(bl.params))
		}
	}}
	params := mustJSON(map[string]any{"expression": b.expr, "returnByValue": true, "silent": true})
	h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, ext, "Runtime.evaluate", params) }, h.opts.CommandTimeout)
}

// undoTable maps each state-changing command to the command that takes it back. When a client
// leaves, the overrides it set last on a tab are undone, so the user's tab is left as it was.
var undoTable = map[string]undo{
	"Emulation.setDeviceMetricsOverride":          {"Emulation.clearDeviceMetricsOverride", `{}`},
	"Emulation.setGeolocationOverride":            {"Emulation.clearGeolocationOverride", `{}`},
	"Emulation.setEmulatedMedia":                  {"Emulation.setEmulatedMedia", `{"media":"","features":[]}`},
	"Emulation.setTouchEmulationEnabled":          {"Emulation.setTouchEmulationEnabled", `{"enabled":false}`},
	"Emulation.setEmitTouchEventsForMouse":        {"Emulation.setEmitTouchEventsForMouse", `{"enabled":false}`},
	"Emulation.setFocusEmulationEnabled":          {"Emulation.setFocusEmulationEnabled", `{"enabled":false}`},
	"Emulation.setCPUThrottlingRate":              {"Emulation.setCPUThrottlingRate", `{"rate":1}`},
	"Emulation.setUserAgentOverride":              {"Emulation.setUserAgentOverride", `{"userAgent":""}`},
	"Emulation.setTimezoneOverride":               {"Emulation.setTimezoneOverride", `{"timezoneId":""}`},
	"Emulation.setLocaleOverride":                 {"Emulation.setLocaleOverride", `{}`},
	"Emulation.setScriptExecutionDisabled":        {"Emulation.setScriptExecutionDisabled", `{"value":false}`},
	"Emulation.setDefaultBackgroundColorOverride": {"Emulation.setDefaultBackgroundColorOverride", `{}`},
	"Emulation.setEmulatedVisionDeficiency":       {"Emulation.setEmulatedVisionDeficiency", `{"type":"none"}`},
	"Emulation.setIdleOverride":                   {"Emulation.clearIdleOverride", `{}`},
	"Emulation.setAutoDarkModeOverride":           {"Emulation.setAutoDarkModeOverride", `{}`},
	"Emulation.setDocumentCookieDisabled":         {"Emulation.setDocumentCookieDisabled", `{"disabled":false}`},
	"Emulation.setScrollbarsHidden":               {"Emulation.setScrollbarsHidden", `{"hidden":false}`},
	"Network.setExtraHTTPHeaders":                 {"Network.setExtraHTTPHeaders", `{"headers":{}}`},
	"Network.setCacheDisabled":                    {"Network.setCacheDisabled", `{"cacheDisabled":false}`},
	"Network.emulateNetworkConditions":            {"Network.emulateNetworkConditions", `{"offline":false,"latency":0,"downloadThroughput":-1,"uploadThroughput":-1}`},
	"Network.setBlockedURLs":                      {"Network.setBlockedURLs", `{"urls":[]}`},
	"Network.setUserAgentOverride":                {"Network.setUserAgentOverride", `{"userAgent":""}`},
	"Network.setBypassServiceWorker":              {"Network.setBypassServiceWorker", `{"bypass":false}`},
	"Page.setInterceptFileChooserDialog":          {"Page.setInterceptFileChooserDialog", `{"enabled":false}`},
	"Page.setBypassCSP":                           {"Page.setBypassCSP", `{"enabled":false}`},
	"Page.setDownloadBehavior":                    {"Page.setDownloadBehavior", `{"behavior":"default"}`},
	"Debugger.setPauseOnExceptions":               {"Debugger.setPauseOnExceptions", `{"state":"none"}`},
	"DOMDebugger.setBreakOnCSPViolation":          {"DOMDebugger.setBreakOnCSPViolation", `{"violationTypes":[]}`},
	"Overlay.setPausedInDebuggerMessage":          {"Overlay.setPausedInDebuggerMessage", `{}`},
	"Input.setIgnoreInputEvents":                  {"Input.setIgnoreInputEvents", `{"ignore":false}`},
	"Input.setInterceptDrags":                     {"Input.setInterceptDrags", `{"enabled":false}`},
	"Page.setWebLifecycleState":                   {"Page.setWebLifecycleState", `{"state":"active"}`},
	"Emulation.setPageScaleFactor":                {"Emulation.setPageScaleFactor", `{"pageScaleFactor":1}`},
	"Emulation.setDisabledImageTypes":             {"Emulation.setDisabledImageTypes", `{"imageTypes":[]}`},
	// no clear command: the tab's own value, read before the first override, is set back
	"Emulation.setHardwareConcurrencyOverride": {"Emulation.setHardwareConcurrencyOverride", ""},
}

// Handle processes one message from the client.
func (c *Client) Handle(msg []byte) {
	h := c.h
	var in int64
	if h.legs != nil {
		in = time.Now().UnixNano()
	}
	e, err := parseEnvelope(msg)
	if err == nil && !json.Valid(msg) {
		// parseEnvelope checks only what routing reads; Chrome refuses any invalid JSON, and
		// the extension would fail on it later with a less useful error
		err = errInvalidJSON
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c.handle(msg, e, err, in)
}

// handle is Handle once msg is parsed, with h.mu held (a non-flat session's messages arrive
// here from Target.sendMessageToTarget); in is when the relay read it (0 unless legs are traced).
func (c *Client) handle(msg []byte, e envelope, err error, in int64) {
	h := c.h
	if c.closed {
		return
	}
	if err != nil {
		c.send(malformedReply(msg, err))
		return
	}
	// checked in Chrome's order, answered as Chrome answers (no sessionId on these)
	if !e.hasID {
		c.send(errorMsg(false, 0, "", codeInvalidRequest, msgNoID))
		return
	}
	if e.method == "" {
		c.send(errorMsg(true, e.id, "", codeInvalidRequest, msgNoMethod))
		return
	}
	if len(e.params) > 0 && e.params[0] != '{' {
		c.send(errorMsg(true, e.id, "", codeInvalidRequest, msgBadParams))
		return
	}
	s := c.def
	if e.sessionID != "" {
		s = c.sessions[e.sessionID]
		if s == nil {
			c.send(errorMsg(true, e.id, e.sessionID, codeNoSession, "Session with given id not found."))
			return
		}
	}
	r := &req{c: c, s: s, id: e.id, sid: e.sessionID, method: e.method, params: e.params, in: in}
	domain, _, _ := strings.Cut(e.method, ".")
	switch domain {
	case "Target", "Browser":
		h.emulate(r)
		return
	case "SystemInfo":
		h.systemInfo(r)
		return
	}
	switch s.kind {
	case kindBrowser:
		if e.method == "Runtime.runIfWaitingForDebugger" {
			r.ok(nil) // as Chrome: the browser target never waits
			return
		}
		r.fail(codeMethodNotFound, fmt.Sprintf("'%s' wasn't found (on the browser session tabrelay offers only the Target, Browser and SystemInfo methods it emulates; attach to a page first)", e.method))
		return
	case kindTab:
		if e.method == "Runtime.runIfWaitingForDebugger" {
			r.ok(nil)
			return
		}
		r.fail(codeMethodNotFound, fmt.Sprintf("'%s' wasn't found", e.method))
		return
	}
	if e.method == "Page.close" && s.kind == kindPage {
		// closes the tab, as Target.closeTarget does: the same policy, and the same way (the
		// extension brings back the tab that was in front when a client opened this one)
		if msg := h.closeRefusal(s.t); msg != "" {
			r.fail(codeServerError, msg)
			return
		}
		// Chrome answers at once, before the target is destroyed and the session detached
		// (go-rod's page.Close() fails if the detach comes first): see closeForClient
		t := s.t
		if !t.live || h.ext == nil {
			r.fail(codeServerError, fmt.Sprintf("tabrelay: tab %s is not reachable right now: the browser extension is not connected (it reconnects by itself; retry in a moment)", t.id))
			return
		}
		h.closeForClient(nil, s, t, func() { r.ok([]byte(`{}`)) })
		return
	}
	h.forward(r, domain)
}

// req is one client command being handled.
type req struct {
	c      *Client
	s      *session
	id     int64
	sid    string
	method string
	params []byte
	in     int64 // when the relay read it (Unix ns), for per-leg tracing only
}

func (r *req) ok(result []byte) { r.c.send(resultMsg(r.id, r.sid, result)) }
func (r *req) fail(code int, msg string) {
	r.c.send(errorMsg(true, r.id, r.sid, code, msg))
}

// decode unmarshals the request's params into v, answering with an error if they are invalid.
func (r *req) decode(v any) bool {
	if len(r.params) == 0 {
		return true
	}
	if err := json.Unmarshal(r.params, v); err != nil {
		r.fail(codeInvalidParams, "Invalid parameters: "+err.Error())
		return false
	}
	return true
}

// forward sends a page or child session command to the extension. Call with h.mu held.
func (h *Hub) forward(r *req, domain string) {
	s, t := r.s, r.s.t
	s.lastUse = time.Now()
	if !t.live || h.ext == nil {
		if h.targets[t.id] == t && h.park(r.c, func() { h.retryForward(r, domain) }) {
			return // the tab is away for a moment (see gap.go)
		}
		r.fail(codeServerError, fmt.Sprintf("tabrelay: tab %s is not reachable right now: the browser extension is not connected (it reconnects by itself; retry in a moment)", t.id))
		return
	}
	if r.c.inflight >= h.opts.MaxInFlight {
		r.fail(codeServerError, fmt.Sprintf("tabrelay: too many commands in flight (%d); wait for answers before sending more", h.opts.MaxInFlight))
		return
	}
	if r.method == "DOM.getDocument" && h.shareDocument(r) {
		return
	}
	if r.method == "DOM.setFileInputFiles" && h.setFileInputFiles(r) {
		return
	}
	var runtimeRS *runtimeState // set when this forwards the Runtime.enable others will wait for
	replay := ""
	_, suffix, _ := strings.Cut(r.method, ".")
	if implicitEnable[r.method] && !s.enabled[domain] {
		suffix = "enable" // counted as the domain's enable: its last user's leaving disables it
	}
	switch suffix {
	case "enable":
		users := t.enabled[s.ext][domain]
		others := len(users) - btoi(users != nil && hasSession(users, s))
		already := s.enabled[domain]
		h.markEnabled(s, domain)
		if others == 0 {
			t.cacheFor(s.ext, domain, true)
		} else if !already && replayable[domain] != nil {
			// Chrome has it on for another client and will not replay: the hub does, when
			// the enable is answered, in the session's order
			replay = domain
			s.replaying[domain] = true
		}
		if domain == "Runtime" {
			rs := t.runtime[s.ext]
			if rs == nil {
				rs = &runtimeState{}
				t.runtime[s.ext] = rs
			}
			if others == 0 {
				runtimeRS = rs
			}
		}
	case "disable":
		users := t.enabled[s.ext][domain]
		if users != nil && len(users)-btoi(hasSession(users, s)) > 0 {
			// another client still uses the domain: keep it on for them
			delete(users, s)
			delete(s.enabled, domain) // a replay still due goes out first, as in Chrome
			s.afterEarlier(func() { r.ok(nil) })
			return
		}
		if h.keepsDomain(t, s.ext, domain) {
			// the hub needs it on (see download.go): the client stops getting its events
			h.unmarkEnabled(s, domain)
			t.dropCache(s.ext, domain)
			s.afterEarlier(func() { r.ok(nil) })
			return
		}
	}
	switch r.method {
	case "Runtime.evaluate":
		r.params = withCommandLineAPI(r.params)
	case "Page.removeScriptToEvaluateOnNewDocument":
		if !h.translateRemoveScript(r) {
			return // answered
		}
	case "Runtime.removeBinding":
		var par struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(r.params, &par) == nil {
			s.dropBinding(par.Name) // not to be added again in a re-attached tab
		}
	}
	p := &pending{c: r.c, clientID: r.id, replySID: r.sid, s: s, method: r.method, target: t, rs: runtimeRS, ext: s.ext, replay: replay}
	if _, ok := undoTable[r.method]; ok || r.method == "Runtime.addBinding" || r.method == "Page.addScriptToEvaluateOnNewDocument" {
		p.params = r.params
		h.readBaseline(t, s.ext, r.method)
	}
	r.c.inflight++
	msg := func(id int64) []byte { return extCDPMsg(id, t.id, s.ext, r.method, r.params) }
	if h.legs != nil {
		msg = func(id int64) []byte {
			h.legs.start(id, r.c, r.id, r.method, r.in)
			return traceRequest(extCDPMsg(id, t.id, s.ext, r.method, r.params))
		}
	}
	if !h.request(p, msg, h.opts.CommandTimeout) {
		r.c.inflight--
		h.afterFailure(p)
		s.afterEarlier(func() { r.fail(codeServerError, "tabrelay: the browser extension is not connected") })
		return
	}
	p.n = s.opened()
	s.switchEvents(r.method, r.params)
	if runtimeRS != nil {
		runtimeRS.enabler = p
	}
}

// retryForward forwards a command parked while its tab was away, unless its session ended
// meanwhile (the tab was not announced again in time). Call with h.mu held.
func (h *Hub) retryForward(r *req, domain string) {
	if _, ok := r.c.sessions[r.s.id]; !ok {
		r.fail(codeServerError, fmt.Sprintf("tabrelay: tab %s is no longer shared (it did not come back after the browser extension reconnected)", r.s.t.id))
		return
	}
	h.forward(r, domain)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func hasSession(m map[*session]struct{}, s *session) bool { _, ok := m[s]; return ok }

func (h *Hub) markEnabled(s *session, domain string) {
	t := s.t
	m := t.enabled[s.ext]
	if m == nil {
		m = map[string]map[*session]struct{}{}
		t.enabled[s.ext] = m
	}
	if m[domain] == nil {
		m[domain] = map[*session]struct{}{}
	}
	m[domain][s] = struct{}{}
	s.enabled[domain] = true
}

func (h *Hub) unmarkEnabled(s *session, domain string) {
	if users := s.t.enabled[s.ext][domain]; users != nil {
		delete(users, s)
		if len(users) == 0 {
			delete(s.t.enabled[s.ext], domain)
		}
	}
	delete(s.enabled, domain)
}

// replayContexts sends the cached execution contexts to a session that enabled Runtime late.
func (h *Hub) replayContexts(s *session, rs *runtimeState) {
	for _, ce := range rs.contexts {
		s.emit("Runtime.executionContextCreated", ce.params)
	}
}

// translateRemoveScript forgets the script a client's Page.removeScriptToEvaluateOnNewDocument
// names and rewrites the identifier the client knows into the tab's, which differ once the tab
// was re-attached. It reports whether r is to be forwarded; if not, it answered r. Call with
// h.mu held.
func (h *Hub) translateRemoveScript(r *req) bool {
	var par map[string]json.RawMessage
	var id string
	if json.Unmarshal(r.params, &par) != nil || json.Unmarshal(par["identifier"], &id) != nil {
		return true // Chrome tells the client what is wrong
	}
	sc := r.s.takeScript(id)
	switch {
	case sc == nil || sc.cur == sc.orig:
		return true
	case sc.cur == "":
		// being added again in a re-attached tab (its answer removes it), or that failed:
		// either way the tab does not run it once this is answered
		sc.dropped = sc.readd != nil
		r.s.afterEarlier(func() { r.ok(nil) })
		return false
	}
	par["identifier"] = mustJSON(sc.cur)
	r.params = mustJSON(par)
	return true
}

// readdScript adds a client's script again in a re-attached tab and records the tab's new
// identifier for it. Call with h.mu held.
func (h *Hub) readdScript(t *target, ext string, sc *script) {
	sc.cur = ""
	p := &pending{method: "Page.addScriptToEvaluateOnNewDocument", target: t}
	p.done = func(result, errRaw []byte) {
		if sc.readd != p {
			return // superseded: the tab was re-attached again meanwhile
		}
		sc.readd = nil
		var res struct {
			Identifier string `json:"identifier"`
		}
		if errRaw != nil || json.Unmarshal(result, &res) != nil || res.Identifier == "" {
			h.log.Warn().Str("target", t.id).RawJSON("error", errRaw).Msg("adding a client's script to evaluate on new documents again in a re-attached tab failed; the tab no longer runs it")
			return
		}
		if sc.dropped {
			h.internal(t, ext, "Page.removeScriptToEvaluateOnNewDocument", mustJSON(map[string]string{"identifier": res.Identifier}))
			return
		}
		sc.cur = res.Identifier
	}
	sc.readd = p
	if !h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, ext, p.method, sc.params) }, h.opts.CommandTimeout) {
		sc.readd = nil
	}
}

// afterSuccess records the effect of a forwarded command and returns the result to give the
// client. Call with h.mu held.
func (h *Hub) afterSuccess(p *pending, result []byte) []byte {
	s, t := p.s, p.target
	if _, ok := s.c.sessions[s.id]; !ok {
		return result
	}
	domain, suffix, _ := strings.Cut(p.method, ".")
	switch {
	case suffix == "disable":
		h.unmarkEnabled(s, domain)
		if len(t.enabled[s.ext][domain]) == 0 {
			t.dropCache(s.ext, domain)
			if domain == "DOM" {
				t.forgetDocument(s.ext)
			}
			if domain == "Runtime" {
				delete(t.runtime, s.ext)
			}
		}
	case p.method == "DOM.getDocument":
		t.noteDocument(s.ext, result)
	case p.method == "Page.addScriptToEvaluateOnNewDocument":
		var res struct {
			Identifier string `json:"identifier"`
		}
		if json.Unmarshal(result, &res) == nil && res.Identifier != "" {
			sc := &script{orig: res.Identifier, cur: res.Identifier, params: p.params}
			for _, other := range s.scripts {
				if other.orig == sc.orig {
					// the client knows this identifier for a script added before the tab was
					// re-attached: it gets one of the hub's own for this one
					h.nextAlias++
					sc.orig = fmt.Sprintf("tabrelay-%d", h.nextAlias)
					result = replaceIdentifier(result, sc.orig)
					break
				}
			}
			s.scripts = append(s.scripts, sc)
		}
	case p.method == "Runtime.addBinding":
		var par struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(p.params, &par) == nil && par.Name != "" {
			s.dropBinding(par.Name)
			s.bindings = append(s.bindings, binding{name: par.Name, params: p.params})
		}
	}
	if _, ok := undoTable[p.method]; ok {
		m := t.owners[s.ext]
		if m == nil {
			m = map[string]*session{}
			t.owners[s.ext] = m
		}
		m[p.method] = s
	}
	return result
}

// replaceIdentifier returns result with its "identifier" field set to id.
func replaceIdentifier(result []byte, id string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(result, &m) != nil {
		return result
	}
	m["identifier"] = mustJSON(id)
	return mustJSON(m)
}

// afterFailure undoes optimistic bookkeeping of a failed command. Call with h.mu held.
func (h *Hub) afterFailure(p *pending) {
	domain, suffix, _ := strings.Cut(p.method, ".")
	if suffix == "enable" || implicitEnable[p.method] {
		h.unmarkEnabled(p.s, domain)
		delete(p.s.replaying, domain)
	}
}

// settleRuntime answers the Runtime.enable commands that waited for p, the forwarded one,
// with the replay and success. It runs whether or not p's own
// client is still there, so no waiter is stranded. Call with h.mu held.
func (h *Hub) settleRuntime(p *pending, errRaw []byte) {
	rs := p.rs
	if rs.enabler != p {
		return // superseded by a later forwarded enable, or already settled
	}
	rs.enabler = nil
	waiters := rs.waiters
	rs.waiters = nil
	for _, w := range waiters {
		w.c.inflight--
		if _, ok := w.c.sessions[w.s.id]; !ok { // its session ended without dropWaiters (child gone)
			w.c.send(errorMsg(true, w.clientID, w.replySID, codeNoSession, "tabrelay: the session was detached before Runtime.enable completed"))
			continue
		}
		// the waiter's own enable succeeded (that is when it waits): if the one it waited for
		// failed, its own switched Runtime on, and the contexts Chrome announced for it are
		// in the cache all the same
		w.s.inOrder(w.n, func() {
			h.replay(w.s, "Runtime")
			w.c.send(resultMsg(w.clientID, w.replySID, nil))
		})
		w.s.answered(w.n)
	}
}

// dropWaiters removes the Runtime.enable commands of session s, which is ending, from rs's
// waiters and answers them with an error. Call with h.mu held.
func (h *Hub) dropWaiters(rs *runtimeState, s *session) {
	kept := rs.waiters[:0]
	for _, w := range rs.waiters {
		if w.s != s {
			kept = append(kept, w)
			continue
		}
		w.c.inflight--
		w.c.send(errorMsg(true, w.clientID, w.replySID, codeNoSession, "tabrelay: the session was detached before Runtime.enable completed"))
	}
	clear(rs.waiters[len(kept):])
	rs.waiters = kept
}
