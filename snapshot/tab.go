package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// Frame is one frame of a tab as far as snapshots and actions need it.
type Frame struct {
	// ID is the CDP frame id (for an out-of-process iframe also its target id).
	ID string
	// ParentID is the parent frame's id, empty for the main frame.
	ParentID string
	// Session is the flat CDP session that owns the frame's document.
	Session string
	// LoaderID changes when the frame loads a new document.
	LoaderID string
	// URL is the frame's document URL.
	URL string
}

// Dialog is a JavaScript dialog (alert, confirm, prompt, beforeunload) open in a tab.
type Dialog struct {
	Type          string `json:"type"`
	Message       string `json:"message"`
	DefaultPrompt string `json:"defaultPrompt,omitempty"`
	URL           string `json:"url,omitempty"`
	// Session is the CDP session the dialog belongs to (the page's or an iframe's).
	Session string `json:"-"`
}

// Tab is an attached browser tab: its flat CDP session, the sessions of its out-of-process
// iframes, its open JavaScript dialog and its ref table. Create it with Attach. A Tab is safe for
// concurrent use, but callers should serialize actions on one tab (see agent/actions).
type Tab struct {
	c        *cdpclient.Client
	targetID string
	session  string
	unsub    func()

	mu       sync.Mutex
	children map[string]childSession // OOPIF frame id (= target id) -> session
	dialog   *Dialog
	listen   []func(cdpclient.Event)
	closed   bool

	refs refTable
	// worlds are the in-page walker's isolated worlds, by frame
	worlds worlds
	// inPage builds snapshots with the in-page walker instead of the accessibility tree
	inPage bool
	// framesChanged is set by any frame event (attached, detached, navigated, an iframe
	// target attached or detached) since the last in-page build took the frame list
	framesChanged bool
	// axOn lists the sessions with the Accessibility domain on (the reference builder's)
	axOn map[string]bool
	// noReuse makes every in-page build walk every frame (see ReuseUnchanged)
	noReuse bool
	// render serializes the rendering of in-page trees, which builds may share (see reuse)
	render sync.Mutex
}

// UseInPage chooses how the tab's snapshots are built: on (the default), by a walker that
// computes the outline in each frame's isolated world and hands over only what is rendered
// (fast on large pages); off, from Chrome's full accessibility tree (the reference, slow on
// large pages). Call it before the first snapshot: refs of one tab come from one builder.
func (t *Tab) UseInPage(on bool) {
	t.mu.Lock()
	t.inPage = on
	t.mu.Unlock()
}

// takeFramesChanged reports whether the tab's frames may have changed since the last call.
func (t *Tab) takeFramesChanged() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.framesChanged
	t.framesChanged = false
	return c
}

// markFramesChanged makes the next in-page build ask the frame tree.
func (t *Tab) markFramesChanged() {
	t.mu.Lock()
	t.framesChanged = true
	t.mu.Unlock()
}

// ReuseUnchanged chooses whether an in-page build may reuse what did not change: on (the
// default), a frame whose change check (run in the page with the walk) finds nothing changed
// since its latest walk is not walked again, and a snapshot of a page where nothing changed is
// the previous one, refs and all; off, every build walks every frame, as benchmarks of the
// build itself need.
func (t *Tab) ReuseUnchanged(on bool) {
	t.mu.Lock()
	t.noReuse = !on
	t.mu.Unlock()
}

func (t *Tab) reuses() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.noReuse
}

func (t *Tab) usesInPage() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.inPage
}

type childSession struct {
	session  string
	parentID string // parent frame id (from targetInfo.parentFrameId)
	url      string
}

// Attach attaches to the page target targetID over c (a browser-level connection with flat
// sessions), enables the Page domain and auto-attach for out-of-process iframes, and starts
// tracking dialogs. The caller must Close the tab when done.
func Attach(ctx context.Context, c *cdpclient.Client, targetID string) (*Tab, error) {
	t := &Tab{c: c, targetID: targetID, children: map[string]childSession{}, inPage: true}
	t.refs.init()
	// Subscribe before attaching so no auto-attach event is missed.
	t.unsub = c.Subscribe(t.onEvent)
	var at struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}, &at); err != nil {
		t.unsub()
		return nil, fmt.Errorf("attach to tab %s: %w", targetID, err)
	}
	t.mu.Lock()
	t.session = at.SessionID
	t.mu.Unlock()
	if err := t.setupSession(ctx, at.SessionID); err != nil {
		t.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("set up tab %s: %w", targetID, err)
	}
	return t, nil
}

