// Package relaytest provides a simulated tabrelay extension: a real WebSocket peer that speaks
// the wire protocol (relay/wire) and answers CDP commands the way Chrome does where it matters to
// the relay (Runtime.enable announces contexts once, domains stay enabled until disabled,
// overrides stay until cleared). It makes relay tests and benchmarks fast and deterministic; it
// never replaces the end-to-end tests against real Chromium and the real extension. Impostor is
// a fake server on a tabrelay port that records what clients send it, for the impostor tests.
package relaytest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// ExtensionOrigin is the Origin the fake sends: the bundled extension's pinned id.
const ExtensionOrigin = "chrome-extension://ofadlohlidnjalhlaflailnbkbminbnb"

// Command is one CDP command the fake received.
type Command struct {
	TargetID  string
	SessionID string
	Method    string
	Params    json.RawMessage
}

// Handler answers a CDP command; returning handled=false falls back to the default behaviour.
type Handler func(cmd Command) (result any, cdpErr *wire.Error, handled bool)

// Extension is a simulated extension connected to a relay.
type Extension struct {
	conn *websocket.Conn
	ctx  context.Context
	stop context.CancelFunc
	wmu  sync.Mutex

	mu       sync.Mutex
	tabs     map[string]*tab
	cmds     []Command
	cancels  []string              // guids of the cancelDownload requests received
	perms    []wire.ContentSetting // the last setPermissions request's settings
	chooses  []string              // the clients of the chooseTab notices, in order
	ends     int                   // the chooseTabEnded notices received
	handler  Handler
	nextTab  int64
	answered int
	closed   chan struct{}
	// toggles holds, per tab, session and domain, the done channel of the last X.enable or
	// X.disable received: the next one waits for it, as Chrome runs a session's commands in order.
	toggles map[string]chan struct{}
	// emit sends an event of a tab; Direct replaces it.
	emit     func(targetID, sessionID, method string, params any) error
	closeErr error

	// debugger holds the attachTab and detachTab requests received, as "type targetId".
	debugger []string
	// closes holds the target ids of the closeTab requests received, in order.
	closes []string
	// createHold, while set, holds the tabs the relay asks to open until it is closed.
	createHold chan struct{}
	// closeHold, when set, holds the tabs the relay asks to close (see HoldCloses).
	closeHold chan struct{}

	chunkSize int
	chunks    atomic.Bool  // the relay takes chunk frames
	batches   atomic.Int64 // batch frames received (Options.Batches)
	stream    atomic.Int64 // numbers chunked messages

	batchAnswers bool
	takesBatches atomic.Bool // the relay's welcome said it takes batch frames
	held         []byte      // an answer waiting for another to share its frame (BatchAnswers)
	heldTimer    *time.Timer
	sentBatches  atomic.Int64
}

type tab struct {
	info    wire.Tab
	enabled map[string]bool // "session|Domain"
	state   map[string]bool // "session|override"
	// scripts holds the page's Page.addScriptToEvaluateOnNewDocument sources by identifier;
	// lastScript numbers them, afresh in each debugger session as Chrome does.
	scripts    map[string]string
	lastScript int
	bindings   map[string]bool // Runtime.addBinding names of the page
}

func newTab(info wire.Tab) *tab {
	return &tab{info: info, enabled: map[string]bool{}, state: map[string]bool{}, scripts: map[string]string{}, bindings: map[string]bool{}}
}

// Options configure Dial.
type Options struct {
	Origin  string // default ExtensionOrigin
	Product string // default Chrome/156.0.0.0
	Hello   bool   // send hello (default true unless NoHello)
	NoHello bool
	// Header adds handshake headers, e.g. the Sec-Fetch-* ones Chrome sends for the real
	// extension's WebSocket.
	Header http.Header
	// ChunkSize, when set and the relay's welcome says it takes chunk frames, splits messages
	// longer than this many bytes into chunk frames (wire.ChunkPrefix) as the real extension
	// does; other messages may go between the pieces.
	ChunkSize int
	// OnDemand makes the hello say "onDemand": the relay then sends attachTab and detachTab
	// (see Debugger).
	OnDemand bool
	// Batches makes the hello say "batches": the relay may then send several messages as one
	// JSON-array frame, which the fake extension handles one by one (see BatchFrames).
	Batches bool
	// BatchAnswers, when the relay's welcome says it takes batch frames, sends the answers to
	// CDP commands two at a time in one JSON-array frame, as the real extension does while
	// several commands are in flight (a lone answer goes after a few milliseconds).
	BatchAnswers bool
}

