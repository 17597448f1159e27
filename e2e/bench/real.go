package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// realSetup is one Chromium with the real extension, paired with a separate relay process, and a
// shared fixture tab; the browser's own DevTools endpoint is the reference.
type realSetup struct {
	rp    *relayProc
	b     *browser.Browser
	site  *fixtures.Server
	tab   browser.Tab
	close func()
}

// startReal starts a tabrelay process (with env added to its environment), the fixture site and
// headless Chromium with the extension, pairs them and shares a tab on the fixture page path.
// The caller closes it.
func startReal(ctx context.Context, path string, env ...string) (*realSetup, error) {
	rp, err := startRelay(env...)
	if err != nil {
		return nil, err
	}
	site, err := fixtures.Start()
	if err != nil {
		rp.stop()
		return nil, fmt.Errorf("start the fixture site: %w", err)
	}
	b, err := browser.Launch(ctx, browser.Options{Headless: true, ExtensionDebugging: true, DebuggingPort: true})
	if err != nil {
		rp.stop()
		site.Close()
		return nil, fmt.Errorf("launch Chromium: %w", err)
	}
	s := &realSetup{rp: rp, b: b, site: site, close: func() { b.Close(); site.Close(); rp.stop() }}
	if err := b.Pair(ctx, rp.addr, rp.token); err != nil {
		s.close()
		return nil, fmt.Errorf("pair the extension with tabrelay: %w", err)
	}
	if err := b.WaitConnected(ctx); err != nil {
		s.close()
		return nil, fmt.Errorf("wait for the extension to connect: %w", err)
	}
	if s.tab, err = b.ShareURL(ctx, site.URL(path)); err != nil {
		s.close()
		return nil, fmt.Errorf("share %s: %w", path, err)
	}
	return s, nil
}

// attachFlat attaches a browser-level client to a page target.
func attachFlat(ctx context.Context, c *cdpclient.Client, targetID string) (string, error) {
	var a struct {
		SessionID string `json:"sessionId"`
	}
	err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true}, &a)
	return a.SessionID, err
}

