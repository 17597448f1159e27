package e2e

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/internal/browser"
)

// TestEnvFailsWithoutPanic: when the environment cannot start (here: the browser is a program
// that exits at once, as a broken or missing install would), startEnv returns an error that says
// so and stops what it had started, instead of panicking on the way out; with no browser at all,
// the error is browser.Find's, the one message every test package prints.
func TestEnvFailsWithoutPanic(t *testing.T) {
	t.Setenv(browser.EnvChrome, "false") // /bin/false: starts, exits at once
	e, err := startEnv()
	if err == nil {
		e.close()
		t.Fatal("startEnv with a browser that exits at once: no error")
	}
	if e != nil {
		t.Errorf("startEnv failed (%v) but returned an environment", err)
	}
	t.Logf("startEnv: %v", err)

	t.Setenv(browser.EnvChrome, "/nonexistent/chromium")
	if _, err := startEnv(); !errors.Is(err, browser.ErrNotFound) {
		t.Fatalf("startEnv without a browser: %v, want browser.ErrNotFound", err)
	}
}

// envPart names the variable that runs one part of this package's tests: with
// TABRELAY_E2E_PART=K/N (1 ≤ K ≤ N), `go test ./e2e` runs the K-th of N parts, so that N
// processes run the whole package at once (`go tool task test` runs three). Each test function of
// the package's files is in exactly one part; the parts are balanced by the time each test took
// when last measured, or by its length where it was not. Unset, every test runs.
const envPart = "TABRELAY_E2E_PART"

// partSkip returns, for TABRELAY_E2E_PART=K/N, a -test.skip pattern naming the test functions
// that are not in part K ("" when the variable is unset).
func partSkip() (string, error) {
	v := os.Getenv(envPart)
	if v == "" {
		return "", nil
	}
	tests, err := testFuncs()
	if err != nil {
		return "", err
	}
	return partSkipOf(v, tests)
}

// partSkipOf is partSkip for the part v ("K/N") of tests.
func partSkipOf(v string, tests map[string]int) (string, error) {
	var k, n int
	if _, err := fmt.Sscanf(v, "%d/%d", &k, &n); err != nil || n < 1 || k < 1 || k > n || fmt.Sprintf("%d/%d", k, n) != v {
		return "", fmt.Errorf("%s=%q: want K/N with 1 ≤ K ≤ N, such as 1/2", envPart, v)
	}
	var others []string
	for name, part := range partition(tests, n) {
		if part != k-1 {
			others = append(others, regexp.QuoteMeta(name))
		}
	}
	if len(others) == 0 {
		return "", nil
	}
	slices.Sort(others)
	return "^(" + strings.Join(others, "|") + ")$", nil
}

// testFuncs returns the package's test functions, read from the _test.go files beside this
// one, each with its weight: the milliseconds it took when last measured (testdata/test-seconds.tsv),
// else the lines of the test and of every function and method of the package it calls, directly
// or not (a table-driven test of a few lines that runs a long scenario weighs what the scenario
// does), at the measured tests' median time per line.
func testFuncs() (map[string]int, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return nil, errors.New("cannot find the e2e package's folder")
	}
	files, err := filepath.Glob(filepath.Join(filepath.Dir(self), "*_test.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	decls := map[string][]*ast.FuncDecl{} // functions and methods by name (a call names no type)
	var tests []*ast.FuncDecl
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("read the tests of %s: %w", filepath.Base(path), err)
		}
		if !built(f) {
			continue // behind a build tag this binary was not built with (the suites)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			decls[fd.Name.Name] = append(decls[fd.Name.Name], fd)
			if fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") && fd.Name.Name != "TestMain" && fd.Type.Params.NumFields() == 1 {
				tests = append(tests, fd)
			}
		}
	}
	lines := func(fd *ast.FuncDecl) int { return fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1 }
	weights := map[string]int{}
	for _, test := range tests {
		seen := map[*ast.FuncDecl]bool{test: true}
		todo := []*ast.FuncDecl{test}
		for len(todo) > 0 {
			fd := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			weights[test.Name.Name] += lines(fd)
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var name string
				switch fn := call.Fun.(type) {
				case *ast.Ident:
					name = fn.Name
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				}
				for _, callee := range decls[name] {
					if !seen[callee] && !strings.HasPrefix(callee.Name.Name, "Test") {
						seen[callee] = true
						todo = append(todo, callee)
					}
				}
				return true
			})
		}
	}
	return timed(weights, filepath.Join(filepath.Dir(self), "testdata", "test-seconds.tsv")), nil
}

