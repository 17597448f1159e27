package snapshot

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoPackageParsesTheOutline keeps the rendered outline text for models and people: code
// outside this package reads the page model (Snapshot.Root, Nodes, Find, Dialog, URL…), never the
// text. It walks the repository's Go files and fails on the ways the text used to be read back:
// the outline parser package, the header's dialog line, ref regexps, splitting a snapshot's
// Text into lines, and cutting the "# Title — URL" header.
func TestNoPackageParsesTheOutline(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	type rule struct {
		what    string
		re      *regexp.Regexp
		tests   bool            // also in _test.go files
		allowed map[string]bool // repository-relative files allowed, with the reason beside them
	}
	rules := []rule{
		{what: "imports the removed outline parser", re: regexp.MustCompile(`"github\.com/tabrelay/tabrelay/agent/outline"`), tests: true},
		{what: "reads the header's dialog line (use Snapshot.Dialog)", re: regexp.MustCompile(`dialog open:`)},
		{what: "matches refs in text with a regexp (use Snapshot.Find or Nodes)", re: regexp.MustCompile(`regexp\.MustCompile\(.*ref=`),
			allowed: map[string]bool{
				"cmd/tabrelay/agentcmds.go": true, // refPattern reads what a user typed ("[ref=e7]")
				"e2e/bench/snapshot.go":     true, // pwRefLine reads Playwright's aria snapshot, which is only text
				"e2e/bench/agent.go":        true, // the scripted model reads what the agent sent it, as a model does
				"e2e/standin/replay.go":     true, // the stand-in model reads the outline it was sent, as a model does
			}},
		{what: "splits a snapshot's Text into lines (use Snapshot.Nodes)", re: regexp.MustCompile(`strings\.(Split|SplitN|SplitSeq|Lines|Cut)\(\s*[\w.]*\.Text\s*,\s*"\\n"`)},
		{what: "cuts the \"# Title — URL\" header (use Snapshot.URL and Title)", re: regexp.MustCompile(`(Cut|Index|LastIndex|Split)\([^)]*" — "`)},
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "snapshot" {
				return filepath.SkipDir // the renderer's own package and its tests may read its text
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		test := strings.HasSuffix(path, "_test.go")
		for _, r := range rules {
			if test && !r.tests || r.allowed[rel] {
				continue
			}
			for i, line := range strings.Split(string(b), "\n") {
				if r.re.MatchString(line) {
					t.Errorf("%s:%d %s: %s", rel, i+1, r.what, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d Go files checked under %s: the walk is broken", checked, root)
	}
}
