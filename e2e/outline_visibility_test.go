package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/snapshot"
)

// outlineOf takes the tab's snapshot through the agent's HTTP API: the text and the page model.
func (ae *agentEnv) outlineOf(t *testing.T, tab browser.Tab, query string) (string, *snapshot.Snapshot) {
	t.Helper()
	q := "/api/snapshot?tab=" + url.QueryEscape(tab.TargetID) + query
	r := ae.call(t, http.MethodGet, q, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", q, r.Status, r.Body)
	}
	text := string(r.Body)
	r = ae.call(t, http.MethodGet, q+"&format=json", nil)
	var snap snapshot.Snapshot
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &snap) != nil || snap.Root == nil {
		t.Fatalf("GET %s&format=json: HTTP %d %.300s", q, r.Status, r.Body)
	}
	return text, &snap
}

// playwrightAI is Playwright's ariaSnapshot({mode: 'ai'}) of the page at pageURL, taken by
// playwright-core over tabrelay's CDP endpoint in the same Chromium (e2e/clients/bench-aria.mjs).
func (ae *agentEnv) playwrightAI(t *testing.T, pageURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := runNode(t, ctx, "bench-aria.mjs", map[string]string{
		"ENDPOINT": ae.httpURL() + "/?token=" + url.QueryEscape(ae.token()), "PAGE_URL": pageURL, "RUNS": "1"})
	text, _ := out["text"].(string)
	return text
}

// pwRef matches a line of Playwright's AI snapshot that gives an element a ref: its role (the
// line is quoted when its name holds a character YAML would read otherwise).
var pwRef = regexp.MustCompile(`(?m)^\s*- '?([a-z]+)\b[^\n]*\[ref=`)

// controlKinds are the controls compared with Playwright's AI snapshot, by role: text fields
// under one kind, since Playwright names date, time and colour inputs textbox.
var controlKinds = map[string]string{"link": "link", "button": "button", "textbox": "field", "searchbox": "field", "date": "field",
	"time": "field", "datetime": "field", "colorpicker": "field"}

// controlCounts counts links, buttons and text fields with a ref: in our model, and in
// Playwright's text.
func controlCounts(snap *snapshot.Snapshot, pwText string) (ours, pw map[string]int) {
	ours, pw = map[string]int{}, map[string]int{}
	for _, n := range snap.Nodes() {
		if k := controlKinds[n.Role]; n.Ref != "" && k != "" {
			ours[k]++
		}
	}
	for _, m := range pwRef.FindAllStringSubmatch(pwText, -1) {
		if k := controlKinds[m[1]]; k != "" {
			pw[k]++
		}
	}
	return ours, pw
}

// TestOutlineVisibility reads a page of hidden and shown content through the real extension:
// the outline holds what a person sees, as Playwright's AI snapshot of the same tab does. Text
// under visibility:hidden or collapse, inside content-visibility:hidden or a closed <details>,
// an iframe's fallback text and <noscript> are out (of names too); a menu under aria-hidden
// that is shown is in, marked, with the same links, buttons and text boxes as Playwright
// lists; and its refs work for click and type.
func TestOutlineVisibility(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	pageURL := ae.site.URL("/outline/visibility.html")
	tab := ae.share(t, pageURL)
	text, snap := ae.outlineOf(t, tab, "")
	t.Logf("outline:\n%s", text)
	pw := ae.playwrightAI(t, pageURL)
	t.Logf("Playwright's AI snapshot:\n%s", pw)

	hidden := []string{"Invisible text", "Invisible link", "Collapsed row text", "Text skipped by content visibility", "Skipped button",
		"Text inside closed details", "Details link", "Iframe fallback text", "Hidden iframe fallback", "Frame under visibility hidden",
		"Noscript", "Undisplayed hidden link", "about invisible things"}
	shown := []string{"Plain visible paragraph.", "Shown again inside hidden", "Visible cell text", "Closed details summary",
		"Transparent but present text", "Inside the frame", "Menu news", "Menu sport", "Menu open", "[aria-hidden]", `link "Read more"`}
	for _, h := range hidden {
		if strings.Contains(text, h) {
			t.Errorf("the outline shows %q, which a person does not see", h)
		}
		if strings.Contains(pw, h) {
			t.Errorf("the fixture is wrong: Playwright's AI snapshot shows %q", h)
		}
	}
	for _, s := range shown {
		if !strings.Contains(text, s) {
			t.Errorf("the outline has no %q, which a person sees", s)
		}
		if !strings.Contains(pw, s) {
			t.Errorf("the fixture is wrong: Playwright's AI snapshot has no %q", s)
		}
	}
	ours, theirs := controlCounts(snap, pw)
	if fmt.Sprint(ours) != fmt.Sprint(theirs) {
		t.Errorf("links, buttons and text fields with a ref: %v, Playwright's AI snapshot %v", ours, theirs)
	}

	// the menu's refs work through the agent's actions
	var button, search *snapshot.Node
	for _, n := range snap.Nodes() {
		switch {
		case n.Role == "button" && n.Name == "Menu open":
			button = n
		case n.Role == "textbox" && n.Name == "Menu search":
			search = n
		}
	}
	if button == nil || button.Ref == "" || search == nil || search.Ref == "" {
		t.Fatalf("the aria-hidden menu's button and text box have no refs:\n%s", text)
	}
	act := func(a map[string]any) {
		t.Helper()
		r := ae.call(t, http.MethodPost, "/api/act", map[string]any{"tab": tab.TargetID, "action": a})
		if r.Status != http.StatusOK {
			t.Fatalf("act %v: HTTP %d %s", a, r.Status, r.Body)
		}
	}
	out := func() string {
		var s string
		ae.pageEval(t, tab, `document.getElementById('out').textContent`, &s)
		return s
	}
	act(map[string]any{"kind": "click", "ref": button.Ref})
	if got := out(); got != "Clicked the menu button" {
		t.Errorf("after clicking %s: #out is %q", button.Ref, got)
	}
	act(map[string]any{"kind": "type", "ref": search.Ref, "text": "weather"})
	if got := out(); got != "Typed: weather" {
		t.Errorf("after typing into %s: #out is %q", search.Ref, got)
	}
}