func (t *Tab) setupSession(ctx context.Context, session string) error {
	if err := t.c.Call(ctx, session, "Page.enable", nil, nil); err != nil {
		return err
	}
	return t.c.Call(ctx, session, "Target.setAutoAttach", map[string]any{
		"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true,
	}, nil)
}

// OnEvent registers fn for every CDP event of this tab's sessions (page and iframes). fn runs on
// the connection's read loop: it must not block or call the client.
func (t *Tab) OnEvent(fn func(cdpclient.Event)) {
	t.mu.Lock()
	t.listen = append(t.listen, fn)
	t.mu.Unlock()
}

func (t *Tab) ownsSession(id string) bool {
	if id == "" {
		return false
	}
	if id == t.session {
		return true
	}
	for _, ch := range t.children {
		if ch.session == id {
			return true
		}
	}
	return false
}

func (t *Tab) onEvent(e cdpclient.Event) {
	t.mu.Lock()
	if t.closed || !t.ownsSession(e.SessionID) {
		t.mu.Unlock()
		return
	}
	switch e.Method {
	case "Target.attachedToTarget":
		var p struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				TargetID      string `json:"targetId"`
				Type          string `json:"type"`
				URL           string `json:"url"`
				ParentFrameID string `json:"parentFrameId"`
			} `json:"targetInfo"`
		}
		if json.Unmarshal(e.Params, &p) == nil && p.TargetInfo.Type == "iframe" {
			t.children[p.TargetInfo.TargetID] = childSession{session: p.SessionID, parentID: p.TargetInfo.ParentFrameID, url: p.TargetInfo.URL}
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				// Nested out-of-process frames and dialogs inside the frame; errors only mean
				// the frame went away again.
				_ = t.setupSession(ctx, p.SessionID)
			}()
		}
	case "Target.detachedFromTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			for id, ch := range t.children {
				if ch.session == p.SessionID {
					delete(t.children, id)
				}
			}
			delete(t.axOn, p.SessionID)
		}
	case "Page.javascriptDialogOpening":
		var d Dialog
		if json.Unmarshal(e.Params, &d) == nil {
			d.Session = e.SessionID
			t.dialog = &d
		}
	case "Page.javascriptDialogClosed":
		t.dialog = nil
	case "Page.frameNavigated":
		var p struct {
			Frame struct {
				ID       string `json:"id"`
				ParentID string `json:"parentId"`
			} `json:"frame"`
		}
		if json.Unmarshal(e.Params, &p) == nil && p.Frame.ParentID == "" && e.SessionID == t.session {
			t.dialog = nil
		}
	}
	switch e.Method {
	case "Page.frameAttached", "Page.frameDetached", "Page.frameNavigated", "Page.documentOpened",
		"Page.navigatedWithinDocument", // history.pushState, a #fragment: the frame's URL changed
		"Target.attachedToTarget", "Target.detachedFromTarget":
		t.framesChanged = true
	}
	fns := t.listen
	t.mu.Unlock()
	for _, fn := range fns {
		fn(e)
	}
}

// enableAX turns the Accessibility domain on in session, once: Chrome then keeps the session's
// accessibility tree cached, and getFullAXTree gets 2-3x faster on big pages. Only the
// reference builder needs it; the in-page builder leaves it off, as keeping the tree costs the
// page's renderer on every change.
func (t *Tab) enableAX(ctx context.Context, session string) {
	t.mu.Lock()
	on := t.axOn[session]
	if t.axOn == nil {
		t.axOn = map[string]bool{}
	}
	t.axOn[session] = true
	t.mu.Unlock()
	if !on {
		_ = t.c.Call(ctx, session, "Accessibility.enable", nil, nil)
	}
}

// TargetID is the tab's target id.
func (t *Tab) TargetID() string { return t.targetID }