// Dial connects to the relay at addr (host:port) with the secret token and says hello.
func Dial(ctx context.Context, addr, token string, opts *Options) (*Extension, error) {
	if opts == nil {
		opts = &Options{}
	}
	origin := opts.Origin
	if origin == "" {
		origin = ExtensionOrigin
	}
	h := opts.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Origin", origin)
	conn, resp, err := websocket.Dial(ctx, "ws://"+addr+"/extension?token="+token, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("fake extension: dial: HTTP %d: %w", resp.StatusCode, err)
		}
		return nil, fmt.Errorf("fake extension: dial: %w", err)
	}
	conn.SetReadLimit(256 << 20)
	cctx, cancel := context.WithCancel(context.Background())
	e := &Extension{conn: conn, ctx: cctx, stop: cancel, tabs: map[string]*tab{}, closed: make(chan struct{}), toggles: map[string]chan struct{}{}, chunkSize: opts.ChunkSize, batchAnswers: opts.BatchAnswers}
	e.emit = e.Event
	go e.readLoop()
	if !opts.NoHello {
		product := opts.Product
		if product == "" {
			product = "Chrome/156.0.0.0"
		}
		hello := map[string]any{"type": "hello", "protocol": wire.Version, "extensionVersion": "test", "product": product,
			"userAgent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) " + product + " Safari/537.36"}
		if opts.OnDemand {
			hello["onDemand"] = true
		}
		if opts.Batches {
			hello["batches"] = true
		}
		if err := e.send(hello); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Closed is closed when the relay ended the connection; CloseStatus tells how.
func (e *Extension) Closed() <-chan struct{} { return e.closed }

// CloseStatus is the WebSocket close code the relay sent, or -1.
func (e *Extension) CloseStatus() websocket.StatusCode { return websocket.CloseStatus(e.closeErr) }

// Close drops the connection as a crashed or restarted extension would.
func (e *Extension) Close() {
	e.stop()
	e.conn.CloseNow()
	<-e.closed
}

// SetHandler installs a handler consulted before the default behaviour.
func (e *Extension) SetHandler(h Handler) {
	e.mu.Lock()
	e.handler = h
	e.mu.Unlock()
}

// HoldCreates holds the tabs the relay asks to open (a browser slow to open them) until release
// is called; then they open, in the order asked.
func (e *Extension) HoldCreates() (release func()) {
	hold := make(chan struct{})
	e.mu.Lock()
	e.createHold = hold
	e.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			e.createHold = nil
			e.mu.Unlock()
			close(hold)
		})
	}
}

// HoldCloses holds the tabs the relay asks to close (a browser slow to close them) until release
// is called; then they close.
func (e *Extension) HoldCloses() (release func()) {
	hold := make(chan struct{})
	e.mu.Lock()
	e.closeHold = hold
	e.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			e.closeHold = nil
			e.mu.Unlock()
			close(hold)
		})
	}
}

// Closes returns the target ids of the tabs the relay asked to close, in order.
func (e *Extension) Closes() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.closes...)
}

// Cancels returns the guids of the downloads the relay asked to cancel, in order.
func (e *Extension) Cancels() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.cancels...)
}

// ChooseTabs returns the "client" of each chooseTab notice the relay sent, in order.
func (e *Extension) ChooseTabs() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.chooses...)
}

// ChooseTabEnds returns how many chooseTabEnded notices (nobody waits for a tab any more) the
// relay sent.
func (e *Extension) ChooseTabEnds() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ends
}

// Permissions returns the content settings of the last setPermissions request (nil before
// one came).
func (e *Extension) Permissions() []wire.ContentSetting {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]wire.ContentSetting(nil), e.perms...)
}

// Commands returns the CDP commands received so far.
func (e *Extension) Commands() []Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Command(nil), e.cmds...)
}

