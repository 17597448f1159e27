package relay_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// TestRuntimeEnableWaiterNotStranded: client B's Runtime.enable waits for client A's, which is
// still in the tab; whatever happens to A meanwhile, B gets its answer, and later enables on
// the tab do too.
func TestRuntimeEnableWaiterNotStranded(t *testing.T) {
	cases := []struct {
		name string
		// gone ends A's part in the enable while it is pending in the tab.
		gone func(t *testing.T, e *env, a *cdpclient.Client, sa string)
		fail bool // the tab answers A's Runtime.enable with an error
	}{
		{name: "enabler disconnects", gone: func(t *testing.T, e *env, a *cdpclient.Client, _ string) {
			n := strings.Count(e.logs.String(), "client left")
			a.Close()
			e.waitFor("A's departure processed", func() bool { return strings.Count(e.logs.String(), "client left") > n })
		}},
		{name: "enabler detaches its session", gone: func(t *testing.T, e *env, a *cdpclient.Client, sa string) {
			if err := a.Call(ctx(t), "", "Target.detachFromTarget", map[string]string{"sessionId": sa}, nil); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "enabler disconnects and the enable fails", fail: true, gone: func(t *testing.T, e *env, a *cdpclient.Client, _ string) {
			n := strings.Count(e.logs.String(), "client left")
			a.Close()
			e.waitFor("A's departure processed", func() bool { return strings.Count(e.logs.String(), "client left") > n })
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{})
			e.share(tabA, "https://a.example/")
			release := make(chan struct{})
			var once sync.Once
			first := true
			var mu sync.Mutex
			e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
				if cmd.Method != "Runtime.enable" {
					return nil, nil, false
				}
				mu.Lock()
				held := first
				first = false
				mu.Unlock()
				if !held {
					return nil, nil, false
				}
				<-release // the first enable is answered only when the test says so
				if tc.fail {
					return nil, &wire.Error{Code: -32000, Message: "enable failed"}, true
				}
				return nil, nil, false
			})
			t.Cleanup(func() { once.Do(func() { close(release) }) })

			a := e.client("/cdp")
			b, sent := e.hookedClient(t, "Runtime.enable")
			sa, sb := attach(t, a, tabA), attach(t, b, tabA)
			go func() { _ = a.Call(context.Background(), sa, "Runtime.enable", nil, nil) }()
			e.waitFor("A's Runtime.enable reached the tab", func() bool { return e.ext.Received(tabA, "Runtime.enable") })

			ctxB := b.Expect(sb, "Runtime.executionContextCreated", nil)
			errB := make(chan error, 1)
			go func() { errB <- b.Call(context.Background(), sb, "Runtime.enable", nil, nil) }()
			<-sent
			// B's commands are handled in order: once this answer is back, B's enable is parked
			if err := b.Call(ctx(t), sb, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
				t.Fatal(err)
			}

			tc.gone(t, e, a, sa)
			once.Do(func() { close(release) })

			select {
			case err := <-errB:
				// B's own enable succeeded in the tab: whatever became of A's, B gets the
				// contexts and success
				if err != nil {
					t.Fatalf("B's Runtime.enable: %v", err)
				}
				if _, err := ctxB.Wait(ctx(t)); err != nil {
					t.Fatalf("B got no execution context: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("B's Runtime.enable was never answered after A went away")
			}

			// a later client's enable on the tab is answered too
			c := e.client("/cdp")
			sc := attach(t, c, tabA)
			w := c.Expect(sc, "Runtime.executionContextCreated", nil)
			cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := c.Call(cctx, sc, "Runtime.enable", nil, nil); err != nil {
				t.Fatalf("a later Runtime.enable: %v", err)
			}
			if _, err := w.Wait(cctx); err != nil {
				t.Fatalf("a later client got no execution context: %v", err)
			}
		})
	}
}

// TestRuntimeEnableWaiterLeaves: a client whose Runtime.enable is still in the tab may detach
// the session; the other client's enable is answered when the tab answers, and nothing is
// replayed on the detached session (whose client stopped waiting for its own enable when the
// session was detached: cdpclient.ErrSessionDetached, as Chrome would not answer it).
func TestRuntimeEnableWaiterLeaves(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
		if cmd.Method == "Runtime.enable" {
			<-release
		}
		return nil, nil, false
	})
	a := e.client("/cdp")
	b, sent := e.hookedClient(t, "Runtime.enable")
	sa, sb := attach(t, a, tabA), attach(t, b, tabA)
	errA := make(chan error, 1)
	go func() { errA <- a.Call(context.Background(), sa, "Runtime.enable", nil, nil) }()
	e.waitFor("A's Runtime.enable reached the tab", func() bool { return e.ext.Received(tabA, "Runtime.enable") })
	rec := recordRuntime(b, sb)
	errB := make(chan error, 1)
	go func() { errB <- b.Call(context.Background(), sb, "Runtime.enable", nil, nil) }()
	<-sent
	if err := b.Call(ctx(t), sb, "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Call(ctx(t), "", "Target.detachFromTarget", map[string]string{"sessionId": sb}, nil); err != nil {
		t.Fatal(err)
	}
	once.Do(func() { close(release) })
	for name, ch := range map[string]chan error{"A": errA, "B": errB} {
		select {
		case err := <-ch:
			if err != nil && (name == "A" || !errors.Is(err, cdpclient.ErrSessionDetached)) {
				t.Fatalf("%s's Runtime.enable: %v", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s's Runtime.enable was never answered", name)
		}
	}
	// an answer after the enables' proves any replay would have arrived
	if err := b.Call(ctx(t), "", "Target.getTargets", nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := rec.list(); len(got) != 0 {
		t.Fatalf("the detached session got %v", got)
	}
}

// hookedTransport is a CDP client transport that reports when a message naming method has been
// written, so a test can order a blocking call before the next one.
type hookedTransport struct {
	c      *websocket.Conn
	method string
	sent   chan struct{}
}

func (h *hookedTransport) Read(ctx context.Context) ([]byte, error) {
	_, b, err := h.c.Read(ctx)
	return b, err
}

func (h *hookedTransport) Write(ctx context.Context, msg []byte) error {
	// the caller's context must not reach coder/websocket, which closes the connection when
	// a write's context ends (see cdpclient's wsTransport)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := h.c.Write(wctx, websocket.MessageText, msg)
	if bytes.Contains(msg, []byte(`"`+h.method+`"`)) {
		select {
		case h.sent <- struct{}{}:
		default:
		}
	}
	return err
}

func (h *hookedTransport) Close() error { return h.c.Close(websocket.StatusNormalClosure, "") }

// hookedClient is a /cdp client whose returned channel receives once a message calling
// method has been written to the relay.
func (e *env) hookedClient(t *testing.T, method string) (*cdpclient.Client, <-chan struct{}) {
	t.Helper()
	conn := e.rawClient()
	conn.SetReadLimit(-1)
	sent := make(chan struct{}, 1)
	c := cdpclient.New(&hookedTransport{c: conn, method: method, sent: sent})
	t.Cleanup(func() { c.Close() })
	return c, sent
}
