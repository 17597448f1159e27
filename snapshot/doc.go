// Package snapshot reads a browser tab as a role snapshot: a compact, indented outline of the
// page's accessibility tree (main frame, same-process and out-of-process iframes, open shadow
// DOM) in the style of Playwright's aria snapshots, where every interactive element carries a
// ref such as e7:
//
//	# Cart — https://example.com/cart
//	- heading "Cart" [level=1]
//	- listitem: Blue mug
//	  - button "Remove" [ref=e1]
//	- textbox "Coupon" [ref=e2]: SPRING
//	- button "Apply" [ref=e3]
//	- link "Checkout" [ref=e4] [url=/checkout]
//
// Everything goes through the Chrome DevTools Protocol methods a Chrome extension's
// chrome.debugger may use (Accessibility, DOM, DOMSnapshot, Page, Runtime, Target auto-attach),
// so the same code works on a real Chrome endpoint and through the tabrelay relay.
//
// Refs are per tab and stable: an unchanged element keeps its ref across snapshots, and an
// element re-rendered by a framework (same role, name and position among equals in the same
// document) inherits the ref of the node it replaced. Tab.Resolve turns a ref back into a live
// element and never returns a different element: if the element is gone it says so.
package snapshot