// Received reports whether a command with method reached the fake for targetID.
func (e *Extension) Received(targetID, method string) bool {
	for _, c := range e.Commands() {
		if c.TargetID == targetID && c.Method == method {
			return true
		}
	}
	return false
}

// Enabled reports whether domain is switched on in the tab's session (sessionID "" for the page).
func (e *Extension) Enabled(targetID, sessionID, domain string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tabs[targetID]
	return t != nil && t.enabled[sessionID+"|"+domain]
}

// LeaveEnabled switches domain on in a tab's session (sessionID "" for the page) behind the
// relay's back, as a debugger session left with the domain on does, for example by the clients
// of a relay that restarted while the extension kept the tab attached. The tab must be shared.
func (e *Extension) LeaveEnabled(targetID, sessionID, domain string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t := e.tabs[targetID]; t != nil {
		t.enabled[sessionID+"|"+domain] = true
	}
}

// Override reports whether an override (e.g. "deviceMetrics") is in force on the tab.
func (e *Extension) Override(targetID, name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tabs[targetID]
	return t != nil && t.state["|"+name]
}

// Scripts returns the page's scripts to evaluate on new documents (source by identifier).
func (e *Extension) Scripts(targetID string) map[string]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]string{}
	if t := e.tabs[targetID]; t != nil {
		for id, src := range t.scripts {
			out[id] = src
		}
	}
	return out
}

// Bindings reports whether the page has a Runtime binding called name.
func (e *Extension) Bindings(targetID, name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tabs[targetID]
	return t != nil && t.bindings[name]
}

// Share announces a tab as shared (origin "user" unless set).
func (e *Extension) Share(targetID, url, title string) error {
	info := wire.Tab{TabID: int64(len(targetID)), TargetID: targetID, URL: url, Title: title, Origin: wire.OriginUser, Active: true}
	return e.ShareTab(info)
}

// ShareTab announces a tab with full details. With info.Reattached the tab behaves as one whose
// debugger was attached anew: Chrome forgot its enabled domains and overrides.
func (e *Extension) ShareTab(info wire.Tab) error {
	e.mu.Lock()
	if t := e.tabs[info.TargetID]; t == nil || info.Reattached {
		e.tabs[info.TargetID] = newTab(info)
	} else {
		t.info = info
	}
	e.mu.Unlock()
	return e.send(map[string]any{"type": wire.TypeTabShared, "tab": info})
}

// UpdateTab reports a change of a shared tab (its address, title or loading status).
func (e *Extension) UpdateTab(info wire.Tab) error {
	e.mu.Lock()
	if t := e.tabs[info.TargetID]; t != nil {
		t.info = info
	}
	e.mu.Unlock()
	return e.send(map[string]any{"type": wire.TypeTabUpdated, "tab": info})
}

// Unshare reports a tab as no longer shared.
func (e *Extension) Unshare(targetID, reason string) error {
	e.mu.Lock()
	delete(e.tabs, targetID)
	e.mu.Unlock()
	return e.send(map[string]any{"type": wire.TypeTabUnshared, "targetId": targetID, "reason": reason})
}

// Event sends a CDP event of a tab (sessionID "" for the page, else a child session).
func (e *Extension) Event(targetID, sessionID, method string, params any) error {
	m := map[string]any{"type": wire.TypeEvent, "targetId": targetID, "method": method, "params": params}
	if sessionID != "" {
		m["sessionId"] = sessionID
	}
	return e.send(m)
}

// AttachChild announces a child target (an out-of-process iframe) of a tab.
func (e *Extension) AttachChild(targetID, childSession, childTarget, url string) error {
	return e.Event(targetID, "", "Target.attachedToTarget", map[string]any{
		"sessionId":          childSession,
		"targetInfo":         map[string]any{"targetId": childTarget, "type": "iframe", "title": url, "url": url, "attached": true, "canAccessOpener": false},
		"waitingForDebugger": false,
	})
}

// SendRaw writes a raw frame (for malformed-input tests).
func (e *Extension) SendRaw(b []byte) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	// a frame of tens of MiB, read by a relay under the race detector on a busy machine, can
	// take longer than 10 s to go through; a write cut by its deadline closes the socket
	ctx, cancel := context.WithTimeout(e.ctx, testlimit.Scale(10*time.Second))
	defer cancel()
	return e.conn.Write(ctx, websocket.MessageText, b)
}

