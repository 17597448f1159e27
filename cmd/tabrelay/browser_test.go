package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/browser"
)

// TestBrowserCommand runs `tabrelay browser --headless --addr 127.0.0.1:0 --url …` in-process
// with real Chromium and checks its JSON line against the relay's /json/list.
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
	go func() {
		done <- runBrowser(ctx, []string{"--headless", "--addr", "127.0.0.1:0", "--home", t.TempDir(), "--log-level", "warn",
			"--url", site.URL("/"), "--url", site.URL("/other.html")}, pw)
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
