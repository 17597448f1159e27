package snapshot

import (
	"cmp"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A token budget (Options.MaxTokens) chooses which lines of the outline to write: a selection
// keeps whole lines by importance (the open modal, the focused element and form fields, what
// is in view, then what is below it in document order, decoration last), keeps a few
// examples of each run of repeated siblings, and notes every run it leaves out in place.

// bytesPerToken is how many bytes of English outline make a token, about: what a budget
// allows the header's summary, in bytes, before anything is counted.
const bytesPerToken = 4

// repeatMin is the shortest run of alike siblings that collapses; repeatKeep is how many
// examples of it a budgeted outline shows at least (more while the budget has room).
const (
	repeatMin  = 6
	repeatKeep = 3
)

// selection is what a budgeted outline keeps of a page model.
type selection struct {
	keep  map[*Node]bool
	group map[*Node]*repeat // collapsed siblings -> their run
}

// repeat is a run of alike siblings collapsed to a few examples.
type repeat struct {
	role    string
	example string // the first example's ref (or its first descendant's)
}

// left is what a budgeted outline left out.
type left struct {
	lines, refs, below, repeated int
}

// notes are the lines standing for run, a run of left-out siblings, at indent: one per
// collapsed repeat ("… 37 more rows like e12"), one for the rest.
func (sel *selection) notes(ind string, run []*Node) []string {
	var out []string
	i := 0
	for i < len(run) {
		g := sel.group[run[i]]
		j := i + 1
		for j < len(run) && sel.group[run[j]] == g {
			j++
		}
		refs := 0
		for _, n := range run[i:j] {
			refs += countRefs(n)
		}
		switch {
		case g != nil && g.example != "":
			out = append(out, fmt.Sprintf("%s- … %d more %s like %s", ind, j-i, plural(g.role), g.example))
		case g != nil:
			out = append(out, fmt.Sprintf("%s- … %d more %s", ind, j-i, plural(g.role)))
		case refs > 0:
			out = append(out, fmt.Sprintf("%s- … %d more lines with %d refs", ind, j-i, refs))
		default:
			out = append(out, fmt.Sprintf("%s- … %d more lines", ind, j-i))
		}
		i = j
	}
	return out
}

func plural(role string) string {
	switch {
	case role == "text":
		return "texts"
	case strings.HasSuffix(role, "x"):
		return role + "es"
	}
	return role + "s"
}

// shape is what makes siblings alike: their role, whether they have a ref, and their
// children's roles.
func shape(n *Node) string {
	if n.IsText() {
		return ""
	}
	var b strings.Builder
	b.WriteString(n.Role)
	if n.Ref != "" {
		b.WriteString("@")
	}
	for _, k := range n.Children {
		b.WriteString(" " + k.Role)
	}
	return b.String()
}

// firstRef is the ref of n or of its first descendant that has one.
func firstRef(n *Node) string {
	ref := ""
	n.Walk(func(d *Node) bool {
		if ref == "" && d.Ref != "" {
			ref = d.Ref
		}
		return ref == ""
	})
	return ref
}

// fieldRoles are form fields: a budget keeps them before other elements.
var fieldRoles = map[string]bool{"textbox": true, "searchbox": true, "combobox": true, "checkbox": true, "radio": true,
	"switch": true, "slider": true, "spinbutton": true, "listbox": true, "button": true}

// itemRoles are kept whole (with everything inside) when small enough: a row or a card is
// never shown in part.
var itemRoles = map[string]bool{"row": true, "listitem": true, "article": true, "option": true, "menuitem": true,
	"treeitem": true, "tab": true, "link": true, "button": true, "heading": true, "label": true, "paragraph": true}

// decoration is what a budget shows last.
var decoration = map[string]bool{"img": true, "image": true, "separator": true, "presentation": true, "none": true}

// class ranks a node for a budget: lower is kept first.
func class(n *Node, below, inModal, modalOpen bool) int {
	c := 0
	switch {
	case n.Focused:
		c = 0
	case n.Ref != "" && fieldRoles[n.Role], n.Role == "heading":
		c = 1
	case n.Ref != "" && !decoration[n.Role]:
		c = 2
	case n.IsText():
		c = 3
	default:
		c = 5
	}
	if below && c > 0 {
		c += 2
	}
	if modalOpen && !inModal {
		c += 10
	}
	return c
}

// leadShare is the share of a budget (in percent) the start of the main content takes first.
const leadShare = 60

// asideRoles hold what is beside the main content: the start of the content skips them.
var asideRoles = map[string]bool{"navigation": true, "complementary": true, "banner": true, "contentinfo": true, "search": true,
	"form": true, "table": true, "figure": true, "dialog": true, "alertdialog": true, "menu": true, "menubar": true, "toolbar": true,
	"tablist": true, "img": true}

// leadOf is the start of root's main content, in document order, up to about budget tokens as
// cost estimates them: what a reader reads first (the title, the byline and date, the first
// paragraphs), without what sits beside it (navigation, tables, forms, lists of links).
// The main content is the first main landmark, else the first article, else the element with
// the most prose of its own.
func leadOf(root *Node, budget int, cost func(*Node) int) map[*Node]bool {
	main := first(root, "main")
	if main == nil {
		main = first(root, "article")
	}
	if main == nil {
		main = densest(root)
	}
	lead := map[*Node]bool{}
	if main == nil {
		return lead
	}
	used := 0
	main.Walk(func(n *Node) bool {
		if used > budget {
			return false
		}
		if n == main {
			return true
		}
		if asideRoles[n.Role] || (n.Role == "list" && linkList(n)) {
			return false
		}
		used += cost(n)
		if used <= budget {
			lead[n] = true
		}
		return true
	})
	return lead
}

// first is the first node of root's subtree with the role, nil if none.
func first(root *Node, role string) *Node {
	var f *Node
	root.Walk(func(n *Node) bool {
		if f == nil && n.Role == role {
			f = n
		}
		return f == nil
	})
	return f
}

// densest is the element whose own text (its text and paragraph children) is longest: the
// body of an article on a page without landmarks; nil when no element holds 200 bytes of it.
func densest(root *Node) *Node {
	var best *Node
	most := 200
	root.Walk(func(n *Node) bool {
		if n.IsText() || n == root {
			return true
		}
		size := 0
		for _, k := range n.Children {
			switch {
			case k.IsText():
				size += len(k.Text)
			case k.Role == "paragraph":
				for _, d := range k.Children {
					if d.IsText() {
						size += len(d.Text)
					}
				}
			}
		}
		if size > most {
			best, most = n, size
		}
		return true
	})
	return best
}

// linkList reports whether a list is mostly links (a menu, a table of contents, related
// stories): more of its words are in links than not.
func linkList(n *Node) bool {
	in, out := 0, 0
	var count func(d *Node, link bool)
	count = func(d *Node, link bool) {
		link = link || d.Role == "link"
		w := len(d.Text)
		if !d.IsText() && d.Role == "link" {
			w = len(d.Name)
		}
		if link {
			in += w
		} else {
			out += w
		}
		if d.Role == "link" {
			return
		}
		for _, k := range d.Children {
			count(k, link)
		}
	}
	count(n, false)
	return in > out
}

// unit is what a budget keeps or leaves as one: a node, or an item with its subtree.
type unit struct {
	nodes []*Node
	cost  int
	class int
	order int
}

// plan is what a budget chooses from: the units of root's outline in the order they are
// kept, each node's estimated tokens and the runs of alike siblings collapsed.
type plan struct {
	root  *Node
	o     Options
	units []unit
	group map[*Node]*repeat
	cost  func(*Node) int
}

// newPlan lays out root's outline for a budget of budget tokens with keep examples of each
// repeat (costs holds each node's estimate, filled on first need).
func newPlan(root *Node, o Options, page *url.URL, budget, keep int, costs map[*Node]int) *plan {
	p := &plan{root: root, o: o, group: map[*Node]*repeat{}}
	var modal *Node
	root.Walk(func(n *Node) bool {
		if n.Modal && modal == nil {
			modal = n
		}
		return modal == nil
	})
	p.cost = func(n *Node) int {
		if c, ok := costs[n]; ok {
			return c
		}
		c := 1 // the indent and the newline
		switch {
		case n.IsText():
			c += 3 + estimate(clip(n.Text, 400))
		case o.Interactive:
			c += estimate(line(n, page))
		default:
			c += estimate(line(n, page))
			if leadingText(n) {
				c += estimate(clip(n.Children[0].Text, 400))
			}
		}
		costs[n] = c
		return c
	}
	lead := map[*Node]bool{}
	if !o.Interactive {
		lead = leadOf(root, budget*leadShare/100, p.cost)
	}
	order := 0
	var visit func(n *Node, below, inModal, prose bool)
	visit = func(n *Node, below, inModal, prose bool) {
		inModal = inModal || n.Modal
		below = below || n.Below
		prose = prose || n.Role == "paragraph"
		kids := n.Children
		// collapse runs of alike siblings to a few examples
		collapsed := map[*Node]bool{}
		for i := 0; i < len(kids); {
			j := i + 1
			s := shape(kids[i])
			for j < len(kids) && s != "" && shape(kids[j]) == s {
				j++
			}
			if s != "" && j-i >= repeatMin && j-i > keep {
				g := &repeat{role: kids[i].Role, example: firstRef(kids[i])}
				for _, k := range kids[i+keep : j] {
					p.group[k], collapsed[k] = g, true
				}
			}
			i = j
		}
		for i, k := range kids {
			order++
			if collapsed[k] {
				continue
			}
			if i == 0 && leadingText(n) && !o.Interactive {
				continue // written on n's own line, kept with n
			}
			if o.Interactive && k.Ref == "" {
				visit(k, below, inModal, prose)
				continue
			}
			u := unit{nodes: []*Node{k}, cost: p.cost(k), class: class(k, below || k.Below, inModal, modal != nil), order: order}
			if prose && u.class == 2 {
				u.class = 3 // a link in a paragraph is read with its text, not before it
			}
			if lead[k] && u.class > 1 {
				// the start of the page's main content reads first, wherever the fold is
				u.class = class(&Node{Role: "heading"}, false, inModal, modal != nil)
			}
			if itemRoles[k.Role] && len(k.Children) > 0 && !o.Interactive {
				sub := u
				k.Walk(func(d *Node) bool {
					if d != k {
						sub.nodes = append(sub.nodes, d)
						if !(d == k.Children[0] && leadingText(k)) {
							sub.cost += p.cost(d)
						}
						if d.Focused {
							sub.class = 0
						}
					}
					return true
				})
				if sub.cost <= budget/3 {
					p.units = append(p.units, sub)
					order += len(sub.nodes)
					continue
				}
			}
			p.units = append(p.units, u)
			visit(k, below, inModal, prose)
		}
	}
	visit(root, false, false, false)
	slices.SortStableFunc(p.units, func(a, b unit) int {
		return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.order, b.order))
	})
	return p
}

