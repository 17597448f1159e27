package snapshot

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// readingPages are saved real article pages (Readability's test set, as the bench serves them)
// with what a reader looks for first: the title, the byline, date or source line, the first
// paragraph (whole: its text between its links too).
var readingPages = []struct {
	file string
	want []string
}{
	{"v8-blog.html", []string{`heading "Outside the web: standalone WebAssembly binaries using Emscripten"`, "21 November 2019",
		"Emscripten has always focused first and foremost on compiling to the Web"}},
	{"gitlab-blog.html", []string{`heading "3 surprising findings from our 2024 Global DevSecOps Survey"`, "Dave Steer", "June 25, 2024",
		"This year, our survey revealed changes in organizations' investment priorities"}},
	{"wikipedia.html", []string{`heading "Mozilla" [level=1]`, "From Wikipedia, the free encyclopedia",
		"paragraph: Mozilla is a", "community, created in 1998 by members of", "The community is supported institutionally by the"}},
	{"wikipedia-3.html", []string{`heading "Hermitian matrix" [level=1]`, "From Wikipedia, the free encyclopedia",
		"paragraph: In mathematics, a Hermitian matrix (or self-adjoint matrix ) is a", "that is equal to its own",
		"of the element in the j -th row and i -th column, for all indices i and j :"}},
}

// TestReadingFirst: within the first outline a model reads (700 tokens) of a long article,
// the article comes first: its title, byline and date and first paragraph are in it, before
// the site's navigation and link lists.
func TestReadingFirst(t *testing.T) {
	srv := httptest.NewServer(http.FileServer(http.Dir("../e2e/bench/testdata/pages")))
	defer srv.Close()
	b, _ := browser(t)
	for _, p := range readingPages {
		t.Run(p.file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			url := srv.URL + "/" + p.file
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
			s, err := tab.Snapshot(ctx, Options{MaxTokens: 700})
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range p.want {
				if !strings.Contains(s.Text, w) {
					t.Errorf("the first outline lacks %q", w)
				}
			}
			if t.Failed() {
				t.Log(s.Text)
			}
		})
	}
}
