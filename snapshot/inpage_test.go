package snapshot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// inPagePages are the fixture pages on which the in-page walker must agree with the
// accessibility tree.
var inPagePages = []string{
	"/hard/shadow.html", "/hard/frames.html", "/hard/form.html", "/hard/dupes.html", "/hard/combobox.html",
	"/hard/modal.html", "/hard/virtual.html", "/hard/editor.html", "/hard/menu.html", "/hard/rerender.html", "/hard/upload.html",
	"/hard/alert.html", "/hard/closed.html", "/gen.html?n=200",
	// the extraction, summary and agent fixtures: tables, cards, results, forms
	"/extract/table.html", "/extract/cards.html", "/extract/results.html", "/extract/form.html",
	"/flow.html", "/agent/shop.html", "/agent/controls.html", "/skills/contacts.html",
}

// refLines lists the elements with a ref of a snapshot as `role "name"` lines, in document order.
func refLines(s *Snapshot) []string {
	var out []string
	for _, n := range s.Nodes() {
		if n.Ref != "" {
			out = append(out, fmt.Sprintf("%s %q %v", n.Role, n.Name, n.States))
		}
	}
	return out
}

// TestInPageMatchesAXTree checks on every fixture page that the in-page walker gives refs to
// the same elements, with the same roles, names and states, in the same order, as the
// accessibility tree (the reference), and that the outlines are the same text.
func TestInPageMatchesAXTree(t *testing.T) {
	for _, p := range inPagePages {
		t.Run(strings.TrimPrefix(p, "/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			ax := openTab(t, ctx, p)
			ax.UseInPage(false)
			ip, err := Attach(ctx, ax.Client(), ax.TargetID())
			if err != nil {
				t.Fatal(err)
			}
			defer ip.Close(context.Background())
			ip.UseInPage(true)
			want, err := ax.Snapshot(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := ip.Snapshot(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			w, g := refLines(want), refLines(got)
			if strings.Join(w, "\n") != strings.Join(g, "\n") {
				t.Errorf("refs differ:\n%s\n--- accessibility tree:\n%s\n--- in page:\n%s", lineDiff(w, g), want.Text, got.Text)
			}
			// names the walker infers (from icons, from the text before a field) are beyond
			// the accessibility tree: the rest must be the same
			inferred := 0
			got.Root.Walk(func(n *Node) bool {
				if n.Inferred != "" {
					inferred++
					n.Inferred, n.InferredBy = "", ""
				}
				return true
			})
			if inferred > 0 {
				got.Render(Options{})
			}
			if got.Text != want.Text {
				t.Errorf("outlines differ:\n--- accessibility tree:\n%s\n--- in page:\n%s", want.Text, got.Text)
			}
			if got.Title != want.Title {
				t.Errorf("title %q, want %q", got.Title, want.Title)
			}
			t.Logf("%s: %d refs; built in %v (accessibility tree) and %v (in page)", p, len(g), want.Took.Round(time.Millisecond), got.Took.Round(time.Millisecond))
		})
	}
}

// lineDiff shows the lines only one side has (- reference, + in page).
func lineDiff(want, got []string) string {
	count := map[string]int{}
	for _, l := range want {
		count[l]++
	}
	for _, l := range got {
		count[l]--
	}
	var b strings.Builder
	for _, l := range want {
		if count[l] > 0 {
			b.WriteString("- " + l + "\n")
			count[l]--
		}
	}
	for l, c := range count {
		for ; c < 0; c++ {
			b.WriteString("+ " + l + "\n")
		}
	}
	if b.Len() == 0 {
		return "(same lines, other order)"
	}
	return b.String()
}

// TestInPageClosedShadowRefs checks that controls inside closed shadow roots (which page
// scripts cannot reach) get refs in the in-page build, keep them across snapshots, and
// resolve to exactly those elements.
func TestInPageClosedShadowRefs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := openTab(t, ctx, "/hard/closed.html")
	s, err := tab.Snapshot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // ref -> the testid it must resolve to
	for _, n := range s.Nodes() {
		if n.Ref == "" {
			continue
		}
		card := n.Closest("region")
		switch {
		case card != nil && n.Name == "Closed action":
			want[n.Ref] = strings.TrimPrefix(card.Name, "Closed card ") + "-closed-btn"
		case card != nil && n.Name == "Closed field":
			want[n.Ref] = strings.TrimPrefix(card.Name, "Closed card ") + "-closed-input"
		case n.Name == "Slotted in closed":
			want[n.Ref] = "slotted-btn"
		}
	}
	if len(want) != 5 {
		t.Fatalf("want refs for 2 buttons, 2 fields and a slotted button in closed roots, got %v in\n%s", want, s.Text)
	}
	again, err := tab.Snapshot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Text != s.Text {
		t.Errorf("refs changed between two snapshots of an unchanged page:\n%s\n---\n%s", s.Text, again.Text)
	}
	for ref, tid := range want {
		el, err := tab.Resolve(ctx, ref)
		if err != nil {
			t.Fatalf("resolve %s: %v", ref, err)
		}
		var r struct {
			Result struct {
				Value string `json:"value"`
			} `json:"result"`
		}
		err = tab.Client().Call(ctx, el.Frame.Session, "Runtime.callFunctionOn", map[string]any{
			"objectId": el.ObjectID, "functionDeclaration": "function(){return this.getAttribute('data-testid')}", "returnByValue": true,
		}, &r)
		tab.Release(ctx, el)
		if err != nil {
			t.Fatal(err)
		}
		if r.Result.Value != tid {
			t.Errorf("%s resolved to %q, want %q", ref, r.Result.Value, tid)
		}
	}
}

// TestInPageFollowsFrameChanges checks that in-page builds, which start from the previous
// build's frame list, follow a frame that navigates, a frame added by script, a listener added
// by script and a navigation of the page itself.
func TestInPageFollowsFrameChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := openTab(t, ctx, "/hard/frames.html")
	snap := func(want ...string) *Snapshot {
		t.Helper()
		var s *Snapshot
		// the change lands asynchronously (a frame loads): wait for it, bounded by ctx
		for {
			var err error
			if s, err = tab.Snapshot(ctx, Options{}); err != nil {
				t.Fatal(err)
			}
			missing := ""
			for _, w := range want {
				if !strings.Contains(s.Text, w) {
					missing = w
				}
			}
			if missing == "" {
				return s
			}
			if ctx.Err() != nil {
				t.Fatalf("no %s in\n%s", missing, s.Text)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	snap(`button "Button in same"`, `button "Button in cross"`)
	if _, err := evalIn(ctx, tab, `document.getElementById('same').src = 'frame-controls.html?p=moved'`); err != nil {
		t.Fatal(err)
	}
	s := snap(`button "Button in moved"`, `button "Button in cross"`)
	if strings.Contains(s.Text, "Button in same") {
		t.Errorf("the navigated frame's old content is still shown:\n%s", s.Text)
	}
	if _, err := evalIn(ctx, tab, `(() => { const f = document.createElement('iframe'); f.title = 'Added'; f.src = 'frame-controls.html?p=added'; document.body.append(f); })()`); err != nil {
		t.Fatal(err)
	}
	snap(`iframe "Added"`, `button "Button in added"`, `button "Button in moved"`)
	if _, err := evalIn(ctx, tab, `(() => { const s = document.createElement('span'); s.textContent = 'Late listener'; s.addEventListener('click', () => {}); document.body.append(s); })()`); err != nil {
		t.Fatal(err)
	}
	snap(`clickable "Late listener"`)
	url := shared.srv.URL("/hard/menu.html")
	if _, err := evalIn(ctx, tab, `location.href = `+strconvQuote(url)); err != nil {
		t.Fatal(err)
	}
	s = snap(`clickable "Plain clickable"`, `tab "Day"`)
	if strings.Contains(s.Text, "iframe") {
		t.Errorf("frames of the previous page are still shown:\n%s", s.Text)
	}
	// history.pushState: the same document at a new URL (a results page's Next, a router)
	if _, err := evalIn(ctx, tab, `history.pushState(null, '', '?page=2'), true`); err != nil {
		t.Fatal(err)
	}
	if s = snap(`tab "Day"`); s.URL != url+"?page=2" {
		t.Errorf("after pushState the snapshot's URL is %s, want %s?page=2", s.URL, url)
	}
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// countingTransport is a CDP transport over a WebSocket that records the methods of the
// commands it writes.
type countingTransport struct {
	c       *websocket.Conn
	mu      sync.Mutex
	methods []string
}

func (c *countingTransport) Read(ctx context.Context) ([]byte, error) {
	_, b, err := c.c.Read(ctx)
	return b, err
}

func (c *countingTransport) Write(ctx context.Context, b []byte) error {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(b, &m)
	c.mu.Lock()
	c.methods = append(c.methods, m.Method)
	c.mu.Unlock()
	return c.c.Write(ctx, websocket.MessageText, b)
}

func (c *countingTransport) Close() error { return c.c.CloseNow() }

// take returns the methods written since the last take.
func (c *countingTransport) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.methods
	c.methods = nil
	return m
}

// TestInPageOneCallPerFrame checks that a snapshot of a page left alone since the previous one
// sends one command per frame (the walk; no listener lookup, frame list, iframe owner or
// closed shadow root lookup), hidden iframes and closed shadow roots included, and that a
// change in the page brings the lookups back.
func TestInPageOneCallPerFrame(t *testing.T) {
	b, _ := browser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, b.WSURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(cdpclient.ReadLimit)
	ct := &countingTransport{c: conn}
	c := cdpclient.New(ct)
	defer c.Close()
	for _, tc := range []struct {
		path   string
		frames int
		setup  string // run first (and waited for)
	}{
		{path: "/hard/combobox.html", frames: 1},
		{path: "/hard/closed.html", frames: 1},
		{path: "/hard/frames.html", frames: 3},
		{path: "/hard/frames.html", frames: 4, setup: `new Promise((done) => { const f = document.createElement('iframe'); f.style.display = 'none'; f.onload = () => done(true); f.src = 'frame-controls.html?p=hidden'; document.body.append(f); })`},
	} {
		t.Run(strings.TrimPrefix(tc.path, "/")+fmt.Sprint(tc.frames), func(t *testing.T) {
			tab := openTab(t, ctx, tc.path)
			if tc.setup != "" {
				if _, err := evalIn(ctx, tab, tc.setup); err != nil {
					t.Fatal(err)
				}
			}
			st, err := Attach(ctx, c, tab.TargetID())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close(context.Background())
			// the first snapshots list the frames, create the worlds, look the listeners and
			// owners up; objects they used are released in the background
			for range 3 {
				if _, err := st.Snapshot(ctx, Options{}); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(300 * time.Millisecond)
			ct.take()
			s, err := st.Snapshot(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sent := ct.take()
			if len(sent) != tc.frames || slices.ContainsFunc(sent, func(m string) bool { return m != "Runtime.callFunctionOn" }) {
				t.Errorf("a snapshot of a page left alone sent %v, want %d Runtime.callFunctionOn (one per frame)", sent, tc.frames)
			}
			// a change in the page: the listeners are looked up again
			if _, err := evalIn(ctx, tab, `document.body.setAttribute('data-changed', '1'), true`); err != nil {
				t.Fatal(err)
			}
			ct.take()
			again, err := st.Snapshot(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if sent := ct.take(); !slices.Contains(sent, "DOMDebugger.getEventListeners") {
				t.Errorf("a snapshot after a change in the page sent %v, want a listener lookup", sent)
			}
			if again.Text != s.Text {
				t.Errorf("an attribute no one reads changed the outline:\n%s\n---\n%s", s.Text, again.Text)
			}
		})
	}
}

// TestInPageLateListener checks that a click listener that a script adds to an element already
// on the page makes it clickable in the next snapshot when the page changed with it, and within
// listenerMaxAge when nothing else changed (no mutation, load or input tells of it).
func TestInPageLateListener(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tab := openTab(t, ctx, "/hard/combobox.html")
	add := func(id, text string) {
		t.Helper()
		if _, err := evalIn(ctx, tab, `(() => { const s = document.createElement('span'); s.id = '`+id+`'; s.textContent = '`+text+`'; document.body.append(s); return true })()`); err != nil {
			t.Fatal(err)
		}
	}
	snap := func() *Snapshot {
		t.Helper()
		s, err := tab.Snapshot(ctx, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	add("with-change", "Listener with a change")
	add("alone", "Listener alone")
	for _, s := range []*Snapshot{snap(), snap()} {
		if strings.Contains(s.Text, "clickable") {
			t.Fatalf("clickables before any listener:\n%s", s.Text)
		}
	}
	// a listener, then a change in the page (a framework renders and wires up)
	if _, err := evalIn(ctx, tab, `(() => { const s = document.getElementById('with-change'); s.addEventListener('click', () => {}); s.className = 'wired'; return true })()`); err != nil {
		t.Fatal(err)
	}
	if s := snap(); !strings.Contains(s.Text, `clickable "Listener with a change"`) {
		t.Errorf("a listener added with a change in the page is not in the next snapshot:\n%s", s.Text)
	}
	// a listener alone
	if _, err := evalIn(ctx, tab, `document.getElementById('alone').addEventListener('click', () => {}), true`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for {
		s := snap()
		if strings.Contains(s.Text, `clickable "Listener alone"`) {
			break
		}
		if time.Since(start) > listenerMaxAge+2*time.Second {
			t.Fatalf("a listener added alone is not in a snapshot after %v:\n%s", time.Since(start), s.Text)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestProbe checks that Probe runs its function on the ref's element: in one call in the
// walker's world for an unchanged element (no main-world object made), in an out-of-process
// frame's own session, on the re-rendered twin of a replaced element and with the
// accessibility-tree builder (both resolved as Resolve does), and that it refuses a removed
// element with ErrGone.
func TestProbe(t *testing.T) {
	const testid = "function(suffix) { return this.getAttribute('data-testid') + suffix }"
	for _, tc := range []struct {
		name    string
		button  string
		inPage  bool
		change  string // run in the main frame between the snapshot and the probe
		want    string // "" when the probe must fail with ErrGone
		resolve bool   // resolved as Resolve does: a main-world object
	}{
		{"unchanged", "Top button", true, "", "top-btn!", false},
		{"cross-origin frame", "Button in cross", true, "", "cross-btn!", false},
		{"re-rendered", "Top button", true, "const b = document.querySelector('[data-testid=top-btn]'); b.replaceWith(b.cloneNode(true))", "top-btn!", true},
		{"removed", "Top button", true, "document.querySelector('[data-testid=top-btn]').remove()", "", false},
		{"accessibility tree", "Top button", false, "", "top-btn!", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tab := openTab(t, ctx, "/hard/frames.html")
			tab.UseInPage(tc.inPage)
			s, err := tab.Snapshot(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ref := refOn(t, s.Text, `button "`+tc.button+`"`)
			if tc.change != "" {
				if err := tab.Client().Call(ctx, tab.Session(), "Runtime.evaluate", map[string]any{"expression": tc.change}, nil); err != nil {
					t.Fatal(err)
				}
			}
			el, raw, err := tab.Probe(ctx, ref, testid, "!")
			if tc.want == "" {
				if !errors.Is(err, ErrGone) {
					t.Fatalf("probe of a removed element: %v, want ErrGone", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Release(ctx, el)
			var got string
			if err := json.Unmarshal(raw, &got); err != nil || got != tc.want {
				t.Fatalf("probe answered %s (%v), want %q", raw, err, tc.want)
			}
			if resolved := el.ObjectID != ""; resolved != tc.resolve {
				t.Errorf("main-world object made: %v, want %v", resolved, tc.resolve)
			}
			if inCross := el.Frame.Session != tab.Session(); inCross != (tc.button == "Button in cross") {
				t.Errorf("element's session %q (the tab's is %q)", el.Frame.Session, tab.Session())
			}
		})
	}
}
