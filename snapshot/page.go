package snapshot

import (
	"encoding/json"
	"slices"

	"github.com/tabrelay/tabrelay/snapshot/describe"
)

// Node is one element or text of a page model: exactly what one line of the rendered outline
// shows, as structure. The tree under [Snapshot.Root] is built first and the outline text is
// rendered from it (as Playwright builds its aria tree, then renders it), so code reads these
// fields and never the text.
//
// The tree is the compact outline's: unnamed wrappers are hoisted away, adjacent text is merged,
// text that repeats a neighbour's name is dropped. Nodes are read-only once returned.
type Node struct {
	// Role is the role shown ("button", "textbox", "heading", "iframe", "clickable", …), "text"
	// for a run of text, "document" for the root.
	Role string `json:"role"`
	// Name is the accessible name (text-derived for script-clickable elements), not clipped.
	Name string `json:"name,omitempty"`
	// Inferred is a name an element without one is given by what it shows or carries: the
	// words of an icon-only control's evidence (describe.Infer: "trash" for an
	// <i class="fa-trash">), or the text just before a field ("Time" for "Time: <input>").
	// The outline shows it quoted like a name and marked with InferredBy: button "trash" [icon].
	Inferred string `json:"inferred,omitempty"`
	// InferredBy says where Inferred comes from.
	InferredBy Inference `json:"inferredBy,omitempty"`
	// Ref is the element's ref ("e7"), "" when it has none.
	Ref string `json:"ref,omitempty"`
	// States are the states and properties shown in brackets, in order: "checked",
	// "pressed=mixed", "disabled", "expanded", "selected", "multiline" (a text area), "required",
	// "readonly", "level=2"…
	States []string `json:"states,omitempty"`
	// Password is true for an <input type=password>.
	Password bool `json:"password,omitempty"`
	// Focused is true for the element with keyboard focus.
	Focused bool `json:"focused,omitempty"`
	// Modal is true for an open modal dialog (aria-modal, or a <dialog> shown modally).
	Modal bool `json:"modal,omitempty"`
	// AriaHidden is true for an element marked aria-hidden=true that is shown on screen (what
	// it holds is listed too, as a person sees it, though assistive technology does not).
	AriaHidden bool `json:"ariaHidden,omitempty"`
	// Below is true for a node of the main frame that lies below the visible viewport (its
	// own box, or its nearest placed ancestor's). A token budget shows it after what is in view.
	Below bool `json:"below,omitempty"`
	// Value is a field's value (a textbox's text, a combobox's selection, a slider's value).
	Value string `json:"value,omitempty"`
	// URL is a link's target, absolute.
	URL string `json:"url,omitempty"`
	// Options are a native <select>'s option labels.
	Options []string `json:"options,omitempty"`
	// Text is the content of a "text" node.
	Text string `json:"text,omitempty"`
	// Frame is the frame whose document holds the element (nil for text).
	Frame *Frame `json:"-"`
	// Children are the nested nodes, in document order.
	Children []*Node `json:"children,omitempty"`

	parent *Node
	src    *node // the built node (identity checks while compacting); nil in hand-built trees
}

// Inference is where an inferred name ([Node.Inferred]) comes from; it is also the mark the
// outline gives the name.
type Inference string

// The sources of inferred names.
const (
	// ByIcon: the words of an unnamed control's icons, ids and data attributes (package describe).
	ByIcon Inference = describe.Mark
	// ByText: the text just before an unnamed field in its container.
	ByText Inference = "text before"
)

// Label is what the outline calls n: its name, else its inferred name ("" when it has neither).
func (n *Node) Label() string {
	if n.Name != "" {
		return n.Name
	}
	return n.Inferred
}

// Parent returns the enclosing node (nil for the root or a node not in a linked tree).
func (n *Node) Parent() *Node { return n.parent }

// IsText reports whether n is a run of text rather than an element.
func (n *Node) IsText() bool { return n.Role == "text" }

// Has reports whether n shows the state: "checked", "disabled", "level=1", …; "password" and
// "focused" are the typed fields.
func (n *Node) Has(state string) bool {
	switch state {
	case "password":
		return n.Password
	case "focused":
		return n.Focused
	case "modal":
		return n.Modal
	}
	return slices.Contains(n.States, state)
}

// Closest returns the nearest ancestor of n (not n itself) with one of the roles, nil if none.
func (n *Node) Closest(roles ...string) *Node {
	for p := n.parent; p != nil; p = p.parent {
		if slices.Contains(roles, p.Role) {
			return p
		}
	}
	return nil
}

// Contains reports whether d is n or a descendant of n.
func (n *Node) Contains(d *Node) bool {
	for ; d != nil; d = d.parent {
		if d == n {
			return true
		}
	}
	return false
}

// Walk calls fn for n and its descendants in document order; fn returning false skips a
// node's children.
func (n *Node) Walk(fn func(*Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	for _, k := range n.Children {
		k.Walk(fn)
	}
}

// Descendants returns the nodes under n, in document order.
func (n *Node) Descendants() []*Node {
	var out []*Node
	for _, k := range n.Children {
		k.Walk(func(d *Node) bool { out = append(out, d); return true })
	}
	return out
}

// Words returns what the page itself says on n's line: a text node's text, else the element's
// name and value (not its URL or states).
func (n *Node) Words() string {
	if n.IsText() {
		return n.Text
	}
	switch {
	case n.Name == "":
		return n.Value
	case n.Value == "" || n.Value == n.Name:
		return n.Name
	}
	return n.Name + " " + n.Value
}

// link sets the parent pointers of n's subtree.
func (n *Node) link() {
	for _, k := range n.Children {
		k.parent = n
		k.link()
	}
}

// UnmarshalJSON decodes a snapshot's JSON form and links its tree's parents, so a decoded
// page model answers Closest and Parent as the original does.
func (s *Snapshot) UnmarshalJSON(b []byte) error {
	type plain Snapshot
	if err := json.Unmarshal(b, (*plain)(s)); err != nil {
		return err
	}
	if s.Root != nil {
		s.Root.link()
	}
	return nil
}

// Nodes returns every node of the page model under the root, in document order (the order of
// the outline's lines), nil when no tree was read (a JavaScript dialog blocks the page).
func (s *Snapshot) Nodes() []*Node {
	if s == nil || s.Root == nil {
		return nil
	}
	return s.Root.Descendants()
}

// Find returns the element with the ref, nil if the page model has none.
func (s *Snapshot) Find(ref string) *Node {
	if s == nil || s.Root == nil || ref == "" {
		return nil
	}
	var found *Node
	s.Root.Walk(func(n *Node) bool {
		if found == nil && n.Ref == ref {
			found = n
		}
		return found == nil
	})
	return found
}

// Focused returns the element with keyboard focus that has a ref, nil if none.
func (s *Snapshot) Focused() *Node {
	for _, n := range s.Nodes() {
		if n.Ref != "" && n.Focused {
			return n
		}
	}
	return nil
}

// Around returns the nodes near n in document order: up to before nodes before it, n, and up
// to after nodes after it (nil if n is not in the page model).
func (s *Snapshot) Around(n *Node, before, after int) []*Node {
	all := s.Nodes()
	i := slices.Index(all, n)
	if i < 0 {
		return nil
	}
	return all[max(0, i-before):min(len(all), i+after+1)]
}

// Line renders n's own line of the outline, without indent or children: role "name"
// [states] [ref=eN] [url=…]: value, or "text: …" for text.
func (s *Snapshot) Line(n *Node) string {
	if n.IsText() {
		return "text: " + clip(n.Text, 400)
	}
	return line(n, pageOrigin(s.URL))
}
