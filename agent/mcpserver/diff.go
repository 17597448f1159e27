package mcpserver

import (
	"slices"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/snapshot"
)

// changes says what changed from page model before to after (see [snapshot.Compare]): added,
// removed and changed elements, refs as they are (refs are stable across snapshots of a tab, so
// the changes never merely renumber the page); "" when nothing changed. The new values of the
// fields the action set (set) are left out: its message states them. A page the client has not
// seen (no before, or another page: [snapshot.SamePage]) gets its short summary ([newPage]): the client asks for its
// outline with snapshot when it needs it. Changes longer than the new outline give the outline
// instead.
func changes(before, after *snapshot.Snapshot, set []string) string {
	if !snapshot.SamePage(before, after) {
		return newPage(after, false)
	}
	d := snapshot.Compare(before, after)
	d.Changes = slices.DeleteFunc(d.Changes, func(c snapshot.Change) bool {
		return c.Kind == snapshot.Changed && c.After.Ref != "" && slices.Contains(set, c.After.Ref)
	})
	if d.Empty() {
		return ""
	}
	out := d.Render(0)
	if len(out) >= len(after.Text) {
		return "The page now:\n" + after.Text
	}
	return "Changes:\n" + out
}

// newPage is the result's view of a page just reached: its summary (its "# " lines say it is
// one), the URL in it unless the result already named it (told).
func newPage(after *snapshot.Snapshot, told bool) string {
	if told {
		return after.Glance()
	}
	return after.Header()
}

// setFields are the refs of the fields action a sets to values its message states (type,
// select, check, fill).
func setFields(a actions.Action) []string {
	switch p := a.Params.(type) {
	case *actions.Type:
		return []string{p.Ref}
	case *actions.Select:
		return []string{p.Ref}
	case *actions.Check:
		return []string{p.Ref}
	case *actions.Fill:
		refs := make([]string, len(p.Fields))
		for i, f := range p.Fields {
			refs[i] = f.Ref
		}
		return refs
	}
	return nil
}
