package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
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
			if err := local.write(msg); err != nil {
				done <- nil
				return
			}
		}
	}()
	return <-done
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
