package snapshot

import (
	"context"
	"testing"
	"time"
)

// TestTickingAndAnchors: on a real page, a countdown that changes on every snapshot leaves the
// diffs once it has changed in two in a row (named in one line), while a change of words
// stays; going to an anchor of the page is the same page, going to another page is not.
func TestTickingAndAnchors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := openTab(t, ctx, "/outline/ticking.html")
	snap := func() *Snapshot {
		t.Helper()
		s, err := tab.Snapshot(ctx, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// the next snapshot whose countdown moved
	next := func(prev *Snapshot) (*Snapshot, *Diff) {
		t.Helper()
		for ctx.Err() == nil {
			s := snap()
			if d := Compare(prev, s); len(d.Changes)+len(d.Ticking) > 0 {
				return s, d
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatal("the countdown never moved")
		return nil, nil
	}
	s0 := snap()
	s1, d1 := next(s0)
	if len(d1.Changes) != 1 || len(d1.Ticking) != 0 {
		t.Fatalf("first tick: want it as a change:\n%s", d1.Render(0))
	}
	s2, d2 := next(s1)
	if len(d2.Changes) != 0 || len(d2.Ticking) != 1 || !d2.Empty() {
		t.Fatalf("second tick: want it ticking:\n%s", d2.Render(0))
	}
	if _, err := evalIn(ctx, tab, `document.getElementById('status').textContent = 'Saved'`); err != nil {
		t.Fatal(err)
	}
	s3, d3 := next(s2)
	if len(d3.Changes) != 1 || d3.Changes[0].After.Text != "Saved" {
		t.Fatalf("a change of words with the countdown: want the words alone as a change:\n%s", d3.Render(0))
	}
	// an anchor: the same page, whose changes are a diff
	if _, err := evalIn(ctx, tab, `location.hash = 'terms'`); err != nil {
		t.Fatal(err)
	}
	var s4 *Snapshot
	for s4 = snap(); s4.URL == s3.URL && ctx.Err() == nil; s4 = snap() {
		time.Sleep(20 * time.Millisecond)
	}
	if !SamePage(s3, s4) {
		t.Errorf("%s after %s: want the same page", s4.URL, s3.URL)
	}
	// another document at the same URL is another page
	if _, err := evalIn(ctx, tab, `location.reload()`); err != nil {
		t.Fatal(err)
	}
	var s5 *Snapshot
	for s5 = snap(); s5.mainFrame() != nil && s5.mainFrame().LoaderID == s4.mainFrame().LoaderID && ctx.Err() == nil; s5 = snap() {
		time.Sleep(20 * time.Millisecond)
	}
	if SamePage(s4, s5) {
		t.Errorf("the reloaded page (%s) is the same page as before it", s5.URL)
	}
}
