package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/actions/urlpolicy"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Options configure a Service. The zero value is usable.
type Options struct {
	// Timeout bounds one action unless the action sets its own (default 30s).
	Timeout time.Duration
	// History is how many console messages, page errors and network requests are kept per tab
	// (default 200).
	History int
	// AllowFileURLs lets navigate and open load file: URLs (local files of the machine running
	// the browser). Off by default: only http, https and about:blank are opened (see
	// [urlpolicy]).
	AllowFileURLs bool
	// Registry holds the action kinds the service runs (default: [Default]).
	Registry *Registry
	// SettleQuiet is how long the page must go without a DOM mutation or a network request
	// to count as settled after an action that may change it (default 400ms).
	SettleQuiet time.Duration
	// SettleTimeout bounds that wait (default 3s); a negative value turns settling off.
	SettleTimeout time.Duration
	// Gate judges every action before it reaches the page (default: a gate with default
	// options; see package gate). Who asks comes with the action's context (gate.With).
	Gate *gate.Gate
	// Log receives the gate's decisions (kind, verdict, reason; never page contents at info).
	Log zerolog.Logger
	// AccessibilityTree builds snapshots from Chrome's full accessibility tree (the reference
	// builder) instead of in the page (see snapshot.Tab.UseInPage); slower on large pages.
	AccessibilityTree bool
}

// Service runs actions on the tabs of one browser connection. Actions on the same tab run one
// at a time in arrival order; different tabs run in parallel. It is safe for concurrent use.
type Service struct {
	c    *cdpclient.Client
	opts Options

	mu   sync.Mutex
	tabs map[string]*tabState
	dl   *downloadLog // downloads started in the tabs (downloads.go)
}

// New returns a Service over c, a connection to a browser-level CDP endpoint (the relay's /cdp
// or a real Chrome's browser endpoint) with flat sessions.
func New(c *cdpclient.Client, opts Options) *Service {
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.History <= 0 {
		opts.History = 200
	}
	if opts.Registry == nil {
		opts.Registry = Default()
	}
	if opts.Gate == nil {
		opts.Gate = gate.New(gate.Options{})
	}
	if opts.SettleQuiet <= 0 {
		opts.SettleQuiet = defaultSettleQuiet
	}
	if opts.SettleTimeout == 0 {
		opts.SettleTimeout = defaultSettleTimeout
	}
	s := &Service{c: c, opts: opts, tabs: map[string]*tabState{}, dl: newDownloadLog()}
	if c != nil {
		c.Subscribe(s.dl.onEvent)
		c.Subscribe(s.onDetached)
	}
	return s
}

// The service is a client of the relay like any other: it attaches to a tab when it acts on it
// and keeps that session (and what it learned through it: console, network, refs) only as long
// as the relay keeps it. The relay ends the session DetachAfter after the service's last
// command (or when the tab stops being shared); the service then drops the tab's state
// (reset) and attaches anew on its next action. A session that turns out stale anyway (its end
// raced an action) is replaced once, transparently (retryStale).

// onDetached drops the state of a tab whose session the relay ended. It runs on the
// connection's read loop.
func (s *Service) onDetached(e cdpclient.Event) {
	if e.Method != "Target.detachedFromTarget" || e.SessionID != "" {
		return
	}
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(e.Params, &p) != nil || p.SessionID == "" {
		return
	}
	s.mu.Lock()
	var gone *tabState
	for _, ts := range s.tabs {
		if ts.tab.Session() == p.SessionID {
			gone = ts
		}
	}
	s.mu.Unlock()
	if gone != nil {
		go s.reset(gone)
	}
}

// reset drops ts, the state kept for one tab, and detaches its session if it still exists:
// the next action on the tab attaches anew. It is the one way the service lets go of a tab
// (the relay ended the session, the session was stale, the tab was closed).
func (s *Service) reset(ts *tabState) {
	s.mu.Lock()
	if s.tabs[ts.id] == ts {
		delete(s.tabs, ts.id)
	}
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = ts.tab.Close(ctx) // fails when the relay ended the session already: nothing to undo
}

// staleSession reports whether err says the tab's session no longer exists: the relay ended it
// (the tab was unshared and shared again, its debugger let go, the bar dismissed) while the
// service still held it.
func staleSession(err error) bool {
	var ce *cdpclient.Error
	return errors.Is(err, cdpclient.ErrSessionDetached) || errors.As(err, &ce) && ce.Code == codeNoSession
}

// codeNoSession is the CDP error code for a command on a session that does not exist
// ("Session with given id not found."), from Chrome and the relay alike.
const codeNoSession = -32001

