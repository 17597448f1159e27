package snapshot

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Options shape a snapshot. The zero value is the compact outline of the whole page.
type Options struct {
	// Interactive lists only elements with refs, one per line, without structure or text.
	Interactive bool `json:"interactive,omitempty"`
	// Full keeps unnamed structural containers and branches without refs or text
	// (the default, compact output drops them).
	Full bool `json:"full,omitempty"`
	// MaxDepth limits the outline's nesting (0: no limit).
	MaxDepth int `json:"maxDepth,omitempty"`
	// MaxChars truncates the text with a visible note (0: no limit).
	MaxChars int `json:"maxChars,omitempty"`
	// MaxTokens bounds the text, header included, to this many tokens (cl100k_base tokens, as
	// Tokens counts them; 0: no limit). What matters is kept first (an open
	// modal, the focused element and form fields, what is in view), repeated siblings collapse
	// to a few examples and a count, no line is cut, and the header says what was left out.
	MaxTokens int `json:"maxTokens,omitempty"`
	// Scope renders only the subtree of this ref.
	Scope string `json:"scope,omitempty"`
	// Frame renders only one frame: an iframe's ref, a frame id, or a substring of its URL.
	Frame string `json:"frame,omitempty"`
	// Tools names the tools the header points to for what the outline does not show; the zero
	// value names those of tabrelay's MCP server. A client whose tools are called otherwise (or
	// offered later) passes its own names.
	Tools Tools `json:"-"`
}

// Tools are how the header of a snapshot calls the tools that reach what its outline leaves
// out. An empty field takes the MCP server's name (see the field).
type Tools struct {
	// Find searches the whole page for an element or text: "find".
	Find string
	// Scope shows one part of the page's outline: "snapshot with scope=<ref>".
	Scope string
	// Records reads repeated items as records: "extract".
	Records string
}

// or is t with its empty fields named as the MCP server names them.
func (t Tools) or() Tools {
	if t.Find == "" {
		t.Find = "find"
	}
	if t.Scope == "" {
		t.Scope = "snapshot with scope=<ref>"
	}
	if t.Records == "" {
		t.Records = "extract"
	}
	return t
}

// Snapshot is a role snapshot of a tab: the page model (the page's facts and the tree under
// Root) and the text rendered from it. Code reads the model; the text is for models and people.
type Snapshot struct {
	// URL and Title are the main frame's.
	URL   string `json:"url"`
	Title string `json:"title"`
	// Text is the header and the outline rendered from the model, ready to show to a model.
	// Nothing but people and language models should read it: every fact in it is a field.
	Text string `json:"text"`
	// Root is the page model: a "document" node whose children are the outline's top-level
	// lines (with Scope or Frame, the subtree asked for). It is nil when a JavaScript dialog
	// blocks the page. In JSON it is "root" (parents are implied by nesting).
	Root *Node `json:"root,omitempty"`
	// Refs is how many refs the rendered text holds.
	Refs int `json:"refs"`
	// Loading is true while the main document is not yet complete.
	Loading bool `json:"loading,omitempty"`
	// Dialog is the open JavaScript dialog, if any.
	Dialog *Dialog `json:"dialog,omitempty"`
	// Modal names the open modal dialog element (aria-modal or <dialog> shown modally), if any,
	// as the header shows it; the element itself is the node of Root with Modal set.
	Modal string `json:"modal,omitempty"`
	// Summary is what the page offers (forms, collections, main actions, whether the user looks
	// signed in), read from Root; the header shows it in a few lines. Nil when there is
	// nothing to say or no tree.
	Summary *Summary `json:"summary,omitempty"`
	// BelowFold counts refs of the main frame below the visible viewport.
	BelowFold int `json:"belowFold,omitempty"`
	// Truncated is true when MaxChars or MaxDepth cut the outline.
	Truncated bool `json:"truncated,omitempty"`
	// Took is how long the snapshot took.
	Took time.Duration `json:"took"`

	outlineAt int    // where the outline begins in Text, after the header
	tools     Tools  // the tools the header names (Options.Tools, filled in)
	ticks     *ticks // the counters and clocks among its nodes (see Compare)
}

