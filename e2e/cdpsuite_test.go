package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
)

// mafredri/cdp's own live-browser tests (`go test -browser` in its module: the packages
// github.com/mafredri/cdp and github.com/mafredri/cdp/session, with their runnable examples),
// unmodified, from the module cache, against Chrome's own endpoint and against tabrelay, side by
// side. The suite dials http://localhost:9222 (hard-coded in its examples and its test helper);
// a forwarder on that port stands for the endpoint under test, adding the secret tabrelay needs
// on every request and socket, as a user configures it. One test navigates to
// https://www.google.com, an example to https://github.com/mafredri/cdp: the browser resolves
// those names to a local page titled "Google" (no network here).

// mafrediSuite lists the packages of the suite and the flags that turn on their browser tests.
var mafrediSuite = []struct{ pkg, flags string }{
	{"github.com/mafredri/cdp", "-browser -rdp 9222"},
	{"github.com/mafredri/cdp/session", "-browser"},
}

// mafrediRefusedOnPurpose lists the suite's tests tabrelay fails on purpose, with the reason
// (the README's compatibility table says the same).
var mafrediRefusedOnPurpose = map[string]string{
	"cdp.Example_incognito": refusedOnPurpose[scenarioBrowserContext],
}

// suiteResult is one test of the suite on one endpoint.
type suiteResult struct {
	status string // pass, fail, skip
	output string // the test's output when it failed
}

// TestMafrediCDPSuite: every test of mafredri/cdp's suite that passes on Chrome's own endpoint
// passes on tabrelay (refusals on purpose aside, listed in mafrediRefusedOnPurpose), in the same
// browser; the suite skips none of its browser tests.
func TestMafrediCDPSuite(t *testing.T) {
	requireChromium(t)
	google := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!doctype html><title>Google</title><p>a local stand-in")
	}))
	t.Cleanup(google.Close)
	e := privateBrowser(t, func(o *browser.Options) {
		o.DebuggingPort = true // Chrome's own endpoint of the same browser
		local := strings.TrimPrefix(google.URL, "https://")
		o.Args = append(o.Args, "--host-resolver-rules=MAP www.google.com "+local+", MAP github.com "+local, "--ignore-certificate-errors")
	})
	if e.b.ControlURL == "" {
		t.Fatal("the browser has no DevTools port of its own")
	}
	cu, err := url.Parse(e.b.ControlURL)
	if err != nil {
		t.Fatal(err)
	}
	e.share(t, e.pageURL("mafredri-suite"))

	bins := buildSuite(t)
	start := time.Now()
	chrome := runSuite(t, bins, "http://"+cu.Host, "")
	t.Logf("Chrome's endpoint: %d tests in %v", len(chrome), time.Since(start).Round(time.Millisecond))
	start = time.Now()
	relay := runSuite(t, bins, e.httpURL(), e.token())
	t.Logf("tabrelay: %d tests in %v", len(relay), time.Since(start).Round(time.Millisecond))

	compareSuite(t, chrome, relay, mafrediRefusedOnPurpose, false)
}

// compareSuite fails t for every test that passes on Chrome's endpoint and not on tabrelay
// (the tests listed in refused aside, with why tabrelay fails them: those must not pass) and logs the side-by-side table. A test that
// fails or skips on Chrome's endpoint proves nothing about tabrelay: it fails t too, unless
// launcherTests (a suite that also tests how it starts its own browser process, which a
// stand-in for the endpoint does not reproduce, and that decides from its environment what to
// run): then it is only listed.
func compareSuite(t *testing.T, chrome, relay map[string]suiteResult, refused map[string]string, launcherTests bool) {
	t.Helper()
	names := make([]string, 0, len(chrome))
	for n := range chrome {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("the suite ran no test on Chrome's endpoint")
	}
	count := map[string][2]int{}
	for _, n := range names {
		c, r := chrome[n], relay[n]
		switch {
		case c.status == "skip":
			if !launcherTests {
				t.Errorf("%s was skipped on Chrome's endpoint: the suite's browser tests must run", n)
			}
		case c.status != "pass":
			if !launcherTests {
				t.Errorf("%s fails on Chrome's endpoint (so it proves nothing about tabrelay):\n%s", n, c.output)
			}
		case refusal(refused, n) != "":
			if r.status == "pass" && refused[n] != "" {
				t.Errorf("%s passes on tabrelay although it is listed as failing there (%s): take it off the list", n, refused[n])
			}
		case r.status != "pass":
			t.Errorf("%s passes on Chrome's endpoint, %s on tabrelay:\n%s", n, orMissing(r.status), r.output)
		}
		cc := count[c.status]
		cc[0]++
		count[c.status] = cc
		rc := count[orMissing(r.status)]
		rc[1]++
		count[orMissing(r.status)] = rc
		t.Logf("%-55s chrome %-4s tabrelay %s", n, c.status, orMissing(r.status))
	}
	for _, s := range []string{"pass", "fail", "skip", "missing"} {
		if c := count[s]; c != [2]int{} {
			t.Logf("%-7s chrome %4d tabrelay %4d", s, c[0], c[1])
		}
	}
}

