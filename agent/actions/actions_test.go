package actions

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/snapshot"
)

// refFor returns the ref on the line of s that contains needle.
func refFor(t *testing.T, s *snapshot.Snapshot, needle string) string {
	t.Helper()
	re := regexp.MustCompile(`\[ref=(e\d+)\]`)
	for _, l := range strings.Split(s.Text, "\n") {
		if strings.Contains(l, needle) {
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		}
	}
	t.Fatalf("no ref for %q in\n%s", needle, s.Text)
	return ""
}

func hits(t *testing.T, ctx context.Context, id string) []string {
	t.Helper()
	var h []string
	time.Sleep(80 * time.Millisecond)
	eval(t, ctx, id, "[...new Set(window.__hits)]", &h)
	eval(t, ctx, id, "window.__hits = []", nil)
	return h
}

func TestStaleRefsAfterRerender(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/hard/rerender.html")
	s1 := snap(t, ctx, id, snapshot.Options{})
	row := refFor(t, s1, `clickable "Review code"`)
	// every node is replaced; the ref must follow the re-rendered row
	eval(t, ctx, id, "window.__rerender(); window.__hits = []", nil)
	if _, err := svc.Act(ctx, id, Do(Click{Ref: row})); err != nil {
		t.Fatal(err)
	}
	if h := hits(t, ctx, id); len(h) != 1 || h[0] != "row-review-code" {
		t.Fatalf("click on re-rendered %s hit %v", row, h)
	}
	// a new snapshot keeps the ref of the same logical element
	eval(t, ctx, id, "window.__rerender()", nil)
	s2 := snap(t, ctx, id, snapshot.Options{})
	if got := refFor(t, s2, `clickable "Review code"`); got != row {
		t.Fatalf("ref changed across re-render: %s -> %s\n%s", row, got, s2.Text)
	}
	// the element goes away: clear error, no other element hit
	eval(t, ctx, id, "state.items = state.items.filter(i => i !== 'Review code'); window.__rerender(); window.__hits = []", nil)
	_, err := svc.Act(ctx, id, Do(Click{Ref: row}))
	if !errors.Is(err, snapshot.ErrGone) || !strings.Contains(err.Error(), row+` (clickable "Review code") is gone: the page changed; take a new snapshot`) {
		t.Fatalf("want gone error, got %v", err)
	}
	if h := hits(t, ctx, id); len(h) != 0 {
		t.Fatalf("a stale ref hit %v", h)
	}
	// same role+name but a different count of twins (Done buttons): refuse rather than guess
	done := refFor(t, s2, `button "Done"`)
	eval(t, ctx, id, "state.items.push('New one'); window.__rerender()", nil)
	if _, err := svc.Act(ctx, id, Do(Click{Ref: done})); err == nil {
		if h := hits(t, ctx, id); len(h) != 1 || h[0] != "done-write-report" {
			t.Fatalf("stale Done ref hit %v", h)
		}
	} else if !errors.Is(err, snapshot.ErrGone) || !strings.Contains(err.Error(), "take a new snapshot") {
		t.Fatalf("stale Done ref: want the element or a clear 'gone' error, got %v", err)
	} else if h := hits(t, ctx, id); len(h) != 0 {
		t.Fatalf("a refused stale ref still hit %v", h)
	}
	// unknown refs
	if _, err := svc.Act(ctx, id, Do(Click{Ref: "e999"})); !errors.Is(err, snapshot.ErrUnknownRef) {
		t.Fatalf("want unknown ref, got %v", err)
	}
}

