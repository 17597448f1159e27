package mcpserver

import (
	"github.com/tabrelay/tabrelay/snapshot"
)

// changes says what changed from page model before to after (see [snapshot.Compare]): added,
// removed and changed elements, refs as they are (refs are stable across snapshots of a tab, so
// the changes never merely renumber the page). A page the client has not seen (no before, or
// another URL) gets its short summary ([snapshot.Snapshot.Header]): the client asks for its
// outline with snapshot when it needs it. Changes longer than the new outline give the
// outline instead.
func changes(before, after *snapshot.Snapshot) string {
	if before == nil || before.URL != after.URL {
		return newPage(after)
	}
	d := snapshot.Compare(before, after)
	if d.Empty() {
		return "No change in the page."
	}
	out := d.Render(0)
	if len(out) >= len(after.Text) {
		return "The page now:\n" + after.Text
	}
	return "Changes since the last snapshot (+ added, - removed, ~ changed):\n" + out
}

// newPage is the result's view of a page just reached: its summary, and how to read it all.
func newPage(after *snapshot.Snapshot) string {
	return "Now on this page (snapshot reads its outline):\n" + after.Header()
}
