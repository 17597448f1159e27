package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/snapshot"
)

// TestSnapshotDuringNavigation takes snapshots at every moment of navigations, through the real
// extension: a page with a same-origin and a cross-origin (out-of-process) iframe navigates to a
// page without frames, then to another origin (a new renderer process) and back, and snapshots
// are sent right before, during and right after each commit. Each must return promptly, with the old page's outline or the new one's (a snapshot
// sent while an iframe's session goes away once waited until its caller's deadline: Chrome
// drops the commands in flight to a session it detaches, without an answer).
func TestSnapshotDuringNavigation(t *testing.T) {
	e := shared(t)
	const rounds = 12
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	framed := e.site.URL("/hard/frames.html")
	pages := []string{framed, e.site.URL("/hard/menu.html"), e.site.CrossURL("/hard/menu.html")}
	titles := map[string]string{pages[0]: "Frames", pages[1]: "Menus and tabs", pages[2]: "Menus and tabs"}
	tab := e.share(t, framed)
	c := e.dialCDP(t, ctx)
	st, err := snapshot.Attach(ctx, c, tab.TargetID)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close(context.Background())
	// prompt bounds one snapshot: a small page takes milliseconds; a hang lasts until the deadline
	const prompt, deadline = 5 * time.Second, 20 * time.Second
	waitFor := func(url string) {
		t.Helper()
		for {
			s, err := st.Snapshot(ctx, snapshot.Options{})
			if err == nil && s.URL == url && !s.Loading && (url != framed || strings.Contains(s.Text, `"Button in cross"`)) {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("the tab did not show %s: %v", url, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(framed)
	var slow []string
	for i := range rounds {
		from, to := pages[i%len(pages)], pages[(i+1)%len(pages)]
		// the navigation, sent without waiting for it, and snapshots spread over its commit
		if err := c.Send(ctx, st.Session(), "Runtime.evaluate", map[string]any{"expression": "location.href = " + strconv.Quote(to)}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		for j := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(j*j) * time.Millisecond)
				sctx, scancel := context.WithTimeout(ctx, deadline)
				defer scancel()
				t0 := time.Now()
				s, err := st.Snapshot(sctx, snapshot.Options{})
				took := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case took > prompt:
					slow = append(slow, fmt.Sprintf("round %d, snapshot %d: %v after %v", i, j, err, took.Round(time.Millisecond)))
				case err != nil:
					t.Errorf("round %d, snapshot %d (%s to %s): %v", i, j, from, to, err)
				case s.URL != from && s.URL != to:
					t.Errorf("round %d, snapshot %d: URL %s, want %s or %s", i, j, s.URL, from, to)
				case s.Title != titles[s.URL]:
					// the outline is of one document, its URL of another
					t.Errorf("round %d, snapshot %d: URL %s with the title %q (the page there is %q)", i, j, s.URL, s.Title, titles[s.URL])
				}
			}()
		}
		wg.Wait()
		waitFor(to)
	}
	if len(slow) > 0 {
		t.Errorf("%d of %d snapshots sent during a navigation took more than %v:\n%s", len(slow), rounds*6, prompt, strings.Join(slow, "\n"))
	}
}
