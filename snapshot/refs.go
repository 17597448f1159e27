package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrUnknownRef is wrapped by errors for refs that no snapshot of the tab produced.
var ErrUnknownRef = errors.New("unknown ref")

// ErrGone is wrapped by errors for refs whose element no longer exists.
var ErrGone = errors.New("is gone")

type refEntry struct {
	ref       string
	frameID   string
	loaderID  string
	session   string
	backendID int
	pid       int // in-page walker id (refs of in-page builds)
	axRole    string
	axName    string
	role      string
	name      string
	ctx       string
	nth       int
	count     int
	gen       uint64
}

func (e *refEntry) describe() string {
	if e.name == "" {
		return e.ref + " (" + e.role + ")"
	}
	return fmt.Sprintf("%s (%s %q)", e.ref, e.role, clip(e.name, 60))
}

type refKey struct {
	frame   string
	backend int
	pid     int
}

// key is the identity of n's element in its frame: its backend node id (accessibility-tree
// builds) or its in-page walker id (in-page builds); ok is false when it has neither.
func (n *node) key() (refKey, bool) {
	return refKey{n.frame.ID, n.backendID, n.pid}, n.backendID != 0 || n.pid != 0
}

func (e *refEntry) key() refKey { return refKey{e.frameID, e.backendID, e.pid} }

type staleKey struct {
	frame, loader, role, name, ctx string
	nth, count                     int
}

// refTable maps refs to elements for one tab. Refs are never reused for another element.
type refTable struct {
	mu    sync.Mutex
	next  int
	gen   uint64
	byKey map[refKey]*refEntry
	byRef map[string]*refEntry
}

func (rt *refTable) init() {
	rt.byKey = map[refKey]*refEntry{}
	rt.byRef = map[string]*refEntry{}
}

// keepGenerations is how many snapshots an element may be missing from before its ref is forgotten.
const keepGenerations = 8

