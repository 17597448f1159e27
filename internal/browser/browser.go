// Package browser finds and launches Chrome or Chromium with an isolated profile and the tabrelay
// extension loaded, pairs the extension with a relay, and shares tabs through the extension's
// own toolbar-click code. It backs `tabrelay browser` and the end-to-end tests.
//
// The launched browser is controlled over --remote-debugging-pipe: Chrome reads DevTools
// protocol commands on its file descriptor 3 and writes replies and events on its descriptor 4,
// both inherited from this process only, so no other program (nor another local user) can reach
// that channel, and the browser opens no debugging port. The channel drives only what a person
// would do (open a tab, share it, read the badge); every CDP client of tabrelay goes through the
// relay and the extension.
//
// What the product path (`tabrelay browser`) uses needs no unsafe flag: page and service-worker
// targets, Runtime.evaluate in them, and the extension's own pages opened as tabs. Pair writes
// the settings from the extension's options page (chrome.storage.local, as a person saving the
// form does) and ShareFromExtension sends, from that page, the message the side panel's share
// button sends, which runs the toolbar click's code. Two options exist for tests only and are
// never set by cmd/tabrelay: ExtensionDebugging adds --enable-unsafe-extension-debugging, which
// Chrome documents as the condition for the Extensions.* domain, so that Click can fire a real
// toolbar click (Extensions.triggerAction); DebuggingPort also opens Chrome's own DevTools port,
// for tests and benchmarks that compare tabrelay with Chrome's own endpoint.
package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/extensions"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/rs/zerolog"

	chromeextension "github.com/tabrelay/tabrelay/chrome-extension"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// Options configure Launch.
type Options struct {
	// ChromePath is the browser executable; empty means Find("").
	ChromePath string
	// Headless runs the browser without a window (--headless=new).
	Headless bool
	// ExtensionDir is the unpacked extension to load; empty means the copy embedded in the
	// binary, written to a temporary directory.
	ExtensionDir string
	// UserDataDir is the profile directory; empty means a fresh temporary one, removed on Close.
	UserDataDir string
	// Args are extra command-line flags for the browser.
	Args []string
	// Env is extra environment for the browser, as KEY=value (DISPLAY=:99 for a window on a
	// virtual display, say); the process's own environment is passed on too.
	Env []string
	// StartURL is the page of the first tab (default about:blank).
	StartURL string
	// Output receives the browser's stdout and stderr (default: discarded, the tail is kept for
	// error messages).
	Output io.Writer
	// Logger receives structured logs (default: none).
	Logger *zerolog.Logger
	// NoSandbox, when not nil, says whether to pass --no-sandbox; nil decides by itself: only
	// when running as root on Linux, where Chrome refuses to start sandboxed. cmd/tabrelay sets
	// it from TABRELAY_CHROME_NO_SANDBOX (this package reads no environment for it).
	NoSandbox *bool

	// ExtensionDebugging (tests only) adds --enable-unsafe-extension-debugging, so that Click
	// can fire a real toolbar click with Extensions.triggerAction. A browser a person keeps
	// running must not have it: cmd/tabrelay never sets it.
	ExtensionDebugging bool
	// DebuggingPort (tests only) also opens the browser's own DevTools port
	// (--remote-debugging-port=0; ControlURL is then its WebSocket URL), for tests and benchmarks
	// that compare tabrelay with Chrome's own endpoint. Any local user can control a browser
	// through that port: cmd/tabrelay never sets it.
	DebuggingPort bool
	// NoFileAccess (tests only) starts the extension without access to file URLs, as a store
	// install is until the user turns on "Allow access to file URLs" on chrome://extensions
	// (an unpacked extension has it by default). It writes that switch into the profile
	// before the browser starts; see noFileAccess.
	NoFileAccess bool
	// KeepWelcome keeps the welcome page the extension opens when it is installed. Without it,
	// Launch closes that page in a profile of its own (no UserDataDir): the browser is paired
	// by Pair, and a tab nobody asked for would be in the way.
	KeepWelcome bool
	// TabChooser keeps the extension's tab chooser on (its setting chooseTab, which Pair
	// writes): when a client connects while no tab is shared, the extension opens a page to
	// pick one, in front. Off, a test's own tabs are never put behind that page.
	TabChooser bool
}