// build fetches every frame's accessibility tree and assigns refs.
func (t *Tab) build(ctx context.Context) (*node, error) {
	if t.usesInPage() {
		root, _, _, err := t.buildPage(ctx)
		return root, err
	}
	frames, data, err := t.fetch(ctx)
	if err != nil {
		return nil, err
	}
	b := &builder{t: t, ctx: ctx, data: data, frames: frames, done: map[string]bool{}}
	root := b.buildFrame(data[frames[0].ID])
	if root == nil {
		return nil, fmt.Errorf("empty accessibility tree")
	}
	root.frame = &frames[0]
	numberNth(root)
	t.refs.assign(root)
	return root, nil
}

// buildPage builds in the page and assigns refs; the walk also reads the page state. reused is
// set when nothing the latest build was made of changed: root is that build's tree, refs and
// all.
func (t *Tab) buildPage(ctx context.Context) (root *node, ps pageState, reused bool, err error) {
	b, err := t.buildInPage(ctx)
	if err != nil {
		return nil, pageState{}, false, err
	}
	if !b.reused {
		numberNth(b.root)
		t.refs.assign(b.root)
		t.keepBuild(b.key, b.root)
	}
	return b.root, b.state, b.reused, nil
}

// Snapshot takes a role snapshot of the tab.
func (t *Tab) Snapshot(ctx context.Context, o Options) (*Snapshot, error) {
	start := time.Now()
	if o.MaxTokens > 0 {
		go cl100k() // the token encoding loads (once, 0.3 s) while the page is read
	}
	s := &Snapshot{Dialog: t.Dialog()}
	if s.Dialog != nil {
		var ti struct {
			TargetInfo struct {
				URL   string `json:"url"`
				Title string `json:"title"`
			} `json:"targetInfo"`
		}
		if t.c.Call(ctx, "", "Target.getTargetInfo", map[string]any{"targetId": t.targetID}, &ti) == nil {
			s.URL, s.Title = ti.TargetInfo.URL, ti.TargetInfo.Title
		}
		// A JavaScript dialog blocks the page: nothing but the dialog can be read or done.
		s.Render(Options{})
		s.Took = time.Since(start)
		return s, nil
	}
	var root *node
	var state func() pageState
	var err error
	inPage := t.usesInPage()
	if inPage {
		// the walk reads the page state too
		var ps pageState
		var reused bool
		root, ps, reused, err = t.buildPage(ctx)
		if reused {
			// nothing changed since the latest build: its snapshot, if it was asked the same way
			if prev, ok := t.renderedBefore(root, o); ok {
				prev.Took = time.Since(start)
				return prev, nil
			}
		}
		state = func() pageState { return ps }
	} else {
		// the page state is asked beside the build: neither waits for the other
		var stop func()
		state, stop = t.pageState(ctx)
		defer stop()
		root, err = t.build(ctx)
	}
	if err != nil {
		// the page state calls end on their own (1 s at most); a dialog may be what blocks them
		if d := t.Dialog(); d != nil {
			s.Dialog = d
			s.Render(Options{})
			s.Took = time.Since(start)
			return s, nil
		}
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if !inPage {
		return t.finish(s, root, o, start, state)
	}
	// a reused tree may be rendered by two snapshots at once (finish marks its nodes)
	t.render.Lock()
	defer t.render.Unlock()
	s, err = t.finish(s, root, o, start, state)
	if err == nil {
		t.keepRendered(root, o, s)
	}
	return s, err
}

// pageState is what a snapshot's header says about the page besides the outline.
type pageState struct {
	loading bool    // document.readyState is not "complete"
	fold    float64 // document y of the bottom of the visual viewport, 0 if unknown
}

// pageState asks the page's ready state and viewport in the background, beside the build
// (failures leave the zero value). The returned wait gives the answers at most a second more
// once it is called, so a large page whose build takes long still gets its header, and a
// dialog that blocks the page costs a second at most. stop ends the calls early.
func (t *Tab) pageState(ctx context.Context) (wait func() pageState, stop func()) {
	var ps pageState
	var wg sync.WaitGroup
	ctx, stop = context.WithCancel(ctx)
	session := t.Session()
	wg.Add(2)
	go func() {
		defer wg.Done()
		var r struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		if t.c.Call(ctx, session, "Runtime.evaluate", map[string]any{"expression": "document.readyState", "returnByValue": true}, &r) == nil {
			ps.loading = r.Result.Value != "complete"
		}
	}()
	go func() {
		defer wg.Done()
		var lm struct {
			V struct {
				PageY        float64 `json:"pageY"`
				ClientHeight float64 `json:"clientHeight"`
			} `json:"cssVisualViewport"`
		}
		if t.c.Call(ctx, session, "Page.getLayoutMetrics", nil, &lm) == nil && lm.V.ClientHeight > 0 {
			ps.fold = lm.V.PageY + lm.V.ClientHeight
		}
	}()
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	wait = func() pageState {
		select {
		case <-done:
		case <-time.After(time.Second):
			stop()
			<-done
		}
		return ps
	}
	return wait, stop
}

// finish renders the built tree; state (nil while a dialog is open) waits for the page state
// asked beside the build.
func (t *Tab) finish(s *Snapshot, root *node, o Options, start time.Time, state func() pageState) (*Snapshot, error) {
	s.URL, s.Title = root.frame.URL, root.name
	if s.Dialog == nil && state != nil {
		ps := state()
		s.Loading = ps.loading
		if ps.fold > 0 {
			markBelow(root, root.frame, ps.fold, false)
			walkNodes(root, func(n *node) {
				if n.ref != "" && n.frame == root.frame && n.below {
					s.BelowFold++
				}
			})
		}
	}
	walkNodes(root, func(n *node) {
		if n.modal && s.Modal == "" {
			s.Modal = strings.TrimSpace(n.role + " " + strconv.Quote(n.name) + " [ref=" + n.ref + "]")
		}
	})
	sub := root
	if o.Frame != "" {
		sub = nil
		walkNodes(root, func(n *node) {
			if sub == nil && n.axRole == "Iframe" && len(n.kids) > 0 && (n.ref == o.Frame || (len(n.kids) > 0 && n.kids[0].frame != nil && (n.kids[0].frame.ID == o.Frame || strings.Contains(n.kids[0].frame.URL, o.Frame)))) {
				sub = n
			}
		})
		if sub == nil {
			return nil, fmt.Errorf("snapshot: no frame matches %q (use an iframe's ref, a frame id or part of its URL)", o.Frame)
		}
	}
	if o.Scope != "" {
		ref, err := ParseRef(o.Scope)
		if err != nil {
			return nil, err
		}
		var found *node
		walkNodes(sub, func(n *node) {
			if found == nil && n.ref == ref {
				found = n
			}
		})
		if found == nil {
			return nil, fmt.Errorf("snapshot: scope %s is not on the page (any more); take a snapshot without scope", ref)
		}
		sub = &node{role: "document", kids: []*node{found}, frame: found.frame}
	}
	s.Root = compact(sub, o.Full)
	s.renderText(o)
	s.Took = time.Since(start)
	return s, nil
}

// Render sets Text, Refs and Truncated from the page model (URL, Title, Loading, Dialog, Modal,
// BelowFold and the tree under Root), exactly as Tab.Snapshot renders them, and links the tree's
// parent pointers. It is for snapshots built by hand (fakes in tests); Tab.Snapshot has
// rendered its own. Without a Root, a snapshot with a Dialog says the page is blocked.
func (s *Snapshot) Render(o Options) {
	if s.Root != nil {
		s.Root.link()
	}
	s.renderText(o)
}

func (s *Snapshot) renderText(o Options) {
	s.tools = o.Tools.or()
	if s.ticks == nil {
		s.ticks = &ticks{} // before the tab keeps a copy: copies share it
	}
	s.Summary = Summarize(s.Root)
	if s.Root == nil {
		s.Refs, s.Truncated = 0, false
		s.Text = header(s, 0, true)
		s.outlineAt = len(s.Text)
		if s.Dialog != nil {
			s.Text += "# the page is blocked until the dialog is accepted or dismissed\n"
		}
		return
	}
	if o.MaxTokens > 0 && o.MaxDepth == 0 {
		s.renderBudget(o)
		return
	}
	body, refs, truncated := renderModel(s.Root, o, pageOrigin(s.URL))
	s.Refs, s.Truncated = refs, truncated
	h := header(s, summaryLimit(o), true)
	s.Text, s.outlineAt = h+body, len(h)
}

// markBelow sets below on the main frame's nodes under the fold: a node placed by its own box,
// else by its first placed descendant's (a container the walker did not measure starts where
// what it holds starts), else as its parent is.
func markBelow(n *node, main *Frame, fold float64, parent bool) {
	n.below = parent
	if n.frame == main {
		if y := placedY(n); y >= 0 {
			n.below = y > fold
		}
	}
	for _, k := range n.kids {
		markBelow(k, main, fold, n.below)
	}
}

// placedY is the document y of n's box, else of its first descendant in its frame that has
// one; -1 when none has.
func placedY(n *node) float64 {
	if n.y >= 0 || n.isText() {
		return n.y
	}
	for _, k := range n.kids {
		if k.frame != n.frame {
			continue
		}
		if y := placedY(k); y >= 0 {
			return y
		}
	}
	return -1
}

// renderBudget renders within o.MaxTokens: the header, a note of what was left out and the
// lines that fit in the rest, all counted in real tokens (see Tokens).
func (s *Snapshot) renderBudget(o Options) {
	m := newMeter()
	h := header(s, summaryLimit(o), true)
	// the note is a line of about 50 tokens; should the text still go over (it is counted in
	// parts, each exactly), the outline's share shrinks by as much and it renders again
	room := o.MaxTokens - Tokens(h) - 60
	for range 3 {
		lines, lineRefs, l := renderBudget(s.Root, o, pageOrigin(s.URL), max(room, 0), m)
		body, refs, cut := join(lines, lineRefs, o.MaxChars)
		note := l.note(o.MaxTokens, s.tools)
		s.Refs, s.Truncated = refs, cut || l.lines > 0
		s.Text, s.outlineAt = h+note+body, len(h)
		over := Tokens(h) + Tokens(note) + m.size(lines) - o.MaxTokens
		if over <= 0 || room <= 0 {
			return
		}
		room -= over
	}
}

func walkNodes(n *node, fn func(*node)) {
	fn(n)
	for _, k := range n.kids {
		walkNodes(k, fn)
	}
}

// Header is the head of the snapshot's text without the outline: the page's title and URL, what
// blocks or hides it (a dialog, a modal, refs below the fold) and its summary (forms,
// collections, main actions, account), in a few lines. It is a short view of a page just
// reached, for a client that asks for the outline when it needs it.
func (s *Snapshot) Header() string { return header(s, summaryMax, true) }

// Glance is [Snapshot.Header] for a reader who was just told the page's URL (an action's result
// names the page it led to): the same lines with the title alone on the first.
func (s *Snapshot) Glance() string { return header(s, summaryMax, false) }

// Outline is Text after the header ([Snapshot.Header]): what was left out, the outline. It is the
// whole Text for a snapshot not rendered in this process (decoded from JSON).
func (s *Snapshot) Outline() string {
	if s.outlineAt > len(s.Text) {
		return s.Text
	}
	return s.Text[s.outlineAt:]
}

// header renders the page's facts and its summary, the summary in at most summary bytes; the
// first line names the page's URL when withURL is set (or the page has no title).
func header(s *Snapshot, summary int, withURL bool) string {
	var b strings.Builder
	switch {
	case s.Title != "" && withURL:
		b.WriteString("# " + clip(s.Title, 120) + " — " + s.URL + "\n")
	case s.Title != "":
		b.WriteString("# " + clip(s.Title, 120) + "\n")
	default:
		b.WriteString("# " + s.URL + "\n")
	}
	if s.Loading {
		b.WriteString("# still loading\n")
	}
	if s.Dialog != nil {
		fmt.Fprintf(&b, "# %s dialog open: %q (accept or dismiss it)\n", s.Dialog.Type, clip(s.Dialog.Message, 200))
	}
	if s.Modal != "" {
		b.WriteString("# modal open: " + s.Modal + "\n")
	}
	if s.BelowFold > 0 {
		fmt.Fprintf(&b, "# %d more refs below the fold (scroll to see them)\n", s.BelowFold)
	}
	b.WriteString(s.Summary.text(summary, s.tools.or()))
	return b.String()
}

func pageOrigin(u string) *url.URL {
	p, err := url.Parse(u)
	if err != nil {
		return nil
	}
	return p
}
