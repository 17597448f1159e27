package snapshot

import (
	"net/url"
	"strconv"
	"strings"
)

// newNode is the page model's node for built node n, holding kids.
func newNode(n *node, kids []*Node) *Node {
	d := &Node{Role: n.role, Name: n.name, Ref: n.ref, Inferred: n.inferred, InferredBy: n.inferredBy, States: n.states, Password: n.password, Focused: n.focused,
		Modal: n.modal, AriaHidden: n.ariaHidden, Below: n.below, Value: n.value, URL: n.url, Options: n.options, Frame: n.frame, Children: kids, src: n}
	for _, k := range kids {
		k.parent = d
	}
	return d
}

// compact builds the page model of root's subtree: the tree the outline shows (see simplify).
// The root keeps its own role, name and ref; its children are what the outline lists.
func compact(root *node, full bool) *Node {
	top := *root
	top.name, top.ref, top.hoist = "", "", true
	return newNode(root, simplify(&top, full))
}

// simplify prepares n's subtree for output: merges text, drops text repeating a name, and in
// compact mode hoists unnamed structure and drops empty branches.
func simplify(n *node, full bool) []*Node {
	if n.isText() {
		return []*Node{{Role: "text", Text: n.text, Below: n.below}}
	}
	if n.role == "ListMarker" {
		return nil
	}
	var kids []*Node
	for _, k := range n.kids {
		kids = append(kids, simplify(k, full)...)
	}
	// merge adjacent text
	var merged []*Node
	for _, k := range kids {
		if k.IsText() && len(merged) > 0 && merged[len(merged)-1].IsText() {
			merged[len(merged)-1].Text += " " + k.Text
			continue
		}
		merged = append(merged, k)
	}
	kids = merged
	// drop a legend or caption that repeats its container's name
	if n.name != "" {
		var keep []*Node
		for _, k := range kids {
			if !k.IsText() && k.Ref == "" && (k.src.axRole == "Legend" || k.src.axRole == "Caption" || k.src.axRole == "Figcaption") &&
				len(k.Children) == 1 && k.Children[0].IsText() && k.Children[0].Text == n.name {
				continue
			}
			keep = append(keep, k)
		}
		kids = keep
	}
	// drop label text repeated by the name of the element next to it
	if len(kids) > 1 {
		names := map[string]bool{}
		for _, k := range kids {
			if !k.IsText() && k.Label() != "" {
				names[k.Label()] = true
			}
		}
		var keep []*Node
		for _, k := range kids {
			if k.IsText() && names[strings.TrimSuffix(strings.TrimSpace(k.Text), ":")] {
				continue
			}
			keep = append(keep, k)
		}
		kids = keep
	}
	if n.name != "" && len(kids) > 0 {
		allText := true
		var sb strings.Builder
		for _, k := range kids {
			if !k.IsText() {
				allText = false
				break
			}
			sb.WriteString(k.Text + " ")
		}
		if allText && (collapse(sb.String()) == n.name || strings.Contains(n.name, collapse(sb.String()))) {
			kids = nil
		}
	}
	if n.role == "textbox" || n.role == "searchbox" || n.role == "combobox" || n.role == "spinbutton" || n.role == "slider" {
		// their text content is their value
		if n.value != "" || n.ref != "" {
			var keep []*Node
			for _, k := range kids {
				if !k.IsText() {
					keep = append(keep, k)
				} else if n.value == "" && n.role == "textbox" {
					n.value = k.Text
				}
			}
			kids = keep
		}
	}
	if n.hoist {
		return kids
	}
	if !full && n.ref == "" {
		if n.name == "" && (structural[n.axRole] || n.role == "generic") && !(n.ariaHidden && holdsRef(kids)) {
			// (an aria-hidden container of controls stays, to say they are hidden from
			// assistive technology; an icon's or a decoration's text joins its parent's)
			return kids
		}
		if n.name == "" && n.axRole == "paragraph" && len(kids) == 1 && !kids[0].IsText() {
			return kids
		}
		if n.axRole == "cell" || n.axRole == "gridcell" {
			if len(kids) > 0 && !anyText(kids) && (n.name == "" || n.name == textOf(n)) {
				return kids // a cell holding controls: the controls say enough
			}
			if len(kids) == 0 && n.name != "" && len(n.states) == 0 {
				return []*Node{{Role: "text", Text: n.name, Below: n.below}} // a text cell is its text
			}
		}
		if n.name != "" && len(kids) > 0 && n.name == textOf(n) {
			n = &node{role: n.role, axRole: n.axRole, states: n.states, value: n.value, url: n.url, frame: n.frame, modal: n.modal, below: n.below, ariaHidden: n.ariaHidden,
				inferred: n.inferred, inferredBy: n.inferredBy}
		}
		if len(kids) == 0 && n.name == "" && n.value == "" {
			return nil
		}
	}
	return []*Node{newNode(n, kids)}
}

