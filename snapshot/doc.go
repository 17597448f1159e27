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
// A control the page gives no name is shown with the name its icon, id or data attributes give
// (package describe), marked: button "trash" [icon]; a field with no label with the text just
// before it: textbox "Time" [text before]. Compare tells what changed between two snapshots of
// a tab, counters and clocks that change on every snapshot apart (Diff.Ticking).
//
// Everything goes through the Chrome DevTools Protocol methods a Chrome extension's
// chrome.debugger may use (Accessibility, DOM, DOMDebugger, DOMSnapshot, Page, Runtime, Target
// auto-attach), so the same code works on a real Chrome endpoint and through the tabrelay relay.
//
// Two builders make the same tree. By default the outline is computed in the page (inpage.js,
// run in an isolated world of each frame: roles, names, states and values of what is rendered,
// a few hundred bytes per element instead of Chrome's whole accessibility tree); iframes are
// stitched by their owner elements, closed shadow roots are handed to the walker through the
// DOM domain, and script-added click listeners come from DOMDebugger. The other builder reads
// Chrome's full accessibility tree (Tab.UseInPage(false)): it is the reference the tests
// compare the in-page outline with.
//
// A snapshot of a page left alone costs one small call per frame: a change check in the walker's
// world (changes.js: DOM mutations, loads, input, scrolling, resizing, toggles, animations, form
// values, focus, URL and title) answers that nothing changed, and the previous snapshot is
// returned, refs and all. A frame that changed is walked again in the same call.
//
// Refs are per tab and stable: an unchanged element keeps its ref across snapshots, and an
// element re-rendered by a framework (same role, name and position among equals in the same
// document) inherits the ref of the node it replaced. Tab.Resolve turns a ref back into a live
// element and never returns a different element: if the element is gone it says so.
package snapshot
