package snapshot

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// walkerJS is the in-page walker (inpage.js): evaluated once in an isolated world of each frame,
// it defines globalThis.__tabrelay there, which computes the outline of a document or shadow
// root in the page (roles, names, states, values, boxes, script-clickables) and hands over only
// that, as compact JSON, instead of the whole accessibility tree.
//
//go:embed inpage.js
var walkerJS string

// worldName names the isolated world the walker lives in.
const worldName = "tabrelay-snapshot"

// Flags of an in-page node (inpage.js).
const (
	wFocused = 1 << iota
	wModal
	wPassword
	wFocusable
	wEditable
	wPointer
	wListener
	wShadowHost
	wNoListener // an element whose listeners do not make it clickable (html, body, frames, labels)
)

// wnode is one node of the walker's output: a run of text (T) or an element. Plain structs,
// so that encoding/json decodes the whole tree in one pass.
type wnode struct {
	T string   `json:"t"`
	R string   `json:"r"`
	N string   `json:"n"`
	V string   `json:"v"`
	U string   `json:"u"`
	S []string `json:"s"`
	F int      `json:"f"`
	I int      `json:"i"`
	Y *float64 `json:"y"`
	B *float64 `json:"b"`
	O []string `json:"o"`
	K []wnode  `json:"k"`
}

// world is the walker's isolated world in one frame document.
type world struct {
	loaderID string
	context  int
}

// worlds caches the isolated world of each frame (by frame id) for a tab.
type worlds struct {
	mu sync.Mutex
	m  map[string]world
	// frames are the frames of the latest in-page build (the next one starts from them)
	frames []Frame
	// owners caches frame owners: child frame id -> parent loader id and walker id
	owners map[string]owner
	// nodes caches listener nodes: session -> backend node id -> frame id and walker id (0: not
	// an element of a walked frame)
	nodes map[string]map[int]listenerNode
	// doc is the main-world document object per session, fetched ahead for the next
	// listener lookup in its own object group
	doc map[string]docObject
	// groups numbers the object groups of listener lookups
	groups int
}

type owner struct {
	parentLoader string
	id           int
}

type listenerNode struct {
	frameID, loaderID string
	id                int
}

type docObject struct {
	objectID, group string
	uses            int
}

// context returns the execution context of f's walker world, creating the world and
// evaluating the walker in it on first use for f's document.
func (t *Tab) worldContext(ctx context.Context, f *Frame) (int, error) {
	t.worlds.mu.Lock()
	w, ok := t.worlds.m[f.ID]
	t.worlds.mu.Unlock()
	if ok && w.loaderID == f.LoaderID {
		return w.context, nil
	}
	var r struct {
		ContextID int `json:"executionContextId"`
	}
	if err := t.c.Call(ctx, f.Session, "Page.createIsolatedWorld", map[string]any{"frameId": f.ID, "worldName": worldName}, &r); err != nil {
		return 0, fmt.Errorf("isolated world for frame %s: %w", f.ID, err)
	}
	var ev evalResult
	if err := t.c.Call(ctx, f.Session, "Runtime.evaluate", map[string]any{"expression": walkerJS, "contextId": r.ContextID}, &ev); err != nil {
		return 0, fmt.Errorf("load the walker in frame %s: %w", f.ID, err)
	}
	if err := ev.err(); err != nil {
		return 0, fmt.Errorf("load the walker in frame %s: %w", f.ID, err)
	}
	t.worlds.mu.Lock()
	if t.worlds.m == nil {
		t.worlds.m = map[string]world{}
	}
	t.worlds.m[f.ID] = world{loaderID: f.LoaderID, context: r.ContextID}
	t.worlds.mu.Unlock()
	return r.ContextID, nil
}

// forgetWorld drops f's cached world (its context was destroyed).
func (t *Tab) forgetWorld(f *Frame) {
	t.worlds.mu.Lock()
	delete(t.worlds.m, f.ID)
	t.worlds.mu.Unlock()
}

