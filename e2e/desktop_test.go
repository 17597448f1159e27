package e2e

// The headed tier: Chromium with a window on a virtual X display (Xvfb), driven through the
// browser's own UI with real input (xdotool: keys, clicks, drags), checked on screenshots of the
// whole display (ffmpeg's x11grab), which show what no page-level API shows: Chrome's "started
// debugging this browser" bar, the tab strip and its groups. scripts/setup.sh installs xvfb,
// xdotool and ffmpeg (`go tool task test` runs it first); without them these tests fail, saying
// so, as the other end-to-end tests do without Chromium (a skipped test would read as passed in
// CI); `go test -short` skips them. Each test starts its own display (Xvfb picks a free display
// number itself) and its own browser, so parallel runs do not collide.
//
// Every input is checked: after a key, a click, typed text or a drag the test waits for what the
// screen or the browser says it did (the badge, the tab's address, the focused field, a menu on
// the screen) and gives the input again when it did not take (see act): on a busy machine an X
// event now and then reaches Chromium before it is ready for it, and a lost key must cost a
// retry, not the run.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/relay"
)

// desktop is one virtual X display with a headed browser on it.
type desktop struct {
	display string // ":N"
	shots   string // where screenshots go (printed in the test's output)
	n       int
}

// startDesktop starts Xvfb on a free display for the test; the test fails when Xvfb, xdotool
// or ffmpeg is missing or Xvfb cannot start.
func startDesktop(t *testing.T) *desktop {
	t.Helper()
	if testing.Short() {
		t.Skip("headed desktop test: needs Chromium and Xvfb (skipped with -short)")
	}
	for _, tool := range []string{"Xvfb", "xdotool", "ffmpeg"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("headed desktop test: %s not found (`go tool task setup` installs xvfb, xdotool and ffmpeg): %v", tool, err)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// -displayfd: Xvfb picks a free display number and writes it to fd 3 once it listens
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1280x900x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatalf("headed desktop test: Xvfb cannot run here: %v", err)
	}
	w.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- strings.TrimSpace(line)
		r.Close()
	}()
	var num string
	select {
	case num = <-got:
	case <-time.After(testlimit.Scale(20 * time.Second)):
	}
	if _, err := strconv.Atoi(num); err != nil {
		t.Fatalf("headed desktop test: Xvfb did not start (display %q)", num)
	}
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("tabrelay-desktop-%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("display :%s; screenshots in %s", num, dir)
	return &desktop{display: ":" + num, shots: dir}
}

// browserOptions puts the browser's window on the display, at a known place and size.
func (d *desktop) browserOptions(o *browser.Options) {
	o.Headless = false
	o.Env = append(o.Env, "DISPLAY="+d.display)
	// --test-type: no "unsupported command-line flag" bar (--no-sandbox as root) above the page
	o.Args = append(o.Args, "--test-type", "--window-position=0,0", "--window-size=1280,900", "--disable-gpu")
}