// render writes the outline of root's children and returns it, the number of refs written and
// whether it was truncated.
func render(root *node, o Options, page *url.URL) (string, int, bool) {
	return renderModel(compact(root, o.Full), o, page)
}

// renderModel writes the outline of a page model: root's children (with Interactive, every
// element with a ref, root included). It returns the text, the number of refs written and
// whether MaxDepth or MaxChars cut it.
func renderModel(root *Node, o Options, page *url.URL) (string, int, bool) {
	lines, lineRefs, truncated := outline(root, o, page, nil)
	text, refs, cut := join(lines, lineRefs, o.MaxChars)
	return text, refs, truncated || cut
}

// outline renders the lines of a page model and the refs each holds. With sel, only the nodes
// it keeps are written; each run of siblings it leaves out becomes one note line.
func outline(root *Node, o Options, page *url.URL, sel *selection) (lines []string, lineRefs []int, truncated bool) {
	if o.Interactive {
		var run []*Node
		root.Walk(func(n *Node) bool {
			if n.Ref == "" {
				return true
			}
			if sel != nil && !sel.keep[n] {
				run = append(run, n)
				return true
			}
			if len(run) > 0 {
				notes := sel.notes("", run)
				lines, lineRefs = append(lines, notes...), append(lineRefs, make([]int, len(notes))...)
				run = nil
			}
			lines = append(lines, "- "+line(n, page))
			lineRefs = append(lineRefs, 1)
			return true
		})
		if len(run) > 0 {
			notes := sel.notes("", run)
			lines, lineRefs = append(lines, notes...), append(lineRefs, make([]int, len(notes))...)
		}
		return lines, lineRefs, false
	}
	var walk func(d *Node, depth int)
	walkKids := func(kids []*Node, depth int) {
		var run []*Node
		flush := func() {
			if len(run) > 0 {
				notes := sel.notes(strings.Repeat("  ", depth), run)
				lines, lineRefs = append(lines, notes...), append(lineRefs, make([]int, len(notes))...)
				run = nil
			}
		}
		for _, k := range kids {
			if sel != nil && !sel.keep[k] {
				run = append(run, k)
				continue
			}
			flush()
			walk(k, depth)
		}
		flush()
	}
	walk = func(d *Node, depth int) {
		ind := strings.Repeat("  ", depth)
		if d.IsText() {
			lines = append(lines, ind+"- text: "+clip(d.Text, 400))
			lineRefs = append(lineRefs, 0)
			return
		}
		l := ind + "- " + line(d, page)
		r := 0
		if d.Ref != "" {
			r = 1
		}
		kids, inline := d.Children, false
		if leadingText(d) {
			// leading text goes on the element's own line
			l += ": " + clip(kids[0].Text, 400)
			if len(kids) == 1 {
				lines = append(lines, l)
				lineRefs = append(lineRefs, r)
				return
			}
			kids, inline = kids[1:], true
		}
		if len(kids) > 0 {
			if o.MaxDepth > 0 && depth+1 >= o.MaxDepth {
				hidden := 0
				for _, k := range kids {
					hidden += countRefs(k)
				}
				lines = append(lines, l+": …")
				if hidden > 0 {
					lines[len(lines)-1] += " (" + strconv.Itoa(hidden) + " refs deeper)"
				}
				lineRefs = append(lineRefs, r)
				truncated = true
				return
			}
			if d.Value == "" && !inline {
				l += ":"
			}
		}
		lines = append(lines, l)
		lineRefs = append(lineRefs, r)
		walkKids(kids, depth+1)
	}
	walkKids(root.Children, 0)
	return lines, lineRefs, truncated
}

