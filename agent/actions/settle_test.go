package actions

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// TestSettleLateResults clicks a button whose result arrives by fetch 700 ms later: with
// settling the next snapshot shows it; with settling off it does not yet (the test proves
// the wait is what makes the difference), and the result does arrive afterwards.
func TestSettleLateResults(t *testing.T) {
	_, _, _ = need(t)
	b, ok := shared.b.(*snapshottest.Browser)
	if !ok {
		t.Skip("needs the package's own Chromium")
	}
	for _, tc := range []struct {
		name   string
		settle time.Duration
		shows  bool
	}{
		{"settled", 0, true},
		{"settling off", -1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			id := open(t, ctx, "/settle.html")
			svc := New(b.Client, Options{Timeout: 20 * time.Second, SettleTimeout: tc.settle})
			defer svc.Close(context.Background())
			s1, err := svc.Snapshot(ctx, id, snapshot.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r, err := svc.Act(ctx, id, Do(Click{Ref: refFor(t, s1, `button "Search"`)}))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(r.Message, "still changing") {
				t.Fatalf("the page settles, yet the click says %q", r.Message)
			}
			s2, err := svc.Snapshot(ctx, id, snapshot.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(s2.Text, `link "Result from the server"`) && strings.Contains(s2.Text, "1 result"); got != tc.shows {
				t.Fatalf("result shown right after the click: %v, want %v\n%s", got, tc.shows, s2.Text)
			}
			// either way the result does come: the fixture works
			if _, err := svc.Act(ctx, id, Do(Wait{Text: "Result from the server"})); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestSettleNeverQuiet starts a clock that ticks forever: the click still returns, at the
// settle bound, and says the page kept changing.
func TestSettleNeverQuiet(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/settle.html")
	s := snap(t, ctx, id, snapshot.Options{})
	r, err := svc.Act(ctx, id, Do(Click{Ref: refFor(t, s, `button "Start clock"`)}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Message, "the page was still changing after 3s") {
		t.Fatalf("click on a ticking page: %q, want it to say the page was still changing", r.Message)
	}
	// a read on the busy page does not wait
	if r := act(t, ctx, id, Do(Snapshot{})); !strings.Contains(r.Snapshot.Text, "Tick ") {
		t.Fatalf("the clock does not tick:\n%s", r.Snapshot.Text)
	}
}