// assign gives every node that wants a ref its ref: the same ref as before for the same element
// (same frame and backend node), else the ref of an element that disappeared and had the same
// role, name, position among equals and number of equals in the same document (a re-rendered
// node), else a new ref.
func (rt *refTable) assign(root *node) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.gen++
	gen := rt.gen
	var nodes []*node
	var walk func(*node)
	walk = func(n *node) {
		if n.wantRef {
			nodes = append(nodes, n)
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	walk(root)
	update := func(e *refEntry, n *node) {
		e.frameID, e.loaderID, e.session, e.backendID, e.pid = n.frame.ID, n.frame.LoaderID, n.frame.Session, n.backendID, n.pid
		e.axRole, e.axName, e.role, e.name, e.ctx, e.nth, e.count, e.gen = n.axRole, n.axName, n.role, n.name, n.ctx, n.nth, n.count, gen
		n.ref = e.ref
	}
	var pending []*node
	for _, n := range nodes {
		if k, ok := n.key(); !ok {
			pending = append(pending, n)
		} else if e := rt.byKey[k]; e != nil && e.axRole == n.axRole && e.gen != gen {
			update(e, n)
		} else {
			pending = append(pending, n)
		}
	}
	stale := map[staleKey]*refEntry{}
	for _, e := range rt.byRef {
		if e.gen != gen {
			stale[staleKey{e.frameID, e.loaderID, e.axRole, e.name, e.ctx, e.nth, e.count}] = e
		}
	}
	for _, n := range pending {
		k := staleKey{n.frame.ID, n.frame.LoaderID, n.axRole, n.name, n.ctx, n.nth, n.count}
		if e := stale[k]; e != nil && e.gen != gen {
			delete(rt.byKey, e.key())
			update(e, n)
			if k, ok := n.key(); ok {
				rt.byKey[k] = e
			}
			continue
		}
		rt.next++
		e := &refEntry{ref: "e" + strconv.Itoa(rt.next)}
		update(e, n)
		rt.byRef[e.ref] = e
		if k, ok := n.key(); ok {
			rt.byKey[k] = e
		}
	}
	for r, e := range rt.byRef {
		if gen-e.gen >= keepGenerations {
			delete(rt.byRef, r)
			if rt.byKey[e.key()] == e {
				delete(rt.byKey, e.key())
			}
		}
	}
}

func (rt *refTable) lookup(ref string) (refEntry, uint64, bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	e := rt.byRef[ref]
	if e == nil {
		return refEntry{}, rt.gen, false
	}
	return *e, rt.gen, true
}

// ParseRef accepts a ref as an agent may write it: "e7", "@e7", "[ref=e7]", "ref=e7" (with
// surrounding spaces or quotes), and returns the canonical form "e7".
func ParseRef(s string) (string, error) {
	r := strings.TrimSpace(s)
	r = strings.Trim(r, "\"'`")
	r = strings.TrimPrefix(r, "[")
	r = strings.TrimSuffix(r, "]")
	r = strings.TrimSpace(r)
	r = strings.TrimPrefix(r, "ref=")
	r = strings.TrimPrefix(r, "@")
	if len(r) < 2 || (r[0] != 'e' && r[0] != 'E') {
		return "", fmt.Errorf("bad ref %q: refs look like e7 (from a snapshot)", clip(s, 40))
	}
	n, err := strconv.Atoi(r[1:])
	if err != nil || n <= 0 || r[1] == '+' || r[1] == '0' {
		return "", fmt.Errorf("bad ref %q: refs look like e7 (from a snapshot)", clip(s, 40))
	}
	return "e" + strconv.Itoa(n), nil
}

// Element is a ref resolved to a live DOM element.
type Element struct {
	// Ref is the element's ref, e.g. "e7".
	Ref string
	// Role and Name are the role and name the snapshot showed.
	Role, Name string
	// Frame is the frame whose document holds the element.
	Frame Frame
	// BackendID is the element's DOM backend node id (in Frame.Session).
	BackendID int
	// ObjectID is a Runtime remote object for the element in its frame's main world.
	ObjectID string
}

// Describe returns `e7 (button "Save")`, for messages.
func (el *Element) Describe() string {
	e := refEntry{ref: el.Ref, role: el.Role, name: el.Name}
	return e.describe()
}

// Resolve finds the live element for ref: the same DOM node if it is still connected and still
// has the same role and name; otherwise, after a fresh snapshot, the element that replaced it
// (same role, name and position among equals, in the same document). If neither exists it
// returns an error wrapping ErrGone that tells the agent to take a new snapshot; it never
// returns a different element.
func (t *Tab) Resolve(ctx context.Context, ref string) (*Element, error) {
	r, e, err := t.entry(ref)
	if err != nil {
		return nil, err
	}
	if el, err := t.identity(ctx, e); err == nil {
		return el, nil
	} else if ctx.Err() != nil {
		return nil, err
	}
	// The node changed: rebuild the tree; assign() carries the ref over to a re-rendered twin.
	if _, err := t.build(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", e.describe(), err)
	}
	e2, gen, ok := t.refs.lookup(r)
	if ok && e2.gen == gen {
		if el, err := t.identity(ctx, e2); err == nil {
			return el, nil
		}
	}
	return nil, fmt.Errorf("%s %w: the page changed; take a new snapshot", e.describe(), ErrGone)
}

// entry returns ref in its canonical form and its entry, for a ref of this tab's snapshots
// on a page no JavaScript dialog blocks.
func (t *Tab) entry(ref string) (string, refEntry, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return "", refEntry{}, err
	}
	e, _, ok := t.refs.lookup(r)
	if !ok {
		return "", refEntry{}, fmt.Errorf("%w %s: refs come from this tab's snapshots; take a new snapshot", ErrUnknownRef, r)
	}
	if err := t.DialogError(); err != nil {
		return "", refEntry{}, err
	}
	return r, e, nil
}