// built reports whether a file's //go:build line, if any, holds with no tags set: the test
// binary of go tool task test is built with none.
func built(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if expr, err := constraint.Parse(c.Text); err == nil {
				return expr.Eval(func(tag string) bool { return tag == runtime.GOOS || tag == runtime.GOARCH })
			}
		}
	}
	return true
}

// timed turns the tests' weights in lines into milliseconds: a test measured in the file at path
// (name, tab, seconds: scripts/test-seconds.sh writes it) weighs what it took, one not measured
// its lines at the median milliseconds per line of the measured ones. Without the file, or with
// nothing in it, the lines stand.
func timed(lines map[string]int, path string) map[string]int {
	data, err := os.ReadFile(path)
	if err != nil {
		return lines
	}
	ms := map[string]int{}
	var perLine []float64
	for _, l := range strings.Split(string(data), "\n") {
		name, secs, ok := strings.Cut(l, "\t")
		f, err := strconv.ParseFloat(strings.TrimSpace(secs), 64)
		if !ok || strings.HasPrefix(l, "#") || err != nil || lines[name] == 0 {
			continue
		}
		ms[name] = max(1, int(f*1000))
		perLine = append(perLine, f*1000/float64(lines[name]))
	}
	if len(perLine) == 0 {
		return lines
	}
	slices.Sort(perLine)
	rate := perLine[len(perLine)/2]
	out := map[string]int{}
	for name, n := range lines {
		if w, ok := ms[name]; ok {
			out[name] = w
		} else {
			out[name] = max(1, int(float64(n)*rate))
		}
	}
	return out
}

// partition puts each test in one of n parts (0 … n-1), the longest first, each into the part
// with the least so far (ties: the lowest part), so the parts are about as long.
func partition(tests map[string]int, n int) map[string]int {
	names := slices.Collect(maps.Keys(tests))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(tests[b], tests[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	load := make([]int, n)
	out := map[string]int{}
	for _, name := range names {
		p := slices.Index(load, slices.Min(load))
		out[name] = p
		load[p] += tests[name]
	}
	return out
}

// selectPart restricts the run to this process's part (TABRELAY_E2E_PART), through -test.skip.
func selectPart() error {
	skip, err := partSkip()
	if err != nil || skip == "" {
		return err
	}
	if f := flag.Lookup("test.skip"); f == nil || f.Value.String() != "" {
		return fmt.Errorf("%s cannot be combined with -skip: use one or the other", envPart)
	}
	return flag.Set("test.skip", skip)
}

// TestPartsCoverEveryTest: for 1 to 4 parts, each test function is in exactly one part, every
// part is used, and the parts' weights are within the heaviest test of each other.
func TestPartsCoverEveryTest(t *testing.T) {
	tests, err := testFuncs()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tests["TestPartsCoverEveryTest"]; !ok || len(tests) < 10 {
		t.Fatalf("found %d test functions, not this one: %v", len(tests), tests)
	}
	longest := slices.Max(slices.Collect(maps.Values(tests)))
	for n := 1; n <= 4; n++ {
		parts := partition(tests, n)
		load := make([]int, n)
		for name, p := range parts {
			if p < 0 || p >= n {
				t.Fatalf("%d parts: %s in part %d", n, name, p)
			}
			load[p] += tests[name]
		}
		if len(parts) != len(tests) || slices.Min(load) == 0 || slices.Max(load)-slices.Min(load) > longest {
			t.Errorf("%d parts: %d of %d tests placed, weight per part %v", n, len(parts), len(tests), load)
		}
		t.Logf("%d parts: weight per part %v", n, load)
		// the skip patterns of the parts leave each test to exactly one of them
		runs := map[string]int{}
		for k := 1; k <= n; k++ {
			skip, err := partSkipOf(fmt.Sprintf("%d/%d", k, n), tests)
			if err != nil {
				t.Fatal(err)
			}
			re := regexp.MustCompile(skip)
			for name := range tests {
				if skip == "" || !re.MatchString(name) {
					runs[name]++
				}
			}
		}
		for name := range tests {
			if runs[name] != 1 {
				t.Errorf("%d parts: %s runs in %d of them", n, name, runs[name])
			}
		}
	}
	for _, bad := range []string{"0/2", "3/2", "1", "a/b", "1/2x", "1/0"} {
		if _, err := partSkipOf(bad, tests); err == nil {
			t.Errorf("%s=%q: no error", envPart, bad)
		}
	}
}
