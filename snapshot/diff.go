package snapshot

import (
	"fmt"
	"hash/fnv"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ChangeKind says how a node differs between two page models.
type ChangeKind int

// The kinds of change.
const (
	// Added: the node is only in the later page model.
	Added ChangeKind = iota
	// Removed: the node is only in the earlier page model.
	Removed
	// Changed: the same element (same ref, or same role and place) shows other words, value,
	// states, link or options.
	Changed
)

// String is the kind's mark in a rendered diff: "+", "-" or "~".
func (k ChangeKind) String() string {
	switch k {
	case Added:
		return "+"
	case Removed:
		return "-"
	case Changed:
		return "~"
	}
	return "ChangeKind(" + strconv.Itoa(int(k)) + ")"
}

// Change is one difference between two page models.
type Change struct {
	Kind ChangeKind
	// Before is the node in the earlier model (nil when Added), After in the later one (nil
	// when Removed).
	Before, After *Node
	// Depth is how deep an added or removed node lies under the topmost added or removed node
	// of its group (0 for that node), so a new list reads as a tree.
	Depth int
}

// Diff is what changed from one page model to the next, in the later model's document order
// (removed nodes where they were).
type Diff struct {
	// Changes are the differences; nil when the page models are the same.
	Changes []Change
	// Ticking are the changes of counters and clocks: an element or text whose numbers (and
	// nothing else) changed in this diff and in the one before it (a countdown, a clock, "3
	// min ago"). They are not in Changes: a page whose clock ticks is not a changed page. The
	// rendered diff names them in one line, as they are now.
	Ticking []Change
	// URL is the later page's URL, for rendering links.
	URL string
}

// Empty reports whether nothing changed but counters and clocks (Ticking).
func (d *Diff) Empty() bool { return len(d.Changes) == 0 }

// SamePage reports whether snapshot b shows the same page as a: the same document (when both
// know it) at the same URL but for its fragment. Going to "#comments" on a page, or a script
// setting location.hash, leaves the page where it was: what changed is a diff, not a new page.
func SamePage(a, b *Snapshot) bool {
	if a == nil || b == nil {
		return false
	}
	if fa, fb := a.mainFrame(), b.mainFrame(); fa != nil && fb != nil && fa.LoaderID != "" && fb.LoaderID != "" && fa.LoaderID != fb.LoaderID {
		return false
	}
	ua, _, _ := strings.Cut(a.URL, "#")
	ub, _, _ := strings.Cut(b.URL, "#")
	return ua == ub
}

// mainFrame is the frame of the snapshot's document (nil when unknown: a snapshot decoded from
// JSON, or one a dialog blocked).
func (s *Snapshot) mainFrame() *Frame {
	if s.Root == nil {
		return nil
	}
	return s.Root.Frame
}

// tickMin is how many diffs in a row a node's numbers must change in, and nothing else of it,
// to be a counter or a clock (Diff.Ticking).
const tickMin = 2

// ticks counts, for the nodes of one snapshot's tree, in how many diffs in a row up to it
// their numbers alone changed. Copies of a snapshot share it (they share the tree).
type ticks struct {
	mu sync.Mutex
	n  map[*Node]int
}

func (t *ticks) get(n *Node) int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n[n]
}

func (t *ticks) set(n *Node, v int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n == nil {
		t.n = map[*Node]int{}
	}
	t.n[n] = v
}

// digits matches a run of digits, which a counter's ticks change.
var digits = regexp.MustCompile(`[0-9]+`)

// numbersOnly reports whether a and b (a matched pair that does not show the same) differ in
// their numbers alone: "00:41" and "00:40", "Cart (2)" and "Cart (3)".
func numbersOnly(a, b *Node) bool {
	x, y := *a, *b
	x.Name, y.Name = digits.ReplaceAllString(a.Name, "#"), digits.ReplaceAllString(b.Name, "#")
	x.Text, y.Text = digits.ReplaceAllString(a.Text, "#"), digits.ReplaceAllString(b.Text, "#")
	x.Value, y.Value = digits.ReplaceAllString(a.Value, "#"), digits.ReplaceAllString(b.Value, "#")
	x.Inferred, y.Inferred = digits.ReplaceAllString(a.Inferred, "#"), digits.ReplaceAllString(b.Inferred, "#")
	return sameShown(&x, &y)
}

