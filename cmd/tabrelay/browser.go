package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/internal/secret"
)

// browserReady is the one JSON line `tabrelay browser` prints on stdout once every tab is shared.
type browserReady struct {
	HTTP  string        `json:"http"`
	CDP   string        `json:"cdp"`
	Token string        `json:"token"`
	Tabs  []browser.Tab `json:"tabs"`
}

// cmdBrowser implements `tabrelay browser`: an isolated Chromium or Chrome profile with the
// extension loaded and paired, the given URLs opened and shared through the extension's toolbar
// click code, and a relay started in-process unless one already answers at --addr. It prints one
// JSON line ({"http","cdp","token","tabs"}) and runs until interrupted or until the browser
// exits. The browser is controlled over --remote-debugging-pipe only: it opens no debugging port
// and runs without --enable-unsafe-extension-debugging (browser.Options' test-only fields stay
// unset here).
// browserCmd is `tabrelay browser`; it takes the server's flags for the relay it may start.
type browserCmd struct {
	config.Server `embed:""`
	Headless      bool     `help:"run the browser without a window"`
	Chrome        string   `help:"Chrome or Chromium executable (default: ${chrome_env}, then the usual names and places)"`
	URL           []string `name:"url" sep:"none" help:"open this URL in a new tab and share it (repeatable)"`
	// URLs are more URLs to open and share.
	URLs []string `arg:"" sep:"none" name:"urls" optional:"" placeholder:"URL"`
}

func runBrowser(ctx context.Context, args []string, stdout io.Writer) error {
	return runCommand(ctx, "browser", args, stdio{in: os.Stdin, out: stdout, err: os.Stderr})
}

// Run launches the browser, shares the URLs, prints the ready line and waits.
func (c *browserCmd) Run(ctx context.Context, io stdio) error {
	f, headless, chrome, stdout := &c.Server, &c.Headless, &c.Chrome, io.out
	urls := append(append([]string{}, c.URL...), c.URLs...)
	f.Normalize()
	log := logger(&f.Common)

	chromePath, err := browser.Find(*chrome)
	if err != nil {
		return err
	}

	httpURL, token, stopRelay, err := relayFor(ctx, f, &log)
	if err != nil {
		return err
	}
	defer stopRelay()
	addr := strings.TrimPrefix(httpURL, "http://")

	lctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	b, err := browser.Launch(lctx, browser.Options{ChromePath: chromePath, Headless: *headless, Logger: &log, NoSandbox: noSandboxFromEnv(), TabChooser: true})
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.Pair(lctx, addr, token); err != nil {
		return err
	}
	if err := b.WaitConnected(lctx); err != nil {
		return err
	}
	tabs := []browser.Tab{}
	for _, u := range urls {
		tab, err := b.NewTab(lctx, u)
		if err != nil {
			return fmt.Errorf("share %s: %w", u, err)
		}
		if err := b.ShareFromExtension(lctx, tab); err != nil {
			return fmt.Errorf("share %s: %w", u, err)
		}
		tabs = append(tabs, tab)
	}
	if len(tabs) > 0 {
		// the browser starts with an empty tab: gone once the asked-for tabs are open, so that
		// every tab of the agent browser is a shared one
		if err := b.CloseBlankTabs(lctx, tabs); err != nil {
			log.Warn().Err(err).Msg("the empty start tab stays open")
		}
	}
	cancel()

	line, err := json.Marshal(browserReady{HTTP: httpURL, CDP: "ws://" + addr + "/cdp", Token: token, Tabs: tabs})
	if err != nil {
		return fmt.Errorf("encode ready line: %w", err)
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", line); err != nil {
		return fmt.Errorf("print ready line: %w", err)
	}
	log.Info().Int("tabs", len(tabs)).Str("http", httpURL).Msg("browser ready; interrupt to stop")

	select {
	case <-ctx.Done():
		return nil
	case <-b.Done():
		return errors.New("the browser exited")
	}
}

// relayFor returns the relay to pair with: the one answering at f.addr (once it proved it knows
// the secret in f.home), or a new in-process one. stop ends an in-process relay.
func relayFor(ctx context.Context, f *config.Server, log *zerolog.Logger) (httpURL, token string, stop func(), err error) {
	if !strings.HasSuffix(f.Addr, ":0") {
		if addr, ext, ok := probeRelay(ctx, f.Addr); ok {
			tok, err := secret.LoadOrCreate(f.Home)
			if err != nil {
				return "", "", nil, err
			}
			if err := checkToken(ctx, addr, tok); err != nil {
				return "", "", nil, err
			}
			if ext {
				log.Warn().Str("addr", addr).Msg("the running tabrelay already has a browser connected; this browser's extension replaces that connection (the other browser shows \"replaced by another browser's connection\")")
			}
			log.Info().Str("addr", addr).Msg("using the tabrelay server already running")
			return "http://" + addr, tok, func() {}, nil
		}
	}
	srv, err := startServer(ctx, f, log)
	if err != nil {
		return "", "", nil, err
	}
	log.Info().Str("addr", srv.Addr()).Msg("started a tabrelay server in-process")
	return srv.HTTPURL(), srv.Token(), func() { _ = srv.Close() }, nil
}

// probeRelay reports whether a server answers /health like tabrelay at addr (sending nothing
// secret), the literal address it answered at, and whether it says an extension is connected.
func probeRelay(ctx context.Context, addr string) (lit string, extensionConnected, ok bool) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	lit, err := proof.DialAddr(ctx, addr)
	if err != nil {
		return "", false, false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+lit+"/health", nil)
	if err != nil {
		return "", false, false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", false, false
	}
	defer resp.Body.Close()
	var h struct {
		Status             string `json:"status"`
		ExtensionConnected bool   `json:"extensionConnected"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&h) != nil || h.Status != "ok" {
		return "", false, false
	}
	return lit, h.ExtensionConnected, true
}

// checkToken makes sure the running server at addr knows tok (the mutual proof: a server that
// does not gets no secret and is reported as a possible impostor) and accepts the credential.
func checkToken(ctx context.Context, addr, tok string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	sess, err := proof.Authorize(ctx, http.DefaultClient, addr, tok)
	if err != nil {
		return fmt.Errorf("check the running server: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+sess.Addr+"/json/version", nil)
	if err != nil {
		return fmt.Errorf("check the running server's secret: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+sess.Credential)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("check the running server's secret: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("the tabrelay server at %s does not accept the secret in --home; pass the --home it runs with, or another --addr", addr)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the server at %s answered /json/version with HTTP %d", addr, resp.StatusCode)
	}
	return nil
}

// noSandboxFromEnv reads TABRELAY_CHROME_NO_SANDBOX ("1", "true" or "yes": pass --no-sandbox;
// another value: do not); unset leaves the choice to the browser package (root on Linux only).
func noSandboxFromEnv() *bool {
	if os.Getenv(envChromeNoSandbox) == "" {
		return nil
	}
	v := config.EnvBool(envChromeNoSandbox)
	return &v
}

// envChromeNoSandbox forces --no-sandbox on (or off) for the browser `tabrelay browser` starts.
const envChromeNoSandbox = "TABRELAY_CHROME_NO_SANDBOX"