// identity checks that e's node is still connected with the same role and name.
func (t *Tab) identity(ctx context.Context, e refEntry) (*Element, error) {
	session := e.session
	if f, ok := t.childSessionFor(e.frameID); ok {
		session = f // an out-of-process frame may have been re-attached
	}
	if e.pid != 0 {
		return t.identityInPage(ctx, e, session)
	}
	if e.backendID == 0 {
		return nil, errors.New("no node")
	}
	var rn struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err := t.c.Call(ctx, session, "DOM.resolveNode", map[string]any{"backendNodeId": e.backendID}, &rn); err != nil {
		return nil, err
	}
	var cr struct {
		Result struct {
			Value bool `json:"value"`
		} `json:"result"`
	}
	if err := t.c.Call(ctx, session, "Runtime.callFunctionOn", map[string]any{
		"objectId": rn.Object.ObjectID, "functionDeclaration": "function(){return this.isConnected}", "returnByValue": true,
	}, &cr); err != nil {
		return nil, err
	}
	if !cr.Result.Value {
		t.release(ctx, session, rn.Object.ObjectID)
		return nil, errors.New("disconnected")
	}
	var ax struct {
		Nodes []axNode `json:"nodes"`
	}
	if err := t.c.Call(ctx, session, "Accessibility.getPartialAXTree", map[string]any{"backendNodeId": e.backendID, "fetchRelatives": false}, &ax); err != nil {
		t.release(ctx, session, rn.Object.ObjectID)
		return nil, err
	}
	match := false
	for _, n := range ax.Nodes {
		if n.BackendID == e.backendID && n.Role.str() == e.axRole && collapse(n.Name.str()) == e.axName {
			match = true
		}
	}
	if !match {
		t.release(ctx, session, rn.Object.ObjectID)
		return nil, errors.New("role or name changed")
	}
	return &Element{
		Ref: e.ref, Role: e.role, Name: e.name, BackendID: e.backendID, ObjectID: rn.Object.ObjectID,
		Frame: Frame{ID: e.frameID, Session: session, LoaderID: e.loaderID},
	}, nil
}

// sameElementJS is the walker's test that the element of an in-page build's ref (id, with
// the role and name its snapshot saw) is still connected with that role and name.
const sameElementJS = `function(id, role, name) { const c = this.check(id); return c[0] && c[1] === role && c[2].replace(/\s+/g, ' ').trim() === name }`

// identityInPage checks, in the walker's world, that the element of an in-page build's ref is
// still connected with the same role and name, and resolves it to its backend node and a
// main-world object.
func (t *Tab) identityInPage(ctx context.Context, e refEntry, session string) (*Element, error) {
	f := &Frame{ID: e.frameID, Session: session, LoaderID: e.loaderID}
	ev, err := t.inWorld(ctx, f, `function(id, role, name) { return (`+sameElementJS+`).call(this, id, role, name) ? this.el(id) : null }`,
		false, e.pid, e.axRole, e.axName)
	if err != nil {
		return nil, err
	}
	if ev.Result.ObjectID == "" {
		return nil, errors.New("gone, or role or name changed")
	}
	defer t.release(ctx, session, ev.Result.ObjectID)
	var d struct {
		Node struct {
			BackendID int `json:"backendNodeId"`
		} `json:"node"`
	}
	if err := t.c.Call(ctx, session, "DOM.describeNode", map[string]any{"objectId": ev.Result.ObjectID}, &d); err != nil {
		return nil, err
	}
	obj, err := t.resolveIn(ctx, session, d.Node.BackendID, 0)
	if err != nil {
		return nil, err
	}
	return &Element{
		Ref: e.ref, Role: e.role, Name: e.name, BackendID: d.Node.BackendID, ObjectID: obj,
		Frame: Frame{ID: e.frameID, Session: session, LoaderID: e.loaderID},
	}, nil
}

