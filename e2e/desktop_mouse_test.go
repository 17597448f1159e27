package e2e

import (
	"context"
	"fmt"
	"image"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
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
			cr, cg, cb, _ := img.At(px, py).RGBA()
			if abs(int(cr>>8)-want[0]) < 40 && abs(int(cg>>8)-want[1]) < 40 && abs(int(cb>>8)-want[2]) < 40 {
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

// waitOnScreen takes screenshots until one shows want inside r and returns where.
func (d *desktop) waitOnScreen(t *testing.T, name string, r image.Rectangle, want [3]int) (int, int) {
	t.Helper()
	var x, y int
	eventually(t, 10*time.Second, name+" on the screen", func() (bool, string) {
		var ok bool
		x, y, ok = findIn(d.screenshot(t, name), r, want)
		return ok, fmt.Sprintf("no pixel of colour %v in %v", want, r)
	})
	return x, y
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
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
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
		d.click(t, puzzleX, toolbarY, 1)
		return d.waitOnScreen(t, name, menu, iconBlue)
	}
	x, y := openMenu("extensions-menu")
	// the entry: the extension's icon and name; clicking it is the toolbar click
	d.click(t, x+50, y, 1)
	ae.waitShared(t, ctx, tab, "clicking tabrelay in the extensions menu")
	d.screenshot(t, "shared-from-menu")

	// pin it: the pin button sits on the entry's row, at the menu's right
	x, y = openMenu("extensions-menu-again")
	d.click(t, x+200, y, 1)
	bx, by := d.waitOnScreen(t, "pinned", pinned, iconBlue)
	d.key(t, "Escape") // close the menu, if it stayed open
	d.click(t, bx, by, 1)
	ae.waitUnshared(t, ctx, tab, "the pinned toolbar button")
	d.screenshot(t, "unshared-from-toolbar")
	d.click(t, bx, by, 1)
	ae.waitShared(t, ctx, tab, "the pinned toolbar button")
	d.screenshot(t, "shared-from-toolbar")
}