// evalResult is a Runtime.evaluate or Runtime.callFunctionOn result.
type evalResult struct {
	Result struct {
		Type     string          `json:"type"`
		Value    json.RawMessage `json:"value"`
		ObjectID string          `json:"objectId"`
	} `json:"result"`
	Exception *struct {
		Text      string `json:"text"`
		Exception struct {
			Description string `json:"description"`
		} `json:"exception"`
	} `json:"exceptionDetails"`
}

func (e *evalResult) err() error {
	if e.Exception == nil {
		return nil
	}
	if d := e.Exception.Exception.Description; d != "" {
		return errors.New(clip(d, 300))
	}
	return errors.New(e.Exception.Text)
}

// inWorld evaluates expression in f's walker world; a destroyed context (the document went
// away between the frame list and now) is recreated once.
func (t *Tab) inWorld(ctx context.Context, f *Frame, expression string, byValue bool) (*evalResult, error) {
	for attempt := 0; ; attempt++ {
		id, err := t.worldContext(ctx, f)
		if err != nil {
			return nil, err
		}
		var ev evalResult
		err = t.c.Call(ctx, f.Session, "Runtime.evaluate", map[string]any{
			"expression": expression, "contextId": id, "returnByValue": byValue, "includeCommandLineAPI": true,
		}, &ev)
		var ce *cdpclient.Error
		if err != nil && errors.As(err, &ce) && attempt == 0 && ctx.Err() == nil {
			t.markFramesChanged()
			t.forgetWorld(f) // "Cannot find context with specified id"
			continue
		}
		if err != nil {
			return nil, err
		}
		return &ev, ev.err()
	}
}

// clickTypes are the events whose listeners make an element script-clickable.
var clickTypes = map[string]bool{"click": true, "mousedown": true, "mouseup": true, "pointerdown": true, "pointerup": true}

// maxListenerNodes bounds how many elements with script-added click listeners a snapshot looks
// up (each costs two calls).
const maxListenerNodes = 200

// listeners returns, per frame of session (frames: the session's frames, its root first), the
// walker ids of the elements that have click listeners added by script: DOMDebugger lists every
// listener of the document's tree (frames and shadow roots included) with its node, and each
// node is then found in the walkers' worlds. Handlers set by onclick attributes are left out:
// the walker sees those itself.
func (t *Tab) listeners(ctx context.Context, session string, frames []*Frame) map[string]map[int]bool {
	doc, ok := t.takeDoc(session)
	if !ok {
		var err error
		if doc, err = t.fetchDoc(ctx, session); err != nil {
			return nil
		}
	}
	defer t.keepDoc(ctx, session, doc)
	var r struct {
		Listeners []struct {
			Type      string `json:"type"`
			BackendID int    `json:"backendNodeId"`
			Handler   *struct {
				Description string `json:"description"`
			} `json:"handler"`
		} `json:"listeners"`
	}
	params := map[string]any{"objectId": doc.objectID, "depth": -1, "pierce": true}
	if err := t.c.Call(ctx, session, "DOMDebugger.getEventListeners", params, &r); err != nil {
		// the document fetched ahead is gone (a navigation): fetch it again
		t.releaseGroup(ctx, session, doc.group)
		if doc, err = t.fetchDoc(ctx, session); err != nil {
			return nil
		}
		params["objectId"] = doc.objectID
		if err := t.c.Call(ctx, session, "DOMDebugger.getEventListeners", params, &r); err != nil {
			return nil
		}
	}
	seen := map[int]bool{}
	var nodes []int
	for _, l := range r.Listeners {
		if !clickTypes[l.Type] || l.BackendID == 0 || seen[l.BackendID] || len(nodes) >= maxListenerNodes {
			continue
		}
		if l.Handler != nil && strings.HasPrefix(l.Handler.Description, "function on"+l.Type+"(") {
			continue // an onclick attribute's handler
		}
		seen[l.BackendID] = true
		nodes = append(nodes, l.BackendID)
	}
	loaders := map[string]string{}
	for _, f := range frames {
		loaders[f.ID] = f.LoaderID
	}
	out := map[string]map[int]bool{}
	var mu sync.Mutex
	add := func(n listenerNode) {
		mu.Lock()
		defer mu.Unlock()
		if n.id == 0 {
			return
		}
		if out[n.frameID] == nil {
			out[n.frameID] = map[int]bool{}
		}
		out[n.frameID][n.id] = true
	}
	var wg sync.WaitGroup
	for _, backendID := range nodes {
		if n, ok := t.cachedNode(session, backendID); ok && loaders[n.frameID] == n.loaderID {
			add(n)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := listenerNode{frameID: frames[0].ID, loaderID: frames[0].LoaderID} // not an element of a walked frame
			for _, f := range frames {
				wctx, err := t.worldContext(ctx, f)
				if err != nil {
					return // try again next time
				}
				obj, err := t.resolveIn(ctx, session, backendID, wctx)
				if err != nil {
					continue // not in this frame's document
				}
				var cr evalResult
				err = t.c.Call(ctx, session, "Runtime.callFunctionOn", map[string]any{
					"objectId": obj, "functionDeclaration": "function(){return globalThis.__tabrelay.id(this)}", "returnByValue": true,
				}, &cr)
				t.release(ctx, session, obj)
				var id int
				if err != nil || json.Unmarshal(cr.Result.Value, &id) != nil {
					return
				}
				n = listenerNode{frameID: f.ID, loaderID: f.LoaderID, id: id}
				break
			}
			t.cacheNode(session, backendID, n)
			add(n)
		}()
	}
	wg.Wait()
	return out
}

