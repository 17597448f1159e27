package e2e

import (
	"context"
	"fmt"
	"image"
	"strconv"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/testlimit"
)

// Where Chromium draws its toolbar on the desktop's 1280-pixel-wide window (Chromium 156): the
// row of the toolbar's buttons and the extensions ("puzzle") button at its right, left of the
// profile and menu buttons.
const (
	toolbarY = 62
	puzzleX  = 1166
)

// iconBlue is the blue of the extension's icon.
var iconBlue = [3]int{26, 115, 232}

// findIn returns the middle of the pixels of img inside r close to want (within 40 per
// channel); ok is false when there are none.
func findIn(img image.Image, r image.Rectangle, want [3]int) (x, y int, ok bool) {
	sx, sy, n := 0, 0, 0
	r = r.Intersect(img.Bounds())
	for py := r.Min.Y; py < r.Max.Y; py++ {
		for px := r.Min.X; px < r.Max.X; px++ {
			if near(img.At(px, py), want) {
				sx += px
				sy += py
				n++
			}
		}
	}
	if n == 0 {
		return -1, -1, false
	}
	return sx / n, sy / n, true
}

// onScreen is a condition for act and poll: the screen shows want inside r at the same place on
// two screenshots in a row (at rest: Chromium animates menus and buttons into place); cur gets
// where, last where it was on the screenshot before.
func (d *desktop) onScreen(t *testing.T, name string, r image.Rectangle, want [3]int, cur, last *image.Point) func() (bool, string) {
	return func() (bool, string) {
		x, y, ok := findIn(d.screenshot(t, name), r, want)
		*last, *cur = *cur, image.Pt(x, y)
		return ok && *cur == *last, fmt.Sprintf("colour %v in %v: at %v, before at %v", want, r, *cur, *last)
	}
}

// sharedNow is a condition for act and poll: the tab's badge reads ON and the relay lists it
// (waitShared waits for the same).
func (ae *agentEnv) sharedNow(t *testing.T, ctx context.Context, tab browser.Tab) func() (bool, string) {
	return func() (bool, string) {
		if ok, s := ae.badgeIs(ctx, tab, "ON")(); !ok {
			return false, s
		}
		ids := ae.sharedTabIDs(t)
		_, ok := ids[tab.TabID]
		return ok, fmt.Sprintf("badge ON; shared and listed: %v", ids)
	}
}

// waitShared waits until the tab's badge reads ON and the relay lists it; by says how it was
// shared, for the failure message.
func (ae *agentEnv) waitShared(t *testing.T, ctx context.Context, tab browser.Tab, by string) {
	t.Helper()
	if err := ae.b.WaitBadge(ctx, tab, "ON"); err != nil {
		t.Fatalf("%s did not share the tab: %v", by, err)
	}
	eventually(t, 10*time.Second, by+": the tab listed in /json/list", func() (bool, string) {
		ids := ae.sharedTabIDs(t)
		_, ok := ids[tab.TabID]
		return ok, fmt.Sprint(ids)
	})
}

// waitUnshared waits until the tab's badge is empty, the relay no longer lists it and no
// debugger is attached to it.
func (ae *agentEnv) waitUnshared(t *testing.T, ctx context.Context, tab browser.Tab, by string) {
	t.Helper()
	if err := ae.b.WaitBadge(ctx, tab, ""); err != nil {
		t.Fatalf("%s did not stop sharing the tab: %v", by, err)
	}
	eventually(t, 10*time.Second, by+": the tab gone from /json/list and its debugger detached", func() (bool, string) {
		for _, l := range ae.list(t) {
			if l.ID == tab.TargetID {
				return false, "still listed: " + l.URL
			}
		}
		attached, _ := ae.debuggerAttached(t, ctx, tab.TargetID)
		return !attached, "the debugger is still attached"
	})
}

