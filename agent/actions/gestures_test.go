package actions

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/snapshot"
)

// TestGestures covers the actions the accuracy test does not: drag (pointer-based and native
// HTML5 drag and drop), clicks with modifiers, scrolling an element into view, and the wait
// modes other than text.
func TestGestures(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 90*time.Second)
	defer cancel()
	id := open(t, ctx, "/gestures.html")
	logged := func() []string {
		t.Helper()
		var l []string
		eval(t, ctx, id, "window.log.splice(0)", &l)
		return l
	}
	s := snap(t, ctx, id, snapshot.Options{})

	t.Run("drag pointer-based", func(t *testing.T) {
		act(t, ctx, id, Do(Drag{Ref: refFor(t, s, `button "Third item"`), To: refFor(t, s, `button "First item"`)}))
		if l := logged(); !slices.Contains(l, "sorted:p-third<p-first") {
			t.Fatalf("pointer drag: page logged %v", l)
		}
		var order string
		eval(t, ctx, id, "[...document.querySelectorAll('#plist button')].map(b => b.id).join(',')", &order)
		if order != "p-third,p-first,p-second" {
			t.Fatalf("order after drag: %s", order)
		}
	})

	t.Run("drag native", func(t *testing.T) {
		act(t, ctx, id, Do(Drag{Ref: refFor(t, s, `button "Write tests"`), To: refFor(t, s, `button "Ship it"`)}))
		if l := logged(); !slices.Contains(l, "drop:c-tests>done") {
			t.Fatalf("native drag and drop: page logged %v", l)
		}
	})

	t.Run("click with modifiers", func(t *testing.T) {
		ref := refFor(t, s, `button "Select row"`)
		for _, c := range []struct {
			mods []string
			want string
		}{{nil, "mod:"}, {[]string{"Control"}, "mod:ctrlKey"}, {[]string{"Shift", "Alt"}, "mod:shiftKey+altKey"}} {
			act(t, ctx, id, Do(Click{Ref: ref, Modifiers: c.mods}))
			if l := logged(); len(l) != 1 || l[0] != c.want {
				t.Errorf("click with %v: page logged %v, want [%s]", c.mods, l, c.want)
			}
		}
	})

	t.Run("scroll into view", func(t *testing.T) {
		inView := "(() => { const r = document.getElementById('far').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight })()"
		var before, after bool
		eval(t, ctx, id, "scrollTo(0, 0)", nil)
		eval(t, ctx, id, inView, &before)
		if before {
			t.Fatal("the far button is in view before scrolling: the fixture is too short for this window")
		}
		act(t, ctx, id, Do(Scroll{Ref: refFor(t, s, `button "Far button"`)}))
		eval(t, ctx, id, inView, &after)
		if !after {
			t.Fatal("scroll with a ref alone did not bring the element into view")
		}
		eval(t, ctx, id, "scrollTo(0, 0)", nil)
	})

	t.Run("wait modes", func(t *testing.T) {
		act(t, ctx, id, Do(Click{Ref: refFor(t, s, `button "Start loading"`)}))
		act(t, ctx, id, Do(Wait{Text: "Loading…"}))
		act(t, ctx, id, Do(Wait{TextGone: "Loading…"}))
		// the page swaps the text 1.5 s after the click; a wait that returned early sees it still there
		var status string
		eval(t, ctx, id, "document.getElementById('status').textContent", &status)
		if status != "Loaded" {
			t.Errorf("wait for the text to go returned while the status was %q", status)
		}
		if r := act(t, ctx, id, Do(Wait{URL: "#loaded"})); !strings.HasSuffix(r.URL, "#loaded") {
			t.Errorf("wait for the URL answered with URL %q", r.URL)
		}
		start := time.Now()
		act(t, ctx, id, Do(Wait{Seconds: 0.3}))
		if d := time.Since(start); d < 300*time.Millisecond || d > 10*time.Second {
			t.Errorf("wait 0.3 s took %v", d)
		}
		act(t, ctx, id, Do(Wait{State: "networkidle"}))
		act(t, ctx, id, Do(Wait{Expression: "document.getElementById('status').textContent === 'Loaded'"}))
		// a condition that never holds gives up with a clear error
		if _, err := svc.Act(ctx, id, Do(Wait{Text: "Never shown"}).WithTimeout(0.5)); err == nil || !strings.Contains(err.Error(), "Never shown") {
			t.Errorf("wait for missing text: %v", err)
		}
	})
}
