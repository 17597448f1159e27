package snapshot

import (
	"net/url"
	"strconv"
	"strings"
)

// display is a node prepared for output.
type display struct {
	n    *node
	text string // for text lines
	kids []*display
}

// simplify prepares n's subtree for output: merges text, drops text repeating a name, and in
// compact mode hoists unnamed structure and drops empty branches.
func simplify(n *node, full bool) []*display {
	if n.isText() {
		return []*display{{text: n.text}}
	}
	if n.role == "ListMarker" {
		return nil
	}
	var kids []*display
	for _, k := range n.kids {
		kids = append(kids, simplify(k, full)...)
	}
	// merge adjacent text
	var merged []*display
	for _, k := range kids {
		if k.n == nil && len(merged) > 0 && merged[len(merged)-1].n == nil {
			merged[len(merged)-1].text += " " + k.text
			continue
		}
		merged = append(merged, k)
	}
	kids = merged
	// drop a legend or caption that repeats its container's name
	if n.name != "" {
		var keep []*display
		for _, k := range kids {
			if k.n != nil && k.n.ref == "" && (k.n.axRole == "Legend" || k.n.axRole == "Caption" || k.n.axRole == "Figcaption") &&
				len(k.kids) == 1 && k.kids[0].n == nil && k.kids[0].text == n.name {
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
			if k.n != nil && k.n.name != "" {
				names[k.n.name] = true
			}
		}
		var keep []*display
		for _, k := range kids {
			if k.n == nil && names[strings.TrimSuffix(strings.TrimSpace(k.text), ":")] {
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
			if k.n != nil {
				allText = false
				break
			}
			sb.WriteString(k.text + " ")
		}
		if allText && (collapse(sb.String()) == n.name || strings.Contains(n.name, collapse(sb.String()))) {
			kids = nil
		}
	}
	if n.role == "textbox" || n.role == "searchbox" || n.role == "combobox" || n.role == "spinbutton" || n.role == "slider" {
		// their text content is their value
		if n.value != "" || n.ref != "" {
			var keep []*display
			for _, k := range kids {
				if k.n != nil {
					keep = append(keep, k)
				} else if n.value == "" && n.role == "textbox" {
					n.value = k.text
				}
			}
			kids = keep
		}
	}
	if n.hoist {
		return kids
	}
	if !full && n.ref == "" {
		if n.name == "" && (structural[n.axRole] || n.role == "generic") {
			return kids
		}
		if n.name == "" && n.axRole == "paragraph" && len(kids) == 1 && kids[0].n != nil {
			return kids
		}
		if n.axRole == "cell" || n.axRole == "gridcell" {
			if len(kids) > 0 && !anyText(kids) && (n.name == "" || n.name == textOf(n)) {
				return kids // a cell holding controls: the controls say enough
			}
			if len(kids) == 0 && n.name != "" && len(n.states) == 0 {
				return []*display{{text: n.name}} // a text cell is its text
			}
		}
		if n.name != "" && len(kids) > 0 && n.name == textOf(n) {
			n = &node{role: n.role, axRole: n.axRole, states: n.states, value: n.value, url: n.url}
		}
		if len(kids) == 0 && n.name == "" && n.value == "" {
			return nil
		}
	}
	return []*display{{n: n, kids: kids}}
}

// render writes the outline of root's children and returns it, the number of refs written and
// whether it was truncated.
func render(root *node, o Options, page *url.URL) (string, int, bool) {
	var lines []string
	var lineRefs []int
	truncated := false
	if o.Interactive {
		walkNodes(root, func(n *node) {
			if n.ref != "" {
				lines = append(lines, "- "+line(n, page))
				lineRefs = append(lineRefs, 1)
			}
		})
	} else {
		top := *root
		top.name, top.ref, top.hoist = "", "", true
		kids := simplify(&top, o.Full)
		var walk func(d *display, depth int)
		walk = func(d *display, depth int) {
			ind := strings.Repeat("  ", depth)
			if d.n == nil {
				lines = append(lines, ind+"- text: "+clip(d.text, 400))
				lineRefs = append(lineRefs, 0)
				return
			}
			l := ind + "- " + line(d.n, page)
			r := 0
			if d.n.ref != "" {
				r = 1
			}
			if len(d.kids) >= 1 && d.kids[0].n == nil && d.n.value == "" {
				// leading text goes on the element's own line
				l += ": " + clip(d.kids[0].text, 400)
				if len(d.kids) == 1 {
					lines = append(lines, l)
					lineRefs = append(lineRefs, r)
					return
				}
				d = &display{n: d.n, kids: d.kids[1:]}
				d.n = withValueShown(d.n)
			}
			if len(d.kids) > 0 {
				if o.MaxDepth > 0 && depth+1 >= o.MaxDepth {
					hidden := 0
					for _, k := range d.kids {
						countRefs(k, &hidden)
					}
					lines = append(lines, l+": …")
					if hidden > 0 {
						lines[len(lines)-1] += " (" + strconv.Itoa(hidden) + " refs deeper)"
					}
					lineRefs = append(lineRefs, r)
					truncated = true
					return
				}
				if d.n.value == "" && !d.n.inline {
					l += ":"
				}
			}
			lines = append(lines, l)
			lineRefs = append(lineRefs, r)
			for _, k := range d.kids {
				walk(k, depth+1)
			}
		}
		for _, k := range kids {
			walk(k, 0)
		}
	}
	var b strings.Builder
	refs := 0
	for i, l := range lines {
		if o.MaxChars > 0 && b.Len()+len(l)+1 > o.MaxChars {
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
	return b.String(), refs, truncated
}

func anyText(ds []*display) bool {
	for _, d := range ds {
		if d.n == nil {
			return true
		}
	}
	return false
}

func countRefs(d *display, n *int) {
	if d.n != nil && d.n.ref != "" {
		*n++
	}
	for _, k := range d.kids {
		countRefs(k, n)
	}
}

// line renders one element: role "name" [states] [ref=eN]: value.
// withValueShown marks a copy of n as having inline content, so no ":" is added after it.
func withValueShown(n *node) *node {
	c := *n
	c.inline = true
	return &c
}

func line(n *node, page *url.URL) string {
	var b strings.Builder
	b.WriteString(n.role)
	if n.name != "" {
		b.WriteString(" " + strconv.Quote(clip(n.name, 100)))
	}
	for _, s := range n.states {
		b.WriteString(" [" + s + "]")
	}
	if n.password {
		b.WriteString(" [password]")
	}
	if n.focused && n.ref != "" {
		b.WriteString(" [focused]")
	}
	if n.ref != "" {
		b.WriteString(" [ref=" + n.ref + "]")
	}
	if n.url != "" && n.role == "link" {
		base := page
		if n.frame != nil && n.frame.URL != "" {
			if fu, err := url.Parse(n.frame.URL); err == nil {
				base = fu
			}
		}
		b.WriteString(" [url=" + shortURL(n.url, base) + "]")
	}
	if n.value != "" && n.value != n.name {
		b.WriteString(": " + clip(n.value, 200))
	}
	if len(n.options) > 0 {
		opts := n.options
		more := ""
		if len(opts) > 25 {
			more = ", … " + strconv.Itoa(len(opts)-25) + " more"
			opts = opts[:25]
		}
		if n.value == "" {
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
