package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// A stand-in browser is this test binary started in a browser's place by a suite that launches
// its own browser (chromedp's allocates one per test binary and more for some tests, through
// the path in CHROMEDP_TEST_RUNNER). Instead of starting Chrome it connects to the endpoint under
// test (Chrome's own DevTools endpoint, or tabrelay's, with its secret as a user configures it)
// and carries the suite's messages to it and back over the transport the suite asked for on the
// command line: --remote-debugging-pipe (file descriptors 3 and 4, messages ended by a NUL
// byte) or --remote-debugging-port (a WebSocket it listens on and announces with Chrome's
// "DevTools listening on" line). It is the "browser process" of the suite: Browser.close on the
// browser session ends it (and does not reach the endpoint, which is a browser other tests
// share), as does the end of either side.
//
// Like a browser just started, it has a first tab of its own (the page its command line names,
// about:blank by default, in a window of its own), and the suite sees only its own pages: the
// first one, those it creates, and the popups they open. The endpoint is one browser that every
// stand-in of a run shares, so without that view a suite that attaches to "the browser's first
// page" (chromedp's first context of a browser) would take another test's tab, which that test
// then closes under it, on Chrome's endpoint and tabrelay's alike. The view is the same for both:
// only page targets are hidden, from Target.targetCreated, targetInfoChanged, targetDestroyed
// and Target.getTargets; the stand-in closes its pages when the browser ends.

// Environment variables that make this test binary a stand-in browser.
const (
	standinEndpointEnv = "TABRELAY_E2E_STANDIN_ENDPOINT" // the browser-level WebSocket URL to forward to
	standinTokenEnv    = "TABRELAY_E2E_STANDIN_TOKEN"    // the secret to send as a bearer token, if any
)

// runStandinIfAsked runs the stand-in browser and exits when this process was started as one.
// TestMain calls it before it parses flags (a browser's command line is not a test's).
func runStandinIfAsked() {
	endpoint := os.Getenv(standinEndpointEnv)
	if endpoint == "" {
		return
	}
	if err := runStandin(endpoint, os.Getenv(standinTokenEnv), os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "stand-in browser:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// standinLocal is the suite's side of a stand-in browser: one message at a time each way.
type standinLocal interface {
	read() ([]byte, error)
	write([]byte) error
}

// runStandin forwards between the transport args ask for and the endpoint until either ends or
// the suite closes the browser.
func runStandin(endpoint, token string, args []string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	dctx, dcancel := context.WithTimeout(ctx, 30*time.Second)
	up, _, err := websocket.Dial(dctx, endpoint, &websocket.DialOptions{HTTPHeader: h})
	dcancel()
	if err != nil {
		return fmt.Errorf("dial the endpoint %s: %w", endpoint, err)
	}
	defer up.CloseNow()
	up.SetReadLimit(-1)

	var local standinLocal
	switch {
	case hasFlag(args, "--remote-debugging-pipe"):
		local = newStandinPipe()
	case hasFlag(args, "--remote-debugging-port"):
		l, err := listenStandin(ctx)
		if err != nil {
			return err
		}
		local = l
	default:
		return errors.New("the command line asks for neither --remote-debugging-pipe nor --remote-debugging-port")
	}

	// the browser's first tab, opened on a connection of the stand-in's own (as the browser
	// process opens it), which also closes the stand-in's pages at the end
	ctl, err := cdpclient.Dial(ctx, endpoint, h)
	if err != nil {
		return fmt.Errorf("dial the endpoint %s: %w", endpoint, err)
	}
	defer ctl.Close()
	view := &standinView{own: map[string]bool{}, others: map[string]bool{}, calls: map[int64]string{}}
	first := "about:blank"
	if n := len(args); n > 0 && !strings.HasPrefix(args[n-1], "-") {
		first = args[n-1]
	}
	var created struct{ TargetID string }
	if err := ctl.Call(ctx, "", "Target.createTarget", map[string]any{"url": first, "newWindow": true}, &created); err != nil {
		return fmt.Errorf("open the browser's first tab (%s): %w", first, err)
	}
	view.add(created.TargetID)
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer ccancel()
		for _, id := range view.pages() {
			_ = ctl.Call(cctx, "", "Target.closeTarget", map[string]any{"targetId": id}, nil)
		}
	}()

	done := make(chan error, 2)
	go func() { // the suite's commands
		for {
			msg, err := local.read()
			if err != nil {
				done <- nil // the suite let go of its browser
				return
			}
			if id, ok := browserClose(msg); ok {
				// The browser process closes: answer as Chrome does before it goes away.
				done <- local.write(fmt.Appendf(nil, `{"id":%d,"result":{}}`, id))
				return
			}
			view.sent(msg)
			if err := up.Write(ctx, websocket.MessageText, msg); err != nil {
				done <- fmt.Errorf("to the endpoint: %w", err)
				return
			}
		}
	}()
	go func() { // the endpoint's answers and events
		for {
			_, msg, err := up.Read(ctx)
			if err != nil {
				done <- nil // the endpoint went away: so does the browser
				return
			}
			for _, m := range view.received(msg) {
				if err := local.write(m); err != nil {
					done <- nil
					return
				}
			}
		}
	}()
	return <-done
}

// standinView is what one stand-in browser's suite sees of the shared endpoint: its own pages.
type standinView struct {
	mu     sync.Mutex
	own    map[string]bool  // target ids of the pages of this browser
	others map[string]bool  // target ids of pages of other browsers the suite was not told of
	order  []string         // the pages of this browser, in the order they came
	calls  map[int64]string // the suite's Target.createTarget and getTargets calls, by id, not answered yet
	held   []heldEvent      // events of pages not known yet, while a Target.createTarget is not answered
}

func (v *standinView) add(id string) {
	if id != "" && !v.own[id] {
		v.own[id] = true
		v.order = append(v.order, id)
	}
}

// pages returns the target ids of this browser's pages.
func (v *standinView) pages() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.order)
}

