package relay

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// HubOptions tune the hub. Zero values take the defaults noted on each field.
type HubOptions struct {
	// CommandTimeout bounds every CDP command forwarded to the extension (default 30 s).
	CommandTimeout time.Duration
	// TabTimeout bounds tab operations: create, close, activate (default 30 s, as commands: a
	// loaded browser may take seconds to open a tab, and Chrome's own endpoint waits for it).
	TabTimeout time.Duration
	// Grace is how long shared tabs stay listed after the extension disconnects (default 10 s).
	Grace time.Duration
	// DetachAfter is how long a shared tab keeps its debugger attached after its last client
	// session ended, when the extension attaches it on demand (default 30 s).
	DetachAfter time.Duration
	// AllowCloseUserTabs lets clients close tabs the user shared (default: refused).
	AllowCloseUserTabs bool
	// MaxQueueBytes bounds what waits to be written to one client (default 256 MiB); a client
	// that falls further behind is disconnected with 1008 ("client too slow").
	MaxQueueBytes int
	// MaxQueueTotalBytes bounds what waits to be written to all clients together (default
	// 512 MiB); past it, the client with the largest queue is disconnected first, with 1008.
	MaxQueueTotalBytes int
	// MaxInFlight bounds one client's commands awaiting an answer (default 1000).
	MaxInFlight int
	// MaxUploadBytes bounds the files of one DOM.setFileInputFiles the relay sets itself when
	// the extension has no file access (default DefaultMaxUploadBytes; see upload.go).
	MaxUploadBytes int64
	// Logger receives structured logs (default: disabled).
	Logger *zerolog.Logger
	// TraceLegs records each forwarded command's times along its way (LegTrace), for the
	// benchmark's per-leg mode; off in normal use.
	TraceLegs bool
}

func (o *HubOptions) defaults() {
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = 30 * time.Second
	}
	if o.TabTimeout <= 0 {
		o.TabTimeout = 30 * time.Second
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Second
	}
	if o.DetachAfter <= 0 {
		o.DetachAfter = 30 * time.Second
	}
	if o.MaxQueueBytes <= 0 {
		o.MaxQueueBytes = 256 << 20
	}
	if o.MaxQueueTotalBytes <= 0 {
		o.MaxQueueTotalBytes = 512 << 20
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 1000
	}
	if o.MaxUploadBytes <= 0 {
		o.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if o.Logger == nil {
		l := zerolog.Nop()
		o.Logger = &l
	}
}

// Hub joins the one extension connection and every CDP client. All routing state lives here,
// behind one mutex; connections only read and write bytes.
type Hub struct {
	opts      HubOptions
	log       zerolog.Logger
	budget    *queueBudget // every client's outbox together
	browserID string
	contextID string

	mu        sync.Mutex
	ext       *extLink
	product   string
	userAgent string
	targets   map[string]*target // by page target id
	tabIDs    map[string]*target // by synthetic tab target id
	clients   map[*Client]struct{}
	pending   map[int64]*pending
	// late holds what to do with the answer of a request that timed out, should it still come
	// (see pending.late), by request id.
	late   map[int64]func(result []byte)
	nextID int64
	// permSeq orders the clients' permission overrides (permissions.go): the latest wins.
	permSeq   int64
	nextCID   uint64
	seq       int64
	nextAlias int64 // numbers the script identifiers the hub makes up (see afterSuccess)
	graceEnd  *time.Timer
	// gapUntil ends the current gap (see gap.go); parked are the requests waiting in it.
	gapUntil time.Time
	gapTimer *time.Timer
	parked   []parkedReq
	// downloads holds the downloads under way in shared tabs, by guid (see download.go).
	downloads map[string]*download
	closed    bool
	changed   chan struct{} // closed and replaced whenever the set of tabs changes
	// tabWaits counts the waits for a tab held through OfferTabWhile (the agent's MCP tool
	// calls) that have not ended (choosetab.go).
	tabWaits  int
	stopSweep context.CancelFunc
	// legs records commands' times when HubOptions.TraceLegs is on (nil otherwise).
	legs *legTracer
}