// Compare returns what changed from page model a to b (the snapshots of one tab, a taken
// first). Elements are matched by ref first (refs are stable across snapshots of a tab), then
// the rest by role and name (text by its words) in document order; a node left over in both
// under the same matched parent with the same role is a change of its words. Focus moving is
// not a change. Either snapshot may lack a tree (a dialog blocked the page): every node of
// the other then counts as added or removed.
func Compare(a, b *Snapshot) *Diff {
	d := &Diff{}
	if b != nil {
		d.URL = b.URL
	}
	before, after := a.Nodes(), b.Nodes()
	match := map[*Node]*Node{}   // before → after
	matched := map[*Node]*Node{} // after → before
	pair := func(x, y *Node) { match[x], matched[y] = y, x }

	byRef := map[string]*Node{}
	for _, n := range after {
		if n.Ref != "" {
			byRef[n.Ref] = n
		}
	}
	for _, n := range before {
		if y := byRef[n.Ref]; n.Ref != "" && y != nil && y.Role == n.Role {
			pair(n, y)
		}
	}
	// the rest by identity, in order: the k-th unmatched "button Send" before is the k-th after
	ida, idb := identities(a), identities(b)
	keyed := map[string][]*Node{}
	for _, n := range after {
		if matched[n] == nil && n.Ref == "" {
			keyed[idb[n]] = append(keyed[idb[n]], n)
		}
	}
	for _, n := range before {
		if match[n] != nil || n.Ref != "" {
			continue
		}
		if q := keyed[ida[n]]; len(q) > 0 {
			pair(n, q[0])
			keyed[ida[n]] = q[1:]
		}
	}
	// a leftover under a matched parent, with the role of a leftover child of the parent's
	// match, is that child reworded ("Idle" became "1 result"); parents come first in
	// document order, so a reworded container's children pair too
	if a != nil && b != nil && a.Root != nil && b.Root != nil {
		pair(a.Root, b.Root)
	}
	for _, n := range after {
		if matched[n] != nil || n.Ref != "" || n.parent == nil || matched[n.parent] == nil {
			continue
		}
		for _, x := range matched[n.parent].Children {
			if match[x] == nil && x.Ref == "" && x.Role == n.Role {
				pair(x, n)
				break
			}
		}
	}

	// removed nodes go before the next after-node that follows them, so the diff reads in
	// page order
	removedAt := map[*Node][]Change{} // after-node (nil: the end) → removed before it
	var next *Node
	for i := len(before) - 1; i >= 0; i-- {
		n := before[i]
		if y := match[n]; y != nil {
			next = y
			continue
		}
		if p := n.parent; p != nil && p.parent != nil && match[p] == nil {
			continue // inside a removed node: shown as its count
		}
		removedAt[next] = append([]Change{{Kind: Removed, Before: n}}, removedAt[next]...)
	}
	depth := map[*Node]int{}
	for _, n := range after {
		d.Changes = append(d.Changes, removedAt[n]...)
		x := matched[n]
		switch {
		case x == nil:
			c := Change{Kind: Added, After: n}
			if p := n.parent; p != nil && matched[p] == nil && p.parent != nil {
				c.Depth = depth[p] + 1
			}
			depth[n] = c.Depth
			d.Changes = append(d.Changes, c)
		case !sameShown(x, n):
			c := Change{Kind: Changed, Before: x, After: n}
			if !numbersOnly(x, n) {
				d.Changes = append(d.Changes, c)
				break
			}
			streak := a.ticks.get(x) + 1
			if b.ticks == nil {
				b.ticks = &ticks{}
			}
			b.ticks.set(n, streak)
			if streak >= tickMin {
				d.Ticking = append(d.Ticking, c)
			} else {
				d.Changes = append(d.Changes, c)
			}
		}
	}
	d.Changes = append(d.Changes, removedAt[nil]...)
	return d
}

// identities returns what matches each node of s without a ref: its role and its words, and
// for an unnamed element (a row, a list item) a hash of what it holds.
func identities(s *Snapshot) map[*Node]string {
	out := map[*Node]string{}
	if s == nil || s.Root == nil {
		return out
	}
	var id func(n *Node) string
	id = func(n *Node) string {
		k := n.Role + "\x00" + n.Label() + "\x00" + n.Text
		h := fnv.New64a()
		for _, c := range n.Children {
			h.Write([]byte(id(c) + "\x01"))
		}
		if n.Name == "" && !n.IsText() && len(n.Children) > 0 {
			k += "\x00" + strconv.FormatUint(h.Sum64(), 36)
		}
		out[n] = k
		return k
	}
	id(s.Root)
	return out
}