// maxCachedNodes bounds the listener node cache of a session.
const maxCachedNodes = 20000

func (t *Tab) cachedNode(session string, backendID int) (listenerNode, bool) {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	n, ok := t.worlds.nodes[session][backendID]
	return n, ok
}

func (t *Tab) cacheNode(session string, backendID int, n listenerNode) {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	if t.worlds.nodes == nil {
		t.worlds.nodes = map[string]map[int]listenerNode{}
	}
	m := t.worlds.nodes[session]
	if m == nil || len(m) >= maxCachedNodes {
		m = map[int]listenerNode{}
		t.worlds.nodes[session] = m
	}
	m[backendID] = n
}

// docUses is how many listener lookups use one document object: the handlers each lookup
// wraps stay in its object group until the group is released with it.
const docUses = 16

// takeDoc returns (and forgets) the document object kept for session.
func (t *Tab) takeDoc(session string) (docObject, bool) {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	d, ok := t.worlds.doc[session]
	delete(t.worlds.doc, session)
	return d, ok
}

// keepDoc keeps the document object d for the next lookup, or after docUses lookups
// releases its group and fetches a new one in the background.
func (t *Tab) keepDoc(ctx context.Context, session string, d docObject) {
	d.uses++
	if d.uses < docUses {
		t.worlds.mu.Lock()
		if t.worlds.doc == nil {
			t.worlds.doc = map[string]docObject{}
		}
		_, taken := t.worlds.doc[session]
		if !taken {
			t.worlds.doc[session] = d
		}
		t.worlds.mu.Unlock()
		if !taken {
			return
		}
	}
	t.prefetchDoc(ctx, session, d.group)
}

// fetchDoc evaluates the main world's document of session's root frame in a new object group
// (the listeners' handlers are wrapped in the same group, released after use).
func (t *Tab) fetchDoc(ctx context.Context, session string) (docObject, error) {
	t.worlds.mu.Lock()
	t.worlds.groups++
	group := "tabrelay-listeners-" + strconv.Itoa(t.worlds.groups)
	t.worlds.mu.Unlock()
	var doc evalResult
	if err := t.c.Call(ctx, session, "Runtime.evaluate", map[string]any{"expression": "document", "objectGroup": group}, &doc); err != nil {
		return docObject{}, err
	}
	if doc.Result.ObjectID == "" {
		return docObject{}, errors.New("no document")
	}
	return docObject{objectID: doc.Result.ObjectID, group: group}, nil
}

