// Package pagetest builds page models by hand for tests of code that reads them (the agent's
// safety rules, the fast path, skills): a tree of snapshot.Node values written as Go, rendered
// to text by the snapshot package's own renderer, so a fake browser's snapshot has the same
// structure and the same text a real one would.
//
//	page := pagetest.Page("https://shop.test/cart", "Cart",
//		pagetest.El("form", "Checkout",
//			pagetest.El("textbox", "Coupon", pagetest.Ref("e2"), pagetest.Value("SPRING")),
//			pagetest.El("button", "Place order", pagetest.Ref("e3"))))
package pagetest

import (
	"fmt"

	"github.com/tabrelay/tabrelay/snapshot"
)

// Ref is an element's ref, for El.
type Ref string

// Value is a field's value, for El.
type Value string

// URL is a link's target, for El.
type URL string

// Options are a native select's option labels, for El.
type Options []string

// El returns an element node of role and name. parts are its Ref, Value, URL, Options, its
// children (*snapshot.Node), and its states as strings: "checked", "disabled", "level=1", …, or
// the typed marks "password", "focused", "modal" and "below" (below the viewport). Any other part panics: a test is wrong.
func El(role, name string, parts ...any) *snapshot.Node {
	n := &snapshot.Node{Role: role, Name: name}
	for _, p := range parts {
		switch v := p.(type) {
		case Ref:
			n.Ref = string(v)
		case Value:
			n.Value = string(v)
		case URL:
			n.URL = string(v)
		case Options:
			n.Options = v
		case *snapshot.Node:
			n.Children = append(n.Children, v)
		case string:
			switch v {
			case "password":
				n.Password = true
			case "focused":
				n.Focused = true
			case "modal":
				n.Modal = true
			case "below":
				n.Below = true
			default:
				n.States = append(n.States, v)
			}
		default:
			panic(fmt.Sprintf("pagetest.El: part %T (%v) is not a Ref, Value, URL, Options, *snapshot.Node or state", p, p))
		}
	}
	return n
}

// Text returns a run of text.
func Text(s string) *snapshot.Node { return &snapshot.Node{Role: "text", Text: s} }

// Page returns the snapshot of a page at url with title holding nodes, rendered as
// Tab.Snapshot renders a real one.
func Page(url, title string, nodes ...*snapshot.Node) *snapshot.Snapshot {
	s := &snapshot.Snapshot{URL: url, Title: title, Root: &snapshot.Node{Role: "document", Name: title, Children: nodes}}
	s.Render(snapshot.Options{})
	return s
}

// Blocked returns the snapshot of a page at url blocked by an open JavaScript dialog (no tree),
// as Tab.Snapshot returns it.
func Blocked(url, title string, d snapshot.Dialog) *snapshot.Snapshot {
	s := &snapshot.Snapshot{URL: url, Title: title, Dialog: &d}
	s.Render(snapshot.Options{})
	return s
}