// NewHub returns a hub with no extension and no clients.
func NewHub(opts HubOptions) *Hub {
	opts.defaults()
	h := &Hub{
		opts:      opts,
		log:       *opts.Logger,
		budget:    newQueueBudget(opts.MaxQueueTotalBytes),
		browserID: randomID(),
		contextID: randomID(),
		product:   "Chrome/0.0.0.0",
		targets:   map[string]*target{},
		tabIDs:    map[string]*target{},
		clients:   map[*Client]struct{}{},
		pending:   map[int64]*pending{},
		late:      map[int64]func([]byte){},
		changed:   make(chan struct{}),
	}
	if opts.TraceLegs {
		h.legs = newLegTracer()
	}
	h.mu.Lock()
	h.setGap(time.Now().Add(opts.Grace)) // the extension of an earlier run reconnects
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	h.stopSweep = cancel
	go h.sweep(ctx)
	return h
}

// QueuedBytes is what waits to be written to all clients together (counted against
// HubOptions.MaxQueueTotalBytes).
func (h *Hub) QueuedBytes() int { return h.budget.total() }

// BrowserID is the id advertised in /json/version's webSocketDebuggerUrl.
func (h *Hub) BrowserID() string { return h.browserID }

// Close fails pending commands and disconnects everyone.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.stopSweep()
	h.unpark() // they fail now
	ext := h.ext
	clients := make([]*Client, 0, len(h.clients))
	for c := range h.clients {
		clients = append(clients, c)
	}
	h.mu.Unlock()
	if ext != nil {
		ext.kill(1001, "tabrelay server is shutting down")
	}
	for _, c := range clients {
		c.kill(closeGoingAway, "tabrelay server is shutting down")
	}
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return strings.ToUpper(hex.EncodeToString(b))
}

// tabTargetID derives the id of the synthetic "tab" target that holds a page target, as Chrome
// has since tab targets exist (Puppeteer expects them). It is stable for a given page id.
func tabTargetID(pageID string) string {
	s := sha256.Sum256([]byte("tab:" + pageID))
	return strings.ToUpper(hex.EncodeToString(s[:16]))
}

// target is one shared tab.
type target struct {
	id       string
	held     int    // tasks holding the tab (HoldWhile): its releasing sessions stay
	tabID    string // synthetic tab target id
	tab      wire.Tab
	seq      int64 // recency: higher is more recently shared or focused
	live     bool  // false while the extension is away (grace period)
	children map[string]*child
	// bound holds the client sessions attached to the tab ("") or to one of its child sessions.
	bound map[string]map[*session]struct{}
	// enabled holds, per extension session and domain, the client sessions that enabled it.
	enabled map[string]map[string]map[*session]struct{}
	// runtime caches execution contexts per extension session, to replay them to a client that
	// enables Runtime after another client did (Chrome does not repeat them).
	runtime map[string]*runtimeState
	// caches holds, per extension session and domain, the events Chrome replays on enable
	// (see replayable), while a client has the domain on.
	caches map[string]map[string]*eventCache
	// owners holds the client session that last set each override, per extension session.
	owners map[string]map[string]*session
	// baselines holds, per extension session and override method, the tab's own value for
	// overrides without a "clear" command.
	baselines map[string]map[string]*baseline
	// docs holds, per extension session, the document whose node ids clients hold (see
	// shareDocument).
	docs map[string]*domDoc
	// childSeq numbers children in the order they were attached.
	childSeq int64
	// dlWatch: the hub switched Page on in the tab's session to see its downloads (download.go).
	dlWatch bool
	// idle counts down to detaching the debugger once no client session uses the tab (see
	// ondemand.go).
	idle *time.Timer
	// dialogs holds the extension sessions with a JavaScript dialog open (see dialog.go).
	dialogs map[string]bool
	// load is the main frame's load as the events that passed tell it (see mainload.go).
	load mainLoad
}

type runtimeState struct {
	contexts []contextEntry
	// enabler is the forwarded Runtime.enable awaiting its answer, if any; enables from other
	// clients wait for it in waiters. Its answer releases them even when the client that sent it
	// has left or detached meanwhile (see settleRuntime).
	enabler *pending
	waiters []*pending
}

type contextEntry struct {
	id     int64
	params []byte
}

type child struct {
	ext       string // the extension's session id for the child
	parentExt string
	targetID  string
	typ       string
	info      json.RawMessage
	order     int64 // when it was attached, relative to the tab's other children
}

func newTarget(tab wire.Tab) *target {
	return &target{
		id:        tab.TargetID,
		tabID:     tabTargetID(tab.TargetID),
		tab:       tab,
		live:      true,
		children:  map[string]*child{},
		bound:     map[string]map[*session]struct{}{},
		enabled:   map[string]map[string]map[*session]struct{}{},
		runtime:   map[string]*runtimeState{},
		caches:    map[string]map[string]*eventCache{},
		owners:    map[string]map[string]*session{},
		baselines: map[string]map[string]*baseline{},
		docs:      map[string]*domDoc{},
	}
}