func (e *Extension) send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if e.chunkSize <= 0 || len(b) <= e.chunkSize || !e.chunks.Load() {
		return e.SendRaw(b)
	}
	stream := e.stream.Add(1)
	for len(b) > 0 {
		n := min(e.chunkSize, len(b))
		for n < len(b) && !utf8.RuneStart(b[n]) { // whole characters in each frame
			n++
		}
		state := "more"
		if n == len(b) {
			state = "end"
		}
		frame := append([]byte(fmt.Sprintf("%s%d %s\n", wire.ChunkPrefix, stream, state)), b[:n]...)
		if err := e.SendRaw(frame); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// BatchFrames is how many batch frames (JSON arrays of messages) the relay sent.
func (e *Extension) BatchFrames() int64 { return e.batches.Load() }

func (e *Extension) readLoop() {
	defer close(e.closed)
	for {
		_, b, err := e.conn.Read(e.ctx)
		if err != nil {
			e.closeErr = err
			return
		}
		if len(b) > 0 && b[0] == '[' {
			var list []json.RawMessage
			if json.Unmarshal(b, &list) != nil {
				continue
			}
			e.batches.Add(1)
			for _, m := range list {
				e.handle(m)
			}
			continue
		}
		e.handle(b)
	}
}

// handle answers one message from the relay.
func (e *Extension) handle(b []byte) {
	var m struct {
		Type      string          `json:"type"`
		ID        int64           `json:"id"`
		TargetID  string          `json:"targetId"`
		SessionID string          `json:"sessionId"`
		Method    string          `json:"method"`
		Params    json.RawMessage `json:"params"`
		URL       string          `json:"url"`
		Chunks    bool            `json:"chunks"`
		Batches   bool            `json:"batches"`
		Client    string          `json:"client"`
	}
	if json.Unmarshal(b, &m) != nil {
		return
	}
	switch m.Type {
	case wire.TypeWelcome:
		e.chunks.Store(m.Chunks)
		e.takesBatches.Store(m.Batches)
	case wire.TypeCDP:
		cmd := Command{TargetID: m.TargetID, SessionID: m.SessionID, Method: m.Method, Params: m.Params}
		var prev, done chan struct{}
		e.mu.Lock()
		e.cmds = append(e.cmds, cmd) // in arrival order, as Chrome runs one session's commands
		if domain, name, _ := strings.Cut(m.Method, "."); name == "enable" || name == "disable" {
			// switching a domain on and off takes effect in arrival order; other commands
			// run concurrently, so a test can hold one without holding the rest
			key := m.TargetID + "|" + m.SessionID + "|" + domain
			prev, done = e.toggles[key], make(chan struct{})
			e.toggles[key] = done
		}
		e.mu.Unlock()
		go func() {
			if done != nil {
				defer close(done)
			}
			if prev != nil {
				<-prev
			}
			e.handleCDP(m.ID, cmd)
		}()
	case wire.TypeCreateTab:
		e.mu.Lock()
		e.nextTab++
		n := e.nextTab
		id := fmt.Sprintf("NEWTAB%026d", n)
		hold := e.createHold
		e.mu.Unlock()
		open := func() {
			_ = e.ShareTab(wire.Tab{TabID: 1000 + n, TargetID: id, URL: m.URL, Title: m.URL, Origin: wire.OriginClient})
			_ = e.respond(m.ID, map[string]string{"targetId": id}, nil)
		}
		if hold == nil {
			open()
			break
		}
		go func() {
			<-hold
			open()
		}()
	case wire.TypeCloseTab:
		e.mu.Lock()
		e.closes = append(e.closes, m.TargetID)
		hold := e.closeHold
		e.mu.Unlock()
		closeTab := func() {
			_ = e.Unshare(m.TargetID, wire.ReasonClosed)
			_ = e.respond(m.ID, map[string]any{}, nil)
		}
		if hold == nil {
			closeTab()
			break
		}
		go func() {
			<-hold
			closeTab()
		}()
	case wire.TypeActivateTab, wire.TypeUnshareTab:
		_ = e.respond(m.ID, map[string]any{}, nil)
	case wire.TypeCancelDownload:
		var c wire.DownloadRequest
		_ = json.Unmarshal(b, &c)
		e.mu.Lock()
		e.cancels = append(e.cancels, c.GUID)
		e.mu.Unlock()
		_ = e.respond(m.ID, map[string]any{}, nil)
	case wire.TypeSetPermissions:
		var p wire.PermissionsRequest
		_ = json.Unmarshal(b, &p)
		e.mu.Lock()
		e.perms = append([]wire.ContentSetting{}, p.Settings...)
		e.mu.Unlock()
		_ = e.respond(m.ID, map[string]any{}, nil)
	case wire.TypeChooseTab:
		e.mu.Lock()
		e.chooses = append(e.chooses, m.Client)
		e.mu.Unlock()
	case wire.TypeChooseTabEnded:
		e.mu.Lock()
		e.ends++
		e.mu.Unlock()
	case wire.TypeAttachTab, wire.TypeDetachTab:
		e.mu.Lock()
		e.debugger = append(e.debugger, m.Type+" "+m.TargetID)
		e.mu.Unlock()
		_ = e.respond(m.ID, map[string]any{}, nil)
	}
}

func (e *Extension) respond(id int64, result any, cdpErr *wire.Error) error {
	m := map[string]any{"type": wire.TypeResponse, "id": id}
	if cdpErr != nil {
		m["error"] = cdpErr
	} else {
		m["result"] = result
	}
	if e.batchAnswers && e.takesBatches.Load() {
		return e.respondBatched(m)
	}
	return e.send(m)
}

// respondBatched holds an answer until a second one comes, then sends both in one batch frame
// (BatchAnswers); a lone answer goes alone after a few milliseconds.
func (e *Extension) respondBatched(m map[string]any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if e.held == nil {
		e.held = b
		e.heldTimer = time.AfterFunc(5*time.Millisecond, func() {
			e.mu.Lock()
			lone := e.held
			e.held = nil
			e.mu.Unlock()
			if lone != nil {
				_ = e.SendRaw(lone)
			}
		})
		e.mu.Unlock()
		return nil
	}
	first := e.held
	e.held = nil
	e.heldTimer.Stop()
	// written under e.mu so that no later answer overtakes the pair
	defer e.mu.Unlock()
	e.sentBatches.Add(1)
	return e.SendRaw([]byte("[" + string(first) + "," + string(b) + "]"))
}

// SentBatchFrames is how many batch frames of answers the fake sent (BatchAnswers).
func (e *Extension) SentBatchFrames() int64 { return e.sentBatches.Load() }

func (e *Extension) handleCDP(id int64, cmd Command) {
	e.mu.Lock()
	h := e.handler
	t := e.tabs[cmd.TargetID]
	e.mu.Unlock()
	if h != nil {
		if res, cerr, ok := h(cmd); ok {
			if res == nil && cerr == nil {
				return // never answer
			}
			_ = e.respond(id, res, cerr)
			return
		}
	}
	if t == nil {
		_ = e.respond(id, nil, &wire.Error{Code: -32000, Message: "No tab with given id " + cmd.TargetID})
		return
	}
	res, cerr := e.chrome(t, cmd)
	_ = e.respond(id, res, cerr)
	e.mu.Lock()
	e.answered++
	e.mu.Unlock()
}

// Debugger returns the attachTab and detachTab requests received so far, in order, each as
// "attachTab <targetId>" or "detachTab <targetId>".
func (e *Extension) Debugger() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.debugger...)
}