// Browser is a running browser with the extension loaded.
type Browser struct {
	// CDP is the browser-level control connection, over --remote-debugging-pipe.
	CDP *cdpclient.Client
	// ExtensionID is the loaded extension's id.
	ExtensionID string
	// ControlURL is the browser's own DevTools WebSocket URL when Options.DebuggingPort was set,
	// else "" (the browser then has no debugging port).
	ControlURL string
	// ExtensionDir is the directory the extension was loaded from.
	ExtensionDir string

	log     zerolog.Logger
	cmd     *exec.Cmd
	tail    *tailBuffer
	exited  chan struct{}
	waitErr error
	temp    []string

	closeOnce sync.Once
	closeErr  error

	extensionDebugging bool
	tabChooser         bool

	// the relay the extension was last paired with (Pair), where Share checks the tab arrived
	relayMu    sync.Mutex
	relayAddr  string
	relayToken string
}

// Tab is one browser tab as the harness knows it.
type Tab struct {
	// TargetID is the page target id: the id the extension and the relay use.
	TargetID string `json:"targetId"`
	// TabTargetID is the browser's "tab" target, the one Extensions.triggerAction needs.
	TabTargetID string `json:"-"`
	// TabID is the chrome.tabs id.
	TabID int `json:"-"`
	// URL is the tab's URL once it had loaded (after redirects).
	URL string `json:"url"`
}

// Launch starts a browser as described by opts and waits until its control channel answers and
// the extension's service worker runs.
//
// On failure it stops what it had started (b is its own variable: the result is nil then).
func Launch(ctx context.Context, opts Options) (_ *Browser, err error) {
	log := zerolog.Nop()
	if opts.Logger != nil {
		log = *opts.Logger
	}
	chrome := opts.ChromePath
	if chrome == "" {
		if chrome, err = Find(""); err != nil {
			return nil, err
		}
	}
	b := &Browser{log: log, tail: &tailBuffer{max: 8 << 10}, exited: make(chan struct{}), tabChooser: opts.TabChooser}
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()

	extDir := opts.ExtensionDir
	if extDir == "" {
		d, err := os.MkdirTemp("", "tabrelay-extension-")
		if err != nil {
			return nil, fmt.Errorf("launch browser: %w", err)
		}
		b.temp = append(b.temp, d)
		if err := chromeextension.WriteTo(d); err != nil {
			return nil, fmt.Errorf("launch browser: %w", err)
		}
		extDir = d
	}
	if extDir, err = filepath.Abs(extDir); err != nil {
		return nil, fmt.Errorf("launch browser: extension dir: %w", err)
	}
	b.ExtensionDir = extDir
	if b.ExtensionID, err = ExtensionIDFromDir(extDir); err != nil {
		return nil, fmt.Errorf("launch browser: %w", err)
	}

	profile := opts.UserDataDir
	if profile == "" {
		d, err := os.MkdirTemp("", "tabrelay-profile-")
		if err != nil {
			return nil, fmt.Errorf("launch browser: %w", err)
		}
		b.temp = append(b.temp, d)
		profile = d
	}
	_ = os.Remove(filepath.Join(profile, "DevToolsActivePort"))
	if opts.NoFileAccess {
		if err := noFileAccess(profile, b.ExtensionID); err != nil {
			return nil, fmt.Errorf("launch browser: %w", err)
		}
	}

	args := []string{
		"--no-first-run", "--no-default-browser-check",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-features=Translate,MediaRouter,OptimizationHints",
		"--user-data-dir=" + profile,
		"--disable-extensions-except=" + extDir, "--load-extension=" + extDir,
		"--remote-debugging-pipe",
	}
	if opts.ExtensionDebugging {
		args = append(args, "--enable-unsafe-extension-debugging")
		b.extensionDebugging = true
	}
	if opts.DebuggingPort {
		args = append(args, "--remote-debugging-port=0")
	}
	if opts.Headless {
		args = append(args, "--headless=new", "--disable-gpu", "--window-size=1280,900")
	}
	if needNoSandbox(opts.NoSandbox) {
		args = append(args, "--no-sandbox")
	}
	args = append(args, opts.Args...)
	start := opts.StartURL
	if start == "" {
		start = "about:blank"
	}
	args = append(args, start)

	out := io.Writer(b.tail)
	if opts.Output != nil {
		out = io.MultiWriter(b.tail, opts.Output)
	}
	// The control pipe: the browser reads commands on its fd 3 and writes on its fd 4. os.Pipe
	// opens close-on-exec descriptors, so only the browser inherits its two ends.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("launch browser: control pipe: %w", err)
	}
	evR, evW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, fmt.Errorf("launch browser: control pipe: %w", err)
	}
	b.CDP = cdpclient.New(cdpclient.NewPipe(evR, cmdW)) // Close closes our two ends

	// The browser must outlive ctx (which bounds only the launch): Close stops it.
	b.cmd = exec.Command(chrome, args...) //nolint:gosec // the browser the user chose
	b.cmd.Stdout, b.cmd.Stderr = out, out
	if len(opts.Env) > 0 {
		b.cmd.Env = append(os.Environ(), opts.Env...)
	}
	b.cmd.ExtraFiles = []*os.File{cmdR, evW} // fd 3, fd 4
	setProcAttr(b.cmd)
	log.Debug().Str("chrome", chrome).Strs("args", args).Msg("launching browser")
	err = b.cmd.Start()
	cmdR.Close() // the browser's ends: ours must go, or we would never see it close the pipe
	evW.Close()
	if err != nil {
		return nil, fmt.Errorf("launch browser %s: %w", chrome, err)
	}
	go func() {
		b.waitErr = b.cmd.Wait()
		close(b.exited)
	}()

	if err := b.waitControl(ctx); err != nil {
		return nil, err
	}
	if opts.DebuggingPort {
		wsPath, port, err := b.waitDevToolsPort(ctx, profile)
		if err != nil {
			return nil, err
		}
		b.ControlURL = fmt.Sprintf("ws://127.0.0.1:%d%s", port, wsPath)
	}
	if err := b.waitWorkerReady(ctx); err != nil {
		return nil, fmt.Errorf("launch browser: the tabrelay extension did not start (is %s a valid extension?): %w", extDir, err)
	}
	if opts.UserDataDir == "" && !opts.KeepWelcome {
		if err := b.closeWelcome(ctx); err != nil {
			log.Warn().Err(err).Msg("the extension's welcome page stays open")
		}
	}
	log.Info().Int("pid", b.cmd.Process.Pid).Str("extension", b.ExtensionID).Msg("browser running")
	return b, nil
}