// TestOutlineDecorativeIcons reads controls and text with icons marked aria-hidden through the
// real extension: the icons' text is there, as a person sees it and as Playwright's AI snapshot
// shows it, on the line of the control or text it decorates (no [aria-hidden] line for each
// icon: the mark is for containers of controls).
func TestOutlineDecorativeIcons(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	pageURL := ae.site.URL("/outline/icons.html")
	tab := ae.share(t, pageURL)
	text, _ := ae.outlineOf(t, tab, "")
	pw := ae.playwrightAI(t, pageURL)
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^- button "Close" \[ref=e\d+\]: ×$`),
		regexp.MustCompile(`(?m)^- link "Next page" \[ref=e\d+\] \[url=#next\]: Next page ›$`),
		regexp.MustCompile(`(?m)^- paragraph: ★★★★☆ Rated 4 of 5$`),
	} {
		if !want.MatchString(text) {
			t.Errorf("no line matching %s in:\n%s\nPlaywright's AI snapshot:\n%s", want, text, pw)
		}
	}
	if strings.Contains(text, "[aria-hidden]") {
		t.Errorf("icons are marked line by line:\n%s", text)
	}
	for _, s := range []string{"×", "Next page ›", "★★★★☆ Rated 4 of 5"} {
		if !strings.Contains(pw, s) {
			t.Errorf("the fixture is wrong: Playwright's AI snapshot has no %q:\n%s", s, pw)
		}
	}
}

// TestOutlinePageHidesAll reads pages whose own CSS hides everything (html{visibility:hidden},
// body{display:none}, as pages do until a script shows them): the outline has no lines, as
// Playwright's AI snapshot of the same tab is empty.
func TestOutlinePageHidesAll(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	for _, path := range []string{"/outline/hides-all.html", "/outline/body-none.html"} {
		pageURL := ae.site.URL(path)
		tab := ae.share(t, pageURL)
		text, snap := ae.outlineOf(t, tab, "")
		if regexp.MustCompile(`(?m)^\s*- `).MatchString(text) || len(snap.Root.Children) != 0 {
			t.Errorf("%s: the outline of a page that shows nothing is not empty:\n%s", path, text)
		}
		if pw := ae.playwrightAI(t, pageURL); strings.TrimSpace(pw) != "" {
			t.Errorf("%s: the fixture is wrong: Playwright's AI snapshot is not empty:\n%s", path, pw)
		}
	}
}

// TestOutlineControlsMatchPlaywright reads fixture pages through the real extension and
// compares the links, buttons and text fields the outline gives refs with those Playwright's AI
// snapshot of the same tab gives refs: the same numbers on each page. (Pages where the two
// decide differently on purpose are not here: a bare contenteditable is a textbox to us, a
// text box's role on a wrapper is one field to us where Playwright lists the wrapper and the
// field inside.)
func TestOutlineControlsMatchPlaywright(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	for _, path := range []string{"/index.html", "/flow.html", "/navclick.html", "/hard/menu.html", "/hard/modal.html", "/hard/shadow.html",
		"/hard/frames.html", "/hard/dupes.html", "/hard/virtual.html", "/fastpath/dialog.html", "/fastpath/form.html", "/fastpath/kinds.html",
		"/fastpath/results.html", "/fastpath/tabs.html", "/gen.html?n=300", "/outline/visibility.html", "/outline/icons.html"} {
		tab := ae.share(t, ae.site.URL(path))
		text, snap := ae.outlineOf(t, tab, "")
		pw := ae.playwrightAI(t, tab.URL)
		t.Logf("%s: %d tokens, Playwright's %d", path, snapshot.Tokens(text), snapshot.Tokens(pw))
		if ours, theirs := controlCounts(snap, pw); fmt.Sprint(ours) != fmt.Sprint(theirs) {
			t.Errorf("%s: links, buttons and text fields with a ref: %v, Playwright's AI snapshot %v\nours:\n%s\nPlaywright's:\n%s", path, ours, theirs, text, pw)
		}
	}
}