// prefetchDoc releases the object group used and fetches the document for the next lookup,
// in the background.
func (t *Tab) prefetchDoc(ctx context.Context, session, used string) {
	go func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		t.releaseGroup(c, session, used)
		d, err := t.fetchDoc(c, session)
		if err != nil {
			return
		}
		t.worlds.mu.Lock()
		if t.worlds.doc == nil {
			t.worlds.doc = map[string]docObject{}
		}
		old, had := t.worlds.doc[session]
		t.worlds.doc[session] = d
		t.worlds.mu.Unlock()
		if had {
			t.releaseGroup(c, session, old.group)
		}
	}()
}

func (t *Tab) releaseGroup(ctx context.Context, session, group string) {
	_ = t.c.Call(ctx, session, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": group}, nil)
}

// markListeners sets the listener flag on the walker nodes whose ids are in ids.
func markListeners(ks []wnode, ids map[int]bool) {
	for i := range ks {
		k := &ks[i]
		if k.I != 0 && ids[k.I] && k.F&wNoListener == 0 {
			k.F |= wListener
		}
		markListeners(k.K, ids)
	}
}

// walkFrame runs the walker on f's document and returns its outline and title, and for the
// main frame the page state a snapshot's header tells (so no other call asks it).
func (t *Tab) walkFrame(ctx context.Context, f *Frame, main bool) ([]wnode, string, pageState, error) {
	expr := `'[' + JSON.stringify(document.title) + ',' + __tabrelay.walk(document, {boxes: false}) + ']'`
	if main {
		expr = `'[' + JSON.stringify(document.title) + ',' + __tabrelay.walk(document, {boxes: true}) + ',' + JSON.stringify(document.readyState) + ',' +
			(window.visualViewport ? visualViewport.pageTop + visualViewport.height : scrollY + innerHeight) + ']'`
	}
	ev, err := t.inWorld(ctx, f, expr, true)
	if err != nil {
		return nil, "", pageState{}, fmt.Errorf("outline of frame %s: %w", f.ID, err)
	}
	var s string
	if err := json.Unmarshal(ev.Result.Value, &s); err != nil {
		return nil, "", pageState{}, fmt.Errorf("outline of frame %s: %w", f.ID, err)
	}
	var (
		title, ready string
		kids         []wnode
		fold         float64
	)
	parts := []any{&title, &kids, &ready, &fold}
	if err := json.Unmarshal([]byte(s), &parts); err != nil {
		return nil, "", pageState{}, fmt.Errorf("outline of frame %s: %w", f.ID, err)
	}
	return kids, collapse(title), pageState{loading: ready != "" && ready != "complete", fold: fold}, nil
}

// decodeWalk decodes the walker's JSON string.
func decodeWalk(v json.RawMessage) ([]wnode, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("outline: %w", err)
	}
	var out []wnode
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("outline: %w", err)
	}
	return out, nil
}

// frameOwner returns the walker id of the <iframe> element that holds frame f, in the
// parent frame's world.
func (t *Tab) frameOwner(ctx context.Context, parent, f *Frame) (int, error) {
	t.worlds.mu.Lock()
	o, ok := t.worlds.owners[f.ID]
	t.worlds.mu.Unlock()
	if ok && o.parentLoader == parent.LoaderID {
		return o.id, nil
	}
	id, err := t.findFrameOwner(ctx, parent, f)
	if err == nil && id != 0 {
		t.worlds.mu.Lock()
		if t.worlds.owners == nil {
			t.worlds.owners = map[string]owner{}
		}
		t.worlds.owners[f.ID] = owner{parentLoader: parent.LoaderID, id: id}
		t.worlds.mu.Unlock()
	}
	return id, err
}

