package actions

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// TestSettleLateResults clicks a button whose result arrives by fetch 700 ms later: with
// settling the next snapshot shows it, and the diff from the snapshot before the click says
// what came; with settling off it is not there yet (the wait is what makes the difference),
// and it does arrive afterwards.
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
			svc := New(b.Client, Options{Timeout: 20 * time.Second, SettleTimeout: tc.settle})
			defer svc.Close(context.Background())
			lateResults(t, svc, "", tc.shows)
		})
	}
}

// TestSettleThroughExtension: the same through the real extension and the relay (the agent's
// path): the late result is in the snapshot after the click, and a ticking page returns at
// the bound.
func TestSettleThroughExtension(t *testing.T) {
	throughExtension(t, func() {
		t.Run("late results", func(t *testing.T) { lateResults(t, shared.svc, "", true) })
		t.Run("never quiet", neverQuiet)
	})
}

// lateResults clicks Search on settle.html with svc, in tab id when given, else in a new tab,
// and checks whether the next snapshot shows the result (shows) or not yet.
func lateResults(t *testing.T, svc *Service, id string, shows bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	if id == "" {
		id = open(t, ctx, "/settle.html")
	}
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
	diff := snapshot.Compare(s1, s2).String()
	got := strings.Contains(diff, "+ list\n+   listitem\n+     link \"Result from the server\" [ref=") && strings.Contains(diff, `~ text: 1 result (was: "Idle")`)
	if got != shows {
		t.Fatalf("result in the diff right after the click: %v, want %v\n%s\n-- page now:\n%s", got, shows, diff, s2.Text)
	}
	// either way the result does come: the fixture works
	if _, err := svc.Act(ctx, id, Do(Wait{Text: "Result from the server"})); err != nil {
		t.Fatal(err)
	}
}

// TestSettleAfterNavigate navigates to a page that fetches its content once loaded: the
// navigation returns with the content there.
func TestSettleAfterNavigate(t *testing.T) {
	_, _, srv := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/settle.html")
	act(t, ctx, id, Do(Navigate{URL: srv.URL("/settle.html?search")}))
	if s := snap(t, ctx, id, snapshot.Options{}); !strings.Contains(s.Text, `link "Result from the server"`) {
		t.Fatalf("the content fetched after the load is not in the snapshot after navigate:\n%s", s.Text)
	}
}

// TestSettleNeverQuiet starts a clock that ticks forever: the click still returns, at the
// settle bound, and says the page kept changing. The page was settled when it opened (open),
// so the service watches it from before the click.
func TestSettleNeverQuiet(t *testing.T) { neverQuiet(t) }

func neverQuiet(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
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

// TestClickReportsNavigation: a click that starts a navigation (a link, a form's submit
// button, form.submit() or location.href in a handler, a submit button of a form in a shadow
// root) reports the page it led to, also when it follows a click that scheduled nothing (the
// wait after such a click ends once the page has handled it); that click reports no new page
// and its change is in the next snapshot.
func TestClickReportsNavigation(t *testing.T) {
	_, _, _ = need(t)
	for _, tc := range []struct{ button, via string }{
		{`link "Link away"`, "link"},
		{`button "Submit form"`, "submit"},
		{`button "Submit after a heavy frame"`, "heavy"},
		{`button "Script submit"`, "script"},
		{`button "Script location"`, "location"},
		{`button "Shadow submit"`, "shadow"},
	} {
		t.Run(tc.via, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
			defer cancel()
			id := open(t, ctx, "/navclick.html")
			s := snap(t, ctx, id, snapshot.Options{})
			stay := refFor(t, s, `button "Stay"`)
			for i := 1; i <= 2; i++ { // the first on a document the service has not watched yet
				r := act(t, ctx, id, Do(Click{Ref: stay}))
				if r.URL != "" {
					t.Fatalf("click %d on Stay reported a new page %q: %s", i, r.URL, r.Message)
				}
				if want := fmt.Sprintf("Stayed %d times", i); !strings.Contains(snap(t, ctx, id, snapshot.Options{}).Text, want) {
					t.Fatalf("after click %d on Stay the snapshot lacks %q", i, want)
				}
			}
			r := act(t, ctx, id, Do(Click{Ref: refFor(t, s, tc.button)}))
			if want := "/other.html?via=" + tc.via; !strings.HasSuffix(r.URL, want) || !strings.Contains(r.Message, "the page is now") {
				t.Fatalf("click on %s: URL %q, message %q; want the new page %s reported", tc.button, r.URL, r.Message, want)
			}
		})
	}
}

// TestSettleKeepalive clicks buttons that tell the server something and change nothing on the
// page, as analytics do (a beacon, a keepalive fetch): the click settles without running to
// the bound, and a wait for the network to be idle ends.
func TestSettleKeepalive(t *testing.T) {
	svc, _, _ := need(t)
	for _, button := range []string{`button "Send a beacon"`, `button "Keepalive fetch"`} {
		t.Run(button, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
			defer cancel()
			id := open(t, ctx, "/settle.html")
			s := snap(t, ctx, id, snapshot.Options{})
			start := time.Now()
			r, err := svc.Act(ctx, id, Do(Click{Ref: refFor(t, s, button)}))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("click took %v: %s", time.Since(start), r.Message)
			if strings.Contains(r.Message, "still changing") {
				t.Fatalf("a request the page sent and forgot held the click to the settle bound: %q", r.Message)
			}
			wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
			defer wcancel()
			if _, err := svc.Act(wctx, id, Do(Wait{State: "networkidle"})); err != nil {
				t.Fatalf("after the click the network is never idle: %v", err)
			}
		})
	}
}

// TestSettleBackgroundTab: on a tab behind another (hidden: no frames, and Chrome runs its
// timers once a second at most) a late result is still waited for, and the settle probe
// answers from the page's next task instead of waiting for a timer: five probes in a row take
// far less than the five seconds the timers would hold them to.
func TestSettleBackgroundTab(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/settle.html")
	front := open(t, ctx, "/index.html")
	if err := svc.c.Call(ctx, "", "Target.activateTarget", map[string]any{"targetId": front}, nil); err != nil {
		t.Fatal(err)
	}
	var hidden bool
	eval(t, ctx, id, "document.hidden", &hidden)
	if !hidden {
		t.Fatal("the tab is not hidden; the test needs it in the background")
	}
	lateResults(t, svc, id, true)

	ts, err := svc.tabFor(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	const probes, bound = 5, 2 * time.Second
	start := time.Now()
	for range probes {
		if _, err := svc.sinceMutation(ctx, ts, settleProbeJS); err != nil {
			t.Fatal(err)
		}
	}
	if took := time.Since(start); took > bound {
		t.Fatalf("%d settle probes on a background tab took %v (more than %v): they wait for the page's throttled timers", probes, took, bound)
	}
}