// xdo runs xdotool on the display.
func (d *desktop) xdo(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+d.display)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("xdotool %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// focus gives the browser's window the keyboard (there is no window manager to do it).
func (d *desktop) focus(t *testing.T) {
	t.Helper()
	var ids string
	for deadline := time.Now().Add(testlimit.Scale(20 * time.Second)); ; {
		cmd := exec.Command("xdotool", "search", "--onlyvisible", "--class", "chromium")
		cmd.Env = append(os.Environ(), "DISPLAY="+d.display)
		out, _ := cmd.Output()
		if ids = strings.TrimSpace(string(out)); ids != "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if ids == "" {
		t.Fatal("no visible browser window on the display")
	}
	for _, id := range strings.Fields(ids) {
		d.xdo(t, "windowfocus", "--sync", id)
	}
}

// key presses keys (xdotool names: "alt+shift+s", "ctrl+l", "Return") in the focused window.
func (d *desktop) key(t *testing.T, keys ...string) {
	t.Helper()
	d.focus(t)
	d.xdo(t, append([]string{"key", "--clearmodifiers"}, keys...)...)
}

// How the desktop tests give an input again when it did not take (see act).
const (
	// inputTries is how many times one input is given before the test fails.
	inputTries = 3
	// inputWait is how long one try waits for the input's effect (scaled by testlimit.Scale).
	inputWait = 5 * time.Second
)

// act gives an input (do; try counts from 1) until took says it took effect: after each try it
// polls took for inputWait (scaled); when inputTries tries did not take, the test fails, naming
// the effect (what, such as "Alt+Shift+S shares the tab") and took's last word. A retry is logged.
// do must be safe to give again after a try whose effect was only slow: it puts the thing back
// where the input starts (a field's text selected, a menu closed) or checks first.
func (d *desktop) act(t *testing.T, what string, do func(try int), took func() (bool, string)) {
	t.Helper()
	logf := func(format string, args ...any) { t.Logf("%s: %s", what, fmt.Sprintf(format, args...)) }
	if err := giveInput(testlimit.Scale(inputWait), inputTries, do, took, logf); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// giveInput is act's loop: do, then took polled for wait, at most tries times; logf says which
// try took when it was not the first, and what each try that did not take left.
func giveInput(wait time.Duration, tries int, do func(try int), took func() (bool, string), logf func(string, ...any)) error {
	var last string
	for try := 1; try <= tries; try++ {
		do(try)
		ok, s := poll(wait, took)
		if ok {
			if try > 1 {
				logf("took on try %d of %d", try, tries)
			}
			return nil
		}
		last = s
		logf("not after try %d of %d (waited %v): %s", try, tries, wait, s)
	}
	return fmt.Errorf("not after %d tries of %v each (last: %s)", tries, wait, last)
}

// press presses keys (as key does) until took says they took effect (see act).
func (d *desktop) press(t *testing.T, what string, took func() (bool, string), keys ...string) {
	t.Helper()
	d.act(t, what, func(int) { d.key(t, keys...) }, took)
}

// clickUntil clicks button (1 left, 3 right) at x, y until took says the click took effect (see
// act).
func (d *desktop) clickUntil(t *testing.T, what string, x, y, button int, took func() (bool, string)) {
	t.Helper()
	d.act(t, what, func(int) { d.click(t, x, y, button) }, took)
}

// typeInto types s into the focused field over what it holds (Ctrl+A first) until took says the
// field holds s (see act).
func (d *desktop) typeInto(t *testing.T, what, s string, took func() (bool, string)) {
	t.Helper()
	d.act(t, what, func(int) {
		d.key(t, "ctrl+a")
		d.typeText(t, s)
	}, took)
}

// toggleShare presses Alt+Shift+S on tab until its badge reads badge ("ON" shared, "" not); did
// is what the key was to do, for the failure message.
func (d *desktop) toggleShare(t *testing.T, ctx context.Context, ae *agentEnv, tab browser.Tab, badge, did string) {
	t.Helper()
	d.press(t, "Alt+Shift+S: "+did, ae.badgeIs(ctx, tab, badge), "alt+shift+s")
}

// badgeIs is a condition for act and poll: tab's badge reads want.
func (ae *agentEnv) badgeIs(ctx context.Context, tab browser.Tab, want string) func() (bool, string) {
	return func() (bool, string) {
		got, err := ae.b.Badge(ctx, tab)
		if err != nil {
			return false, err.Error()
		}
		return got == want, fmt.Sprintf("badge %q, want %q", got, want)
	}
}

// typeText types s in the focused window (one try: typeInto checks it).
func (d *desktop) typeText(t *testing.T, s string) {
	t.Helper()
	d.xdo(t, "type", "--delay", "20", s)
}

// click clicks button (1 left, 3 right) at x, y (one try: clickUntil checks it).
func (d *desktop) click(t *testing.T, x, y, button int) {
	t.Helper()
	d.xdo(t, "mousemove", "--sync", strconv.Itoa(x), strconv.Itoa(y), "click", strconv.Itoa(button))
}

// changed is a condition for act and poll: the screen inside r differs from before in at least a
// quarter of its pixels, the same on two screenshots in a row (at rest: Chromium animates menus
// into place); name names the screenshots.
func (d *desktop) changed(t *testing.T, name string, r image.Rectangle, before image.Image) func() (bool, string) {
	var last image.Image
	return func() (bool, string) {
		img := d.screenshot(t, name)
		diff, still := differ(before, img, r), last != nil && differ(last, img, r) == 0
		last = img
		return diff*4 >= r.Dx()*r.Dy() && still, fmt.Sprintf("%d of %d pixels in %v changed, at rest: %v", diff, r.Dx()*r.Dy(), r, still)
	}
}

// differ counts the pixels inside r that are not near the same colour on a and b.
func differ(a, b image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r, g, bl, _ := a.At(x, y).RGBA()
			if !near(b.At(x, y), [3]int{int(r >> 8), int(g >> 8), int(bl >> 8)}) {
				n++
			}
		}
	}
	return n
}