// TestDesktopToolbarButton: the extension's button clicked with the real mouse, the way a user
// reaches it: it starts in the extensions ("puzzle") menu, where clicking its entry shares the
// tab; pinned from that menu to the toolbar, its button there stops sharing and shares again.
func TestDesktopToolbarButton(t *testing.T) {
	d := startDesktop(t)
	ae, tab := startDesktopAgent(t, d, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(2*time.Minute))
	defer cancel()
	// the toolbar right of the address bar, left of the puzzle button: where a pinned button goes
	pinned := image.Rect(1000, toolbarY-12, puzzleX-14, toolbarY+12)
	if x, _, ok := findIn(d.screenshot(t, "start"), pinned, iconBlue); ok {
		t.Fatalf("the extension's button is on the toolbar (at x %d) before it is pinned: the test cannot show the puzzle menu path", x)
	}
	// the menu opens below the toolbar, its right edge near the puzzle button
	menu := image.Rect(700, toolbarY+20, 1280, 500)
	openMenu := func(name string) (int, int) {
		t.Helper()
		var at, before image.Point
		d.clickUntil(t, "a click on the puzzle button opens the extensions menu", puzzleX, toolbarY, 1, d.onScreen(t, name, menu, iconBlue, &at, &before))
		return at.X, at.Y
	}
	// the entry: the extension's icon and name; clicking it is the toolbar click (a try whose
	// click closed the menu without sharing opens it again)
	d.act(t, "clicking tabrelay in the extensions menu shares the tab", func(try int) {
		x, y := openMenu(fmt.Sprintf("extensions-menu-%d", try))
		d.click(t, x+50, y, 1)
	}, ae.sharedNow(t, ctx, tab))
	ae.waitShared(t, ctx, tab, "clicking tabrelay in the extensions menu")
	d.screenshot(t, "shared-from-menu")

	// pin it: the pin button sits on the entry's row, at the menu's right
	var bx, by int
	var at, before image.Point
	d.act(t, "the pin button in the extensions menu pins tabrelay to the toolbar", func(try int) {
		x, y := openMenu(fmt.Sprintf("extensions-menu-again-%d", try))
		d.click(t, x+200, y, 1)
	}, d.onScreen(t, "pinned", pinned, iconBlue, &at, &before))
	bx, by = at.X, at.Y
	d.key(t, "Escape") // close the menu, if it stayed open
	d.clickUntil(t, "the pinned toolbar button stops sharing", bx, by, 1, ae.badgeIs(ctx, tab, ""))
	ae.waitUnshared(t, ctx, tab, "the pinned toolbar button")
	d.screenshot(t, "unshared-from-toolbar")
	d.clickUntil(t, "the pinned toolbar button shares the tab", bx, by, 1, ae.sharedNow(t, ctx, tab))
	ae.waitShared(t, ctx, tab, "the pinned toolbar button")
	d.screenshot(t, "shared-from-toolbar")
}

// The tab strip's rows on a desktop screenshot: tabs and the group's label sit across
// stripTitleY; the group's line runs under its tabs on stripLineY.
const (
	stripTitleY = 20
	stripLabelY = 12
	stripLineY  = 38
)

// run returns the first run of pixels of img's row y close to want, from the left: its first
// and last x; ok is false when there is none.
func run(img image.Image, y int, want [3]int) (x0, x1 int, ok bool) {
	b := img.Bounds()
	x0 = -1
	for x := b.Min.X; x < b.Max.X; x++ {
		match := near(img.At(x, y), want)
		switch {
		case match && x0 < 0:
			x0 = x
		case !match && x0 >= 0:
			return x0, x - 1, true
		}
	}
	return x0, b.Max.X - 1, x0 >= 0
}

// lastOf returns the last x of img's row y close to want (the line under a group is broken
// where its active tab opens onto the page, so the line's end is its last pixel).
func lastOf(img image.Image, y int, want [3]int) (int, bool) {
	b := img.Bounds()
	for x := b.Max.X - 1; x >= b.Min.X; x-- {
		if near(img.At(x, y), want) {
			return x, true
		}
	}
	return -1, false
}

// strip is the tabrelay group's place in the tab strip, read from a screenshot: the right edge
// of its label (its tabs start there) and of its line or its active tab's outline (they end
// there).
type strip struct{ labelRight, groupRight int }

// tabWidth is the width of one tab of the group, when it holds n tabs.
func (s strip) tabWidth(n int) int { return (s.groupRight - s.labelRight) / n }

// readStrip waits until the tab strip shows the tabrelay group (drawn in the extension's blue)
// with n tabs, and stays the same on two screenshots in a row (Chromium animates tabs into
// place).
func (d *desktop) readStrip(t *testing.T, name string, n int) strip {
	t.Helper()
	var last, cur strip
	eventually(t, 10*time.Second, name+": the group in the tab strip, at rest", func() (bool, string) {
		img := d.screenshot(t, name)
		_, lr, ok1 := run(img, stripLabelY, iconBlue)
		gr, ok2 := lastOf(img, stripLineY, iconBlue)
		last, cur = cur, strip{lr, gr}
		return ok1 && ok2 && cur == last && cur.tabWidth(n) > 100, fmt.Sprintf("label ends at %d, group at %d", lr, gr)
	})
	return cur
}

