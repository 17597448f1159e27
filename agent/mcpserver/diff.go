package mcpserver

import (
	"github.com/tabrelay/tabrelay/snapshot"
)

// changes says what changed from page model before to after (see [snapshot.Compare]): added,
// removed and changed elements, refs as they are. When the page is another one, or the changes
// would be longer than the new outline, it returns the new outline instead.
func changes(before, after *snapshot.Snapshot) string {
	d := snapshot.Compare(before, after)
	if d.Empty() && before.URL == after.URL {
		return "No change in the page."
	}
	out := d.Render(0)
	if before.URL != after.URL || len(out) >= len(after.Text) {
		return "The page now:\n" + after.Text
	}
	return "Changes since the last snapshot (+ added, - removed, ~ changed):\n" + out
}