// retryStale runs fn on tab targetID's state and, when it fails because that state's session
// was stale, drops the state and runs fn once more on a fresh session.
func retryStale[T any](ctx context.Context, s *Service, targetID string, fn func(*tabState) (T, error)) (T, error) {
	for attempt := 0; ; attempt++ {
		ts, err := s.tabFor(ctx, targetID)
		if err != nil {
			var zero T
			return zero, err
		}
		v, err := fn(ts)
		if err == nil || attempt > 0 || !staleSession(err) {
			return v, err
		}
		s.reset(ts)
		targetID = ts.id
	}
}

// Registry is the registry of the kinds the service runs.
func (s *Service) Registry() *Registry { return s.opts.Registry }

// TabInfo describes one tab.
type TabInfo struct {
	TargetID string `json:"targetId"`
	URL      string `json:"url"`
	Title    string `json:"title"`
}

// ConsoleMessage is one console call of a page.
type ConsoleMessage struct {
	Type string    `json:"type"`
	Text string    `json:"text"`
	Time time.Time `json:"time"`
}

// PageError is an uncaught exception of a page.
type PageError struct {
	Text string    `json:"text"`
	Time time.Time `json:"time"`
}

// Request is one network request of a page.
type Request struct {
	ID     string `json:"-"`
	Method string `json:"method"`
	URL    string `json:"url"`
	Type   string `json:"type,omitempty"`
	Status int    `json:"status,omitempty"`
	MIME   string `json:"mimeType,omitempty"`
	Failed string `json:"failed,omitempty"`
	Done   bool   `json:"done"`
}

// tabState is what the service keeps per attached tab.
type tabState struct {
	id  string
	tab *snapshot.Tab
	sem chan struct{} // the tab's serial queue

	mu       sync.Mutex
	console  []ConsoleMessage
	errs     []PageError
	requests []Request
	// documents are the methods of the last request that loaded each URL as a document (a
	// POST: loading it again sends a form again), bounded by history
	documents map[string]string
	inflight  map[string]time.Time // requests not answered yet, by id: when they started
	lastNet   time.Time            // the tab's last network activity: a request sent, answered, finished, or data of its body
	history   int
	// settleWorld is the execution context of the settle probe's isolated world (0: none yet)
	settleWorld int
	// probed is the settle probe's reading taken right after the current action's input (see
	// observe), for settlePage's first look; zero when there is none.
	probed probeReading
	// held are the elements the safety gate resolved for the current action, by ref, handed on
	// to the action's handler (resolve) so that it does not resolve them again; released
	// (dropHeld) when the action ends.
	held map[string]*snapshot.Element
	// judged is the step the safety gate judged for the current action when its input may
	// commit a form or follow a link (a click, a key press, typing that ends in Enter): read
	// again as the input lands (commitInput). nil for a caller's own action and other kinds.
	judged *gate.Proposal
	// times are the phases of the current action, for the debug log (timing.go)
	times actionTimes
}

func appendBounded[T any](s []T, v T, n int) []T {
	s = append(s, v)
	if len(s) > n {
		s = append(s[:0:0], s[len(s)-n:]...)
	}
	return s
}