func TestDuplicatesAndRemoval(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/hard/dupes.html")
	snap(t, ctx, id, snapshot.Options{})
	tab := must(svc.Tab(ctx, id))(t)
	dels, err := tab.Find(ctx, "button", "Delete")
	if err != nil || len(dels) != 8 {
		t.Fatalf("want 8 Delete buttons, got %v %v", dels, err)
	}
	// remove row 3: its ref is gone, the others still hit their own rows
	eval(t, ctx, id, "document.querySelector('[data-testid=del-3]').closest('tr').remove(); window.__hits = []", nil)
	if _, err := svc.Act(ctx, id, Do(Click{Ref: dels[2].Ref})); !errors.Is(err, snapshot.ErrGone) {
		t.Fatalf("want gone, got %v", err)
	}
	if _, err := svc.Act(ctx, id, Do(Click{Ref: dels[3].Ref})); err != nil {
		t.Fatal(err)
	}
	if h := hits(t, ctx, id); len(h) != 1 || h[0] != "del-4" {
		t.Fatalf("hit %v, want del-4", h)
	}
}

func TestFormActions(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/hard/form.html")
	s := snap(t, ctx, id, snapshot.Options{})
	value := func(tid string) string {
		var v string
		eval(t, ctx, id, "document.querySelector('[data-testid="+tid+"]').value", &v)
		return v
	}
	name := refFor(t, s, `textbox "Full name"`)
	act(t, ctx, id, Do(Type{Ref: name, Text: "Ann"}))
	act(t, ctx, id, Do(Type{Ref: name, Text: " Lee", Append: true, Slowly: true}))
	if v := value("in-text"); v != "Ann Lee" {
		t.Fatalf("name = %q", v)
	}
	act(t, ctx, id, Do(Type{Ref: name, Text: "Bob"}))
	if v := value("in-text"); v != "Bob" {
		t.Fatalf("replace: name = %q", v)
	}
	act(t, ctx, id, Do(Press{Ref: name, Key: "Control+A"}))
	act(t, ctx, id, Do(Press{Key: "Backspace"}))
	if v := value("in-text"); v != "" {
		t.Fatalf("after Control+A Backspace: %q", v)
	}
	act(t, ctx, id, Do(Fill{Fields: []Field{
		{Ref: refFor(t, s, `textbox "Email"`), Value: "a@b.c"},
		{Ref: refFor(t, s, `checkbox "Newsletter"`), Value: "true"},
		{Ref: refFor(t, s, `checkbox "Accept terms"`), Value: "false"},
		{Ref: refFor(t, s, `radio "Pro"`), Value: "true"},
		{Ref: refFor(t, s, `combobox "Country"`), Value: "Germany"},
		{Ref: refFor(t, s, `date "Birthday"`), Value: "2024-05-31"},
		{Ref: refFor(t, s, `textbox "Bio"`), Value: "line one"},
	}}))
	act(t, ctx, id, Do(Select{Ref: refFor(t, s, `listbox "Languages"`), Values: []string{"Go", "Zig"}}))
	act(t, ctx, id, Do(Click{Ref: refFor(t, s, `switch "Dark mode"`)}))
	act(t, ctx, id, Do(Click{Ref: refFor(t, s, `button "Create account"`)}))
	var result string
	eval(t, ctx, id, "document.getElementById('result').textContent", &result)
	for _, want := range []string{"email=a%40b.c", "news=on", "plan=pro", "country=de", "date=2024-05-31", "bio=line+one", "langs=Go", "langs=Zig"} {
		if !strings.Contains(result, want) {
			t.Errorf("form data %q lacks %q", result, want)
		}
	}
	if strings.Contains(result, "terms=") {
		t.Errorf("terms still checked: %q", result)
	}
	s2 := snap(t, ctx, id, snapshot.Options{})
	if !strings.Contains(s2.Text, `switch "Dark mode" [checked]`) || !strings.Contains(s2.Text, `radio "Pro" [checked]`) {
		t.Errorf("states not shown:\n%s", s2.Text)
	}
	// clear errors
	if _, err := svc.Act(ctx, id, Do(Select{Ref: refFor(t, s, `combobox "Country"`), Values: []string{"Mars"}})); err == nil || !strings.Contains(err.Error(), "France, Germany, Japan") {
		t.Errorf("bad option error: %v", err)
	}
	if _, err := svc.Act(ctx, id, Do(Click{Ref: refFor(t, s, `textbox "Disabled"`)})); err == nil || !strings.Contains(err.Error(), "is disabled") {
		t.Errorf("disabled error: %v", err)
	}
	if _, err := svc.Act(ctx, id, Do(Type{Ref: refFor(t, s, `checkbox "Newsletter"`), Text: "x"})); err == nil || !strings.Contains(err.Error(), "not a text field") {
		t.Errorf("not a text field error: %v", err)
	}
	// upload
	f := filepath.Join(t.TempDir(), "avatar.png")
	os.WriteFile(f, []byte("png!"), 0o600)
	act(t, ctx, id, Do(Upload{Ref: refFor(t, s, `button "Avatar"`), Files: []string{f}}))
	var files string
	eval(t, ctx, id, "Array.from(document.querySelector('[data-testid=in-file]').files).map(f => f.name + ':' + f.size).join()", &files)
	if files != "avatar.png:4" {
		t.Errorf("files = %q", files)
	}
}