// findFrameOwner asks the DOM domain for frame f's owner element and its walker id.
func (t *Tab) findFrameOwner(ctx context.Context, parent, f *Frame) (int, error) {
	var fo struct {
		BackendID int `json:"backendNodeId"`
	}
	if err := t.c.Call(ctx, parent.Session, "DOM.getFrameOwner", map[string]any{"frameId": f.ID}, &fo); err != nil {
		return 0, fmt.Errorf("owner of frame %s: %w", f.ID, err)
	}
	wctx, err := t.worldContext(ctx, parent)
	if err != nil {
		return 0, err
	}
	obj, err := t.resolveIn(ctx, parent.Session, fo.BackendID, wctx)
	if err != nil {
		return 0, err
	}
	defer t.release(ctx, parent.Session, obj)
	var cr evalResult
	if err := t.c.Call(ctx, parent.Session, "Runtime.callFunctionOn", map[string]any{
		"objectId": obj, "functionDeclaration": "function(){return globalThis.__tabrelay.id(this)}", "returnByValue": true,
	}, &cr); err != nil {
		return 0, err
	}
	var id int
	if err := json.Unmarshal(cr.Result.Value, &id); err != nil {
		return 0, fmt.Errorf("owner of frame %s: %w", f.ID, err)
	}
	return id, nil
}

// resolveIn resolves a backend node to a remote object in execution context wctx (0: the
// main world).
func (t *Tab) resolveIn(ctx context.Context, session string, backendID, wctx int) (string, error) {
	p := map[string]any{"backendNodeId": backendID}
	if wctx != 0 {
		p["executionContextId"] = wctx
	}
	var rn struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := t.c.Call(ctx, session, "DOM.resolveNode", p, &rn); err != nil {
		return "", err
	}
	return rn.Object.ObjectID, nil
}

// closedShadow walks the closed shadow root of the element with walker id host in f, if it
// has one (JavaScript cannot see a closed root; the DOM domain can, and hands it to the world).
func (t *Tab) closedShadow(ctx context.Context, f *Frame, host int) ([]wnode, bool, error) {
	ev, err := t.inWorld(ctx, f, "__tabrelay.el("+strconv.Itoa(host)+")", false)
	if err != nil || ev.Result.ObjectID == "" {
		return nil, false, err
	}
	defer t.release(ctx, f.Session, ev.Result.ObjectID)
	var d struct {
		Node struct {
			ShadowRoots []struct {
				BackendID int    `json:"backendNodeId"`
				Type      string `json:"shadowRootType"`
			} `json:"shadowRoots"`
		} `json:"node"`
	}
	if err := t.c.Call(ctx, f.Session, "DOM.describeNode", map[string]any{"objectId": ev.Result.ObjectID, "depth": 0, "pierce": true}, &d); err != nil {
		return nil, false, err
	}
	for _, sr := range d.Node.ShadowRoots {
		if sr.Type != "closed" {
			continue
		}
		wctx, err := t.worldContext(ctx, f)
		if err != nil {
			return nil, false, err
		}
		obj, err := t.resolveIn(ctx, f.Session, sr.BackendID, wctx)
		if err != nil {
			return nil, false, err
		}
		var cr evalResult
		err = t.c.Call(ctx, f.Session, "Runtime.callFunctionOn", map[string]any{
			"objectId": obj, "functionDeclaration": "function(){return globalThis.__tabrelay.walk(this, {})}", "returnByValue": true,
		}, &cr)
		t.release(ctx, f.Session, obj)
		if err == nil {
			err = cr.err()
		}
		if err != nil {
			return nil, false, err
		}
		kids, err := decodeWalk(cr.Result.Value)
		return kids, err == nil, err
	}
	return nil, false, nil
}

// walked is one frame's walker output.
type walked struct {
	frame *Frame
	kids  []wnode
	title string
	state pageState // the main frame's
	err   error
	owner int             // walker id of the frame's <iframe> in its parent (0: main or unknown)
	roots map[int][]wnode // closed shadow roots by host id
	mu    sync.Mutex
}