// sent notes a command of the suite whose answer names pages.
func (v *standinView) sent(msg []byte) {
	if !bytes.Contains(msg, []byte(`"Target.createTarget"`)) && !bytes.Contains(msg, []byte(`"Target.getTargets"`)) {
		return
	}
	var m struct {
		ID        int64  `json:"id"`
		Method    string `json:"method"`
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(msg, &m) == nil && m.SessionID == "" {
		v.mu.Lock()
		v.calls[m.ID] = m.Method
		v.mu.Unlock()
	}
}

// standinTargetInfo is the part of a Target.TargetInfo the view reads.
type standinTargetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	OpenerID string `json:"openerId"`
}

// received returns what the suite is to see of msg, in order: msg, nothing, or (at the answer
// to a Target.createTarget) the events of its new page held until the answer named it, then msg.
func (v *standinView) received(msg []byte) [][]byte {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.calls) > 0 && !bytes.Contains(msg[:min(len(msg), 64)], []byte(`"method"`)) {
		var m struct {
			ID        int64  `json:"id"`
			SessionID string `json:"sessionId"`
			Result    struct {
				TargetID    string            `json:"targetId"`
				TargetInfos []json.RawMessage `json:"targetInfos"`
			} `json:"result"`
		}
		if json.Unmarshal(msg, &m) == nil && m.SessionID == "" {
			switch v.calls[m.ID] {
			case "Target.createTarget":
				delete(v.calls, m.ID)
				v.add(m.Result.TargetID)
				return append(v.release(), msg)
			case "Target.getTargets":
				delete(v.calls, m.ID)
				var rest []json.RawMessage
				for _, raw := range m.Result.TargetInfos {
					var ti standinTargetInfo
					if json.Unmarshal(raw, &ti) == nil && ti.Type == "page" && !v.own[ti.TargetID] {
						continue
					}
					rest = append(rest, raw)
				}
				if len(rest) != len(m.Result.TargetInfos) {
					out, err := json.Marshal(map[string]any{"id": m.ID, "result": map[string]any{"targetInfos": rest}})
					if err == nil {
						return [][]byte{out}
					}
				}
			}
		}
		return [][]byte{msg}
	}
	if !bytes.Contains(msg, []byte(`"Target.target`)) {
		return [][]byte{msg}
	}
	var ev struct {
		Method    string `json:"method"`
		SessionID string `json:"sessionId"`
		Params    struct {
			TargetInfo standinTargetInfo `json:"targetInfo"`
			TargetID   string            `json:"targetId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &ev) != nil || ev.SessionID != "" {
		return [][]byte{msg}
	}
	switch ev.Method {
	case "Target.targetCreated", "Target.targetInfoChanged":
		ti := ev.Params.TargetInfo
		if ti.Type != "page" || v.own[ti.TargetID] {
			return [][]byte{msg}
		}
		if ev.Method == "Target.targetCreated" && v.own[ti.OpenerID] {
			v.add(ti.TargetID) // a popup of one of this browser's pages
			return [][]byte{msg}
		}
		if v.creating() {
			// perhaps the page the suite is opening: Chrome announces it before it answers
			v.held = append(v.held, heldEvent{ti.TargetID, msg})
			return nil
		}
		v.others[ti.TargetID] = true
		return nil
	case "Target.targetDestroyed":
		// the end of a page of another browser is not seen either
		id := ev.Params.TargetID
		if v.others[id] {
			delete(v.others, id)
			return nil
		}
	}
	return [][]byte{msg}
}

// creating reports whether a Target.createTarget of the suite is not answered yet.
func (v *standinView) creating() bool {
	for _, m := range v.calls {
		if m == "Target.createTarget" {
			return true
		}
	}
	return false
}

// release returns the held events of this browser's pages and forgets the others'.
func (v *standinView) release() [][]byte {
	var out [][]byte
	for _, h := range v.held {
		if v.own[h.id] {
			out = append(out, h.msg)
		} else {
			v.others[h.id] = true
		}
	}
	v.held = nil
	return out
}

// heldEvent is an event of a page the view does not know yet.
type heldEvent struct {
	id  string
	msg []byte
}

// hasFlag reports whether args hold the flag name, alone or with a value.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

// browserClose returns the id of msg when it is Browser.close on the browser session.
func browserClose(msg []byte) (int64, bool) {
	var m struct {
		ID        int64  `json:"id"`
		Method    string `json:"method"`
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Method != "Browser.close" || m.SessionID != "" {
		return 0, false
	}
	return m.ID, true
}

// standinPipe is Chrome's --remote-debugging-pipe: commands on file descriptor 3, answers and
// events on 4, each message ended by a NUL byte.
type standinPipe struct {
	in  *bufio.Reader
	mu  sync.Mutex
	out *os.File
}

func newStandinPipe() *standinPipe {
	return &standinPipe{in: bufio.NewReader(os.NewFile(3, "cdp-in")), out: os.NewFile(4, "cdp-out")}
}

func (p *standinPipe) read() ([]byte, error) {
	msg, err := p.in.ReadBytes(0)
	if err != nil {
		return nil, err
	}
	return msg[:len(msg)-1], nil
}

func (p *standinPipe) write(msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, err := p.out.Write(append(msg, 0))
	return err
}

// standinSocket is Chrome's --remote-debugging-port: the suite dials the WebSocket the
// "DevTools listening on" line names.
type standinSocket struct {
	ctx  context.Context
	conn chan *websocket.Conn
	c    *websocket.Conn
}

// listenStandin listens on a free port, announces it as Chrome does on its output and returns
// once the suite connected.
func listenStandin(ctx context.Context) (*standinSocket, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for the suite: %w", err)
	}
	s := &standinSocket{ctx: ctx, conn: make(chan *websocket.Conn, 1)}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		c.SetReadLimit(-1)
		select {
		case s.conn <- c:
			<-ctx.Done() // the handler owns the connection until the browser ends
		default:
			c.Close(websocket.StatusPolicyViolation, "one client at a time")
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "\nDevTools listening on ws://%s/devtools/browser/standin\n", ln.Addr())
	select {
	case s.c = <-s.conn:
		return s, nil
	case <-time.After(time.Minute):
		return nil, errors.New("the suite did not connect within a minute")
	}
}

func (s *standinSocket) read() ([]byte, error) {
	_, msg, err := s.c.Read(s.ctx)
	return msg, err
}

func (s *standinSocket) write(msg []byte) error {
	return s.c.Write(s.ctx, websocket.MessageText, msg)
}
