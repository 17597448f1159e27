package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/testlimit"
)

// chrome-remote-interface's own test suite is not in its published package, so its cases
// (connect, close, devtools, event, send) are written as scenarios through the real client in
// e2e/clients/cri-suite.mjs. TestCRISuite runs them against Chrome's own endpoint and against
// tabrelay, side by side in the same browser, each through a forwarder on a free port standing
// for localhost:9222 (the suite's default) that adds the secret, as a user configures it.

// TestCRISuite: every case of chrome-remote-interface's suite that passes on Chrome's endpoint
// passes on tabrelay; the close-then-connect-again cases run ten times each.
func TestCRISuite(t *testing.T) {
	requireChromium(t)
	e := privateBrowser(t, func(o *browser.Options) { o.DebuggingPort = true })
	cu, err := url.Parse(e.b.ControlURL)
	if err != nil || cu.Host == "" {
		t.Fatalf("the browser has no DevTools port of its own: %q %v", e.b.ControlURL, err)
	}
	e.share(t, e.pageURL("cri-suite"))

	run := func(base, token string) map[string]suiteResult {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		stop := forwardOn(t, ln, base, token)
		defer stop()
		ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(5*time.Minute))
		defer cancel()
		env := e.clientEnv("cri-suite")
		env["CRI_PORT"] = fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
		env["CRI_LIMIT_MS"] = fmt.Sprint(testlimit.Scale(10 * time.Second).Milliseconds())
		env["CLIENT_TIMEOUT_MS"] = fmt.Sprint(testlimit.Scale(5 * time.Minute).Milliseconds())
		start := time.Now()
		out := runNode(t, ctx, "cri-suite.mjs", env)
		results, _ := out["results"].(map[string]any)
		if len(results) == 0 {
			t.Fatalf("cri-suite.mjs reported no case: %v", out)
		}
		m := map[string]suiteResult{}
		for name, v := range results {
			s, _ := v.(string)
			if s == "pass" {
				m[name] = suiteResult{status: "pass"}
			} else {
				m[name] = suiteResult{status: "fail", output: strings.TrimPrefix(s, "fail: ")}
			}
		}
		t.Logf("%s: %d cases in %v", base, len(m), time.Since(start).Round(time.Millisecond))
		return m
	}
	chrome := run("http://"+cu.Host, "")
	relay := run(e.httpURL(), e.token())
	compareSuite(t, chrome, relay, nil, false)
}