// screenshot captures the whole display into a numbered PNG named after what it shows, logs its
// path and returns the image.
func (d *desktop) screenshot(t *testing.T, name string) image.Image {
	t.Helper()
	d.n++
	path := filepath.Join(d.shots, fmt.Sprintf("%02d-%s.png", d.n, name))
	cmd := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "x11grab", "-video_size", "1280x900", "-i", d.display, "-frames:v", "1", path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("screenshot: %v: %s", err, out)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot %s: %v", path, err)
	}
	t.Logf("screenshot %s", path)
	return img
}

// pageTop is where the page's content starts on a screenshot of the desktop fixture page (its
// magenta band): below the tab strip, the toolbar and any bar Chrome shows above the page, such
// as "started debugging this browser". -1 when the band is not on screen.
func pageTop(img image.Image) int {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		r, g, bl, _ := img.At(20, y).RGBA()
		if r>>8 > 230 && g>>8 < 40 && bl>>8 > 230 {
			return y
		}
	}
	return -1
}

// barShown reports, from a screenshot, whether a bar sits between the toolbar and the page,
// compared with bare, where the page starts with no bar.
func barShown(img image.Image, bare int) (bool, int) {
	top := pageTop(img)
	return top > bare+20, top
}

// startDesktopAgent starts the relay with the agent (as `tabrelay serve`, DetachAfter set) and a
// headed browser on d with the extension paired, and opens the desktop fixture page in a tab
// (not shared).
func startDesktopAgent(t *testing.T, d *desktop, detachAfter time.Duration) (*agentEnv, browser.Tab) {
	t.Helper()
	requireChromium(t)
	ae := startAgentEnvWith(t, api.Options{}, relay.HubOptions{DetachAfter: detachAfter}, d.browserOptions)
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(30*time.Second))
	defer cancel()
	tab, err := ae.b.NewTab(ctx, ae.site.URL("/desktop.html"))
	if err != nil {
		t.Fatal(err)
	}
	// one tab in the window: the page the test works on (the start tab goes)
	if err := ae.b.CloseBlankTabs(ctx, []browser.Tab{tab}); err != nil {
		t.Fatal(err)
	}
	d.focus(t)
	return ae, tab
}

// badge reads a tab's badge text, colour and tooltip.
func (e *env) badge(t *testing.T, tab browser.Tab) (text, color, title string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(10*time.Second))
	defer cancel()
	var r struct {
		Text  string `json:"text"`
		Color []int  `json:"color"`
		Title string `json:"title"`
	}
	expr := fmt.Sprintf(`Promise.all([chrome.action.getBadgeText({tabId: %[1]d}), chrome.action.getBadgeBackgroundColor({tabId: %[1]d}), chrome.action.getTitle({tabId: %[1]d})]).then(([text, color, title]) => ({text, color, title}))`, tab.TabID)
	if err := e.b.ServiceWorkerEval(ctx, expr, &r); err != nil {
		t.Fatal(err)
	}
	return r.Text, fmt.Sprint(r.Color), r.Title
}

// listedTab reports whether the relay lists the tab's page (by chrome.tabs id through the
// extension's report, since a page's target id may change when it navigates).
func (e *env) sharedTabIDs(t *testing.T) map[int]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(10*time.Second))
	defer cancel()
	var r []struct {
		TabID    int    `json:"tabId"`
		TargetID string `json:"targetId"`
	}
	if err := e.b.ServiceWorkerEval(ctx, `tabrelay.statusReport().sharedTabs`, &r); err != nil {
		t.Fatal(err)
	}
	out := map[int]string{}
	listed := e.listedIDs(t)
	for _, s := range r {
		if _, ok := listed[s.TargetID]; ok {
			out[s.TabID] = s.TargetID
		}
	}
	return out
}