// runReal times a small CDP command on real Chromium through tabrelay against the browser's own
// endpoint and chrome.debugger inside the extension, and a short Playwright scenario over both.
func runReal(cfg config, r *Results) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	s, err := startReal(ctx, "/index.html")
	if err != nil {
		return err
	}
	defer s.close()

	evalLoop := func(c *cdpclient.Client, sid string) ([]time.Duration, error) {
		n := cfg.reps / 2
		for i := 0; i < n/10; i++ {
			if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
				return nil, err
			}
		}
		d := make([]time.Duration, 0, n)
		for i := 0; i < n; i++ {
			t0 := time.Now()
			if err := c.Call(ctx, sid, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
				return nil, err
			}
			d = append(d, time.Since(t0))
		}
		return d, nil
	}
	relayC, err := cdpclient.Dial(ctx, s.rp.cdpURL(), nil)
	if err != nil {
		return err
	}
	defer relayC.Close()
	rsid, err := attachFlat(ctx, relayC, s.tab.TargetID)
	if err != nil {
		return fmt.Errorf("attach through tabrelay: %w", err)
	}
	own, err := cdpclient.Dial(ctx, s.b.ControlURL, nil)
	if err != nil {
		return err
	}
	defer own.Close()
	osid, err := attachFlat(ctx, own, s.tab.TargetID)
	if err != nil {
		return fmt.Errorf("attach on the browser's own endpoint: %w", err)
	}
	// interleave the two so machine noise hits both alike
	var dr, do []time.Duration
	for round := 0; round < 4; round++ {
		a, err := evalLoop(relayC, rsid)
		if err != nil {
			return fmt.Errorf("evaluate through tabrelay: %w", err)
		}
		b, err := evalLoop(own, osid)
		if err != nil {
			return fmt.Errorf("evaluate on the browser's endpoint: %w", err)
		}
		dr, do = append(dr, a...), append(do, b...)
	}
	rMed, rP99 := stats(dr)
	oMed, oP99 := stats(do)
	ratio := rMed / oMed
	r.add(Figure{Group: "real", Name: "Runtime.evaluate(\"1\") round trip, median", Unit: "µs", Value: rMed, Reference: oMed, RefName: "Chrome's own endpoint", Target: "≤ 1.5×", Met: met(ratio <= 1.5)})
	r.add(Figure{Group: "real", Name: "Runtime.evaluate(\"1\") round trip, p99", Unit: "µs", Value: rP99, Reference: oP99, RefName: "Chrome's own endpoint", Target: "≤ 2×", Met: met(rP99 <= 2*oP99)})

	// the floor: chrome.debugger.sendCommand timed inside the extension's service worker, with no
	// relay and no WebSocket in between
	n := cfg.reps / 2
	var inside []float64
	expr := fmt.Sprintf(`(async () => {
		const target = { tabId: %d };
		const one = () => chrome.debugger.sendCommand(target, 'Runtime.evaluate', { expression: '1' });
		for (let i = 0; i < %d; i++) await one();
		const ms = [];
		for (let i = 0; i < %d; i++) { const t0 = performance.now(); await one(); ms.push(performance.now() - t0); }
		return ms;
	})()`, s.tab.TabID, n/10, n)
	if err := s.b.ServiceWorkerEval(ctx, expr, &inside); err != nil {
		return fmt.Errorf("timing chrome.debugger in the service worker: %w", err)
	}
	floor := median(inside) * 1000
	r.add(Figure{Group: "real", Name: "same, chrome.debugger.sendCommand inside the extension, median", Unit: "µs", Value: floor, Reference: oMed, RefName: "Chrome's own endpoint"})
	// the same with the worker idle for a moment before each command, as it is between a
	// client's commands through tabrelay (the answer's way back and the next command's way in):
	// an idle worker, browser and page wake up for each command instead of running hot
	var idle []float64
	idleExpr := fmt.Sprintf(`(async () => {
		const target = { tabId: %d };
		const one = () => chrome.debugger.sendCommand(target, 'Runtime.evaluate', { expression: '1' });
		const pause = () => new Promise((r) => setTimeout(r, 1));
		const ms = [];
		for (let i = 0; i < %d; i++) { await pause(); const t0 = performance.now(); await one(); ms.push(performance.now() - t0); }
		return ms;
	})()`, s.tab.TabID, n)
	if err := s.b.ServiceWorkerEval(ctx, idleExpr, &idle); err != nil {
		return fmt.Errorf("timing chrome.debugger in an idle service worker: %w", err)
	}
	r.add(Figure{Group: "real", Name: "same, each command after 1 ms idle (as between a client's commands), median", Unit: "µs", Value: median(idle) * 1000, Reference: floor, RefName: "back to back"})
	r.add(Figure{Group: "real", Name: "tabrelay's share (relay + WebSocket + extension JS), median", Unit: "µs", Value: rMed - floor})

	// one short Playwright scenario over each endpoint
	runs := 5
	if cfg.short {
		runs = 2
	}
	ownHTTP := "http://" + hostOf(s.b.ControlURL)
	relayMS, err := playwrightScenario(ctx, "http://"+s.rp.addr+"/?token="+s.rp.token, s.tab.URL, runs)
	if err != nil {
		return fmt.Errorf("the Playwright scenario through tabrelay: %w", err)
	}
	ownMS, err := playwrightScenario(ctx, ownHTTP, s.tab.URL, runs)
	if err != nil {
		return fmt.Errorf("the Playwright scenario on Chrome's own endpoint: %w", err)
	}
	r.add(Figure{Group: "real", Name: "Playwright scenario wall time (connect, click, type, eval, screenshot), median", Unit: "ms", Value: median(relayMS), Reference: median(ownMS), RefName: "Chrome's own endpoint"})
	return nil
}

// hostOf returns the host:port of a URL, "" if it does not parse.
func hostOf(ws string) string {
	u, err := url.Parse(ws)
	if err != nil {
		return ""
	}
	return u.Host
}

// median returns the median of v (0 when empty).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// playwrightScenario runs e2e/clients/bench-playwright.mjs against endpoint.
func playwrightScenario(ctx context.Context, endpoint, pageURL string, runs int) ([]float64, error) {
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "e2e", "clients", "bench-playwright.mjs"))
	cmd.Env = append(os.Environ(), "ENDPOINT="+endpoint, "PAGE_URL="+pageURL, fmt.Sprintf("RUNS=%d", runs))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	var res struct {
		MS    []float64 `json:"ms"`
		Error string    `json:"error"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &res); err != nil {
		return nil, fmt.Errorf("node: %v: %s %s", runErr, out.String(), strings.TrimSpace(errb.String()))
	}
	if res.Error != "" {
		return nil, fmt.Errorf("%s", res.Error)
	}
	return res.MS, nil
}
