// Package outline parses the role snapshot text the agent reads, one element per line:
//
//   - heading "Sign in" [level=1] [ref=e2]
//   - textbox "Email" [ref=e3]: ada@example.com
//   - checkbox "Remember me" [checked] [ref=e4]
//   - link "Docs" [ref=e5]:
//   - /url: https://example.com/docs
//   - text: Some paragraph text
//
// Indentation (two spaces per level) gives nesting. Lines that do not look like an element are
// kept as text nodes so nothing is lost. The parser never fails: it is fed page-controlled text.
package outline

import (
	"strings"
)

// Node is one parsed line.
type Node struct {
	// Line is the 0-based line number in the snapshot.
	Line int `json:"line"`
	// Depth is the nesting level (indentation / 2).
	Depth int `json:"depth"`
	// Parent is the index in the node list of the enclosing node, -1 at top level.
	Parent int `json:"parent"`
	// Role is the ARIA role ("button", "textbox", …), "text" for text lines, "/url" etc. for
	// properties.
	Role string `json:"role"`
	// Name is the accessible name (unquoted).
	Name string `json:"name,omitempty"`
	// Ref is the element reference ("e6") or "".
	Ref string `json:"ref,omitempty"`
	// Attrs are the bracketed states and properties other than ref: "checked" → "",
	// "level=1" → "1".
	Attrs map[string]string `json:"attrs,omitempty"`
	// Value is the text after the trailing colon (a textbox's value, a text line's text).
	Value string `json:"value,omitempty"`
	// Raw is the line without its indentation.
	Raw string `json:"raw"`
}

// Has reports whether the node carries the state or property key.
func (n Node) Has(key string) bool { _, ok := n.Attrs[key]; return ok }

// Parse reads a snapshot. It accepts any input.
func Parse(snapshot string) []Node {
	lines := strings.Split(snapshot, "\n")
	nodes := make([]Node, 0, len(lines))
	var stack []int // indexes of open ancestors by depth
	for i, line := range lines {
		line = strings.TrimRight(line, " \t\r")
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" {
			continue
		}
		indent := len(line) - len(trimmed)
		depth := indent / 2
		n := parseLine(trimmed)
		n.Line, n.Depth, n.Parent = i, depth, -1
		for len(stack) > 0 && nodes[stack[len(stack)-1]].Depth >= depth {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			n.Parent = stack[len(stack)-1]
		}
		nodes = append(nodes, n)
		stack = append(stack, len(nodes)-1)
	}
	return nodes
}

// parseLine parses one trimmed line.
func parseLine(s string) Node {
	n := Node{Raw: s}
	if !strings.HasPrefix(s, "- ") && s != "-" {
		n.Role, n.Value = "text", s
		return n
	}
	rest := strings.TrimSpace(strings.TrimPrefix(s, "-"))
	// Role: up to the first space, quote, bracket or colon.
	end := strings.IndexAny(rest, " \"[:")
	if end < 0 {
		n.Role = rest
		return n
	}
	n.Role, rest = rest[:end], rest[end:]
	for {
		rest = strings.TrimLeft(rest, " ")
		switch {
		case strings.HasPrefix(rest, "\""):
			name, after, ok := unquote(rest)
			if !ok {
				n.Name, rest = strings.Trim(rest, "\""), ""
				continue
			}
			if n.Name == "" {
				n.Name = name
			}
			rest = after
		case strings.HasPrefix(rest, "["):
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				n.Value = strings.TrimSpace(rest)
				return n
			}
			attr := rest[1:end]
			rest = rest[end+1:]
			key, val, _ := strings.Cut(attr, "=")
			key = strings.TrimSpace(key)
			if key == "ref" {
				n.Ref = strings.TrimSpace(val)
				continue
			}
			if key != "" {
				if n.Attrs == nil {
					n.Attrs = map[string]string{}
				}
				n.Attrs[key] = strings.TrimSpace(val)
			}
		case strings.HasPrefix(rest, ":"):
			n.Value = strings.TrimSpace(rest[1:])
			if v, _, ok := unquote(n.Value); ok && strings.HasPrefix(n.Value, "\"") && strings.HasSuffix(n.Value, "\"") {
				n.Value = v
			}
			return n
		case rest == "":
			return n
		default:
			// Unquoted trailing words: keep them as the value.
			n.Value = strings.TrimSpace(rest)
			return n
		}
	}
}

// unquote reads a double-quoted string with backslash escapes from the start of s and returns
// it and the remainder.
func unquote(s string) (string, string, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(s[i])
				}
			}
		case '"':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", s, false
}

// Find returns the node with the ref, and whether it exists.
func Find(nodes []Node, ref string) (Node, bool) {
	for _, n := range nodes {
		if n.Ref == ref && ref != "" {
			return n, true
		}
	}
	return Node{}, false
}

// LineFor returns the raw line of the element with the ref in snapshot ("" if absent).
func LineFor(snapshot, ref string) string {
	n, ok := Find(Parse(snapshot), ref)
	if !ok {
		return ""
	}
	return n.Raw
}

// Child returns the first direct child of nodes[i] with the role (e.g. "/url"), if any.
func Child(nodes []Node, i int, role string) (Node, bool) {
	for j := i + 1; j < len(nodes) && nodes[j].Depth > nodes[i].Depth; j++ {
		if nodes[j].Parent == i && nodes[j].Role == role {
			return nodes[j], true
		}
	}
	return Node{}, false
}

// Text returns the visible text of the snapshot: names and values in document order, one per
// line, without refs (for summaries and "what is on this page").
func Text(nodes []Node) string {
	var b strings.Builder
	for _, n := range nodes {
		if strings.HasPrefix(n.Role, "/") {
			continue
		}
		t := n.Name
		if n.Value != "" {
			if t != "" {
				t += ": "
			}
			t += n.Value
		}
		if t == "" {
			continue
		}
		b.WriteString(strings.Repeat("  ", n.Depth))
		b.WriteString(t)
		b.WriteByte('\n')
	}
	return b.String()
}
