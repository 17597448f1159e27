package snapshot

import (
	"errors"
	"testing"
)

func TestOrphanIframes(t *testing.T) {
	main := &Frame{ID: "main"}
	page := func(ids ...int) []wnode {
		var ks []wnode
		for _, id := range ids {
			ks = append(ks, wnode{R: "Iframe", I: id})
		}
		return []wnode{{R: "generic", K: ks}}
	}
	child := func(id string, owner int, err error) *walked {
		return &walked{frame: &Frame{ID: id, ParentID: "main"}, owner: owner, err: err}
	}
	for _, c := range []struct {
		name string
		out  []*walked
		want bool
	}{
		{"no iframes", []*walked{{frame: main, kids: page()}}, false},
		{"each iframe has its frame", []*walked{{frame: main, kids: page(5, 6)}, child("a", 5, nil), child("b", 6, nil)}, false},
		{"a frame not listed yet", []*walked{{frame: main, kids: page(5, 6)}, child("a", 5, nil)}, true},
		{"no frame listed", []*walked{{frame: main, kids: page(5, 6)}}, true},
		{"the frame's walk failed", []*walked{{frame: main, kids: page(5)}, child("a", 5, errors.New("gone"))}, true},
		{"an iframe in a closed shadow root", []*walked{{frame: main, kids: page(), roots: map[int][]wnode{3: page(7)}}}, true},
		{"a failed parent is not judged", []*walked{{frame: main, kids: page(5), err: errors.New("gone")}}, false},
	} {
		if got := orphanIframes(c.out); got != c.want {
			t.Errorf("%s: orphanIframes = %v, want %v", c.name, got, c.want)
		}
	}
}