// WelcomePage is the page the extension opens when it is installed.
const WelcomePage = "welcome.html"

// closeWelcome waits for the welcome page the extension opens on install and closes it.
func (b *Browser) closeWelcome(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	url := "chrome-extension://" + b.ExtensionID + "/" + WelcomePage
	for {
		ts, err := b.targets(ctx)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if t.Type == "page" && strings.HasPrefix(t.URL, url) {
				return b.CDP.Call(ctx, "", target.CommandCloseTarget, &target.CloseTargetParams{TargetID: target.ID(t.TargetID)}, nil)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no welcome page appeared: %w", ctx.Err())
		case <-b.exited:
			return errors.New("the browser exited")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitControl waits until the browser answers on the control pipe.
func (b *Browser) waitControl(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := b.CDP.Call(ctx, "", "Browser.getVersion", nil, nil)
	if err == nil {
		return nil
	}
	select {
	case <-b.exited:
		return fmt.Errorf("launch browser: it exited at once (%v); its last output:\n%s", b.waitErr, b.tail.String())
	case <-time.After(time.Second): // the pipe may close a moment before the process is reaped
	}
	return fmt.Errorf("launch browser: no answer on its --remote-debugging-pipe (%w); its last output:\n%s", err, b.tail.String())
}

func (b *Browser) waitDevToolsPort(ctx context.Context, profile string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	file := filepath.Join(profile, "DevToolsActivePort")
	for {
		if data, err := os.ReadFile(file); err == nil {
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			if len(lines) >= 2 {
				port, err := strconv.Atoi(strings.TrimSpace(lines[0]))
				if err == nil && port > 0 {
					return strings.TrimSpace(lines[1]), port, nil
				}
			}
		}
		select {
		case <-b.exited:
			return "", 0, fmt.Errorf("launch browser: it exited at once (%v); its last output:\n%s", b.waitErr, b.tail.String())
		case <-ctx.Done():
			return "", 0, fmt.Errorf("launch browser: no DevTools port after waiting (%w); its last output:\n%s", ctx.Err(), b.tail.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Done is closed when the browser process has exited.
func (b *Browser) Done() <-chan struct{} { return b.exited }

// Close stops the browser (the whole process group), waits for it and removes temporary
// directories. It is safe to call more than once.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		if b.CDP != nil {
			_ = b.CDP.Close()
		}
		if b.cmd != nil && b.cmd.Process != nil {
			terminate(b.cmd)
			select {
			case <-b.exited:
			case <-time.After(5 * time.Second):
				kill(b.cmd)
				select {
				case <-b.exited:
				case <-time.After(5 * time.Second):
					b.closeErr = errors.New("close browser: the process did not exit")
				}
			}
		}
		for _, d := range b.temp {
			if err := removeAllRetry(d); err != nil && b.closeErr == nil {
				b.closeErr = fmt.Errorf("close browser: remove %s: %w", d, err)
			}
		}
	})
	return b.closeErr
}

func removeAllRetry(dir string) error {
	var err error
	for i := 0; i < 20; i++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// --- the extension's service worker ---------------------------------------------------------

type targetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	URL      string `json:"url"`
	Title    string `json:"title"`
}

func (b *Browser) targets(ctx context.Context) ([]targetInfo, error) {
	var r struct {
		TargetInfos []targetInfo `json:"targetInfos"`
	}
	// one entry that excludes nothing: every target, the extension's service worker included
	if err := b.CDP.Call(ctx, "", target.CommandGetTargets, &target.GetTargetsParams{Filter: target.Filter{{}}}, &r); err != nil {
		return nil, fmt.Errorf("list browser targets: %w", err)
	}
	return r.TargetInfos, nil
}

// serviceWorker returns the extension's service-worker target id, waiting for it to run and
// waking it by opening the extension's options page if it was stopped.
func (b *Browser) serviceWorker(ctx context.Context) (string, error) {
	prefix := "chrome-extension://" + b.ExtensionID + "/"
	deadline := time.Now().Add(15 * time.Second)
	woke := false
	for {
		ts, err := b.targets(ctx)
		if err != nil {
			return "", err
		}
		for _, t := range ts {
			if t.Type == "service_worker" && strings.HasPrefix(t.URL, prefix) {
				return t.TargetID, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no service worker of extension %s among the browser's targets", b.ExtensionID)
		}
		if !woke && time.Until(deadline) < 14*time.Second { // a second for it to come up by itself
			// A stopped worker starts again on any extension event; opening its options page
			// sends it a message.
			woke = true
			var r struct {
				TargetID string `json:"targetId"`
			}
			if err := b.CDP.Call(ctx, "", target.CommandCreateTarget, &target.CreateTargetParams{URL: prefix + "options.html", Background: new(true)}, &r); err == nil {
				defer b.CDP.Call(context.WithoutCancel(ctx), "", target.CommandCloseTarget, &target.CloseTargetParams{TargetID: target.ID(r.TargetID)}, nil) //nolint:errcheck // best effort
			}
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-b.exited:
			return "", errors.New("the browser exited")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitWorkerReady waits until the extension's service worker has run its module (it then
// exposes globalThis.tabrelay).
func (b *Browser) waitWorkerReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var lastErr error
	for {
		var ok bool
		lastErr = b.ServiceWorkerEval(ctx, "typeof globalThis.tabrelay === 'object'", &ok)
		if lastErr == nil && ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if lastErr == nil {
				lastErr = errors.New("globalThis.tabrelay never appeared")
			}
			return fmt.Errorf("service worker not ready: %w", lastErr)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ServiceWorkerTargetID returns the target id of the extension's running service worker, without
// waking a stopped one ("" if none runs). A new id means the worker was restarted.
func (b *Browser) ServiceWorkerTargetID(ctx context.Context) (string, error) {
	ts, err := b.targets(ctx)
	if err != nil {
		return "", err
	}
	for _, t := range ts {
		if t.Type == "service_worker" && strings.HasPrefix(t.URL, "chrome-extension://"+b.ExtensionID+"/") {
			return t.TargetID, nil
		}
	}
	return "", nil
}

// withSession attaches a flat session to target, runs fn and detaches again (a lingering
// DevTools session would keep the service worker alive and hide idle-timeout bugs).
func (b *Browser) withSession(ctx context.Context, targetID string, fn func(sessionID string) error) error {
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.CDP.Call(ctx, "", target.CommandAttachToTarget, &target.AttachToTargetParams{TargetID: target.ID(targetID), Flatten: new(true)}, &r); err != nil {
		return fmt.Errorf("attach to %s: %w", targetID, err)
	}
	defer b.CDP.Call(context.WithoutCancel(ctx), "", target.CommandDetachFromTarget, &target.DetachFromTargetParams{SessionID: target.SessionID(r.SessionID)}, nil) //nolint:errcheck // best effort
	return fn(r.SessionID)
}

// ServiceWorkerEval evaluates expression in the extension's service worker (promises are
// awaited) and decodes its JSON value into out (which may be nil).
func (b *Browser) ServiceWorkerEval(ctx context.Context, expression string, out any) error {
	sw, err := b.serviceWorker(ctx)
	if err != nil {
		return fmt.Errorf("service worker eval: %w", err)
	}
	return b.withSession(ctx, sw, func(sid string) error {
		return evaluate(ctx, b.CDP, sid, expression, out)
	})
}

// PageEval evaluates expression in a tab's page over the harness's own control channel (not
// through the relay) and decodes its JSON value into out.
func (b *Browser) PageEval(ctx context.Context, tab Tab, expression string, out any) error {
	return b.withSession(ctx, tab.TargetID, func(sid string) error {
		return evaluate(ctx, b.CDP, sid, expression, out)
	})
}

func evaluate(ctx context.Context, c *cdpclient.Client, sid, expression string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	err := c.Call(ctx, sid, cdpruntime.CommandEvaluate, &cdpruntime.EvaluateParams{
		Expression: expression, AwaitPromise: new(true), ReturnByValue: new(true),
	}, &r)
	if err != nil {
		return fmt.Errorf("evaluate: %w", err)
	}
	if r.ExceptionDetails != nil {
		msg := r.ExceptionDetails.Exception.Description
		if msg == "" {
			msg = r.ExceptionDetails.Text
		}
		return fmt.Errorf("evaluate %.60q: %s", expression, msg)
	}
	if out != nil && len(r.Result.Value) > 0 {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			return fmt.Errorf("evaluate: decode result: %w", err)
		}
	}
	return nil
}

// withExtensionPage opens the extension's options page in a background tab, waits until its
// scripts can use the extension's APIs, runs fn with a session attached to it, and closes the tab
// again. An extension page is an ordinary page target: it needs neither the Extensions.* domain
// nor any unsafe flag.
func (b *Browser) withExtensionPage(ctx context.Context, fn func(sessionID string) error) error {
	origin := "chrome-extension://" + b.ExtensionID
	var r struct {
		TargetID string `json:"targetId"`
	}
	if err := b.CDP.Call(ctx, "", target.CommandCreateTarget, &target.CreateTargetParams{URL: origin + "/options.html", Background: new(true)}, &r); err != nil {
		return fmt.Errorf("open the extension's options page: %w", err)
	}
	defer b.closeAndWait(context.WithoutCancel(ctx), r.TargetID)
	return b.withSession(ctx, r.TargetID, func(sid string) error {
		wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		readyJS := fmt.Sprintf(`location.origin === %q && document.readyState === 'complete' && typeof chrome?.storage?.local === 'object'`, origin)
		var lastErr error
		for {
			var ok bool
			// errors are expected while the page replaces its first about:blank document
			if lastErr = evaluate(wctx, b.CDP, sid, readyJS, &ok); lastErr == nil && ok {
				break
			}
			select {
			case <-wctx.Done():
				return fmt.Errorf("the extension's options page did not load (last error: %v): %w", lastErr, wctx.Err())
			case <-b.exited:
				return errors.New("the browser exited")
			case <-time.After(50 * time.Millisecond):
			}
		}
		return fn(sid)
	})
}

// closeAndWait closes the page target id and waits (up to 5 s) until the browser no longer
// lists it: a page still talking to a server can take a moment to go, and the caller's next
// look at the tabs must not find it.
func (b *Browser) closeAndWait(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := b.CDP.Call(ctx, "", target.CommandCloseTarget, &target.CloseTargetParams{TargetID: target.ID(id)}, nil); err != nil {
		return
	}
	for {
		ts, err := b.targets(ctx)
		if err != nil {
			return
		}
		gone := true
		for _, t := range ts {
			if t.TargetID == id {
				gone = false
			}
		}
		if gone {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-b.exited:
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Pair stores the relay address and pairing token in the extension's settings
// (chrome.storage.local relayAddr and token, and chooseTab from Options.TabChooser), written
// from the extension's own options page as saving its form does; the extension reconnects on
// the change.
func (b *Browser) Pair(ctx context.Context, addr, token string) error {
	values, err := json.Marshal(map[string]any{"relayAddr": addr, "token": token, "chooseTab": b.tabChooser})
	if err != nil {
		return fmt.Errorf("pair extension: %w", err)
	}
	err = b.withExtensionPage(ctx, func(sid string) error {
		return evaluate(ctx, b.CDP, sid, "chrome.storage.local.set("+string(values)+")", nil)
	})
	if err != nil {
		return fmt.Errorf("pair extension: %w", err)
	}
	b.relayMu.Lock()
	b.relayAddr, b.relayToken = addr, token
	b.relayMu.Unlock()
	return nil
}

// Status is the extension's own view of its connection (tabrelay.statusReport() in the worker).
type Status struct {
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	Notice     string `json:"notice"`
	Text       string `json:"text"`
	Addr       string `json:"addr"`
	Paired     bool   `json:"paired"`
	Connected  bool   `json:"connected"`
	Connects   int    `json:"connects"`
	SharedTabs []struct {
		TabID    int    `json:"tabId"`
		TargetID string `json:"targetId"`
		Origin   string `json:"origin"`
	} `json:"sharedTabs"`
}

// Status reads the extension's connection status.
func (b *Browser) Status(ctx context.Context) (Status, error) {
	var s Status
	if err := b.ServiceWorkerEval(ctx, "tabrelay.statusReport()", &s); err != nil {
		return s, fmt.Errorf("extension status: %w", err)
	}
	return s, nil
}

// WaitConnected waits until the extension reports a live relay connection.
func (b *Browser) WaitConnected(ctx context.Context) error {
	var last Status
	for {
		s, err := b.Status(ctx)
		if err == nil && s.Connected {
			return nil
		}
		if err == nil {
			last = s
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("extension not connected to the relay (last status: %s): %w", last.Text, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// --- tabs -----------------------------------------------------------------------------------

// NewTab opens url in a new tab (over the control channel, as a person opening a tab would) and
// waits until it has loaded. It does not share the tab.
func (b *Browser) NewTab(ctx context.Context, url string) (Tab, error) {
	return b.newTab(ctx, url, false)
}

// NewWindowTab is NewTab in a new window (so that it is visible next to other tabs).
func (b *Browser) NewWindowTab(ctx context.Context, url string) (Tab, error) {
	return b.newTab(ctx, url, true)
}

func (b *Browser) newTab(ctx context.Context, url string, newWindow bool) (Tab, error) {
	var r struct {
		TargetID string `json:"targetId"`
	}
	if err := b.CDP.Call(ctx, "", target.CommandCreateTarget, &target.CreateTargetParams{URL: url, ForTab: new(true), NewWindow: new(newWindow)}, &r); err != nil {
		return Tab{}, fmt.Errorf("open %s: %w", url, err)
	}
	tab := Tab{TabTargetID: r.TargetID, URL: url}
	page, err := b.pageOfTab(ctx, r.TargetID)
	if err != nil {
		return Tab{}, fmt.Errorf("open %s: %w", url, err)
	}
	tab.TargetID = page
	if tab.TabID, err = b.tabIDOf(ctx, page); err != nil {
		return Tab{}, fmt.Errorf("open %s: %w", url, err)
	}
	if tab.URL, err = b.waitLoaded(ctx, tab); err != nil {
		return Tab{}, fmt.Errorf("open %s: %w", url, err)
	}
	return tab, nil
}

// pageOfTab finds the page target inside a tab target (attach to the tab, auto-attach shows
// its page).
func (b *Browser) pageOfTab(ctx context.Context, tabTargetID string) (string, error) {
	var page string
	err := b.withSession(ctx, tabTargetID, func(sid string) error {
		w := b.CDP.Expect(sid, "Target.attachedToTarget", func(e cdpclient.Event) bool {
			return bytes.Contains(e.Params, []byte(`"type":"page"`))
		})
		if err := b.CDP.Call(ctx, sid, target.CommandSetAutoAttach, &target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: false, Flatten: new(true)}, nil); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		ev, err := w.Wait(wctx)
		if err != nil {
			return fmt.Errorf("no page in tab target %s: %w", tabTargetID, err)
		}
		var p struct {
			SessionID  string     `json:"sessionId"`
			TargetInfo targetInfo `json:"targetInfo"`
		}
		if err := json.Unmarshal(ev.Params, &p); err != nil {
			return err
		}
		page = p.TargetInfo.TargetID
		return nil
	})
	return page, err
}

// tabIDOf maps a page target id to its chrome.tabs id (chrome.debugger.getTargets in the worker).
func (b *Browser) tabIDOf(ctx context.Context, pageTargetID string) (int, error) {
	var id int
	expr := fmt.Sprintf(`chrome.debugger.getTargets().then(ts => (ts.find(t => t.id === %q) || {}).tabId ?? -1)`, pageTargetID)
	if err := b.ServiceWorkerEval(ctx, expr, &id); err != nil {
		return 0, err
	}
	if id < 0 {
		return 0, fmt.Errorf("page target %s is not a tab", pageTargetID)
	}
	return id, nil
}

// TabOf returns the Tab of a page target (for example a tab a shared tab opened).
func (b *Browser) TabOf(ctx context.Context, pageTargetID string) (Tab, error) {
	id, err := b.tabIDOf(ctx, pageTargetID)
	if err != nil {
		return Tab{}, err
	}
	ts, err := b.targets(ctx)
	if err != nil {
		return Tab{}, err
	}
	for _, t := range ts {
		if t.Type != "tab" {
			continue
		}
		if p, err := b.pageOfTab(ctx, t.TargetID); err == nil && p == pageTargetID {
			return Tab{TargetID: pageTargetID, TabTargetID: t.TargetID, TabID: id, URL: t.URL}, nil
		}
	}
	return Tab{}, fmt.Errorf("no tab target holds page %s", pageTargetID)
}

// waitLoaded waits for the tab to finish loading and returns its URL then.
func (b *Browser) waitLoaded(ctx context.Context, tab Tab) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		var st struct {
			Status string `json:"status"`
			URL    string `json:"url"`
		}
		err := b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(t => ({status: t.status, url: t.url}))`, tab.TabID), &st)
		if err == nil && st.Status == "complete" {
			return st.URL, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("tab %d did not finish loading (status %q): %w", tab.TabID, st.Status, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ErrNoExtensionDebugging is returned by Click (and Share, Unshare, ShareURL) on a browser
// launched without Options.ExtensionDebugging.
var ErrNoExtensionDebugging = errors.New("a real toolbar click needs Extensions.triggerAction, which this browser was not launched for (Options.ExtensionDebugging is for tests; use ShareFromExtension)")

// Click brings tab to the front and clicks the extension's toolbar button on it
// (Extensions.triggerAction, which fires chrome.action.onClicked as a real click does). The
// front step matters: Chromium 156 hands onClicked the window's active tab, whichever tab
// target triggerAction names, just as a person can only click the button of the visible tab.
// It needs Options.ExtensionDebugging (tests only).
func (b *Browser) Click(ctx context.Context, tab Tab) error {
	if !b.extensionDebugging {
		return fmt.Errorf("click the tabrelay button on tab %d: %w", tab.TabID, ErrNoExtensionDebugging)
	}
	if err := b.CDP.Call(ctx, "", target.CommandActivateTarget, &target.ActivateTargetParams{TargetID: target.ID(tab.TargetID)}, nil); err != nil {
		return fmt.Errorf("bring tab %d to the front: %w", tab.TabID, err)
	}
	for i := 0; i < 100; i++ {
		var active bool
		err := b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.tabs.get(%d).then(t => t.active)`, tab.TabID), &active)
		if err != nil {
			return fmt.Errorf("bring tab %d to the front: %w", tab.TabID, err)
		}
		if active {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := b.CDP.Call(ctx, "", extensions.CommandTriggerAction, &extensions.TriggerActionParams{ID: b.ExtensionID, TargetID: tab.TabTargetID}, nil); err != nil {
		return fmt.Errorf("click the tabrelay button on tab %d: %w", tab.TabID, err)
	}
	return nil
}

// Badge reads the extension's badge text on tab.
func (b *Browser) Badge(ctx context.Context, tab Tab) (string, error) {
	var s string
	if err := b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.action.getBadgeText({tabId: %d})`, tab.TabID), &s); err != nil {
		return "", fmt.Errorf("read badge: %w", err)
	}
	return s, nil
}

// Tooltip reads the extension's button title (tooltip) on tab.
func (b *Browser) Tooltip(ctx context.Context, tab Tab) (string, error) {
	var s string
	if err := b.ServiceWorkerEval(ctx, fmt.Sprintf(`chrome.action.getTitle({tabId: %d})`, tab.TabID), &s); err != nil {
		return "", fmt.Errorf("read tooltip: %w", err)
	}
	return s, nil
}

// WaitBadge waits until tab's badge reads want; the error quotes the last badge and tooltip.
func (b *Browser) WaitBadge(ctx context.Context, tab Tab, want string) error {
	var got, title string
	for {
		var err error
		if got, err = b.Badge(ctx, tab); err == nil && got == want {
			return nil
		}
		select {
		case <-ctx.Done():
			title, _ = b.Tooltip(context.WithoutCancel(ctx), tab)
			return fmt.Errorf("badge of tab %d is %q, want %q (tooltip: %q): %w", tab.TabID, got, want, title, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Share clicks the toolbar button on an unshared tab (Click: tests only) and waits for the badge
// to read "ON" and for the paired relay to list the tab.
func (b *Browser) Share(ctx context.Context, tab Tab) error {
	if err := b.Click(ctx, tab); err != nil {
		return err
	}
	return b.waitShared(ctx, tab)
}

// ShareFromExtension shares tab from inside the extension, with no Extensions.* domain and no
// unsafe flag: the extension's options page, opened for the purpose and closed again, sends the
// message the side panel's share button sends ({type: "share", tabId}), which runs the toolbar
// click's code on that tab. It then waits as Share does. This is how `tabrelay browser` shares.
func (b *Browser) ShareFromExtension(ctx context.Context, tab Tab) error {
	var reply struct {
		Error string `json:"error"`
	}
	err := b.withExtensionPage(ctx, func(sid string) error {
		return evaluate(ctx, b.CDP, sid, fmt.Sprintf(`chrome.runtime.sendMessage({type: 'share', tabId: %d})`, tab.TabID), &reply)
	})
	if err != nil {
		return fmt.Errorf("share tab %d: %w", tab.TabID, err)
	}
	if reply.Error != "" {
		return fmt.Errorf("share tab %d: the extension says: %s", tab.TabID, reply.Error)
	}
	return b.waitShared(ctx, tab)
}

// waitShared waits for tab's badge to read "ON" and for the paired relay to list it.
func (b *Browser) waitShared(ctx context.Context, tab Tab) error {
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := b.WaitBadge(wctx, tab, "ON"); err != nil {
		return fmt.Errorf("share tab: %w", err)
	}
	// The badge turns ON once the extension has sent the tab, a moment before the relay has it:
	// a client attaching right away could miss it.
	if err := b.waitListed(wctx, tab.TargetID); err != nil {
		return fmt.Errorf("share tab: %w", err)
	}
	return nil
}

// waitListed waits until the relay the extension was paired with lists targetID in /json/list
// (at once when Pair was not called).
func (b *Browser) waitListed(ctx context.Context, targetID string) error {
	b.relayMu.Lock()
	addr, token := b.relayAddr, b.relayToken
	b.relayMu.Unlock()
	if addr == "" {
		return nil
	}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/json/list", nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		var list []struct {
			ID string `json:"id"`
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = json.NewDecoder(resp.Body).Decode(&list)
			resp.Body.Close()
		}
		for _, l := range list {
			if l.ID == targetID {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the relay at %s does not list the shared tab %s: %w", addr, targetID, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Unshare clicks the toolbar button on a shared tab and waits for the badge to clear.
func (b *Browser) Unshare(ctx context.Context, tab Tab) error {
	if err := b.Click(ctx, tab); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := b.WaitBadge(wctx, tab, ""); err != nil {
		return fmt.Errorf("unshare tab: %w", err)
	}
	return nil
}

// ShareURL opens url in a new tab and shares it through the toolbar button (Share: tests only).
func (b *Browser) ShareURL(ctx context.Context, url string) (Tab, error) {
	tab, err := b.NewTab(ctx, url)
	if err != nil {
		return Tab{}, err
	}
	if err := b.Share(ctx, tab); err != nil {
		return Tab{}, err
	}
	return tab, nil
}

// CloseTab closes a tab over the control channel, as a person closing it would.
func (b *Browser) CloseTab(ctx context.Context, tab Tab) error {
	if err := b.CDP.Call(ctx, "", target.CommandCloseTarget, &target.CloseTargetParams{TargetID: target.ID(tab.TargetID)}, nil); err != nil {
		return fmt.Errorf("close tab %d: %w", tab.TabID, err)
	}
	return nil
}

// CloseBlankTabs closes the tabs still at about:blank except those in keep: the empty tab the
// browser started with, once the tabs a person asked for are open.
func (b *Browser) CloseBlankTabs(ctx context.Context, keep []Tab) error {
	ts, err := b.targets(ctx)
	if err != nil {
		return err
	}
	kept := map[string]bool{}
	for _, t := range keep {
		kept[t.TargetID] = true
	}
	for _, t := range ts {
		if t.Type != "page" || t.URL != "about:blank" || kept[t.TargetID] {
			continue
		}
		if err := b.CDP.Call(ctx, "", target.CommandCloseTarget, &target.CloseTargetParams{TargetID: target.ID(t.TargetID)}, nil); err != nil {
			return fmt.Errorf("close the empty start tab: %w", err)
		}
	}
	return nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// needNoSandbox is set when given, else true only for root on Linux.
func needNoSandbox(set *bool) bool {
	if set != nil {
		return *set
	}
	return runtime.GOOS == "linux" && os.Geteuid() == 0
}
