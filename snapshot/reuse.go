package snapshot

import (
	_ "embed"
	"strconv"
	"strings"
	"time"
)

// changesJS is the walker's change check (changes.js), evaluated in the walker's world after
// inpage.js: a frame whose outline cannot have changed since the walk the caller holds answers
// with that walk's number instead of a new walk.
//
//go:embed changes.js
var changesJS string

// reuseMaxAge bounds how long a frame's walk is reused while the change check finds nothing: a
// backstop for the changes it cannot see (a style sheet edited through the CSSOM, a value set
// by script on a form control inside a shadow root).
const reuseMaxAge = 5 * time.Second

// frameWalk is the latest walk of a frame's document, kept so that the next build can reuse it
// when the change check says nothing changed. Its kids are never modified once kept.
type frameWalk struct {
	loaderID string
	serial   int // the walk's number in the frame's world (changes.js)
	at       time.Time
	kids     []wnode
	title    string
	href     string
	epoch    int
	state    pageState
	// undefined are the walker ids of the custom elements not defined at the walk: the change
	// check looks whether they still are not
	undefined []int
}

// reuse is what a tab keeps of its latest in-page build for the next one.
type reuse struct {
	// walks are the frames' latest walks, by frame id
	walks map[string]frameWalk
	// key names the inputs of the build whose tree is root (see buildKey)
	key  string
	root *node
	// snap is the latest snapshot rendered from root, with the options it was rendered with
	snap     *Snapshot
	snapOpts Options
	// seq numbers the listener lookups (see lookup.seq)
	seq int
}

// lastWalk returns f's kept walk while it may be offered to the change check: same document,
// younger than reuseMaxAge.
func (t *Tab) lastWalk(f *Frame) (frameWalk, bool) {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	fw, ok := t.worlds.reuse.walks[f.ID]
	if !ok || fw.loaderID != f.LoaderID || time.Since(fw.at) >= reuseMaxAge {
		return frameWalk{}, false
	}
	return fw, true
}

// keepWalk keeps w's walk (numbered serial) for reuse; hosts are its elements that may have a
// closed shadow root (collectHosts).
func (t *Tab) keepWalk(w *walked, hosts []wnode) {
	var undefined []int
	for _, h := range hosts {
		if h.F&wUndefined != 0 {
			undefined = append(undefined, h.I)
		}
	}
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	if t.worlds.reuse.walks == nil {
		t.worlds.reuse.walks = map[string]frameWalk{}
	}
	t.worlds.reuse.walks[w.frame.ID] = frameWalk{loaderID: w.frame.LoaderID, serial: w.serial, at: time.Now(), kids: w.kids,
		title: w.title, href: w.href, epoch: w.epoch, state: w.state, undefined: undefined}
}

// dropWalk forgets f's kept walk: the next build walks the frame again.
func (t *Tab) dropWalk(f *Frame) {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	delete(t.worlds.reuse.walks, f.ID)
}

// reused fills w from fw, the kept walk the change check found still current.
func (w *walked) reuse(fw frameWalk) {
	w.kids, w.title, w.href, w.epoch, w.state, w.reused = fw.kids, fw.title, fw.href, fw.epoch, fw.state, true
}

// reusable reports whether a walk may be kept for reuse: no closed shadow root was handed to the
// walker after it (the next walk enters it itself).
func reusable(w *walked) bool { return len(w.roots) == 0 }

// nextSeq returns a new listener lookup number.
func (t *Tab) nextSeq() int {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	t.worlds.reuse.seq++
	return t.worlds.reuse.seq
}

// buildKey names what a build was made of: each frame's document, URL, walk number and owner,
// and each session's listener lookup. Two builds with the same key have the same tree.
func buildKey(out []*walked, lookups map[string]int) string {
	var b strings.Builder
	for _, w := range out {
		f := w.frame
		b.WriteString(f.ID + "\x00" + f.LoaderID + "\x00" + f.Session + "\x00" + f.ParentID + "\x00" + f.URL + "\x00")
		if w.err != nil {
			b.WriteString("-\x00")
		} else {
			b.WriteString(strconv.Itoa(w.serial) + "\x00" + strconv.Itoa(w.owner) + "\x00" + strconv.Itoa(lookups[f.Session]) + "\x00")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// builtBefore returns the tree of the latest build if it was made of what key names.
func (t *Tab) builtBefore(key string) *node {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	if t.worlds.reuse.root != nil && t.worlds.reuse.key == key {
		return t.worlds.reuse.root
	}
	return nil
}

// keepBuild keeps root, built from what key names, for the next build.
func (t *Tab) keepBuild(key string, root *node) {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	t.worlds.reuse.key, t.worlds.reuse.root, t.worlds.reuse.snap = key, root, nil
}

// renderedBefore returns a copy of the latest snapshot if it was rendered from root with o.
func (t *Tab) renderedBefore(root *node, o Options) (*Snapshot, bool) {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	r := &t.worlds.reuse
	if r.snap == nil || r.root != root || r.snapOpts != o {
		return nil, false
	}
	s := *r.snap
	return &s, true
}

// keepRendered keeps s, rendered from root with o, for the next snapshot of the same tree.
func (t *Tab) keepRendered(root *node, o Options, s *Snapshot) {
	t.worlds.mu.Lock()
	defer t.worlds.mu.Unlock()
	if t.worlds.reuse.root == root {
		c := *s
		t.worlds.reuse.snap, t.worlds.reuse.snapOpts = &c, o
	}
}
