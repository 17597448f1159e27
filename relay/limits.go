package relay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/internal/reqbody"
)

// Limits bound what clients can make the server hold, with or without the secret: open
// connections, header and body sizes, idle keep-alive connections. Zero fields take the
// defaults.
type Limits struct {
	// MaxConns is the most connections open at once: WebSockets (the extension, CDP
	// clients), event streams and keep-alive HTTP alike. A connection beyond it is answered
	// 503 and closed at once, never queued (default 1024).
	MaxConns int
	// IdleTimeout closes a keep-alive HTTP connection that waits this long for its next
	// request (default 2 minutes). WebSockets are hijacked from the HTTP server and never
	// time out this way: they stay open for hours.
	IdleTimeout time.Duration
	// ReadHeaderTimeout is how long a client has to send a request's headers (default 10 s).
	ReadHeaderTimeout time.Duration
	// MaxHeaderBytes bounds a request's headers (default 64 KiB, about Chrome's own); Go's
	// HTTP server allows 4 KiB more, then answers 431.
	MaxHeaderBytes int
	// MaxBodyBytes is the body limit of every route that was given none with
	// [Server.AllowBody] (default reqbody.Default, 1 MiB). A larger body gets 413.
	MaxBodyBytes int64
}

// withDefaults fills in the zero fields.
func (l Limits) withDefaults() Limits {
	if l.MaxConns <= 0 {
		l.MaxConns = 1024
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 2 * time.Minute
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = 10 * time.Second
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = 64 << 10
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = reqbody.Default
	}
	return l
}

// guard is the server's per-request bookkeeping: body limits by route, and the requests in
// flight, so that rotating the secret ends the event streams opened with the old one.
type guard struct {
	bodies map[string]int64 // route pattern (as registered, e.g. /api/transcribe) → limit

	mu       sync.Mutex
	inflight map[*http.Request]context.CancelFunc
}

// AllowBody gives route (the path as registered, with the /api prefix, e.g. "/api/transcribe")
// a body limit other than Limits.MaxBodyBytes. Call it before Start.
func (s *Server) AllowBody(route string, n int64) {
	if s.guard.bodies == nil {
		s.guard.bodies = map[string]int64{}
	}
	s.guard.bodies[route] = n
}

// bodyLimit is the body limit of the route c matched.
func (s *Server) bodyLimit(c echo.Context) int64 {
	if n, ok := s.guard.bodies[c.Path()]; ok {
		return n
	}
	return s.limits.MaxBodyBytes
}

// bound caps the request body at the route's limit (413 at once when Content-Length says it
// is over) and, for requests that are not WebSocket upgrades, gives the handler a context that
// ends when the secret rotates (see endRequests).
func (s *Server) bound(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		limit := s.bodyLimit(c)
		if r.ContentLength > limit {
			s.log.Warn().Str("path", r.URL.Path).Int64("length", r.ContentLength).Int64("limit", limit).Msg("refused a request body over the limit")
			return echo.NewHTTPError(http.StatusRequestEntityTooLarge, "tabrelay: "+(&reqbody.TooLargeError{Limit: limit}).Error())
		}
		r.Body = http.MaxBytesReader(c.Response().Writer, r.Body, limit)
		if isUpgrade(r) {
			return next(c) // WebSockets end on rotation through closeSockets, with their own close code
		}
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		r = r.WithContext(ctx)
		c.SetRequest(r)
		s.guard.mu.Lock()
		if s.guard.inflight == nil {
			s.guard.inflight = map[*http.Request]context.CancelFunc{}
		}
		s.guard.inflight[r] = cancel
		s.guard.mu.Unlock()
		defer func() {
			s.guard.mu.Lock()
			delete(s.guard.inflight, r)
			s.guard.mu.Unlock()
		}()
		return next(c)
	}
}

// isUpgrade reports whether r asks for a WebSocket.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// endRequests cancels the requests in flight (event streams above all) whose credentials the
// current secret no longer accepts: called after the secret rotated.
func (s *Server) endRequests() {
	s.guard.mu.Lock()
	var ended []context.CancelFunc
	for r, cancel := range s.guard.inflight {
		if !s.opts.Secret.Check(tokenFrom(r)) {
			ended = append(ended, cancel)
		}
	}
	s.guard.mu.Unlock()
	for _, cancel := range ended {
		cancel()
	}
	if len(ended) > 0 {
		s.log.Info().Int("requests", len(ended)).Msg("pairing secret rotated: ended the requests and event streams made with the old one")
	}
}

// rotated is called when the secret on disk changed: every WebSocket and every request in
// flight made with the old secret ends.
func (s *Server) rotated() {
	s.secretRotated()
	s.endRequests()
}

// capListener accepts at most max connections at once; beyond that it answers 503 and closes
// the connection at once rather than queueing it, so a flood of connections costs a moment
// each, not memory.
type capListener struct {
	net.Listener
	max  int64
	open atomic.Int64
	log  zerolog.Logger
	// warned is when a refusal was last logged (unix nanoseconds): one line per 10 s at most,
	// so a flood of connections does not become a flood of logs.
	warned atomic.Int64
}

func newCapListener(ln net.Listener, max int, log zerolog.Logger) *capListener {
	return &capListener{Listener: ln, max: int64(max), log: log}
}

// Accept returns the next connection within the cap, refusing the ones over it.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.refuse(c)
			continue
		}
		return &capConn{Conn: c, l: l}, nil
	}
}

// refuse tells the client why in a few bytes (the kernel's send buffer takes them without
// waiting) and closes.
func (l *capListener) refuse(c net.Conn) {
	now := time.Now().UnixNano()
	if last := l.warned.Load(); now-last > int64(10*time.Second) && l.warned.CompareAndSwap(last, now) {
		l.log.Warn().Int64("max", l.max).Msg("refusing connections: too many open connections")
	}
	msg := fmt.Sprintf("tabrelay: too many open connections (at most %d); close some and retry\n", l.max)
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nRetry-After: 1\r\n\r\n%s", len(msg), msg)
	_ = c.Close()
}

// capConn frees its place under the cap when closed (by the HTTP server, or by the WebSocket
// library after a hijack).
type capConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *capConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// Routes lists the routes served (the relay's own and those added to the /api group), e.g.
// for a test that every route that takes a body honours its limit.
func (s *Server) Routes() []*echo.Route { return s.e.Routes() }

// CloseWrite half-closes the TCP connection: the HTTP server sends its answer to a request it
// refuses (headers or body too large) then a FIN, and waits before closing, so the client
// reads the answer instead of a connection reset.
func (c *capConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