// choose selects the nodes that fit in aim tokens as estimate counts them: whole units in
// order, each with the ancestors it needs.
func (p *plan) choose(aim int) *selection {
	sel := &selection{keep: map[*Node]bool{}, group: p.group}
	used := 0
	for _, u := range p.units {
		need := u.cost
		var anc []*Node
		if !p.o.Interactive {
			for a := u.nodes[0].parent; a != nil && a != p.root && !sel.keep[a]; a = a.parent {
				anc = append(anc, a)
				need += p.cost(a)
			}
		}
		if used+need > aim {
			continue
		}
		used += need
		for _, n := range append(anc, u.nodes...) {
			sel.keep[n] = true
			if leadingText(n) {
				sel.keep[n.Children[0]] = true
			}
		}
	}
	return sel
}

// renderBudget writes root's outline within budget tokens; it returns the lines, the refs each
// holds and what was left out.
func renderBudget(root *Node, o Options, page *url.URL, budget int, m *meter) ([]string, []int, left) {
	all, allRefs, _ := outline(root, o, page, nil)
	if fits(all, budget, m) {
		return all, allRefs, left{}
	}
	costs := map[*Node]int{}
	// the fewest examples of repeats first, then more while the outline has room
	lines, refs, sel, n := fit(root, o, page, budget, repeatKeep, costs, m)
	for keep := repeatKeep * 2; sel != nil && len(sel.group) > 0 && n < budget*3/4; keep *= 2 {
		l2, r2, s2, n2 := fit(root, o, page, budget, keep, costs, m)
		if s2 == nil || n2 <= n {
			break
		}
		lines, refs, sel, n = l2, r2, s2, n2
	}
	if sel != nil {
		var l left
		var count func(n *Node, below, repeated bool)
		count = func(n *Node, below, repeated bool) {
			repeated = repeated || sel.group[n] != nil
			below = below || n.Below
			if n != root && !sel.keep[n] && (!o.Interactive || n.Ref != "") {
				l.lines++
				if n.Ref != "" {
					l.refs++
					if below {
						l.below++
					}
					if repeated {
						l.repeated++
					}
				}
			}
			for _, k := range n.Children {
				count(k, below, repeated)
			}
		}
		count(root, false, false)
		return lines, refs, l
	}
	var l left
	root.Walk(func(n *Node) bool {
		if n != root {
			l.lines++
			if n.Ref != "" {
				l.refs++
			}
		}
		return true
	})
	return nil, nil, l
}

