package snapshot

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReuseUnchanged checks that a snapshot of a page left alone is the previous one (the same
// model, not a new walk), also when snapshots with other options are asked at once, that a
// change anywhere in the page, an iframe included, makes a new one, and that ReuseUnchanged(false)
// walks every time.
func TestReuseUnchanged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, tc := range []struct {
		path  string
		frame string // a change made in an iframe only (JavaScript in the main frame)
		want  string // in the snapshot after that change
	}{
		{path: "/hard/frames.html", frame: `document.getElementById('same').contentDocument.body.append('Added in the frame')`, want: "Added in the frame"},
		{path: "/hard/closed.html"},
		{path: "/hard/repeat.html"}, // a spinner turns forever: the outline stays the same
		{path: "/gen.html?n=1000"},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/"), func(t *testing.T) {
			tab := openTab(t, ctx, tc.path)
			snap := func(o Options) *Snapshot {
				t.Helper()
				s, err := tab.Snapshot(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			// a page may still finish what it draws, and the walk that hands a closed shadow
			// root over is not kept: the second of two equal snapshots
			first := snap(Options{})
			for range 20 {
				next := snap(Options{})
				same := next.Text == first.Text
				first = next
				if same {
					break
				}
			}
			again := snap(Options{})
			if again.Text != first.Text || again.Root != first.Root {
				t.Fatalf("a repeat of a page left alone is not the previous snapshot (same text: %v)", again.Text == first.Text)
			}
			// other options at once: each renders the same tree as it would alone
			opts := []Options{{}, {Interactive: true}, {Full: true}, {MaxChars: 500}, {MaxTokens: 300}}
			got := make([]string, 2*len(opts))
			var wg sync.WaitGroup
			for i := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if s, err := tab.Snapshot(ctx, opts[i%len(opts)]); err == nil {
						got[i] = s.Text
					} else {
						got[i] = err.Error()
					}
				}()
			}
			wg.Wait()
			for i, text := range got {
				if want := snap(opts[i%len(opts)]).Text; text != want {
					t.Errorf("options %+v asked at once with others: %s", opts[i%len(opts)], firstDiff(want, text))
				}
			}
			// a change in the main document
			if _, err := evalIn(ctx, tab, `document.body.setAttribute('data-changed', String(Math.random())), true`); err != nil {
				t.Fatal(err)
			}
			if changed := snap(Options{}); changed.Root == first.Root {
				t.Error("a snapshot after a change in the page is the previous one")
			}
			if tc.frame != "" {
				if _, err := evalIn(ctx, tab, tc.frame+`, true`); err != nil {
					t.Fatal(err)
				}
				if s := snap(Options{}); !strings.Contains(s.Text, tc.want) {
					t.Errorf("after a change in an iframe, %q is not in the snapshot:\n%s", tc.want, s.Text)
				}
			}
			tab.ReuseUnchanged(false)
			defer tab.ReuseUnchanged(true)
			if a, b := snap(Options{}), snap(Options{}); a.Root == b.Root || a.Text != b.Text {
				t.Errorf("with reuse off, two snapshots of a page left alone: same model %v, same text %v; want a new model, the same text", a.Root == b.Root, a.Text == b.Text)
			}
		})
	}
}