// sameShown reports whether two matched nodes show the same (focus aside).
func sameShown(a, b *Node) bool {
	return a.Role == b.Role && a.Name == b.Name && a.Inferred == b.Inferred && a.Text == b.Text && a.Value == b.Value && a.URL == b.URL &&
		a.Password == b.Password && a.Modal == b.Modal && slices.Equal(a.States, b.States) && slices.Equal(a.Options, b.Options)
}

// String renders the diff compactly, one line per change, at most 200 lines.
func (d *Diff) String() string { return d.Render(200) }

// Render renders the diff compactly, one line per change: "+ " an added node (indented under
// an added parent), "- " a removed one (with how many nodes it held), "~ " a changed one as it
// is now, with what it was. Past maxLines (> 0) it says how many changes were left out.
func (d *Diff) Render(maxLines int) string {
	page := pageOrigin(d.URL)
	if d.Empty() {
		if len(d.Ticking) > 0 {
			return "no changes but " + d.ticking(page)
		}
		return "no changes"
	}
	var b strings.Builder
	for i, c := range d.Changes {
		if maxLines > 0 && i >= maxLines {
			fmt.Fprintf(&b, "… %d more changes: take a snapshot to see the page\n", len(d.Changes)-i)
			break
		}
		b.WriteString(c.Kind.String() + " ")
		switch c.Kind {
		case Added:
			b.WriteString(strings.Repeat("  ", c.Depth) + diffLine(c.After, page))
		case Removed:
			b.WriteString(diffLine(c.Before, page))
			if n := len(c.Before.Descendants()); n > 0 {
				fmt.Fprintf(&b, " (and %d nodes inside)", n)
			}
		case Changed:
			b.WriteString(diffLine(c.After, page) + " (was: " + was(c.Before, c.After) + ")")
		}
		b.WriteByte('\n')
	}
	s := strings.TrimRight(b.String(), "\n")
	if len(d.Ticking) > 0 {
		s += "\n~ " + d.ticking(page)
	}
	return s
}

// ticking names the counters and clocks of the diff as they are now, in one line.
func (d *Diff) ticking(page *url.URL) string {
	var parts []string
	for _, c := range d.Ticking[:min(len(d.Ticking), 5)] {
		parts = append(parts, clip(diffLine(c.After, page), 80))
	}
	if len(d.Ticking) > 5 {
		parts = append(parts, fmt.Sprintf("%d more", len(d.Ticking)-5))
	}
	return "ticking (counters and clocks that change on every snapshot, as they are now): " + strings.Join(parts, "; ")
}

// diffLine is a node's outline line, without the outline's indentation.
func diffLine(n *Node, page *url.URL) string {
	if n.IsText() {
		return "text: " + clip(n.Text, 400)
	}
	return line(n, page)
}

// was says what a changed node showed before, field by field.
func was(a, b *Node) string {
	var parts []string
	q := func(s string, n int) string { return strconv.Quote(clip(s, n)) }
	if a.Role != b.Role {
		parts = append(parts, a.Role)
	}
	if a.Label() != b.Label() {
		parts = append(parts, "name "+q(a.Label(), 100))
	}
	if a.Text != b.Text {
		parts = append(parts, q(a.Text, 200))
	}
	if a.Value != b.Value {
		if a.Value == "" {
			parts = append(parts, "empty")
		} else {
			parts = append(parts, "value "+q(a.Value, 200))
		}
	}
	if !slices.Equal(a.States, b.States) || a.Password != b.Password || a.Modal != b.Modal {
		var st []string
		for _, s := range a.States {
			st = append(st, "["+s+"]")
		}
		if len(st) == 0 {
			parts = append(parts, "no states")
		} else {
			parts = append(parts, strings.Join(st, " "))
		}
	}
	if a.URL != b.URL {
		parts = append(parts, "url "+clip(a.URL, 100))
	}
	if !slices.Equal(a.Options, b.Options) {
		parts = append(parts, fmt.Sprintf("%d options", len(a.Options)))
	}
	return strings.Join(parts, ", ")
}