// refusal is why tabrelay refuses the test name on purpose, or one of the tests it is a subtest
// of, or one of its own subtests (a test fails when one of its subtests does; the others are
// compared one by one); "" when it does not.
func refusal(refused map[string]string, name string) string {
	for k, why := range refused {
		if strings.HasPrefix(k, name+"/") {
			return why
		}
	}
	for n := name; ; {
		if why := refused[n]; why != "" {
			return why
		}
		i := strings.LastIndex(n, "/")
		if i < 0 {
			return ""
		}
		n = n[:i]
	}
}

func orMissing(s string) string {
	if s == "" {
		return "missing"
	}
	return s
}

// buildSuite compiles the suite's test binaries once (from the module cache, as `go test`
// would), so both endpoints run the same binaries.
func buildSuite(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var bins []string
	for i, s := range mafrediSuite {
		bin := filepath.Join(dir, fmt.Sprintf("suite%d.test", i))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		out, err := exec.CommandContext(ctx, goTool(t), "test", "-c", "-o", bin, s.pkg).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("build %s's tests: %v\n%s", s.pkg, err, out)
		}
		bins = append(bins, bin)
	}
	return bins
}

// goTool is the go command that runs this test.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath(filepath.Join(os.Getenv("GOROOT"), "bin", "go")); err == nil && os.Getenv("GOROOT") != "" {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to build mafredri/cdp's tests: %v", err)
	}
	return p
}

var reTestLine = regexp.MustCompile(`^\s*--- (PASS|FAIL|SKIP): (\S+)`)

// runSuite runs the suite's binaries with localhost:9222 forwarded to the endpoint at base
// (adding the secret when token is set) and returns each test's result.
func runSuite(t *testing.T, bins []string, base, token string) map[string]suiteResult {
	t.Helper()
	stop := forward9222(t, base, token)
	defer stop()
	out := map[string]suiteResult{}
	for i, bin := range bins {
		s := mafrediSuite[i]
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		args := append([]string{"-test.v", "-test.count=1", "-test.timeout=80s"}, strings.Fields(s.flags)...)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = filepath.Dir(bin)
		text, err := cmd.CombinedOutput()
		late := ctx.Err() != nil
		cancel()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("run %s's tests: %v\n%s", s.pkg, err, text)
		}
		parseTestOutput(text, strings.TrimPrefix(s.pkg, "github.com/mafredri/")+".", out)
		if late {
			t.Errorf("%s's tests did not finish in time:\n%s", s.pkg, text)
		}
	}
	return out
}

// parseTestOutput adds to out the result of each test in text (the output of a test binary
// run with -test.v), named prefix+name. A test's output is what was printed under its name (the
// "=== RUN", "=== CONT" and "=== NAME" lines say whose output follows, also when tests run in
// parallel).
func parseTestOutput(text []byte, prefix string, out map[string]suiteResult) {
	var cur string
	printed := map[string][]string{}
	for _, line := range strings.Split(string(text), "\n") {
		if m := reTestHeader.FindStringSubmatch(line); m != nil {
			cur = m[1]
		}
		if m := reTestLine.FindStringSubmatch(line); m != nil {
			cur = m[2]
			printed[cur] = append(printed[cur], line)
			out[prefix+cur] = suiteResult{status: strings.ToLower(m[1]), output: strings.Join(printed[cur], "\n")}
			continue
		}
		printed[cur] = append(printed[cur], line)
	}
}

var reTestHeader = regexp.MustCompile(`^=== (?:RUN|CONT|NAME|PAUSE)\s+(\S+)`)

// forward9222 listens on localhost:9222 and forwards every request and WebSocket to base,
// with the secret added when token is set and base's address in answers turned back into
// localhost:9222 (discovery answers name the sockets to dial).
func forward9222(t *testing.T, base, token string) (stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:9222")
	if err != nil {
		t.Fatalf("mafredri/cdp's suite dials localhost:9222, which is taken here: %v", err)
	}
	return forwardOn(t, ln, base, token)
}

// forwardOn is forward9222 on the listener ln: answers name localhost and ln's port.
func forwardOn(t *testing.T, ln net.Listener, base, token string) (stop func()) {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	self := fmt.Sprintf("localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target) // the Host header too
		if token != "" {
			r.Out.Header.Set("Authorization", "Bearer "+token)
		}
	}}
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.StatusCode == http.StatusSwitchingProtocols {
			return nil
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		body = bytes.ReplaceAll(body, []byte(target.Host), []byte(self))
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
	}
}
