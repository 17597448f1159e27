package conventions

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// errTextRules are the ways of matching an error by its text; outside tests, errors carry their
// meaning in sentinel and typed errors (errors.Is, errors.As) and their text is for people.
var errTextRules = []struct {
	what string
	re   *regexp.Regexp
}{
	{"matches an error's text with the strings package", regexp.MustCompile(`strings\.(Contains|ContainsAny|HasPrefix|HasSuffix|EqualFold|Index|LastIndex|Cut|CutPrefix|CutSuffix|Count)\([^;{]*\.Error\(\)`)},
	{"matches an error's text with a regexp", regexp.MustCompile(`\.(Match|MatchString|FindString|FindStringSubmatch|FindStringIndex|FindAllString)\([^;{]*\.Error\(\)`)},
	{"compares an error's text", regexp.MustCompile(`\.Error\(\)\s*(==|!=)|(==|!=)\s*[\w.()]*\.Error\(\)`)},
	{"switches on an error's text", regexp.MustCompile(`switch\s+[\w.()]*\.Error\(\)`)},
}

// TestNoErrorMatchedByText fails when a non-test Go file matches an error by its text
// (issue 15, item 3); use a sentinel (errors.Is) or a typed error (errors.As) instead.
func TestNoErrorMatchedByText(t *testing.T) {
	walkSources(t, func(rel, path string) error {
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			for _, r := range errTextRules {
				if r.re.MatchString(line) {
					t.Errorf("%s:%d %s (use errors.Is with a sentinel or errors.As with a typed error): %s", rel, i+1, r.what, strings.TrimSpace(line))
				}
			}
		}
		return nil
	})
}

// walkSources calls visit for every non-test Go file of the repository (rel: its slash path
// from the root), outside node_modules, testdata and hidden folders, and fails the test when
// the walk fails or finds too few files to be the repository.
func walkSources(t *testing.T, visit func(rel, path string) error) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		return visit(rel, path)
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d Go files checked under %s: the walk is broken", checked, root)
	}
}

// TestErrTextRulesCatch: each rule catches the forms it is for and lets ordinary code be.
func TestErrTextRulesCatch(t *testing.T) {
	for _, tc := range []struct {
		line string
		bad  bool
	}{
		{`if err != nil && !strings.Contains(err.Error(), "nothing was recorded") {`, true},
		{`if a.opts.ModelError != nil && !strings.Contains(msg, a.opts.ModelError.Error()) {`, true},
		{`if !errors.As(err, &te) && !yamlLineRE.MatchString(err.Error()) {`, true},
		{`if strings.HasPrefix(err.Error(), "listen") {`, true},
		{`if err.Error() == "EOF" {`, true},
		{`switch err.Error() {`, true},
		{`if errors.Is(err, syscall.EADDRINUSE) {`, false},
		{`return fmt.Errorf("stop: %s", err.Error())`, false},
		{`r.fail(codeInvalidParams, "Invalid parameters: "+err.Error())`, false},
		{`if err != nil && !errors.Is(err, ErrNothingRecorded) {`, false},
		{`case strings.Contains(m, "webm"):`, false},
	} {
		bad := false
		for _, r := range errTextRules {
			bad = bad || r.re.MatchString(tc.line)
		}
		if bad != tc.bad {
			t.Errorf("%q: flagged %v, want %v", tc.line, bad, tc.bad)
		}
	}
}