func (ts *tabState) onEvent(e cdpclient.Event) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	switch e.Method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			text := ""
			for i, a := range p.Args {
				if i > 0 {
					text += " "
				}
				if a.Value != nil {
					if s, ok := a.Value.(string); ok {
						text += s
					} else {
						b, _ := json.Marshal(a.Value)
						text += string(b)
					}
				} else {
					text += a.Description
				}
			}
			ts.console = appendBounded(ts.console, ConsoleMessage{Type: p.Type, Text: clip(text, 2000), Time: time.Now()}, ts.history)
		}
	case "Runtime.exceptionThrown":
		var p struct {
			Details struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			text := p.Details.Exception.Description
			if text == "" {
				text = p.Details.Text
			}
			ts.errs = appendBounded(ts.errs, PageError{Text: clip(text, 2000), Time: time.Now()}, ts.history)
		}
	case "Network.requestWillBeSent":
		var p struct {
			RequestID string `json:"requestId"`
			Type      string `json:"type"`
			Request   struct {
				URL    string `json:"url"`
				Method string `json:"method"`
			} `json:"request"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			ts.requests = appendBounded(ts.requests, Request{ID: p.RequestID, Method: p.Request.Method, URL: clip(p.Request.URL, 500), Type: p.Type}, ts.history)
			if p.Type == "Document" {
				if ts.documents == nil || len(ts.documents) >= ts.history {
					ts.documents = map[string]string{}
				}
				ts.documents[p.Request.URL] = p.Request.Method
			}
			ts.lastNet = time.Now()
			ts.inflight[p.RequestID] = ts.lastNet
		}
	case "Network.responseReceived":
		var p struct {
			RequestID string `json:"requestId"`
			Response  struct {
				Status   int    `json:"status"`
				MimeType string `json:"mimeType"`
			} `json:"response"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			// answered: what is left is its body, whose arrival (Network.dataReceived) is
			// activity of its own; Chrome never reports a keepalive fetch's end (no
			// loadingFinished), which would keep it in flight until streamAge
			delete(ts.inflight, p.RequestID)
			ts.lastNet = time.Now()
			for i := len(ts.requests) - 1; i >= 0; i-- {
				if ts.requests[i].ID == p.RequestID {
					ts.requests[i].Status, ts.requests[i].MIME = p.Response.Status, p.Response.MimeType
					break
				}
			}
		}
	case "Network.dataReceived":
		ts.lastNet = time.Now()
	case "Network.loadingFinished", "Network.loadingFailed":
		var p struct {
			RequestID string `json:"requestId"`
			ErrorText string `json:"errorText"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			delete(ts.inflight, p.RequestID)
			ts.lastNet = time.Now()
			for i := len(ts.requests) - 1; i >= 0; i-- {
				if ts.requests[i].ID == p.RequestID {
					ts.requests[i].Done, ts.requests[i].Failed = true, p.ErrorText
					break
				}
			}
		}
	}
}

// posted reports whether the last load of u as a document was a POST (a form sent).
func (ts *tabState) posted(u string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.documents[u] == "POST"
}

// networkIdle reports whether no request has been in flight for d.
func (ts *tabState) networkIdle(d time.Duration) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.inflight) == 0 && time.Since(ts.lastNet) >= d
}

// Tabs lists the browser's page tabs in the order Target.getTargets returns them (through the
// relay: the shared tabs, most recently shared or focused first).
func (s *Service) Tabs(ctx context.Context) ([]TabInfo, error) {
	var r struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
			Title    string `json:"title"`
		} `json:"targetInfos"`
	}
	if err := s.c.Call(ctx, "", "Target.getTargets", nil, &r); err != nil {
		return nil, fmt.Errorf("list tabs: %w", err)
	}
	var out []TabInfo
	task := gate.TaskFrom(ctx)
	for _, t := range r.TargetInfos {
		if t.Type == "page" {
			out = append(out, TabInfo{TargetID: t.TargetID, URL: t.URL, Title: t.Title})
			// a task that lists the tabs reads their addresses (a session token in another
			// tab's URL is that tab's origin's)
			task.ReadTab(t.URL, t.Title)
		}
	}
	return out, nil
}

// ErrCovered is matched (errors.Is) by the error for an element another element covers
// (a dialog, a banner); the message names both and the way out.
var ErrCovered = errors.New("element covered")

type coveredError struct{ msg string }

func (e *coveredError) Error() string        { return e.msg }
func (e *coveredError) Is(target error) bool { return target == ErrCovered }

// ErrScript is matched (errors.Is) by the error for JavaScript that threw.
var ErrScript = errors.New("script error")

type scriptError struct{ detail string }

func (e *scriptError) Error() string        { return "script error: " + e.detail }
func (e *scriptError) Is(target error) bool { return target == ErrScript }

// ErrNoTab is wrapped by errors when no tab is shared or the named tab does not exist.
var ErrNoTab = errors.New("no such tab")

// tabFor returns the state of tab targetID ("" for the first tab), attaching on first use.
func (s *Service) tabFor(ctx context.Context, targetID string) (*tabState, error) {
	if targetID == "" {
		tabs, err := s.Tabs(ctx)
		if err != nil {
			return nil, err
		}
		if len(tabs) == 0 {
			return nil, fmt.Errorf("%w: no tab is shared; share a tab first", ErrNoTab)
		}
		targetID = tabs[0].TargetID
	}
	s.mu.Lock()
	if ts := s.tabs[targetID]; ts != nil {
		s.mu.Unlock()
		return ts, nil
	}
	s.mu.Unlock()
	tab, err := s.attach(ctx, targetID)
	if err == nil && s.opts.AccessibilityTree {
		tab.UseInPage(false)
	}
	var blocked *BlockedError
	if errors.As(err, &blocked) {
		return nil, err
	}
	if err != nil {
		tabs, lerr := s.Tabs(ctx)
		if lerr == nil {
			found := false
			for _, t := range tabs {
				found = found || t.TargetID == targetID
			}
			if !found {
				return nil, fmt.Errorf("%w: tab %s is not open or not shared; list tabs to pick one", ErrNoTab, targetID)
			}
		}
		return nil, err
	}
	ts := &tabState{id: targetID, tab: tab, sem: make(chan struct{}, 1), inflight: map[string]time.Time{}, history: s.opts.History}
	tab.OnEvent(ts.onEvent)
	sess := tab.Session()
	// History is best effort: a tab where these fail still snapshots and acts.
	_ = s.c.Call(ctx, sess, "Runtime.enable", nil, nil)
	_ = s.c.Call(ctx, sess, "Network.enable", nil, nil)
	s.mu.Lock()
	if old := s.tabs[targetID]; old != nil {
		s.mu.Unlock()
		tab.Close(ctx)
		return old, nil
	}
	s.tabs[targetID] = ts
	s.mu.Unlock()
	return ts, nil
}

// resolve resolves ref for the current action: the element the safety gate resolved for it
// if any (the caller owns it from then on: it releases it), else a fresh resolution.
func (ts *tabState) resolve(ctx context.Context, ref string) (*snapshot.Element, error) {
	if el := ts.held[ref]; el != nil {
		delete(ts.held, ref)
		return el, nil
	}
	return ts.tab.Resolve(ctx, ref)
}

// hold keeps el, resolved for the current action's gate, for its handler (see resolve).
func (ts *tabState) hold(ref string, el *snapshot.Element) {
	if old := ts.held[ref]; old != nil {
		ts.tab.Release(context.Background(), old)
	}
	if ts.held == nil {
		ts.held = map[string]*snapshot.Element{}
	}
	ts.held[ref] = el
}

// dropHeld releases the elements the current action's handler did not take.
func (ts *tabState) dropHeld(ctx context.Context) {
	for ref, el := range ts.held {
		ts.tab.Release(ctx, el)
		delete(ts.held, ref)
	}
}

// lock takes the tab's queue slot.
func (ts *tabState) lock(ctx context.Context) error {
	select {
	case ts.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the tab's previous action: %w", ctx.Err())
	}
}

func (ts *tabState) unlock() { <-ts.sem }

// Snapshot takes a role snapshot of tab targetID ("" for the first tab).
func (s *Service) Snapshot(ctx context.Context, targetID string, o snapshot.Options) (*snapshot.Snapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.Timeout)
	defer cancel()
	return retryStale(ctx, s, targetID, func(ts *tabState) (*snapshot.Snapshot, error) {
		if err := ts.lock(ctx); err != nil {
			return nil, err
		}
		defer ts.unlock()
		snap, err := ts.tab.Snapshot(ctx, o)
		if err == nil {
			if t := gate.TaskFrom(ctx); t != nil {
				t.Begin(snap.URL)
				t.Read(snap.URL, snap.URL) // its address too: a session token in its query
				t.Read(snap.URL, snap.Text)
			}
		}
		return snap, err
	})
}

// Tab returns the attached snapshot.Tab for targetID ("" for the first tab), attaching on
// first use. Callers that act on it directly bypass the tab's queue.
func (s *Service) Tab(ctx context.Context, targetID string) (*snapshot.Tab, error) {
	ts, err := s.tabFor(ctx, targetID)
	if err != nil {
		return nil, err
	}
	return ts.tab, nil
}

// Close detaches from every tab (the tabs stay open).
func (s *Service) Close(ctx context.Context) error {
	s.mu.Lock()
	tabs := s.tabs
	s.tabs = map[string]*tabState{}
	s.mu.Unlock()
	var errs []error
	for _, ts := range tabs {
		if err := ts.tab.Close(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// ErrURLNotAllowed is matched (errors.Is) by the error of a navigate or open whose URL the
// service refuses to load: any scheme but http, https and about:blank (file: only with
// Options.AllowFileURLs), however it is spelled. The tab stays where it was.
var ErrURLNotAllowed = urlpolicy.ErrRefused

// checkURL applies the URL policy to raw (relative input resolves against base, the tab's URL)
// and returns the URL to load. It is the only gate between an action's URL and the browser.
func (s *Service) checkURL(raw, base string) (string, error) {
	u, err := urlpolicy.Policy{AllowFile: s.opts.AllowFileURLs}.Normalize(raw, base)
	if err != nil {
		return "", fmt.Errorf("not opening %q: %w", clip(urlpolicy.Clean(raw), 200), err)
	}
	return u, nil
}