func (t *target) bind(s *session) {
	m := t.bound[s.ext]
	if m == nil {
		m = map[*session]struct{}{}
		t.bound[s.ext] = m
	}
	m[s] = struct{}{}
}

func (t *target) unbind(s *session) {
	if m := t.bound[s.ext]; m != nil {
		delete(m, s)
		if len(m) == 0 {
			delete(t.bound, s.ext)
		}
	}
}

// pageInfo is the CDP TargetInfo of the tab's page target.
func (h *Hub) pageInfo(t *target) []byte {
	info := map[string]any{
		"targetId":         t.id,
		"type":             "page",
		"title":            t.tab.Title,
		"url":              t.tab.URL,
		"attached":         len(t.bound[""]) > 0, // a client (or the agent) has a session on the page
		"canAccessOpener":  false,
		"browserContextId": h.contextID,
		"parentId":         t.tabID,
	}
	if t.tab.OpenerTargetID != "" {
		info["openerId"] = t.tab.OpenerTargetID
	}
	return mustJSON(info)
}

// tabInfo is the CDP TargetInfo of the synthetic tab target.
func (h *Hub) tabInfo(t *target) []byte {
	return mustJSON(map[string]any{
		"targetId":         t.tabID,
		"type":             "tab",
		"title":            t.tab.Title,
		"url":              t.tab.URL,
		"attached":         true,
		"canAccessOpener":  false,
		"browserContextId": h.contextID,
	})
}

func (h *Hub) browserInfo() []byte {
	return mustJSON(map[string]any{
		"targetId": h.browserID, "type": "browser", "title": "", "url": "", "attached": true, "canAccessOpener": false,
	})
}

// liveTargets returns the shared tabs, most recently shared or focused first.
func (h *Hub) liveTargets() []*target {
	ts := make([]*target, 0, len(h.targets))
	for _, t := range h.targets {
		if t.live {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].seq > ts[j].seq })
	return ts
}