func TestComboboxEditorAndKeys(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/hard/combobox.html")
	s := snap(t, ctx, id, snapshot.Options{})
	r, err := svc.Act(ctx, id, Do(Select{Ref: refFor(t, s, `combobox "Fruit"`), Values: []string{"Cherry"}}))
	if err != nil {
		t.Fatal(err)
	}
	var chosen string
	eval(t, ctx, id, "document.getElementById('chosen').textContent", &chosen)
	if chosen != "Cherry" {
		t.Fatalf("chosen = %q (%s)", chosen, r.Message)
	}
	// the portal listbox shows up in a snapshot while open
	svc.Act(ctx, id, Do(Click{Ref: refFor(t, s, `combobox "Fruit"`)}))
	s2 := snap(t, ctx, id, snapshot.Options{})
	if !strings.Contains(s2.Text, `listbox "Fruits"`) || !strings.Contains(s2.Text, `option "Cherry" [selected]`) {
		t.Fatalf("portal listbox missing:\n%s", s2.Text)
	}
	svc.Act(ctx, id, Do(Press{Key: "Escape"}))

	id2 := open(t, ctx, "/hard/editor.html")
	s3 := snap(t, ctx, id2, snapshot.Options{})
	body := refFor(t, s3, `textbox "Note body"`)
	if _, err := svc.Act(ctx, id2, Do(Type{Ref: body, Text: " world again", Append: true})); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Act(ctx, id2, Do(Press{Key: "Shift+Enter"})); err != nil {
		t.Fatal(err)
	}
	var count string
	eval(t, ctx, id2, "document.getElementById('count').textContent", &count)
	if count != "3" {
		t.Fatalf("word count %q", count)
	}
	s4 := snap(t, ctx, id2, snapshot.Options{})
	if !strings.Contains(s4.Text, `textbox "Note body" [multiline] [focused] [ref=`+strings.TrimPrefix(body, "")+`]: Hello world again`) {
		t.Fatalf("editor value not shown:\n%s", s4.Text)
	}
	bold := refFor(t, s4, `button "Bold"`)
	svc.Act(ctx, id2, Do(Click{Ref: bold}))
	if s5 := snap(t, ctx, id2, snapshot.Options{}); !strings.Contains(s5.Text, `button "Bold" [pressed]`) {
		t.Fatalf("pressed state not shown:\n%s", s5.Text)
	}
}