// leadingText reports whether d's first child is text written on d's own line.
func leadingText(d *Node) bool {
	return len(d.Children) >= 1 && d.Children[0].IsText() && d.Value == ""
}

// join writes lines, cut with a note past maxChars (0: no limit); it returns the text, the
// refs written and whether it was cut.
func join(lines []string, lineRefs []int, maxChars int) (string, int, bool) {
	var b strings.Builder
	refs := 0
	for i, l := range lines {
		if maxChars > 0 && b.Len()+len(l)+1 > maxChars {
			more := 0
			for _, r := range lineRefs[i:] {
				more += r
			}
			b.WriteString("# … truncated: " + strconv.Itoa(len(lines)-i) + " more lines with " + strconv.Itoa(more) +
				" refs; scope to a ref, use interactive, or raise maxChars\n")
			return b.String(), refs, true
		}
		b.WriteString(l)
		b.WriteByte('\n')
		refs += lineRefs[i]
	}
	return b.String(), refs, false
}

func anyText(ns []*Node) bool {
	for _, n := range ns {
		if n.IsText() {
			return true
		}
	}
	return false
}

// holdsRef reports whether any of ns or their descendants has a ref.
func holdsRef(ns []*Node) bool {
	for _, n := range ns {
		if countRefs(n) > 0 {
			return true
		}
	}
	return false
}

// countRefs counts the refs in n's subtree.
func countRefs(n *Node) int {
	c := 0
	n.Walk(func(d *Node) bool {
		if d.Ref != "" {
			c++
		}
		return true
	})
	return c
}

// line renders one element: role "name" [states] [ref=eN] [url=…]: value (options: …).
func line(n *Node, page *url.URL) string {
	var b strings.Builder
	b.WriteString(n.Role)
	if n.Name != "" {
		b.WriteString(" " + strconv.Quote(clip(n.Name, 100)))
	} else if n.Inferred != "" {
		b.WriteString(" " + strconv.Quote(clip(n.Inferred, 100)) + " [" + string(n.InferredBy) + "]")
	}
	for _, s := range n.States {
		b.WriteString(" [" + s + "]")
	}
	if n.Password {
		b.WriteString(" [password]")
	}
	if n.AriaHidden {
		b.WriteString(" [aria-hidden]")
	}
	if n.Focused && n.Ref != "" {
		b.WriteString(" [focused]")
	}
	if n.Ref != "" {
		b.WriteString(" [ref=" + n.Ref + "]")
	}
	if n.URL != "" && n.Role == "link" {
		base := page
		if n.Frame != nil && n.Frame.URL != "" {
			if fu, err := url.Parse(n.Frame.URL); err == nil {
				base = fu
			}
		}
		b.WriteString(" [url=" + shortURL(n.URL, base) + "]")
	}
	if n.Value != "" && n.Value != n.Name {
		b.WriteString(": " + shownValue(n.Value))
	}
	if len(n.Options) > 0 {
		opts := n.Options
		more := ""
		if len(opts) > 25 {
			more = ", … " + strconv.Itoa(len(opts)-25) + " more"
			opts = opts[:25]
		}
		if n.Value == "" {
			b.WriteString(":")
		}
		b.WriteString(" (options: " + strings.Join(opts, ", ") + more + ")")
	}
	return b.String()
}

func shortURL(u string, page *url.URL) string {
	p, err := url.Parse(u)
	if err != nil || page == nil {
		return clip(u, 100)
	}
	if p.Scheme == page.Scheme && p.Host == page.Host {
		if p.Path == page.Path && p.RawQuery == page.RawQuery && p.Fragment != "" {
			return "#" + clip(p.Fragment, 60)
		}
		s := p.EscapedPath()
		if p.RawQuery != "" {
			s += "?" + p.RawQuery
		}
		if p.Fragment != "" {
			s += "#" + p.Fragment
		}
		return clip(s, 100)
	}
	return clip(u, 100)
}

// shownValue is a field's value as the outline shows it: as it is, or quoted when spaces at
// its ends or line breaks would not show otherwise ("Paris " is not "Paris"); clipped.
func shownValue(v string) string {
	if strings.TrimSpace(v) == v && !strings.ContainsAny(v, "\n\r\t") {
		return clip(v, 200)
	}
	if r := []rune(v); len(r) > 200 {
		v = string(r[:199]) + "…"
	}
	return strconv.Quote(v)
}