// drag presses the left button at x0, moves the mouse to x1 along the tab strip in steps, as a
// hand does, and lets go.
func (d *desktop) drag(t *testing.T, x0, x1 int) {
	t.Helper()
	y := strconv.Itoa(stripTitleY)
	d.xdo(t, "mousemove", "--sync", strconv.Itoa(x0), y, "mousedown", "1")
	const steps = 20
	for i := 1; i <= steps; i++ {
		d.xdo(t, "mousemove", "--sync", strconv.Itoa(x0+(x1-x0)*i/steps), y)
		time.Sleep(20 * time.Millisecond) // the pace of a hand: the strip follows the drag
	}
	// let go once the strip has followed: the same on two screenshots in a row (if it never
	// rests, let go anyway: the caller checks where the tab went and drags again)
	strip := image.Rect(0, 0, 1280, stripLineY+4)
	var last image.Image
	poll(testlimit.Scale(5*time.Second), func() (bool, string) {
		img := d.screenshot(t, "dragging")
		n := -1
		if last != nil {
			n = differ(last, img, strip)
		}
		last = img
		return n == 0, fmt.Sprintf("%d pixels of the strip moved", n)
	})
	d.xdo(t, "mouseup", "1")
}

// TestDesktopDragTabIntoGroup: the tabrelay tab group is the consent boundary, and a user moves
// tabs across it with the mouse: a tab dragged in the tab strip into the group is shared (badge
// ON, listed by the relay); dragged out of it, it is no longer shared (unlisted, the debugger
// detached), and the tab that stayed in the group stays shared.
func TestDesktopDragTabIntoGroup(t *testing.T) {
	d := startDesktop(t)
	ae, shared := startDesktopAgent(t, d, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(2*time.Minute))
	defer cancel()
	d.toggleShare(t, ctx, ae, shared, "ON", "share the tab")
	// a second tab, right of the group: [tabrelay] [shared] [other]
	other, err := ae.b.NewTab(ctx, ae.site.URL("/other.html?drag"))
	if err != nil {
		t.Fatal(err)
	}
	groupOf := func(tab browser.Tab) int {
		t.Helper()
		var g int
		if err := ae.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then((t) => t.groupId)`, tab.TabID), &g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	group := groupOf(shared)
	if group < 0 || groupOf(other) == group {
		t.Fatalf("before the drag: the shared tab is in group %d, the other in %d", group, groupOf(other))
	}
	if b, _ := ae.b.Badge(ctx, other); b != "" {
		t.Fatalf("the tab outside the group has badge %q before the drag", b)
	}

	// Grabbed by its middle, the other tab goes left until its left edge is an eighth of a tab
	// past the label: Chromium puts a dragged tab in a group when its left edge is right of the
	// middle of the group's label, and before a tab when it is left of that tab's middle. A try
	// reads the strip afresh: one that did not take may have left the tab elsewhere.
	d.act(t, "the tab dragged into the tabrelay group is in it", func(try int) {
		s := d.readStrip(t, fmt.Sprintf("two-tabs-%d", try), 1)
		w := s.tabWidth(1)
		t.Logf("the group's label ends at %d, its tab at %d", s.labelRight, s.groupRight)
		d.drag(t, s.groupRight+w/2, s.labelRight+w/8+w/2)
	}, func() (bool, string) {
		g := groupOf(other)
		return g == group, fmt.Sprintf("group %d, want %d", g, group)
	})
	ae.waitShared(t, ctx, other, "dragging the tab into the group")
	// now [tabrelay] [other] [shared]; grabbed by its middle again, it goes right until its left
	// edge is well past the group's end
	d.act(t, "the tab dragged out of the tabrelay group is out of it", func(try int) {
		s := d.readStrip(t, fmt.Sprintf("dragged-in-%d", try), 2)
		w := s.tabWidth(2)
		d.drag(t, s.labelRight+w/2, s.groupRight+w)
	}, func() (bool, string) {
		g := groupOf(other)
		return g != group, fmt.Sprintf("group %d", g)
	})
	ae.waitUnshared(t, ctx, other, "dragging the tab out of the group")
	d.screenshot(t, "dragged-out")
	if _, ok := ae.sharedTabIDs(t)[shared.TabID]; !ok {
		t.Fatal("the tab that stayed in the group is no longer shared")
	}
}