// buildInPage builds the snapshot tree with the in-page walker: one evaluation per frame (in
// parallel), the iframe owners, closed shadow roots and script-added click listeners through
// the DOM and DOMDebugger domains. It reuses the previous build's frame list while no frame
// event (attach, detach, navigation) arrived since; else it asks the frame tree, beside a walk
// of the frames it knew, and walks again only if the frames changed.
func (t *Tab) buildInPage(ctx context.Context) (*node, pageState, error) {
	changed := t.takeFramesChanged()
	t.worlds.mu.Lock()
	known := t.worlds.frames
	t.worlds.mu.Unlock()
	if len(known) > 0 && !changed {
		root, ps, err := t.walkFrames(ctx, known)
		if err == nil {
			return root, ps, nil
		}
		// a frame went away without our hearing of it yet: ask the frame tree
	}
	if len(known) > 0 {
		type listed struct {
			frames []Frame
			err    error
		}
		fresh := make(chan listed, 1)
		go func() {
			f, err := t.Frames(ctx)
			fresh <- listed{f, err}
		}()
		root, ps, werr := t.walkFrames(ctx, known)
		l := <-fresh
		if l.err != nil {
			return nil, pageState{}, l.err
		}
		if werr == nil && sameFrames(known, l.frames) {
			return root, ps, nil
		}
		return t.walkFrames(ctx, l.frames)
	}
	frames, err := t.Frames(ctx)
	if err != nil {
		return nil, pageState{}, err
	}
	return t.walkFrames(ctx, frames)
}

// sameFrames reports whether two frame lists name the same documents in the same sessions, at
// the same URLs (history.pushState changes a document's URL, not its loader).
func sameFrames(a, b []Frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].LoaderID != b[i].LoaderID || a[i].Session != b[i].Session || a[i].ParentID != b[i].ParentID || a[i].URL != b[i].URL {
			return false
		}
	}
	return true
}

// walkFrames walks frames (the main frame first) and stitches their outlines.
func (t *Tab) walkFrames(ctx context.Context, frames []Frame) (*node, pageState, error) {
	frames = slices.Clone(frames)
	byID := map[string]*Frame{}
	for i := range frames {
		byID[frames[i].ID] = &frames[i]
	}
	out := make([]*walked, len(frames))
	sessions := map[string][]int{} // session -> indexes of its frames
	var order []string
	for i := range frames {
		out[i] = &walked{frame: &frames[i]}
		s := frames[i].Session
		if sessions[s] == nil {
			order = append(order, s)
		}
		sessions[s] = append(sessions[s], i)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	listen := map[string]map[int]bool{} // frame id -> walker ids of elements with click listeners
	walk := func(i int) {
		defer wg.Done()
		w := out[i]
		w.kids, w.title, w.state, w.err = t.walkFrame(ctx, w.frame, i == 0)
		if w.err != nil {
			return
		}
		var hosts []int
		collectHosts(w.kids, &hosts)
		var hwg sync.WaitGroup
		for _, h := range hosts {
			hwg.Add(1)
			go func() {
				defer hwg.Done()
				kids, ok, err := t.closedShadow(ctx, w.frame, h)
				if err != nil || !ok {
					return
				}
				w.mu.Lock()
				if w.roots == nil {
					w.roots = map[int][]wnode{}
				}
				w.roots[h] = kids
				w.mu.Unlock()
			}()
		}
		hwg.Wait()
	}
	for _, s := range order {
		idx := sessions[s]
		wg.Add(1)
		go func() {
			defer wg.Done()
			// the walks, and beside them the elements with script-added click listeners
			var fs []*Frame
			for _, i := range idx {
				fs = append(fs, out[i].frame)
				wg.Add(1)
				go walk(i)
			}
			ls := t.listeners(ctx, s, fs)
			mu.Lock()
			for f, ids := range ls {
				listen[f] = ids
			}
			mu.Unlock()
		}()
	}
	for i := 1; i < len(frames); i++ {
		f := &frames[i]
		if p := byID[f.ParentID]; p != nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if id, err := t.frameOwner(ctx, p, f); err == nil {
					out[i].owner = id
				}
			}()
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, pageState{}, err
	}
	if out[0].err != nil {
		return nil, pageState{}, out[0].err
	}
	for _, w := range out[1:] {
		if w.err != nil {
			t.markFramesChanged() // a frame went away or was replaced: list the frames next time
		}
	}
	for _, w := range out {
		if ids := listen[w.frame.ID]; ids != nil && w.err == nil {
			markListeners(w.kids, ids)
			for _, r := range w.roots {
				markListeners(r, ids)
			}
		}
	}
	// children of each frame by owner: parent frame id -> owner id -> walked
	owned := map[string]map[int]*walked{}
	for _, w := range out[1:] {
		if w.err != nil || w.owner == 0 {
			continue
		}
		m := owned[w.frame.ParentID]
		if m == nil {
			m = map[int]*walked{}
			owned[w.frame.ParentID] = m
		}
		m[w.owner] = w
	}
	ib := &inpageBuilder{owned: owned, done: map[string]bool{}}
	root := ib.frame(out[0])
	t.worlds.mu.Lock()
	t.worlds.frames = frames
	for _, w := range out[1:] {
		if !ib.done[w.frame.ID] {
			delete(t.worlds.owners, w.frame.ID) // its owner moved: ask again next time
		}
	}
	t.worlds.mu.Unlock()
	return root, out[0].state, nil
}

