// Package snapshottest launches a headless Chromium for tests of the snapshot and actions
// packages and connects to its browser-level DevTools endpoint with cdpclient. It is a small
// test helper, not the product's launcher (that one loads the extension; see internal/browser).
package snapshottest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// Browser is a running headless Chromium and a client connected to its browser endpoint.
type Browser struct {
	// Client is connected to the browser-level endpoint (flat sessions).
	Client *cdpclient.Client
	// WSURL is the browser's webSocketDebuggerUrl.
	WSURL string

	cmd *exec.Cmd
	dir string
}

// ChromePath returns the Chromium binary to use, found as tabrelay finds it (browser.Find:
// $TABRELAY_CHROME, else PATH, else the usual install locations), with its error when none is.
func ChromePath() (string, error) { return browser.Find("") }

// Launch starts a fresh headless Chromium with its own temporary profile and connects to it.
func Launch(ctx context.Context) (*Browser, error) {
	bin, err := ChromePath()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "tabrelay-snapshottest-")
	if err != nil {
		return nil, fmt.Errorf("profile dir: %w", err)
	}
	args := []string{
		"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-features=Translate,MediaRouter,OptimizationHints",
		"--hide-scrollbars", "--mute-audio", "--window-size=1280,800",
		"--user-data-dir=" + dir, "--remote-debugging-port=0", "about:blank",
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	b := &Browser{cmd: cmd, dir: dir}
	// Drain stderr so Chromium never blocks on a full pipe; keep the tail for errors.
	tail := make(chan string, 1)
	go func() {
		var last []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			last = append(last, sc.Text())
			if len(last) > 20 {
				last = last[1:]
			}
		}
		tail <- strings.Join(last, "\n")
	}()
	deadline := time.Now().Add(30 * time.Second)
	var ws string
	for {
		data, err := os.ReadFile(filepath.Join(dir, "DevToolsActivePort"))
		if err == nil {
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) == 2 {
				ws = fmt.Sprintf("ws://127.0.0.1:%s%s", strings.TrimSpace(lines[0]), strings.TrimSpace(lines[1]))
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			b.Close()
			return nil, fmt.Errorf("chromium did not write DevToolsActivePort: %s", <-tail)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c, err := cdpclient.Dial(ctx, ws, nil)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.Client, b.WSURL = c, ws
	return b, nil
}

// NewTab opens url in a new tab and returns its target id.
func (b *Browser) NewTab(ctx context.Context, url string) (string, error) {
	var r struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Client.Call(ctx, "", "Target.createTarget", map[string]any{"url": url}, &r); err != nil {
		return "", err
	}
	return r.TargetID, nil
}

// CloseTab closes a tab.
func (b *Browser) CloseTab(ctx context.Context, targetID string) error {
	return b.Client.Call(ctx, "", "Target.closeTarget", map[string]any{"targetId": targetID}, nil)
}

// Close disconnects, stops Chromium and removes its profile.
func (b *Browser) Close() error {
	if b.Client != nil {
		b.Client.Close()
	}
	if b.cmd != nil && b.cmd.Process != nil {
		b.cmd.Process.Kill()
		b.cmd.Wait()
	}
	return os.RemoveAll(b.dir)
}