// Session is the tab's page session id.
func (t *Tab) Session() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

// Client is the CDP connection the tab uses.
func (t *Tab) Client() *cdpclient.Client { return t.c }

// Dialog returns the JavaScript dialog open in the tab, or nil.
func (t *Tab) Dialog() *Dialog {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dialog == nil {
		return nil
	}
	d := *t.dialog
	return &d
}

// DialogClosed records that the open dialog was handled (the event may arrive later).
func (t *Tab) DialogClosed() {
	t.mu.Lock()
	t.dialog = nil
	t.mu.Unlock()
}

// Close stops tracking and detaches from the tab (the tab itself stays open).
func (t *Tab) Close(ctx context.Context) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	s := t.session
	t.mu.Unlock()
	t.unsub()
	if s == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return t.c.Call(ctx, "", "Target.detachFromTarget", map[string]any{"sessionId": s}, nil)
}

type frameTreeJSON struct {
	Frame struct {
		ID       string `json:"id"`
		ParentID string `json:"parentId"`
		LoaderID string `json:"loaderId"`
		URL      string `json:"url"`
		URLFrag  string `json:"urlFragment"`
	} `json:"frame"`
	ChildFrames []frameTreeJSON `json:"childFrames"`
}

// Frames lists the tab's frames: the main frame first, then same-process and out-of-process
// iframes (depth first).
func (t *Tab) Frames(ctx context.Context) ([]Frame, error) {
	var out []Frame
	seen := map[string]bool{}
	var walk func(session, parentOverride string, ft frameTreeJSON)
	walk = func(session, parentOverride string, ft frameTreeJSON) {
		f := Frame{ID: ft.Frame.ID, ParentID: ft.Frame.ParentID, Session: session, LoaderID: ft.Frame.LoaderID, URL: ft.Frame.URL + ft.Frame.URLFrag}
		if parentOverride != "" && f.ParentID == "" {
			f.ParentID = parentOverride
		}
		if !seen[f.ID] {
			seen[f.ID] = true
			out = append(out, f)
		}
		for _, ch := range ft.ChildFrames {
			walk(session, "", ch)
		}
	}
	var root struct {
		FrameTree frameTreeJSON `json:"frameTree"`
	}
	if err := t.c.Call(ctx, t.Session(), "Page.getFrameTree", nil, &root); err != nil {
		return nil, fmt.Errorf("frame tree: %w", err)
	}
	walk(t.Session(), "", root.FrameTree)
	t.mu.Lock()
	children := make(map[string]childSession, len(t.children))
	for k, v := range t.children {
		children[k] = v
	}
	t.mu.Unlock()
	// the out-of-process frames' trees, asked in parallel, walked in a stable order
	ids := slices.Sorted(maps.Keys(children))
	trees := make([]*frameTreeJSON, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r struct {
				FrameTree frameTreeJSON `json:"frameTree"`
			}
			if err := t.c.Call(ctx, children[id].session, "Page.getFrameTree", nil, &r); err != nil {
				return // the frame went away
			}
			if r.FrameTree.Frame.ID == "" {
				r.FrameTree.Frame.ID = id
			}
			trees[i] = &r.FrameTree
		}()
	}
	wg.Wait()
	for i, id := range ids {
		if trees[i] != nil {
			// an OOPIF's own tree names it as a root; its parent is the embedding frame
			walk(children[id].session, children[id].parentID, *trees[i])
		}
	}
	return out, nil
}

// childSessionFor returns the session of an out-of-process iframe, if attached.
func (t *Tab) childSessionFor(frameID string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ch, ok := t.children[frameID]
	return ch.session, ok
}

// ErrDialogOpen is wrapped by errors returned while a JavaScript dialog blocks the page.
var ErrDialogOpen = errors.New("a JavaScript dialog is open")

// DialogError returns an error describing the open dialog, or nil if none is open.
func (t *Tab) DialogError() error {
	d := t.Dialog()
	if d == nil {
		return nil
	}
	return fmt.Errorf("%w: %s %q blocks the page; accept or dismiss it first", ErrDialogOpen, d.Type, clip(d.Message, 120))
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