// command sends a request as the side panel does (POST /api/command) and returns the task's
// status and error.
func (ae *agentEnv) command(t *testing.T, tab browser.Tab, text string) (int, string) {
	t.Helper()
	r := ae.call(t, "POST", "/api/command", map[string]any{"text": text, "tab": tab.TargetID})
	var body struct {
		Error  string `json:"error"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(r.Body, &body)
	if r.Status != 200 || body.Status != "succeeded" {
		return r.Status, fmt.Sprintf("task %s: %s", body.Status, r.Body)
	}
	return r.Status, ""
}

// TestDesktopAgentLetsGo: a tab shared with Alt+Shift+S, a simple command from the agent: the
// "started debugging" bar shows while the agent acts and is gone DetachAfter after its last
// action (on screenshots); the next command brings it back and works.
func TestDesktopAgentLetsGo(t *testing.T) {
	d := startDesktop(t)
	const detachAfter = 3 * time.Second
	ae, tab := startDesktopAgent(t, d, detachAfter)
	bare := pageTop(d.screenshot(t, "before-sharing"))
	if bare < 0 {
		t.Fatal("the desktop page is not on screen")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(2*time.Minute))
	defer cancel()
	d.toggleShare(t, ctx, ae, tab, "ON", "share the tab")
	d.screenshot(t, "shared-no-agent-yet")
	for round := 1; round <= 2; round++ {
		if code, err := ae.command(t, tab, "click press me"); err != "" {
			t.Fatalf("round %d: command: %d %s", round, code, err)
		}
		acted := time.Now()
		if on, top := barShown(d.screenshot(t, fmt.Sprintf("round%d-agent-acted", round)), bare); !on {
			t.Fatalf("round %d: no debugging bar on the screenshot right after the agent acted (page starts at %d, %d without a bar)", round, top, bare)
		}
		var last image.Image
		eventually(t, detachAfter+20*time.Second, fmt.Sprintf("round %d: the debugging bar is gone after the agent's last action", round), func() (bool, string) {
			img := d.screenshot(t, fmt.Sprintf("round%d-waiting", round))
			on, top := barShown(img, bare)
			last = img
			return !on, fmt.Sprintf("page starts at %d (%d without a bar) %v after the action", top, bare, time.Since(acted).Round(time.Millisecond))
		})
		if since := time.Since(acted); since < detachAfter {
			t.Fatalf("round %d: the bar went %v after the agent's action, before DetachAfter (%v)", round, since, detachAfter)
		}
		_ = last
		if _, ok := ae.sharedTabIDs(t)[tab.TabID]; !ok {
			t.Fatalf("round %d: the tab is no longer shared once the agent let go", round)
		}
	}
}

// TestDesktopReshareAfterAgent: the agent acts on a tab, the user stops sharing it and shares it
// again (Alt+Shift+S twice): commands and snapshots work on it at once, with no stale session.
func TestDesktopReshareAfterAgent(t *testing.T) {
	d := startDesktop(t)
	ae, tab := startDesktopAgent(t, d, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(2*time.Minute))
	defer cancel()
	d.toggleShare(t, ctx, ae, tab, "ON", "share the tab")
	if code, err := ae.command(t, tab, "click press me"); err != "" {
		t.Fatalf("first command: %d %s", code, err)
	}
	d.screenshot(t, "agent-acted")
	d.toggleShare(t, ctx, ae, tab, "", "stop sharing")
	d.screenshot(t, "unshared")
	d.toggleShare(t, ctx, ae, tab, "ON", "share the tab again")
	ae.waitShared(t, ctx, tab, "Alt+Shift+S again")
	for i, cmd := range []string{"click press me", "scroll down"} {
		code, err := ae.command(t, tab, cmd)
		if err != "" {
			t.Fatalf("command %d (%q) on the re-shared tab: %d %s", i+1, cmd, code, err)
		}
	}
	r := ae.call(t, "GET", "/api/snapshot?tab="+tab.TargetID, nil)
	if r.Status != 200 {
		t.Fatalf("snapshot of the re-shared tab: %d %s", r.Status, r.Body)
	}
	var out string
	if err := ae.b.PageEval(ctx, tab, `document.getElementById('out').textContent`, &out); err != nil {
		t.Fatal(err)
	}
	if out != "clicked 2" {
		t.Fatalf("the page says %q after two clicks, one before and one after re-sharing", out)
	}
	d.screenshot(t, "reshared-agent-acted")
}

// TestDesktopNewTabInGroup: "New tab to the right" from a shared tab's menu in the tab strip puts
// the new tab in the tabrelay group; once it shows a page it is shared and listed.
func TestDesktopNewTabInGroup(t *testing.T) {
	d := startDesktop(t)
	ae, tab := startDesktopAgent(t, d, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(2*time.Minute))
	defer cancel()
	d.toggleShare(t, ctx, ae, tab, "ON", "share the tab")
	before := d.screenshot(t, "shared-in-group")
	top := pageTop(before)
	if top < 0 {
		t.Fatal("the desktop page is not on screen")
	}
	// the tab strip: the group's label first, then the tab; right-click the tab, and the menu
	// opens below the pointer, over the page's magenta band
	menu := image.Rect(200, top+10, 330, top+100)
	tabs := func() (bool, string) {
		var ids []int
		if err := ae.b.ServiceWorkerEval(ctx, `chrome.tabs.query({}).then(ts => ts.map(t => t.id))`, &ids); err != nil {
			return false, err.Error()
		}
		return len(ids) > 1, fmt.Sprintf("tabs %v", ids)
	}
	d.act(t, `"New tab to the right" from the tab's menu opens a tab`, func(try int) {
		if try > 1 {
			d.key(t, "Escape") // a menu left open by the try before
		}
		d.clickUntil(t, "a right-click on the tab opens its menu", 180, 20, 3, d.changed(t, "tab-menu", menu, before))
		d.key(t, "Down", "Return")
	}, tabs)
	// the new tab is the active one (a try that was only slow may have opened two)
	var newTab int
	if err := ae.b.ServiceWorkerEval(ctx, `chrome.tabs.query({active: true, lastFocusedWindow: true}).then(ts => ts[0].id)`, &newTab); err != nil {
		t.Fatal(err)
	}
	if newTab == tab.TabID {
		t.Fatalf("the shared tab %d is still the active one after opening a new tab", tab.TabID)
	}
	d.screenshot(t, "new-tab-opened")
	var group struct {
		Mine, Other int
	}
	if err := ae.b.ServiceWorkerEval(ctx, fmt.Sprintf(`Promise.all([chrome.tabs.get(%d), chrome.tabs.get(%d)]).then(([a, b]) => ({mine: a.groupId, other: b.groupId}))`, tab.TabID, newTab), &group); err != nil {
		t.Fatal(err)
	}
	if group.Other != group.Mine || group.Mine < 0 {
		t.Fatalf("the new tab is in group %d, the shared tab in %d: Chrome did not put it in the group", group.Other, group.Mine)
	}
	// the user types an address into the new tab: Ctrl+L selects the address bar's text, so a
	// try types over what the one before left there
	want := ae.site.URL("/other.html?newtab")
	d.act(t, "the address typed in the new tab's address bar and Return load it", func(int) {
		d.key(t, "ctrl+l")
		d.typeText(t, want)
		d.key(t, "Return")
	}, func() (bool, string) {
		var u struct{ URL, Pending string }
		if err := ae.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(t => ({url: t.url, pending: t.pendingUrl || ''}))`, newTab), &u); err != nil {
			return false, err.Error()
		}
		return u.URL == want || u.Pending == want, fmt.Sprintf("the tab shows %q (pending %q)", u.URL, u.Pending)
	})
	d.screenshot(t, "address-loaded")
	eventually(t, 15*time.Second, "the new tab in the group is shared and listed", func() (bool, string) {
		ids := ae.sharedTabIDs(t)
		_, ok := ids[newTab]
		return ok, fmt.Sprintf("shared and listed: %v", ids)
	})
	var url string
	if err := ae.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(t => t.url)`, newTab), &url); err != nil {
		t.Fatal(err)
	}
	if url != want {
		t.Fatalf("the new tab shows %q, not the address typed", url)
	}
	// shared once: a second event of the same load must not have toggled it back off and out
	var after int
	if err := ae.b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(t => t.groupId)`, newTab), &after); err != nil {
		t.Fatal(err)
	}
	if _, ok := ae.sharedTabIDs(t)[newTab]; !ok || after != group.Mine {
		t.Fatalf("after loading, the new tab is in group %d (the shared tab's: %d), shared and listed: %v", after, group.Mine, ok)
	}
	d.screenshot(t, "new-tab-shared")
}

// findColor returns the middle x of the pixels on row y close to want (within 40 per channel),
// or -1.
func findColor(img image.Image, y int, want [3]int) int {
	b := img.Bounds()
	sum, n := 0, 0
	for x := b.Min.X; x < b.Max.X; x++ {
		if near(img.At(x, y), want) {
			sum += x
			n++
		}
	}
	if n == 0 {
		return -1
	}
	return sum / n
}

// near reports whether c is close to the colour want (within 40 in each of red, green, blue).
func near(c color.Color, want [3]int) bool {
	r, g, b, _ := c.RGBA()
	return abs(int(r>>8)-want[0]) < 40 && abs(int(g>>8)-want[1]) < 40 && abs(int(b>>8)-want[2]) < 40
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// The badge colours (chrome.action.getBadgeBackgroundColor's RGBA).
const (
	badgeGreen = "[24 128 56 255]"
	badgeRed   = "[217 48 37 255]"
)

// TestDesktopBarDismissed: the agent acts on a shared tab and the user presses Cancel on the
// "started debugging this browser" bar: sharing stops, the tab's badge is the red "!" with a
// tooltip that says why (not the green of "ON"), and sharing the tab again lets the agent act
// on it at once.
func TestDesktopBarDismissed(t *testing.T) {
	d := startDesktop(t)
	ae, tab := startDesktopAgent(t, d, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(2*time.Minute))
	defer cancel()
	bare := pageTop(d.screenshot(t, "before-sharing"))
	d.toggleShare(t, ctx, ae, tab, "ON", "share the tab")
	if code, err := ae.command(t, tab, "click press me"); err != "" {
		t.Fatalf("command: %d %s", code, err)
	}
	img := d.screenshot(t, "bar-shown")
	on, top := barShown(img, bare)
	if !on {
		t.Fatalf("no debugging bar after the agent acted (page starts at %d, %d without a bar)", top, bare)
	}
	// the bar's blue Cancel button, halfway down the bar
	y := (bare + top) / 2
	x := findColor(img, y, [3]int{11, 87, 208})
	if x < 0 {
		t.Fatalf("no Cancel button on row %d of the bar", y)
	}
	d.clickUntil(t, "Cancel on the bar stops sharing", x, y, 1, func() (bool, string) {
		ids := ae.sharedTabIDs(t)
		return len(ids) == 0, fmt.Sprintf("shared and listed: %v", ids)
	})
	eventually(t, 10*time.Second, "the tab's badge is the red ! with the reason", func() (bool, string) {
		text, color, title := ae.badge(t, tab)
		return text == "!" && color == badgeRed && strings.Contains(title, "bar was canceled"), fmt.Sprintf("badge %q colour %s tooltip %q", text, color, title)
	})
	if on, top := barShown(d.screenshot(t, "bar-dismissed"), bare); on {
		t.Fatalf("the bar is still there after Cancel (page starts at %d)", top)
	}
	d.toggleShare(t, ctx, ae, tab, "ON", "share the tab again")
	if _, color, _ := ae.badge(t, tab); color != badgeGreen {
		t.Fatalf("a shared tab's badge colour is %s, want green %s", color, badgeGreen)
	}
	ae.waitShared(t, ctx, tab, "Alt+Shift+S again")
	if code, err := ae.command(t, tab, "click press me"); err != "" {
		t.Fatalf("command after sharing again: %d %s", code, err)
	}
	d.screenshot(t, "reshared-agent-acted")
}

// TestDesktopSidePanelCommand: Alt+Shift+Y opens the side panel beside a shared tab; it names
// the tab; a command typed in its box and sent with Enter runs on the tab, and the box is empty
// again.
func TestDesktopSidePanelCommand(t *testing.T) {
	d := startDesktop(t)
	ae, tab := startDesktopAgent(t, d, 30*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(2*time.Minute))
	defer cancel()
	d.toggleShare(t, ctx, ae, tab, "ON", "share the tab")
	// the panel's page, found over the harness's control channel to read it (never to drive it)
	var panelPage browser.Tab
	d.press(t, "Alt+Shift+Y opens the side panel", func() (bool, string) {
		var r struct {
			TargetInfos []struct {
				TargetID string `json:"targetId"`
				URL      string `json:"url"`
			} `json:"targetInfos"`
		}
		if err := ae.b.CDP.Call(ctx, "", "Target.getTargets", nil, &r); err != nil {
			return false, err.Error()
		}
		for _, ti := range r.TargetInfos {
			if strings.HasSuffix(ti.URL, "/sidepanel.html") {
				panelPage.TargetID = ti.TargetID
			}
		}
		return panelPage.TargetID != "", fmt.Sprint(r.TargetInfos)
	}, "alt+shift+y")
	var box struct {
		X, Y, W, H     float64
		InnerW, InnerH float64
		State          string
	}
	eventually(t, 20*time.Second, "the side panel names the shared tab", func() (bool, string) {
		if err := ae.b.PageEval(ctx, panelPage, `(() => { const r = document.getElementById('request').getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height, innerW: innerWidth, innerH: innerHeight, state: document.getElementById('tabstate').textContent}; })()`, &box); err != nil {
			return false, err.Error()
		}
		return box.State == "This tab is shared: Desktop page", box.State
	})
	d.screenshot(t, "side-panel")
	// the panel sits at the window's right edge and bottom: its page's origin on the screen
	x := 1280 - int(box.InnerW) + int(box.X+box.W/2)
	y := 900 - int(box.InnerH) + int(box.Y+box.H/2)
	panelSays := func(expr string, want any) func() (bool, string) {
		return func() (bool, string) {
			var got any
			if err := ae.b.PageEval(ctx, panelPage, expr, &got); err != nil {
				return false, err.Error()
			}
			return fmt.Sprint(got) == fmt.Sprint(want), fmt.Sprintf("%s is %v, want %v", expr, got, want)
		}
	}
	d.clickUntil(t, "a click on the side panel's request box focuses it", x, y, 1,
		panelSays(`document.hasFocus() && document.activeElement.id`, "request"))
	d.typeInto(t, "the request typed in the side panel's box", "click press me",
		panelSays(`document.getElementById('request').value`, "click press me"))
	d.screenshot(t, "side-panel-typed")
	// Return sends the request and empties the box; a try that did not send leaves the text in it
	d.press(t, "Return in the side panel's box sends the request",
		panelSays(`document.getElementById('request').value`, ""), "Return")
	eventually(t, 20*time.Second, "the command typed in the side panel clicked the button", func() (bool, string) {
		var out string
		if err := ae.b.PageEval(ctx, tab, `document.getElementById('out').textContent`, &out); err != nil {
			return false, err.Error()
		}
		return out == "clicked 1", out
	})
	var left string
	if err := ae.b.PageEval(ctx, panelPage, `document.getElementById('request').value`, &left); err != nil {
		t.Fatal(err)
	}
	if left != "" {
		t.Fatalf("the request box still holds %q after sending", left)
	}
	d.screenshot(t, "side-panel-done")
}

// TestGiveInput: an input that took is given once; one lost once is given again and passes; one
// that never takes is given inputTries times and fails, quoting the last state (no display
// needed: the inputs here are counted, the effect is the count).
func TestGiveInput(t *testing.T) {
	for _, c := range []struct {
		name      string
		takesFrom int // the try whose input takes (0: none)
		wantGiven int
		wantErr   bool
	}{
		{"takes at once", 1, 1, false},
		{"lost once", 2, 2, false},
		{"lost twice", 3, 3, false},
		{"never takes", 0, inputTries, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			given, tookAt := 0, 0
			do := func(try int) {
				given++
				if try != given {
					t.Errorf("try %d given as the %d-th input", try, given)
				}
				if try == c.takesFrom {
					tookAt = try
				}
			}
			took := func() (bool, string) { return tookAt > 0, fmt.Sprintf("%d inputs given", given) }
			var logged []string
			err := giveInput(10*time.Millisecond, inputTries, do, took, func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) })
			if given != c.wantGiven || (err != nil) != c.wantErr {
				t.Fatalf("given %d times, error %v; want %d times, error %v", given, err, c.wantGiven, c.wantErr)
			}
			if c.wantErr && !strings.Contains(err.Error(), fmt.Sprintf("%d inputs given", inputTries)) {
				t.Errorf("the error does not quote the last state: %v", err)
			}
			if c.takesFrom > 1 && !slices.Contains(logged, fmt.Sprintf("took on try %d of %d", c.takesFrom, inputTries)) {
				t.Errorf("the retry is not logged: %q", logged)
			}
		})
	}
}
