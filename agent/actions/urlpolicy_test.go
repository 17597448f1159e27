package actions

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions/urlpolicy"
)

// TestRefusedURLsLeaveTheTab: in real Chromium, navigate and open refuse every spelling of a
// local-file, script or internal URL that Chrome's own parser would load, with an error that
// matches ErrURLNotAllowed; the tab stays on its page with the same history, and no tab opens.
func TestRefusedURLsLeaveTheTab(t *testing.T) {
	svc, _, srv := need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 90*time.Second)
	defer cancel()
	id := open(t, ctx, "/index.html")
	start := svc.targetInfo(ctx, id).URL
	var before int
	eval(t, ctx, id, "history.length", &before)
	tabsBefore, err := svc.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eval(t, ctx, id, "window.__marker = 'still here'", nil)

	for _, u := range []string{
		"file:///etc/passwd", "\x01file:///etc/passwd", "fi\tle:///etc/passwd", "FILE:///etc/passwd",
		" file:///etc/passwd", "view-source:file:///etc/passwd", "view-source:" + srv.URL("/index.html"),
		"jav\nascript:document.title='pwned'", "javascript:document.title='pwned'",
		"data:text/html,<title>pwned</title>", "chrome://version", "about:config",
	} {
		for _, a := range []Action{Do(Navigate{URL: u}), Do(Open{URL: u})} {
			kind := a.Kind
			_, err := svc.Act(ctx, id, a)
			if !errors.Is(err, ErrURLNotAllowed) {
				t.Errorf("%s %q: err = %v, want ErrURLNotAllowed", kind, u, err)
			}
		}
	}
	var marker, title string
	var after int
	eval(t, ctx, id, "window.__marker", &marker)
	eval(t, ctx, id, "document.title", &title)
	eval(t, ctx, id, "history.length", &after)
	if got := svc.targetInfo(ctx, id).URL; got != start || marker != "still here" || after != before || title == "pwned" {
		t.Fatalf("after refused URLs the tab is at %s (marker %q, history %d→%d, title %q); want it untouched at %s",
			got, marker, before, after, title, start)
	}
	tabsAfter, err := svc.Tabs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tabsAfter) != len(tabsBefore) {
		t.Fatalf("refused opens changed the tab count %d → %d", len(tabsBefore), len(tabsAfter))
	}

	// the policy's normal forms still load: a scheme-less host and a relative path
	r := act(t, ctx, id, Do(Navigate{URL: "/other.html"}))
	if r.URL != srv.URL("/other.html") {
		t.Fatalf("relative navigate went to %s, want %s", r.URL, srv.URL("/other.html"))
	}
}

// TestURLErrorSaysWhatIsAllowed: the refusal is a typed error a model can act on, raised
// before any browser call (a Service with no tabs still answers it).
func TestURLErrorSaysWhatIsAllowed(t *testing.T) {
	s := &Service{}
	_, err := s.checkURL("\x01FILE:///etc/passwd", "")
	var re *urlpolicy.RefusedError
	if !errors.Is(err, ErrURLNotAllowed) || !errors.As(err, &re) || re.Scheme != "file" {
		t.Fatalf("err = %v, want a RefusedError for file", err)
	}
	want := `not opening "FILE:///etc/passwd": file: URLs are not allowed: only http, https and about:blank pages can be opened (local files only when the server was started with file URLs allowed)`
	if err.Error() != want {
		t.Fatalf("error reads\n%s\nwant\n%s", err, want)
	}
	s.opts.AllowFileURLs = true
	if u, err := s.checkURL("\x01FILE:///etc/passwd", ""); err != nil || u != "file:///etc/passwd" {
		t.Fatalf("with AllowFileURLs: %q, %v", u, err)
	}
}