// fits reports whether lines take at most budget tokens, counting them only when the answer
// is not plain: a token is at least a byte, and an outline estimated at half as much again as
// the budget does not fit.
func fits(lines []string, budget int, m *meter) bool {
	bytes, est := 0, 0
	for _, l := range lines {
		bytes += len(l) + 1
		est += estimate(l)
	}
	switch {
	case bytes <= budget:
		return true
	case est > budget*3/2:
		return false
	}
	return m.size(lines) <= budget
}

// fit chooses what fits in budget tokens with keep examples of each repeat: it chooses by
// estimate, counts what it chose and aims again (the estimate scaled by what it was off by)
// until the outline fills at least fitFill of the budget without going over, or aiming
// further gains nothing. It returns the lines, their refs, the selection and its tokens; a nil
// selection when nothing fits.
func fit(root *Node, o Options, page *url.URL, budget, keep int, costs map[*Node]int, m *meter) ([]string, []int, *selection, int) {
	const fitFill = 0.97
	p := newPlan(root, o, page, budget, keep, costs)
	var (
		best      []string
		bestRefs  []int
		bestSel   *selection
		bestN     int
		lo, hi, b = 0, math.MaxInt, budget // aims known to fit, to go over; this aim
		kept      = -1
	)
	for i := range 12 {
		sel := p.choose(b)
		lines, refs, _ := outline(root, o, page, sel)
		n := m.size(lines)
		if n <= budget {
			if bestSel == nil || n > bestN {
				best, bestRefs, bestSel, bestN = lines, refs, sel, n
			}
			if float64(n) >= fitFill*float64(budget) || len(sel.keep) == kept {
				break // full enough, or aiming higher kept no more
			}
			lo, kept = b, len(sel.keep)
		} else {
			hi = b
		}
		// aim by the estimate's error, every other time halfway between what fits and what
		// does not (the estimate can be off by a whole item that is kept or not)
		next := int(float64(b) * float64(budget) / float64(max(n, 1)))
		if i%2 == 1 || next <= lo || next >= hi {
			next = lo + (min(hi, 4*budget+64)-lo)/2
		}
		if next <= lo || next >= hi || next == b {
			break
		}
		b = next
	}
	return best, bestRefs, bestSel, bestN
}

// note is the header line saying what a budget left out and which tools reach it.
func (l left) note(maxTokens int, tools Tools) string {
	if l.lines == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# " + strconv.Itoa(l.lines) + " lines left out (" + strconv.Itoa(maxTokens) + "-token outline), " +
		strconv.Itoa(l.refs) + " refs")
	if l.below > 0 || l.repeated > 0 {
		b.WriteString(" (" + strconv.Itoa(l.below) + " below the fold, " + strconv.Itoa(l.repeated) + " in repeated items)")
	}
	b.WriteString(": " + tools.Find + " searches them, " + tools.Scope + " shows a part\n")
	return b.String()
}
