package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// TestBrowserCommand runs `tabrelay browser --headless --addr 127.0.0.1:0 --url …` in-process
// with real Chromium (runBrowser is what main runs) and checks: the JSON line; that the relay's
// /json/list lists each tab; that a CDP client evaluates in a tab through the relay; and that the
// browser it keeps running is controlled over --remote-debugging-pipe only, with no
// --remote-debugging-port or --enable-unsafe-extension-debugging and no TCP port listened on by
// any of its processes (the relay's own port, in this test process, is the only one).
func TestBrowserCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Chromium (skipped with -short)")
	}
	if _, err := browser.Find(""); err != nil {
		t.Fatal(err)
	}
	site, err := fixtures.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	urls := []string{site.URL("/"), site.URL("/other.html")}
	go func() {
		done <- runBrowser(ctx, []string{"--headless", "--addr", "127.0.0.1:0", "--home", t.TempDir(), "--log-level", "warn",
			"--url", urls[0], "--url", urls[1]}, pw)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("no JSON line: %v (command: %v)", err, <-done)
	}
	go io.Copy(io.Discard, pr) //nolint:errcheck
	var ready browserReady
	if err := json.Unmarshal([]byte(line), &ready); err != nil {
		t.Fatalf("bad JSON line %q: %v", line, err)
	}
	if !strings.HasPrefix(ready.HTTP, "http://127.0.0.1:") || ready.CDP != "ws://"+strings.TrimPrefix(ready.HTTP, "http://")+"/cdp" || len(ready.Token) < 32 || len(ready.Tabs) != 2 {
		t.Fatalf("ready line = %s", line)
	}
	for i, tab := range ready.Tabs {
		if tab.URL != urls[i] || tab.TargetID == "" {
			t.Errorf("ready line tab %d = %+v, want a target on %s", i, tab, urls[i])
		}
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ready.HTTP+"/json/list", nil)
	req.Header.Set("Authorization", "Bearer "+ready.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list []struct {
		ID, URL, Title string
	}
	json.NewDecoder(resp.Body).Decode(&list) //nolint:errcheck
	resp.Body.Close()
	ids := map[string]string{}
	for _, l := range list {
		ids[l.ID] = l.URL
	}
	for _, tab := range ready.Tabs {
		if ids[tab.TargetID] != tab.URL {
			t.Errorf("tab %+v not listed by /json/list (%v)", tab, list)
		}
	}

	t.Run("a CDP client evaluates through the relay", func(t *testing.T) {
		c, err := cdpclient.Dial(ctx, ready.CDP, http.Header{"Authorization": {"Bearer " + ready.Token}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		for i, want := range []string{"tabrelay fixture", "Other page"} {
			var a struct {
				SessionID string `json:"sessionId"`
			}
			if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": ready.Tabs[i].TargetID, "flatten": true}, &a); err != nil {
				t.Fatal(err)
			}
			var r struct {
				Result struct {
					Value string `json:"value"`
				} `json:"result"`
			}
			if err := c.Call(ctx, a.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.title + ' @ ' + location.href", "returnByValue": true}, &r); err != nil {
				t.Fatal(err)
			}
			if got := want + " @ " + urls[i]; r.Result.Value != got {
				t.Errorf("tab %d evaluates to %q, want %q", i, r.Result.Value, got)
			}
		}
	})

	t.Run("no debugging port", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("reads /proc")
		}
		tree, err := descendants(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		var browserProcs int
		for _, pid := range tree {
			args, err := cmdline(pid)
			if err != nil {
				continue
			}
			for _, a := range args {
				if strings.HasPrefix(a, "--remote-debugging-port") || a == "--enable-unsafe-extension-debugging" {
					t.Errorf("browser process %d runs with %s: %q", pid, a, args)
				}
				if a == "--remote-debugging-pipe" {
					browserProcs++
				}
			}
		}
		if browserProcs == 0 {
			t.Fatalf("no process below this test runs with --remote-debugging-pipe (processes: %v)", tree)
		}
		ports, err := listening(tree)
		if err != nil {
			t.Fatal(err)
		}
		if len(ports) > 0 {
			t.Errorf("the browser's processes listen on %v; want no TCP port", ports)
		}
		// The same scan finds the relay's own port in this process: it can see a port.
		own, err := listening([]int{os.Getpid()})
		if err != nil {
			t.Fatal(err)
		}
		relayAddr := strings.TrimPrefix(ready.HTTP, "http://")
		if !slices.ContainsFunc(own, func(s string) bool { return strings.HasPrefix(s, relayAddr+" ") }) {
			t.Errorf("the scan does not see the relay listening on %s in this process (it sees %v)", relayAddr, own)
		}
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("browser command ended with %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("browser command did not stop after interrupt")
	}
}
