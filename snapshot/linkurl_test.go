package snapshot

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// linkHrefs are href attributes whose resolution the walker does itself (plain fragments and
// paths) or leaves to the browser's URL parser (everything else), several of them at the edge
// between the two.
var linkHrefs = []string{"#", "#top", "#a b", "#x#y", "#%zz", "#é", "#/../x", "#?/", "/", "/wiki/File:Buggie.svg", "/a?b#c",
	"/a?x='1", "/a/../b", "/a/%2e%2E/b", "/a/.", "/.hidden", "/..x", "/é", `/a\b`, "/A:B@C", "/a;b=c", "/%", "/~u/",
	"//other.example/x", "?q", "rel/x", "", " /x", "/x ", "javascript:void(0)", "mailto:a@b.example", "HTTP://Example.COM/a/../b"}

// TestInPageLinkURLs: a link's URL in the outline is the browser's own el.href, for every kind
// of reference, against the page's URL and against a <base> element with userinfo and a port.
func TestInPageLinkURLs(t *testing.T) {
	var links strings.Builder
	for i, h := range linkHrefs {
		fmt.Fprintf(&links, "<p><a href=\"%s\">link%d</a></p>\n", html.EscapeString(h), i)
	}
	pages := map[string]string{
		"/plain.html": "<!doctype html><title>links</title>" + links.String(),
		"/based.html": `<!doctype html><title>links</title><base href="https://u:p@other.example:8443/dir/sub/page?x#y">` + links.String(),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	b, _ := browser(t)
	for path := range pages {
		t.Run(path, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			url := srv.URL + path + "?q=1#frag"
			id, err := b.NewTab(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer b.CloseTab(context.Background(), id)
			tab, err := Attach(ctx, b.Client, id)
			if err != nil {
				t.Fatal(err)
			}
			defer tab.Close(context.Background())
			waitReady(t, ctx, tab, url)
			got, err := evalIn(ctx, tab, `JSON.stringify([...document.querySelectorAll('a')].map((a) => [a.textContent, a.href]))`)
			if err != nil {
				t.Fatal(err)
			}
			var pairs [][2]string
			if err := json.Unmarshal([]byte(got), &pairs); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for _, p := range pairs {
				want[p[0]] = p[1]
			}
			s, err := tab.Snapshot(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			seen := 0
			for _, n := range s.Nodes() {
				w, ok := want[n.Name]
				if n.Role != "link" || !ok {
					continue
				}
				seen++
				if n.URL != w {
					t.Errorf("%s: URL %q, the browser's el.href is %q", n.Name, n.URL, w)
				}
			}
			if seen != len(linkHrefs) {
				t.Errorf("%d of %d links in the outline", seen, len(linkHrefs))
			}
		})
	}
}