func TestPageActions(t *testing.T) {
	svc, b, srv := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 90*time.Second)
	defer cancel()
	id := open(t, ctx, "/index.html?frame="+srv.CrossURL("/frame.html"))
	s := snap(t, ctx, id, snapshot.Options{})
	// click inside the cross-origin frame through the main page's input
	act(t, ctx, id, Do(Click{Ref: refFor(t, s, `button "Frame button"`)}))
	if s2 := snap(t, ctx, id, snapshot.Options{}); !strings.Contains(s2.Text, `button "frame clicked"`) {
		t.Fatalf("frame button not clicked:\n%s", s2.Text)
	}
	act(t, ctx, id, Do(Type{Ref: refFor(t, s, `textbox "Name"`), Text: "Zed", Submit: true}))
	if r := act(t, ctx, id, Do(Wait{Text: "Zed"})); !strings.Contains(r.Message, "done waiting") || !strings.Contains(r.Message, "the text appeared") {
		t.Fatal(r.Message)
	}
	act(t, ctx, id, Do(Click{Ref: refFor(t, s, `button "Click me"`), Double: true}))
	if r := act(t, ctx, id, Do(Evaluate{Expression: "window.clicks"})); string(r.Value) != "2" {
		t.Fatalf("double click gave %s clicks", r.Value)
	}
	act(t, ctx, id, Do(Hover{Ref: refFor(t, s, `button "Click me"`)}))
	act(t, ctx, id, Do(Click{Ref: refFor(t, s, `button "Click me"`), Button: "right"}))
	if r := act(t, ctx, id, Do(Evaluate{Ref: refFor(t, s, `textbox "Name"`), Expression: "el => el.value"})); string(r.Value) != `"Zed"` {
		t.Fatalf("evaluate on ref: %s", r.Value)
	}
	if _, err := svc.Act(ctx, id, Do(Wait{Text: "never there"}).WithTimeout(1)); err == nil || !strings.Contains(err.Error(), "gave up waiting") {
		t.Fatalf("wait timeout: %v", err)
	}
	// console and network history
	act(t, ctx, id, Do(Evaluate{Expression: "console.log('hello', 42); fetch('/other.html').then(r => r.text())"}))
	testlimit.Eventually(t, 5*time.Second, "console", func() (bool, string) {
		r := act(t, ctx, id, Do(Console{}))
		return len(r.Console) != 0 && r.Console[len(r.Console)-1].Text == "hello 42", fmt.Sprintf("%+v", r.Console)
	})
	testlimit.Eventually(t, 5*time.Second, "network", func() (bool, string) {
		r := act(t, ctx, id, Do(Network{}))
		return len(r.Requests) != 0 && strings.HasSuffix(r.Requests[len(r.Requests)-1].URL, "/other.html"), fmt.Sprintf("%+v", r.Requests)
	})
	act(t, ctx, id, Do(Evaluate{Expression: "setTimeout(() => { throw new Error('boom') }, 0)"}))
	testlimit.Eventually(t, 5*time.Second, "errors", func() (bool, string) {
		r := act(t, ctx, id, Do(Errors{}))
		return len(r.Errors) != 0 && strings.Contains(r.Errors[0].Text, "boom"), fmt.Sprintf("%+v", r.Errors)
	})
	// screenshots and PDF
	png := []byte("\x89PNG")
	for _, a := range []Action{Do(Screenshot{}), Do(Screenshot{FullPage: true}), Do(Screenshot{Ref: refFor(t, s, `button "Click me"`)}), Do(Screenshot{Labels: true})} {
		r := act(t, ctx, id, a)
		if !bytes.HasPrefix(r.Data, png) || r.MIME != "image/png" {
			t.Fatalf("%+v: not a PNG", a)
		}
		if a.Params.(*Screenshot).Labels && !strings.Contains(r.Message, "ref labels") {
			t.Fatal(r.Message)
		}
	}
	if r := act(t, ctx, id, Do(Evaluate{Expression: "!!document.getElementById('__tabrelay_labels')"})); string(r.Value) != "false" {
		t.Fatal("label overlay left on the page")
	}
	if r := act(t, ctx, id, Do(PDF{})); !bytes.HasPrefix(r.Data, []byte("%PDF")) {
		t.Fatal("not a PDF")
	}
	act(t, ctx, id, Do(Resize{Width: 500, Height: 400}))
	if r := act(t, ctx, id, Do(Evaluate{Expression: "innerWidth"})); string(r.Value) != "500" {
		t.Fatalf("innerWidth %s", r.Value)
	}
	act(t, ctx, id, Do(Resize{}))
	// navigation and history
	r := act(t, ctx, id, Do(Navigate{URL: srv.URL("/other.html")}))
	if !strings.HasSuffix(r.URL, "/other.html") || r.Title != "Other page" {
		t.Fatalf("navigate: %+v", r)
	}
	if r := act(t, ctx, id, Do(Back{})); !strings.Contains(r.URL, "frame=") {
		t.Fatalf("back: %+v", r)
	}
	if r := act(t, ctx, id, Do(Forward{})); !strings.HasSuffix(r.URL, "/other.html") {
		t.Fatalf("forward: %+v", r)
	}
	act(t, ctx, id, Do(Reload{}))
	act(t, ctx, id, Do(Scroll{Direction: "down"}))
	// a click that navigates reports the new URL
	act(t, ctx, id, Do(Navigate{URL: srv.URL("/index.html")}))
	s3 := snap(t, ctx, id, snapshot.Options{})
	// tabs: open, list, focus, close
	or := act(t, ctx, id, Do(Open{URL: srv.URL("/other.html")}))
	tabs, err := svc.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tb := range tabs {
		found = found || tb.TargetID == or.TargetID
	}
	if !found {
		t.Fatalf("new tab %s not listed in %+v", or.TargetID, tabs)
	}
	if _, err := svc.Act(ctx, or.TargetID, Do(Focus{})); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Act(ctx, or.TargetID, Do(Close{})); err != nil {
		t.Fatal(err)
	}
	_ = s3
	_ = b
}