// TabInfo describes a shared tab for discovery and the agent.
type TabInfo struct {
	TargetID string `json:"targetId"`
	TabID    int64  `json:"tabId"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Origin   string `json:"origin"`
	Active   bool   `json:"active"`
}

// Tabs lists the shared tabs, most recently shared or focused first.
func (h *Hub) Tabs() []TabInfo {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []TabInfo
	for _, t := range h.liveTargets() {
		out = append(out, TabInfo{TargetID: t.id, TabID: t.tab.TabID, URL: t.tab.URL, Title: t.tab.Title, Origin: t.tab.Origin, Active: t.tab.Active})
	}
	return out
}

// DebugTarget is one target listed in /json/list: a shared tab's page, or an out-of-process
// iframe in it, which has its own page endpoint as in Chrome.
type DebugTarget struct {
	TargetID string
	Type     string // "page" or "iframe"
	// ParentID is, for an iframe, the target id of the page or iframe that holds it.
	ParentID string
	URL      string
	Title    string
}

// DebugTargets lists the shared tabs' pages, most recently shared or focused first, each
// followed by its out-of-process iframes in the order they were attached.
func (h *Hub) DebugTargets() []DebugTarget {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []DebugTarget
	for _, t := range h.liveTargets() {
		out = append(out, DebugTarget{TargetID: t.id, Type: "page", URL: t.tab.URL, Title: t.tab.Title})
		frames := make([]*child, 0, len(t.children))
		for _, ch := range t.children {
			if ch.typ == "iframe" {
				frames = append(frames, ch)
			}
		}
		sort.Slice(frames, func(i, j int) bool { return frames[i].order < frames[j].order })
		for _, ch := range frames {
			var ti struct {
				URL   string `json:"url"`
				Title string `json:"title"`
			}
			_ = json.Unmarshal(ch.info, &ti)
			parent := t.id
			if p := t.children[ch.parentExt]; ch.parentExt != "" && p != nil {
				parent = p.targetID
			}
			out = append(out, DebugTarget{TargetID: ch.targetID, Type: ch.typ, ParentID: parent, URL: ti.URL, Title: ti.Title})
		}
	}
	return out
}

// Changed returns a channel that is closed the next time the set of shared tabs changes.
func (h *Hub) Changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

func (h *Hub) notifyChanged() {
	close(h.changed)
	h.changed = make(chan struct{})
	if len(h.parked) > 0 {
		h.unpark()
	}
}

// ExtensionConnected reports whether the extension is connected.
func (h *Hub) ExtensionConnected() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ext != nil
}

// Version returns the browser's product ("Chrome/156.0…") and user agent as the extension
// reported them.
func (h *Hub) Version() (product, userAgent string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.product, h.userAgent
}

// pending is a request sent to the extension that awaits its response.
type pending struct {
	id       int64
	c        *Client // nil for the hub's own requests
	clientID int64
	replySID string   // sessionId to put on the reply, as the client sent it
	s        *session // the session the command was sent on
	method   string
	params   []byte // kept only for commands whose effect the hub records
	target   *target
	// closes is the tab a client's Target.closeTarget asked the extension to close: it is
	// answered when the tab goes, before the tab's sessions are detached, as Chrome answers.
	closes *target
	// late undoes the effect of a request whose client was told it timed out, when its answer
	// comes after all (a tab opened for nobody is closed again).
	late     func(result []byte)
	deadline time.Time
	// done, when set, receives the outcome instead of a client (hub-internal requests and
	// emulated methods that need the extension).
	done func(result, errRaw []byte)
	// rs is set on a forwarded Runtime.enable: its answer settles rs's waiters.
	rs *runtimeState
	// ext is the extension session a forwarded Runtime.enable went to; rerun marks the second
	// try of one that found Runtime already on (see rerunEnable).
	ext   string
	rerun bool
	// n is the command's number on its session (see session.opened); 0 for the hub's own.
	n int64
	// replay names the domain whose enable replays, before its answer, what Chrome replays
	// (another client had the domain on, so Chrome does not).
	replay string
}

// sweep fails requests whose deadline passed.
func (h *Hub) sweep(ctx context.Context) {
	tick := h.opts.CommandTimeout / 8
	if tick > 250*time.Millisecond {
		tick = 250 * time.Millisecond
	}
	if tick < 5*time.Millisecond {
		tick = 5 * time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.mu.Lock()
			for id, p := range h.pending {
				if now.After(p.deadline) {
					delete(h.pending, id)
					if p.late != nil {
						h.late[id] = p.late
					}
					what := p.method
					if what == "" {
						what = "the tab operation"
					}
					h.failPending(p, codeServerError, fmt.Sprintf("tabrelay: the browser did not answer %s in time (the tab may be frozen, discarded or paused in the debugger)", what))
				}
			}
			h.mu.Unlock()
		}
	}
}

// failPending answers p with an error. Call with h.mu held and p removed from h.pending.
func (h *Hub) failPending(p *pending, code int, msg string) {
	errRaw := mustJSON(wire.Error{Code: int64(code), Message: msg})
	h.complete(p, nil, errRaw)
}

// complete delivers a response. Call with h.mu held and p removed from h.pending.
func (h *Hub) complete(p *pending, result, errRaw []byte) {
	if p.rs != nil {
		if errRaw == nil && h.rerunEnable(p) {
			return
		}
		h.settleRuntime(p, errRaw)
	}
	if p.done != nil {
		p.done(result, errRaw)
		return
	}
	c := p.c
	if errRaw == nil && p.replay == "Runtime" && !c.closed && h.parkEnable(p) {
		return // settleRuntime replays and answers it
	}
	if p.s != nil {
		// the hub's own answers that waited for this one go after it
		defer p.s.answered(p.n)
	}
	c.inflight--
	if c.closed {
		return
	}
	send := c.send
	if s := p.s; s != nil && s.emulating > 0 && p.n > 0 {
		// an earlier command of the session is being answered by the hub (see shareDocument):
		// this answer waits its turn, as Chrome answers one session's commands in order
		send = func(msg []byte) { s.inOrder(p.n, func() { c.send(msg) }) }
	}
	if errRaw != nil {
		if p.s != nil && p.target != nil {
			h.afterFailure(p)
		}
		send(rawErrorMsg(p.clientID, p.replySID, errRaw))
		return
	}
	if p.replay != "" {
		// the replay and the answer go out in the session's order, after its earlier commands'
		s := p.s
		s.inOrder(p.n, func() {
			if _, ok := c.sessions[s.id]; ok && s.replaying[p.replay] {
				h.replay(s, p.replay)
			}
			c.send(resultMsg(p.clientID, p.replySID, h.afterSuccess(p, result)))
		})
		return
	}
	if p.s != nil && p.target != nil {
		result = h.afterSuccess(p, result)
	}
	send(resultMsg(p.clientID, p.replySID, result))
}

// parkEnable makes a Runtime.enable that Chrome answered while the tab's execution contexts
// are still to come (the enable that announces them, forwarded earlier or by the hub after a
// re-attach, is not answered yet) wait for that enable, whose answer replays the contexts to
// it. It reports whether it did. Call with h.mu held.
func (h *Hub) parkEnable(p *pending) bool {
	rs := p.target.runtime[p.ext]
	if rs == nil || rs.enabler == nil || rs.enabler == p || !p.s.replaying["Runtime"] {
		return false
	}
	if _, ok := p.c.sessions[p.s.id]; !ok {
		return false
	}
	rs.waiters = append(rs.waiters, p)
	return true
}

// rerunEnable handles a forwarded Runtime.enable that Chrome answered without announcing any
// execution context. A page always has its main world, so Runtime was already on in the tab's
// debugger session (left on by the clients of a relay that restarted while the extension kept
// the tab attached, say) and Chrome did not repeat the contexts: no client of this relay has
// Runtime on there, so the hub switches it off and on again, once, and the enable's answer (and
// its waiters') waits for the second one. It reports whether it did. Call with h.mu held.
func (h *Hub) rerunEnable(p *pending) bool {
	rs, t := p.rs, p.target
	if p.rerun || rs.enabler != p || len(rs.contexts) > 0 || t == nil || !t.live || h.ext == nil || t.runtime[p.ext] != rs {
		return false
	}
	h.log.Debug().Str("target", t.id).Str("session", p.ext).Msg("Runtime.enable announced no execution context: Runtime was on already; switching it off and on")
	h.internal(t, p.ext, "Runtime.disable", nil)
	q := *p
	q.rerun = true
	rs.enabler = &q
	ext := p.ext
	if !h.request(&q, func(id int64) []byte { return extCDPMsg(id, t.id, ext, "Runtime.enable", nil) }, h.opts.CommandTimeout) {
		rs.enabler = p
		return false
	}
	return true
}

// request sends a relay request to the extension. Call with h.mu held.
func (h *Hub) request(p *pending, msg func(id int64) []byte, timeout time.Duration) bool {
	if h.ext == nil {
		return false
	}
	h.nextID++
	p.id = h.nextID
	p.deadline = time.Now().Add(timeout)
	h.pending[p.id] = p
	if !h.ext.out.push(msg(p.id)) {
		delete(h.pending, p.id)
		return false
	}
	return true
}

// internal sends a CDP command on the hub's own behalf (cleanup, re-enable); its answer is dropped.
func (h *Hub) internal(t *target, ext, method string, params []byte) {
	if h.ext == nil || !t.live {
		return
	}
	p := &pending{method: method, target: t, done: func(_, errRaw []byte) {
		if errRaw != nil {
			h.log.Debug().Str("method", method).RawJSON("error", errRaw).Msg("cleanup command failed")
		}
	}}
	h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, ext, method, params) }, h.opts.CommandTimeout)
}

// OfferTab asks the extension to offer the person a choice of tab to share, when no tab is
// shared and an extension is connected (who says who waits: "cdp", "agent"). It reports
// whether the extension was asked.
func (h *Hub) OfferTab(who string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.offerTab(who)
}

// offerWaiting offers a choice of tab for the browser-endpoint clients that connected while no
// tab was shared and are still connected (and for the agent's waits that have not ended), if l is still the live extension and shares no tab:
// it runs once the extension, newly connected, has announced the tabs it shares.
func (h *Hub) offerWaiting(l *extLink) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.ext != l {
		return
	}
	offered := false
	for c := range h.clients {
		if c.wantsTab && !c.closed {
			offered = h.offerTab("cdp")
			break
		}
	}
	if !offered && h.tabWaits > 0 {
		offered = h.offerTab("agent")
	}
	h.log.Debug().Int("shared", len(h.liveTargets())).Bool("offered", offered).Msg("the extension has announced its tabs")
}

// offerTab is OfferTab with h.mu held.
func (h *Hub) offerTab(who string) bool {
	if h.ext == nil || len(h.liveTargets()) > 0 {
		return false
	}
	msg, err := json.Marshal(wire.ChooseTab{Type: wire.TypeChooseTab, Client: who})
	if err != nil {
		return false
	}
	if !h.ext.out.push(msg) {
		return false
	}
	h.log.Debug().Str("client", who).Msg("no tab shared: asked the extension to offer a choice of tab")
	return true
}