// Answered counts the CDP commands answered by the default behaviour.
func (e *Extension) Answered() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.answered
}

// chrome is the default behaviour, modelled on Chrome's.
func (e *Extension) chrome(t *tab, cmd Command) (any, *wire.Error) {
	domain, name, _ := strings.Cut(cmd.Method, ".")
	key := cmd.SessionID + "|" + domain
	switch {
	case cmd.Method == "Runtime.enable":
		e.mu.Lock()
		was := t.enabled[key]
		t.enabled[key] = true
		url := t.info.URL
		e.mu.Unlock()
		if !was { // Chrome announces existing contexts only on the first enable
			_ = e.emit(t.info.TargetID, cmd.SessionID, "Runtime.executionContextCreated", map[string]any{
				"context": map[string]any{"id": 1, "origin": url, "name": "", "uniqueId": "ctx-1",
					"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": "FRAME-" + t.info.TargetID}},
			})
		}
		return map[string]any{}, nil
	case name == "enable":
		e.mu.Lock()
		t.enabled[key] = true
		e.mu.Unlock()
		return map[string]any{}, nil
	case name == "disable":
		e.mu.Lock()
		delete(t.enabled, key)
		e.mu.Unlock()
		return map[string]any{}, nil
	case cmd.Method == "Emulation.setDeviceMetricsOverride":
		e.setState(t, cmd.SessionID+"|deviceMetrics", true)
		return map[string]any{}, nil
	case cmd.Method == "Emulation.clearDeviceMetricsOverride":
		e.setState(t, cmd.SessionID+"|deviceMetrics", false)
		return map[string]any{}, nil
	case cmd.Method == "Page.addScriptToEvaluateOnNewDocument" && cmd.SessionID == "":
		var p struct {
			Source string `json:"source"`
		}
		_ = json.Unmarshal(cmd.Params, &p)
		e.mu.Lock()
		t.lastScript++
		id := strconv.Itoa(t.lastScript)
		t.scripts[id] = p.Source
		e.mu.Unlock()
		return map[string]any{"identifier": id}, nil
	case cmd.Method == "Page.removeScriptToEvaluateOnNewDocument" && cmd.SessionID == "":
		var p struct {
			Identifier string `json:"identifier"`
		}
		_ = json.Unmarshal(cmd.Params, &p)
		e.mu.Lock()
		delete(t.scripts, p.Identifier)
		e.mu.Unlock()
		return map[string]any{}, nil
	case (cmd.Method == "Runtime.addBinding" || cmd.Method == "Runtime.removeBinding") && cmd.SessionID == "":
		var p struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(cmd.Params, &p)
		e.mu.Lock()
		if cmd.Method == "Runtime.addBinding" {
			t.bindings[p.Name] = true
		} else {
			delete(t.bindings, p.Name)
		}
		e.mu.Unlock()
		return map[string]any{}, nil
	case cmd.Method == "Runtime.evaluate":
		var p struct {
			Expression string `json:"expression"`
		}
		_ = json.Unmarshal(cmd.Params, &p)
		return map[string]any{"result": map[string]any{"type": "string", "value": "evaluated:" + p.Expression}}, nil
	case cmd.Method == "Page.captureScreenshot":
		var p struct {
			Quality int `json:"quality"` // abused by tests as the size in KiB
		}
		_ = json.Unmarshal(cmd.Params, &p)
		n := p.Quality * 1024
		if n == 0 {
			n = 1024
		}
		return map[string]any{"data": strings.Repeat("A", n)}, nil
	case cmd.Method == "Page.getFrameTree":
		return map[string]any{"frameTree": map[string]any{"frame": map[string]any{
			"id": "FRAME-" + t.info.TargetID, "loaderId": "LOADER-1", "url": t.info.URL, "domainAndRegistry": "",
			"securityOrigin": t.info.URL, "mimeType": "text/html", "secureContextType": "InsecureScheme",
			"crossOriginIsolatedContextType": "NotIsolated", "gatedAPIFeatures": []string{},
		}}}, nil
	case cmd.Method == "DOM.getDocument":
		return map[string]any{"root": map[string]any{"nodeId": 1, "backendNodeId": 1, "nodeType": 9, "nodeName": "#document",
			"localName": "", "nodeValue": "", "childNodeCount": 0, "children": []any{}, "documentURL": t.info.URL, "baseURL": t.info.URL}}, nil
	case cmd.Method == "Test.fail":
		return nil, &wire.Error{Code: -32000, Message: "test failure"}
	}
	return map[string]any{}, nil
}

func (e *Extension) setState(t *tab, key string, on bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if on {
		t.state[key] = true
	} else {
		delete(t.state, key)
	}
}