func TestDialogsAndModal(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/hard/alert.html")
	s := snap(t, ctx, id, snapshot.Options{})
	r, err := svc.Act(ctx, id, Do(Click{Ref: refFor(t, s, `button "Ask name"`)}))
	if err != nil || r.Dialog == nil || r.Dialog.Type != "prompt" {
		t.Fatalf("click: %+v %v", r, err)
	}
	if s2 := snap(t, ctx, id, snapshot.Options{}); !strings.Contains(s2.Text, `# prompt dialog open: "Your name?"`) {
		t.Fatalf("dialog not in header:\n%s", s2.Text)
	}
	if _, err := svc.Act(ctx, id, Do(Click{Ref: "e2"})); err == nil || !strings.Contains(err.Error(), "accept or dismiss it first") {
		t.Fatalf("want dialog error, got %v", err)
	}
	if _, err := svc.Act(ctx, id, Do(Dialog{PromptText: "Kim"})); err != nil {
		t.Fatal(err)
	}
	var out string
	eval(t, ctx, id, "document.getElementById('r').textContent", &out)
	if out != "prompt Kim" {
		t.Fatalf("prompt answer %q", out)
	}
	no := false
	svc.Act(ctx, id, Do(Click{Ref: refFor(t, s, `button "Delete everything"`)}))
	if _, err := svc.Act(ctx, id, Do(Dialog{Accept: &no})); err != nil {
		t.Fatal(err)
	}
	eval(t, ctx, id, "document.getElementById('r').textContent", &out)
	if out != "confirm false" {
		t.Fatalf("confirm answer %q", out)
	}
}