// Probe resolves ref as Resolve does and runs fn on its element, in one call where it can:
// fn is a JavaScript function declaration whose this is the element, called with args, and
// its JSON value is returned. For a ref of an in-page build whose element is unchanged (the
// common case), the check that it is the same element and fn run together in the snapshot's
// isolated world; the Element returned then has neither BackendID nor ObjectID (Resolve gives
// those when they are needed). Otherwise (an accessibility-tree build, an element re-rendered
// since the snapshot) the ref is resolved as Resolve does and fn runs on the element's
// main-world object. So fn must use the DOM alone: it may run where the page's own scripts
// and the properties they define are not seen. The caller releases the Element as one from
// Resolve.
func (t *Tab) Probe(ctx context.Context, ref, fn string, args ...any) (*Element, json.RawMessage, error) {
	r, e, err := t.entry(ref)
	if err != nil {
		return nil, nil, err
	}
	if e.pid != 0 {
		session := e.session
		if s, ok := t.childSessionFor(e.frameID); ok {
			session = s
		}
		f := &Frame{ID: e.frameID, Session: session, LoaderID: e.loaderID}
		ev, err := t.inWorld(ctx, f, `function(id, role, name, ...args) {
	if (!(`+sameElementJS+`).call(this, id, role, name)) return {gone: true};
	return {value: (`+fn+`).apply(this.el(id), args)};
}`, true, append([]any{e.pid, e.axRole, e.axName}, args...)...)
		if err != nil && ctx.Err() != nil {
			return nil, nil, err
		}
		if err == nil {
			var out struct {
				Gone  bool            `json:"gone"`
				Value json.RawMessage `json:"value"`
			}
			if err := json.Unmarshal(ev.Result.Value, &out); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", e.describe(), err)
			}
			if !out.Gone {
				return &Element{Ref: e.ref, Role: e.role, Name: e.name, Frame: *f}, out.Value, nil
			}
		}
		// gone, changed, or its world failed: resolve as Resolve does (a re-rendered twin)
	}
	el, err := t.Resolve(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	ev, err := t.callOn(ctx, el.Frame.Session, el.ObjectID, fn, args...)
	if err != nil {
		t.Release(ctx, el)
		return nil, nil, fmt.Errorf("%s: %w", el.Describe(), err)
	}
	return el, ev.Result.Value, nil
}

// callOn calls fn (a function declaration) with this = the remote object objectID and args,
// by value.
func (t *Tab) callOn(ctx context.Context, session, objectID, fn string, args ...any) (*evalResult, error) {
	as := make([]map[string]any, len(args))
	for i, a := range args {
		as[i] = map[string]any{"value": a}
	}
	var ev evalResult
	if err := t.c.Call(ctx, session, "Runtime.callFunctionOn", map[string]any{
		"objectId": objectID, "functionDeclaration": fn, "arguments": as, "returnByValue": true,
	}, &ev); err != nil {
		return nil, err
	}
	return &ev, ev.err()
}

// release frees a remote object in the background: while a JavaScript dialog is open the
// page answers no Runtime command, and nothing should wait for that.
func (t *Tab) release(_ context.Context, session, objectID string) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = t.c.Call(ctx, session, "Runtime.releaseObject", map[string]any{"objectId": objectID}, nil)
	}()
}

// Release frees the remote object of a resolved element.
func (t *Tab) Release(ctx context.Context, el *Element) {
	if el != nil && el.ObjectID != "" {
		t.release(ctx, el.Frame.Session, el.ObjectID)
	}
}

// Info describes one ref.
type Info struct {
	Ref     string `json:"ref"`
	Role    string `json:"role"`
	Name    string `json:"name"`
	FrameID string `json:"frameId"`
}

// Refs returns the refs of the latest snapshot, in ref order.
func (t *Tab) Refs() []Info {
	t.refs.mu.Lock()
	defer t.refs.mu.Unlock()
	var out []Info
	for _, e := range t.refs.byRef {
		if e.gen == t.refs.gen {
			out = append(out, Info{Ref: e.ref, Role: e.role, Name: e.name, FrameID: e.frameID})
		}
	}
	sort.Slice(out, func(i, j int) bool { return refNum(out[i].Ref) < refNum(out[j].Ref) })
	return out
}

func refNum(r string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(r, "e"))
	return n
}

// Find takes a fresh look at the page (refs are assigned as by a snapshot) and returns, in
// document order, the refs whose role is role (any if empty) and whose name equals name
// (ignoring case and surrounding space; any if empty).
func (t *Tab) Find(ctx context.Context, role, name string) ([]Info, error) {
	root, err := t.build(ctx)
	if err != nil {
		return nil, err
	}
	name = collapse(name)
	var out []Info
	walkNodes(root, func(n *node) {
		if n.ref == "" || (role != "" && n.role != role && n.axRole != role) || (name != "" && !strings.EqualFold(n.name, name)) {
			return
		}
		out = append(out, Info{Ref: n.ref, Role: n.role, Name: n.name, FrameID: n.frame.ID})
	})
	return out, nil
}
