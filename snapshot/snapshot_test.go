package snapshot

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

var refRE = regexp.MustCompile(`\[ref=(e\d+)\]`)

func refOn(t *testing.T, text, needle string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, needle) {
			if m := refRE.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no ref for %q in\n%s", needle, text)
	return ""
}

func TestSnapshotFramesAndShadow(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := openTab(t, ctx, "/hard/frames.html")
	s, err := tab.Snapshot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`iframe "Same origin"`, `button "Button in same"`, `iframe "Cross origin"`, `button "Button in cross"`, `textbox "Frame input"`} {
		if !strings.Contains(s.Text, want) {
			t.Errorf("missing %s in\n%s", want, s.Text)
		}
	}
	// refs are unique across frames
	seen := map[string]bool{}
	for _, m := range refRE.FindAllStringSubmatch(s.Text, -1) {
		if seen[m[1]] {
			t.Errorf("ref %s twice", m[1])
		}
		seen[m[1]] = true
	}
	// scope to a frame, by ref and by URL
	cross := refOn(t, s.Text, `iframe "Cross origin"`)
	for _, o := range []Options{{Frame: cross}, {Frame: "p=cross"}} {
		fs, err := tab.Snapshot(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(fs.Text, "Button in cross") || strings.Contains(fs.Text, "Button in same") || strings.Contains(fs.Text, "Top button") {
			t.Errorf("frame scope %+v:\n%s", o, fs.Text)
		}
	}
	// the cross-origin frame's elements resolve in their own session
	el, err := tab.Resolve(ctx, refOn(t, s.Text, `button "Button in cross"`))
	if err != nil {
		t.Fatal(err)
	}
	if el.Frame.Session == tab.Session() {
		t.Errorf("cross-origin element resolved in the page session")
	}
	tab.Release(ctx, el)
	// refs stay the same on the next snapshot
	s2, _ := tab.Snapshot(ctx, Options{})
	if s2.Text != s.Text {
		t.Errorf("second snapshot differs:\n%s\n---\n%s", s.Text, s2.Text)
	}

	sh := openTab(t, ctx, "/hard/shadow.html")
	ss, err := sh.Snapshot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`button "Inner action"`, `textbox "Inner field"`, `button "Slotted button"`, `link "Deep link"`} {
		if !strings.Contains(ss.Text, want) {
			t.Errorf("shadow DOM: missing %s in\n%s", want, ss.Text)
		}
	}
	// scope to a ref
	card := refOn(t, ss.Text, `button "Card action"`)
	sc, err := sh.Snapshot(ctx, Options{Scope: card})
	if err != nil || !strings.HasSuffix(sc.Text, "\n- button \"Card action\" [ref="+card+"]\n") {
		t.Errorf("scope: %v\n%s", err, sc.Text)
	}
	if _, err := sh.Snapshot(ctx, Options{Scope: "e999"}); err == nil {
		t.Error("scope to an unknown ref: no error")
	}
	// interactive-only and max chars
	si, _ := sh.Snapshot(ctx, Options{Interactive: true})
	for _, l := range strings.Split(strings.TrimSpace(si.Text), "\n") {
		if !strings.HasPrefix(l, "#") && (!strings.HasPrefix(l, "- ") || !strings.Contains(l, "[ref=")) {
			t.Errorf("interactive line %q", l)
		}
	}
	sm, _ := sh.Snapshot(ctx, Options{MaxChars: 300})
	if len(sm.Text) > 300+200 || !sm.Truncated || !strings.Contains(sm.Text, "# … truncated") {
		t.Errorf("max chars:\n%s", sm.Text)
	}
}

func TestSnapshotHeader(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := openTab(t, ctx, "/hard/menu.html")
	// make the page long: refs below the fold are counted
	if _, err := evalIn(ctx, tab, `(() => { const d = document.createElement('div'); d.style.height = '3000px'; document.body.prepend(d); return 1 })()`); err != nil {
		t.Fatal(err)
	}
	s, err := tab.Snapshot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.Text, "# Menus and tabs — http://") || s.BelowFold < 10 || !strings.Contains(s.Text, "more refs below the fold") {
		t.Errorf("header (below fold %d):\n%s", s.BelowFold, s.Text)
	}
	// aria-modal dialogs are named in the header
	if _, err := evalIn(ctx, tab, `(() => { const d = document.createElement('div'); d.setAttribute('role','dialog'); d.setAttribute('aria-modal','true'); d.setAttribute('aria-label','Sign in'); d.innerHTML = '<button>Go</button>'; document.body.append(d); return 1 })()`); err != nil {
		t.Fatal(err)
	}
	s, _ = tab.Snapshot(ctx, Options{})
	if !strings.Contains(s.Text, `# modal open: dialog "Sign in"`) {
		t.Errorf("modal not in header:\n%s", s.Text)
	}
}

// TestSnapshotLargePage: every control of a 2000-control page gets a ref, and the snapshot is
// stable. Its speed is measured by the benchmarks (go tool task bench), not asserted here.
func TestSnapshotLargePage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := openTab(t, ctx, "/hard/dupes.html")
	if _, err := evalIn(ctx, tab, `(() => { const tb = document.getElementById('rows'); for (let i = 9; i <= 1000; i++) { const tr = document.createElement('tr'); tr.innerHTML = '<td>Item ' + i + '</td><td><button>Delete</button> <a href="/x/' + i + '">Open</a></td>'; tb.append(tr); } return 1 })()`); err != nil {
		t.Fatal(err)
	}
	s, err := tab.Snapshot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s2, err := tab.Snapshot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("2000-control page: %d bytes, %d refs, first %v, again %v", len(s.Text), s.Refs, s.Took, s2.Took)
	if s.Refs < 2000 {
		t.Errorf("only %d refs", s.Refs)
	}
	if s2.Text != s.Text {
		t.Errorf("refs changed between two snapshots of an unchanged page: %s", firstDiff(s.Text, s2.Text))
	}
}

// firstDiff describes the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(la) && i < len(lb); i++ {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d: %q, then %q", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("%d lines, then %d lines", len(la), len(lb))
}