func collectHosts(ks []wnode, hosts *[]int) {
	for i := range ks {
		k := &ks[i]
		if k.F&wShadowHost != 0 && k.I != 0 && len(*hosts) < 64 {
			*hosts = append(*hosts, k.I)
		}
		collectHosts(k.K, hosts)
	}
}

// inpageBuilder turns walker output into the snapshot tree, as builder does with
// accessibility trees.
type inpageBuilder struct {
	owned map[string]map[int]*walked
	done  map[string]bool
}

func (b *inpageBuilder) frame(w *walked) *node {
	b.done[w.frame.ID] = true
	r := &node{role: "document", axRole: "RootWebArea", name: w.title, frame: w.frame, y: -1}
	for i := range w.kids {
		r.kids = append(r.kids, b.convert(w, &w.kids[i])...)
	}
	return r
}

func (b *inpageBuilder) convert(w *walked, e *wnode) []*node {
	if e.R == "" {
		if e.T == "" {
			return nil
		}
		return []*node{{role: "text", text: e.T, frame: w.frame, y: -1}}
	}
	role := e.R
	n := &node{axRole: role, role: role, name: e.N, axName: e.N, value: e.V, url: e.U, states: e.S, frame: w.frame, pid: e.I, y: -1,
		focused: e.F&wFocused != 0, modal: e.F&wModal != 0, password: e.F&wPassword != 0, options: e.O}
	if v, ok := roleNames[role]; ok {
		n.role = v
	}
	if e.Y != nil && e.B != nil {
		n.y, n.bottom = *e.Y, *e.B
	}
	if role == "Iframe" {
		n.wantRef = n.name != ""
		if cw := b.owned[w.frame.ID][e.I]; cw != nil && !b.done[cw.frame.ID] {
			child := b.frame(cw)
			n.kids = child.kids
			if n.name == "" {
				n.name = child.name
			}
		}
		return []*node{n}
	}
	src := e.K
	if sr, ok := w.roots[e.I]; ok && e.I != 0 {
		src = sr
	}
	var kids []*node
	for i := range src {
		kids = append(kids, b.convert(w, &src[i])...)
	}
	var click uint8
	if e.F&wPointer != 0 {
		click |= clickPointer
	}
	if e.F&wListener != 0 {
		click |= clickListener
	}
	if role == "generic" && e.N == "" && len(e.S) == 0 && click == 0 && e.F&(wFocusable|wEditable|wModal) == 0 {
		// a plain <div> or <span> (or the body, which the walker sees focused when nothing else
		// is): Chrome mostly leaves it out of the accessibility tree (ignored), so its children
		// take its place; the Full outline (which the extract action reads) then has the
		// reference builder's shape on list and card pages (the default outline is the same
		// text either way: TestInPageMatchesAXTree)
		return kids
	}
	return classify(n, role, kids, e.F&wFocusable != 0, e.F&wEditable != 0, click)
}
