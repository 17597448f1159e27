//go:build suites

package e2e

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/relay"
)

// chromedp's own tests (the package github.com/chromedp/chromedp, at the version go.mod
// requires), unmodified, from the module cache, against Chrome's own endpoint and against
// tabrelay, side by side in the same browser. The suite starts its browsers itself, through the
// binary CHROMEDP_TEST_RUNNER names: here this test binary, as a stand-in browser (see
// standin_browser_test.go) that forwards the suite's pipe or socket to the endpoint under test.

const chromedpModule = "github.com/chromedp/chromedp"

// chromedpSuiteRun narrows the suite to the tests a regular expression matches (to reproduce
// one difference); the suite's CI run leaves it empty.
var chromedpSuiteRun = flag.String("chromedp-run", "", "run only the tests of chromedp's suite that this regular expression matches")

// chromedpNotRun names the suite's tests that run in neither: ExampleFullScreenshot starts a
// browser of its own (not through CHROMEDP_TEST_RUNNER) and loads https://google.com in it,
// which needs the network; its log.Fatal then ends the whole suite.
const chromedpNotRun = "^ExampleFullScreenshot$"

// chromedpRefusedOnPurpose lists the suite's tests tabrelay fails on purpose, with the reason
// (the README's compatibility table says the same).
var chromedpRefusedOnPurpose = map[string]string{
	"TestBrowserContext":                                    refusedOnPurpose[scenarioBrowserContext],
	"TestWithNewWindow/NewBrowserContext":                   refusedOnPurpose[scenarioBrowserContext],
	"TestWithNewWindow/ExistingBrowserContext":              refusedOnPurpose[scenarioBrowserContext],
	"TestWaitReadyAfterFreshNavigation/data_url_html":       dataURLAborted,
	"TestWaitReadyAfterFreshNavigation/data_url_empty_html": dataURLAborted,
	"TestWaitReadyAfterFreshNavigation/data_url_body":       dataURLAborted,
	"TestWaitReadyAfterFreshNavigation/search":              dataURLAborted,
}

// chromedpDiffers lists the suite's tests that pass on Chrome's endpoint and fail through
// tabrelay for a cause not fixed yet, with the cause as far as it is known. Like a refusal on
// purpose, a listed test must fail (the comparison fails when one passes: take it off the list).
var chromedpDiffers = map[string]string{}

// chromedpFailing is every test the comparison expects to fail through tabrelay: the refusals
// on purpose and the differences listed.
func chromedpFailing() map[string]string {
	m := maps.Clone(chromedpRefusedOnPurpose)
	maps.Copy(m, chromedpDiffers)
	return m
}

// dataURLAborted is why tabrelay fails chromedp's tests that navigate a tab to a data: URL.
const dataURLAborted = "Chrome aborts Page.navigate to a data: URL sent through an extension's debugger (net::ERR_ABORTED, Chrome's own answer, as for a page that opens one)"

// TestChromedpSuite: every test of chromedp's own suite that passes on Chrome's own endpoint
// passes on tabrelay (refusals on purpose aside, listed in chromedpRefusedOnPurpose), in the same
// browser. The suite skips some tests by itself where the machine lacks what they need (a
// display, say), and some of its tests check how the allocator starts and watches a Chrome
// process (its output, its environment): those prove nothing about an endpoint and are only
// listed when they fail on Chrome's.
//
// It builds only with the suites tag (`go tool task suites`, which CI runs after the other
// tests): on a 2-core machine it takes minutes (two browsers, 660 tests each), so `go test ./...`
// does not see it at all.
func TestChromedpSuite(t *testing.T) {
	requireChromium(t)
	checkChromedpReadme(t)
	bin, dir := buildChromedpSuite(t)
	// Each endpoint gets a browser of its own, and both run at once: a suite that lists or
	// counts the browser's tabs sees only its own.
	var chrome, relayed map[string]suiteResult
	t.Run("endpoints", func(t *testing.T) {
		t.Run("chrome", func(t *testing.T) {
			t.Parallel()
			e := privateBrowser(t, func(o *browser.Options) { o.DebuggingPort = true })
			if e.b.ControlURL == "" {
				t.Fatal("the browser has no DevTools port of its own")
			}
			// the same first page as tabrelay's browser: the suite's first contexts attach to it
			e.share(t, e.pageURL("chromedp-suite"))
			start := time.Now()
			chrome = runChromedpSuite(t, bin, dir, e.b.ControlURL, "")
			t.Logf("Chrome's endpoint: %d tests in %v", len(chrome), time.Since(start).Round(time.Millisecond))
		})
		t.Run("tabrelay", func(t *testing.T) {
			t.Parallel()
			e := privateWith(t, relay.HubOptions{})
			// The first context of a browser the suite starts attaches to the browser's first page.
			e.share(t, e.pageURL("chromedp-suite"))
			start := time.Now()
			relayed = runChromedpSuite(t, bin, dir, e.cdpURL(), e.token())
			t.Logf("tabrelay: %d tests in %v", len(relayed), time.Since(start).Round(time.Millisecond))
			// why tabs stopped being shared while the suite ran (a test's "target detached")
			for _, l := range e.relayLog.entries("tab no longer shared", nil) {
				t.Logf("tabrelay: tab %v no longer shared at %v: %v", l["target"], l["time"], l["reason"])
			}
		})
	})
	if chrome == nil || relayed == nil {
		t.FailNow()
	}
	compareSuite(t, chrome, relayed, chromedpFailing(), true)
}

