// Package cdpclient is a small Chrome DevTools Protocol client: commands with replies, flat
// sessions and event subscriptions over any message transport. The relay's in-process agent and
// the tests use it, over a WebSocket or over the hub's in-process pipe alike; internal/browser
// uses it over Chrome's --remote-debugging-pipe (Pipe).
package cdpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	neturl "net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Transport carries whole CDP messages (one JSON object each) in both directions.
type Transport interface {
	Read(ctx context.Context) ([]byte, error)
	Write(ctx context.Context, msg []byte) error
	Close() error
}

// ReadLimit is the largest message accepted from a WebSocket peer (screenshots are megabytes).
const ReadLimit = 256 << 20

// Event is one CDP event. SessionID is empty for events of the connection's default session.
type Event struct {
	SessionID string
	Method    string
	Params    json.RawMessage
}

// Error is an error reply from the CDP peer.
type Error struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    string `json:"data,omitempty"`
}

// Error formats the CDP error as "message (code): data".
func (e *Error) Error() string {
	if e.Data != "" {
		return fmt.Sprintf("%s (%d): %s", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("%s (%d)", e.Message, e.Code)
}

// ErrClosed is returned for calls on a client whose connection has ended.
var ErrClosed = errors.New("cdp connection closed")

// ErrSessionDetached is returned for calls that were waiting on a flat session when it was
// detached (Target.detachedFromTarget: an iframe navigated away or was removed, a tab closed).
// Chrome drops the commands in flight on a session it detaches without answering them, so
// without this they would wait until their caller's deadline. Calls sent later get Chrome's own
// "Session with given id not found" error.
var ErrSessionDetached = errors.New("cdp session detached")

type reply struct {
	result json.RawMessage
	err    error
}

// call is a command awaiting its reply.
type call struct {
	ch      chan reply
	session string
}

// Client is a CDP connection. It is safe for concurrent use.
type Client struct {
	t      Transport
	nextID atomic.Int64

	mu      sync.Mutex
	pending map[int64]call
	subs    map[int64]func(Event)
	nextSub int64
	err     error

	done chan struct{}
}

// New starts a client over t. The client owns t and closes it on Close.
func New(t Transport) *Client {
	c := &Client{t: t, pending: map[int64]call{}, subs: map[int64]func(Event){}, done: make(chan struct{})}
	go c.readLoop()
	return c
}

// Dial connects to a CDP WebSocket endpoint such as ws://127.0.0.1:18792/cdp?token=….
func Dial(ctx context.Context, url string, header http.Header) (*Client, error) {
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		var uerr *neturl.Error // net/http puts the whole URL, token and all, in its errors
		if errors.As(err, &uerr) {
			err = &redactedError{strings.ReplaceAll(err.Error(), uerr.URL, redact(uerr.URL)), err}
		}
		if resp != nil {
			return nil, fmt.Errorf("dial %s: HTTP %d: %w", redact(url), resp.StatusCode, err)
		}
		return nil, fmt.Errorf("dial %s: %w", redact(url), err)
	}
	conn.SetReadLimit(ReadLimit)
	return New(&wsTransport{c: conn}), nil
}

func redact(url string) string {
	for i := 0; i < len(url); i++ {
		if url[i] == '?' {
			return url[:i] + "?…"
		}
	}
	return url
}

// redactedError is an error whose message had a secret removed; it still unwraps to the original.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

type wsTransport struct{ c *websocket.Conn }

func (w *wsTransport) Read(ctx context.Context) ([]byte, error) {
	_, b, err := w.c.Read(ctx)
	return b, err
}

// writeTimeout bounds one WebSocket write: a peer that stops reading for this long is gone.
const writeTimeout = 30 * time.Second

// Write sends msg. coder/websocket closes the whole connection when the context of a write ends
// while it is under way (or has already ended when the write lock is taken), so a caller's
// cancelled call must never reach it: one abandoned call would cut every other caller off. The
// write runs under its own time limit; the caller's context only decides whether to start.
func (w *wsTransport) Write(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	return w.c.Write(wctx, websocket.MessageText, msg)
}
func (w *wsTransport) Close() error { return w.c.Close(websocket.StatusNormalClosure, "") }

type incoming struct {
	ID        int64           `json:"id"`
	SessionID string          `json:"sessionId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *Error          `json:"error"`
}

func (c *Client) readLoop() {
	ctx := context.Background()
	var err error
	for {
		var b []byte
		b, err = c.t.Read(ctx)
		if err != nil {
			break
		}
		var m incoming
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		if m.Method != "" && m.ID == 0 {
			ev := Event{SessionID: m.SessionID, Method: m.Method, Params: m.Params}
			if m.Method == "Target.detachedFromTarget" {
				c.detached(m.Params)
			}
			c.mu.Lock()
			fns := make([]func(Event), 0, len(c.subs))
			for _, f := range c.subs {
				fns = append(fns, f)
			}
			c.mu.Unlock()
			for _, f := range fns {
				f(ev)
			}
			continue
		}
		c.mu.Lock()
		p, ok := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if ok {
			if m.Error != nil {
				p.ch <- reply{err: m.Error}
			} else {
				p.ch <- reply{result: m.Result}
			}
		}
	}
	c.mu.Lock()
	c.err = fmt.Errorf("%w: %v", ErrClosed, err)
	for id, p := range c.pending {
		p.ch <- reply{err: c.err}
		delete(c.pending, id)
	}
	c.mu.Unlock()
	close(c.done)
}

// detached fails the calls waiting on the session a Target.detachedFromTarget event names.
func (c *Client) detached(params json.RawMessage) {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) != nil || p.SessionID == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, w := range c.pending {
		if w.session == p.SessionID {
			w.ch <- reply{err: fmt.Errorf("%w: %s", ErrSessionDetached, p.SessionID)}
			delete(c.pending, id)
		}
	}
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// Close ends the connection.
func (c *Client) Close() error { return c.t.Close() }

// Call sends method with params to sessionID ("" for the connection's default session) and
// decodes the reply's result into result (which may be nil).
func (c *Client) Call(ctx context.Context, sessionID, method string, params, result any) error {
	raw, err := c.CallRaw(ctx, sessionID, method, params)
	if err != nil {
		return err
	}
	if result != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("decode %s result: %w", method, err)
		}
	}
	return nil
}

// encode makes a command with a new id.
func (c *Client) encode(sessionID, method string, params any) (int64, []byte, error) {
	id := c.nextID.Add(1)
	msg := struct {
		ID        int64  `json:"id"`
		SessionID string `json:"sessionId,omitempty"`
		Method    string `json:"method"`
		Params    any    `json:"params,omitempty"`
	}{id, sessionID, method, params}
	b, err := json.Marshal(msg)
	if err != nil {
		return 0, nil, fmt.Errorf("encode %s: %w", method, err)
	}
	return id, b, nil
}

// Send writes a command and does not wait for its answer, which is dropped: for commands
// Chrome answers late while later commands still run in order (a mouse move in a background
// tab is answered only when the tab draws a frame, or after 5 s).
func (c *Client) Send(ctx context.Context, sessionID, method string, params any) error {
	_, b, err := c.encode(sessionID, method, params)
	if err != nil {
		return err
	}
	c.mu.Lock()
	err = c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if err := c.t.Write(ctx, b); err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	return nil
}

// CallRaw is Call returning the undecoded result.
func (c *Client) CallRaw(ctx context.Context, sessionID, method string, params any) (json.RawMessage, error) {
	id, b, err := c.encode(sessionID, method, params)
	if err != nil {
		return nil, err
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.pending[id] = call{ch: ch, session: sessionID}
	c.mu.Unlock()
	if err := c.t.Write(ctx, b); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("send %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", method, r.err)
		}
		return r.result, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Subscribe calls fn for every event until the returned function is called. fn runs on the
// read loop: it must not block or call the client.
func (c *Client) Subscribe(fn func(Event)) (unsubscribe func()) {
	c.mu.Lock()
	c.nextSub++
	id := c.nextSub
	c.subs[id] = fn
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		delete(c.subs, id)
		c.mu.Unlock()
	}
}

// Waiter waits for one event; create it before triggering the event.
type Waiter struct {
	ch    chan Event
	unsub func()
}

// Expect returns a waiter for the first event with the given method on sessionID (any session if
// sessionID is "*") for which match (may be nil) returns true.
func (c *Client) Expect(sessionID, method string, match func(Event) bool) *Waiter {
	w := &Waiter{ch: make(chan Event, 1)}
	var once sync.Once
	w.unsub = c.Subscribe(func(e Event) {
		if e.Method != method || (sessionID != "*" && e.SessionID != sessionID) {
			return
		}
		if match != nil && !match(e) {
			return
		}
		once.Do(func() { w.ch <- e })
	})
	return w
}

// Wait blocks until the event arrives or ctx ends.
func (w *Waiter) Wait(ctx context.Context) (Event, error) {
	defer w.unsub()
	select {
	case e := <-w.ch:
		return e, nil
	case <-ctx.Done():
		return Event{}, ctx.Err()
	}
}

// Session is a client bound to one session id.
type Session struct {
	C  *Client
	ID string
}

// Session returns a handle that sends to session id.
func (c *Client) Session(id string) Session { return Session{C: c, ID: id} }

// Call sends method to the session.
func (s Session) Call(ctx context.Context, method string, params, result any) error {
	return s.C.Call(ctx, s.ID, method, params, result)
}