// TestParallelTabs checks the per-tab queue: an action on one tab waits for the one before it
// on the same tab, and does not wait for actions on another tab.
func TestParallelTabs(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	a := open(t, ctx, "/hard/dupes.html")
	b := open(t, ctx, "/hard/menu.html")
	const hold = 5 * time.Second // long enough for a snapshot of tab b on a loaded machine
	waitDone := make(chan time.Time, 1)
	go func() {
		_, err := svc.Act(ctx, a, Do(Wait{Seconds: hold.Seconds()}))
		if err != nil {
			t.Error(err)
		}
		waitDone <- time.Now()
	}()
	for held := false; !held; { // until the wait has taken tab a's queue slot
		svc.mu.Lock()
		held = svc.tabs[a] != nil && len(svc.tabs[a].sem) == 1
		svc.mu.Unlock()
		if ctx.Err() != nil {
			t.Fatal("the wait never took tab a's queue slot")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := svc.Snapshot(ctx, b, snapshot.Options{Interactive: true}); err != nil {
		t.Fatal(err)
	}
	otherTab := time.Now()
	if _, err := svc.Snapshot(ctx, a, snapshot.Options{Interactive: true}); err != nil {
		t.Fatal(err)
	}
	sameTab := time.Now()
	waited := <-waitDone
	if !otherTab.Before(waited) {
		t.Errorf("a snapshot of tab b waited for the %v wait on tab a", hold)
	}
	if sameTab.Before(waited) {
		t.Errorf("a snapshot of tab a ran while its %v wait was still running", hold)
	}
	// many at once on both tabs: all succeed
	errs := make(chan error, 20)
	for i := 0; i < 10; i++ {
		for _, id := range []string{a, b} {
			go func() {
				_, err := svc.Snapshot(ctx, id, snapshot.Options{Interactive: true})
				errs <- err
			}()
		}
	}
	for i := 0; i < 20; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestBackgroundTabClicks: clicks, hovers and drags on tabs that are not in front (Chrome
// answers a mouse move there only after 5 s) complete, many at once across two background tabs
// and the one in front, without timing out; every click lands.
func TestBackgroundTabClicks(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	tabs := []string{open(t, ctx, "/index.html"), open(t, ctx, "/index.html"), open(t, ctx, "/index.html")}
	front := tabs[2]
	if err := svc.c.Call(ctx, "", "Target.activateTarget", map[string]any{"targetId": front}, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range tabs[:2] {
		var vis string
		eval(t, ctx, id, "document.visibilityState", &vis)
		if vis != "hidden" {
			t.Fatalf("tab %s is %q; the test needs it in the background", id, vis)
		}
	}
	refs := map[string]string{}
	for _, id := range tabs {
		refs[id] = refFor(t, snap(t, ctx, id, snapshot.Options{Interactive: true}), `button "Click me"`)
	}
	const each = 5
	errs := make(chan error, each*len(tabs)+1)
	for i := 0; i < each; i++ {
		for _, id := range tabs {
			go func() {
				_, err := svc.Act(ctx, id, Do(Click{Ref: refs[id]}))
				errs <- err
			}()
		}
	}
	go func() {
		_, err := svc.Act(ctx, tabs[0], Do(Hover{Ref: refs[tabs[0]]}))
		errs <- err
	}()
	for i := 0; i < cap(errs); i++ {
		if err := <-errs; err != nil {
			t.Fatalf("an action on a background tab: %v", err)
		}
	}
	for _, id := range tabs {
		var clicks int
		eval(t, ctx, id, "window.clicks", &clicks)
		if clicks != each {
			t.Errorf("tab %s counted %d clicks, want %d", id, clicks, each)
		}
	}
}

// TestGateReadHandedToClick: an agent's click (judged by the gate, which reads the element)
// hits its element once, and the element the gate resolved is handed on to the click, none
// left held once the action ends.
func TestGateReadHandedToClick(t *testing.T) {
	svc, _, _ := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 60*time.Second)
	defer cancel()
	id := open(t, ctx, "/hard/rerender.html")
	row := refFor(t, snap(t, ctx, id, snapshot.Options{}), `clickable "Review code"`)
	eval(t, ctx, id, "window.__hits = []", nil)
	agent := gate.With(ctx, gate.Request{Who: gate.Agent, Goal: "review the code", Grants: gate.NewGrants()})
	if _, err := svc.Act(agent, id, Do(Click{Ref: row})); err != nil {
		t.Fatal(err)
	}
	if h := hits(t, ctx, id); len(h) != 1 || h[0] != "row-review-code" {
		t.Fatalf("the agent's click on %s hit %v", row, h)
	}
	svc.mu.Lock()
	ts := svc.tabs[id]
	svc.mu.Unlock()
	if ts == nil || len(ts.held) != 0 {
		t.Fatalf("elements still held after the action: %v", ts)
	}
}