// buildChromedpSuite compiles chromedp's tests once (from the module cache, as `go test` would)
// and returns the binary and the package's directory, where the suite finds its testdata.
func buildChromedpSuite(t *testing.T) (bin, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(5*time.Minute))
	defer cancel()
	out, err := exec.CommandContext(ctx, goTool(t), "list", "-m", "-f", "{{.Dir}}", chromedpModule).Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("find %s in the module cache: %v", chromedpModule, err)
	}
	dir = strings.TrimSpace(string(out))
	bin = filepath.Join(t.TempDir(), "chromedp.test")
	if out, err := exec.CommandContext(ctx, goTool(t), "test", "-c", "-o", bin, chromedpModule).CombinedOutput(); err != nil {
		t.Fatalf("build %s's tests: %v\n%s", chromedpModule, err, out)
	}
	return bin, dir
}

// runChromedpSuite runs the suite with its browsers standing in for the endpoint (adding the
// secret when token is set) and returns each test's result.
func runChromedpSuite(t *testing.T, bin, dir, endpoint, token string) map[string]suiteResult {
	t.Helper()
	out := map[string]suiteResult{}
	if *chromedpSuiteRun != "" {
		runChromedpTests(t, bin, dir, endpoint, token, out, "-test.run="+*chromedpSuiteRun, "-test.skip="+chromedpNotRun)
		return out
	}
	runChromedpTests(t, bin, dir, endpoint, token, out, "-test.skip="+chromedpNotRun)
	return out
}

// runChromedpTests runs the suite's binary once with the given -test.run/-test.skip arguments
// and adds each test's result to out.
func runChromedpTests(t *testing.T, bin, dir, endpoint, token string, out map[string]suiteResult, selection ...string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("the stand-in browser is this test binary: %v", err)
	}
	limit := testlimit.Scale(4 * time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), limit+time.Minute)
	defer cancel()
	args := append([]string{"-test.v", "-test.count=1", "-test.timeout=" + limit.String(), "-test.parallel=4"}, selection...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHROMEDP_TEST_RUNNER="+self)
	cmd.Env = append(cmd.Env, standinEnv(endpoint, token)...)
	text, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run %s's tests: %v\n%s", chromedpModule, err, text)
	}
	if ctx.Err() != nil {
		t.Errorf("%s's tests did not finish in %v:\n%s", chromedpModule, limit, text)
	}
	// the whole output, to read what a test was doing when the suite hung or ended early
	if f, err := os.CreateTemp("", "chromedp-suite-*.log"); err == nil {
		_, _ = f.Write(text)
		_ = f.Close()
		t.Logf("%s's whole output on %s: %s", chromedpModule, endpoint, f.Name())
	}
	n := len(out)
	parseTestOutput(text, "", out)
	if len(out) == n {
		t.Errorf("%s's tests (%s) ran no test (exit %v):\n%s", chromedpModule, strings.Join(selection, " "), err, text)
	}
	if ee != nil && !bytes.HasSuffix(bytes.TrimSpace(text), []byte("FAIL")) {
		// it ended before its summary (a panic, say): what it printed last says why, and the
		// tests still running when the suite's time ran out are named after "panic: test timed out"
		lines := strings.Split(strings.TrimSpace(string(text)), "\n")
		t.Errorf("%s's tests on %s ended early (%v)%s; their last lines:\n%s", chromedpModule, endpoint, err, stillRunning(lines), strings.Join(lines[max(0, len(lines)-40):], "\n"))
	}
	t.Logf("%s's tests (%s) on %s: %d lines of output", chromedpModule, strings.Join(selection, " "), endpoint, strings.Count(string(text), "\n"))
}

// stillRunning returns, from a test binary's output, the tests Go's -test.timeout panic names as
// still running ("" when it did not time out).
func stillRunning(lines []string) string {
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "panic: test timed out") })
	if i < 0 {
		return ""
	}
	var running []string
	for _, l := range lines[i+1:] {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "goroutine ") {
			break
		}
		running = append(running, l)
	}
	return ": " + strings.Join(append([]string{lines[i]}, running...), "; ")
}

// standinEnv is the environment a suite process needs so that the browsers it starts through
// this test binary forward to endpoint.
func standinEnv(endpoint, token string) []string {
	return []string{standinEndpointEnv + "=" + endpoint, standinTokenEnv + "=" + token}
}

// checkChromedpReadme fails t unless README.md's table of the chromedp tests tabrelay refuses
// names each test of chromedpRefusedOnPurpose (a subtest by its last name, under its test), and
// names no other test.
func checkChromedpReadme(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| chromedp test | why tabrelay fails it |")
	if !ok {
		t.Fatal("README.md has no table of the chromedp tests tabrelay refuses")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	names := map[string]bool{} // what the table puts in backticks, and the last name of each
	for i, n := range strings.Split(table, "`") {
		if i%2 == 1 && !strings.ContainsAny(n, " :.") {
			names[n] = true
			names[n[strings.LastIndexByte(n, '/')+1:]] = true
		}
	}
	wanted := map[string]bool{}
	for n := range chromedpRefusedOnPurpose {
		last := n[strings.LastIndexByte(n, '/')+1:]
		wanted[last] = true
		if !names[last] {
			t.Errorf("README.md's table of refused chromedp tests does not name %s", n)
		}
	}
	for n := range names {
		n = n[strings.LastIndexByte(n, '/')+1:]
		if strings.HasPrefix(n, "Test") && !wanted[n] && !slices.ContainsFunc(slices.Collect(maps.Keys(chromedpRefusedOnPurpose)), func(k string) bool { return strings.HasPrefix(k, n+"/") }) {
			t.Errorf("README.md's table of refused chromedp tests names %s, which the test does not list as refused", n)
		}
	}
}
