package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/internal/buildinfo"
	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// Version is tabrelay's version (internal/buildinfo), reported to the extension, on /health
// and on the home page.
var Version = buildinfo.Get().Version

// ReadLimit is the largest message accepted on any socket: screenshots and accessibility trees
// are megabytes; a larger frame closes the connection with status 1009.
const ReadLimit = 128 << 20

// Options configure a Server.
type Options struct {
	// Addr is the listen address (default 127.0.0.1:18792; port 0 picks a free port).
	Addr string
	// Secret holds the pairing secret (required).
	Secret *secret.Store
	// ExtensionIDs are the extension ids allowed on /extension and as CDP origins (default: the
	// bundled extension's only; cmd/tabrelay adds TABRELAY_EXTENSION_IDS and --extension-ids
	// through config.ExtensionIDs).
	ExtensionIDs []string
	// AllowNonLoopback permits a non-loopback listen address.
	AllowNonLoopback bool
	// TrustSameUser lets a loopback connection from a process of the server's own OS user in
	// without the secret, unless the request bears a browser's marks (see peer.go). Linux only:
	// NewServer refuses it elsewhere.
	TrustSameUser bool
	// Hub tunes routing.
	Hub HubOptions
	// Logger receives structured logs.
	Logger *zerolog.Logger
	// OnExtension, when set, is called each time an extension connects (with the secret, so
	// it is paired); it must not block.
	OnExtension func()
	// MaxMessageBytes is the largest message accepted on any socket (default ReadLimit).
	MaxMessageBytes int64
	// Limits bound connections, headers, bodies and idle keep-alive connections.
	Limits Limits
	// WriteTimeout is how long a write to a CDP client may make no progress before the client
	// is disconnected as too slow, with 1008 (default 30 s).
	WriteTimeout time.Duration
	// CutGrace is how long a client cut as too slow has, from the cut, to take the message that
	// was being written to it (a frame cannot be interrupted) before the close frame goes out
	// with the reason; past it the socket is dropped without a close frame (default 5 s).
	CutGrace time.Duration
}

// Server is the relay's HTTP and WebSocket front: discovery, CDP endpoints, the extension link
// and the authenticated /api group for the agent, all behind the same Host, Origin and secret
// checks.
type Server struct {
	opts   Options
	log    zerolog.Logger
	hub    *Hub
	e      *echo.Echo
	api    *echo.Group
	ln     net.Listener
	port   int
	origin originPolicy
	// hosts are the non-loopback Host names allowed besides the loopback ones: the bound
	// addresses, only with AllowNonLoopback.
	hosts  []string
	thr    *throttle
	cancel context.CancelFunc
	limits Limits // Options.Limits with the defaults, from Start
	guard  guard
	// pairing holds the one-time pairing codes given out (NewPairingCode).
	pairing pairCodes
	// extra are the listeners besides ln: [::1] when started on localhost.
	extra []net.Listener

	// checks report the problems of other parts on /health, by name (AddHealthCheck).
	checks map[string]HealthCheck

	mu    sync.Mutex
	conns map[*websocket.Conn]socketKind
}

// HealthCheck tells a part's problem in words for /health ("" while there is none). It is
// called on every request to /health: it must be quick and must not say anything secret
// (/health answers without the secret).
type HealthCheck func() string

// AddHealthCheck makes /health report check's problem under name, in "problems", while there
// is one. Call it before Start.
func (s *Server) AddHealthCheck(name string, check HealthCheck) {
	if s.checks == nil {
		s.checks = map[string]HealthCheck{}
	}
	s.checks[name] = check
}

// Health is what /health answers.
type Health struct {
	// Status is "ok" while the server serves.
	Status  string `json:"status"`
	Version string `json:"version"`
	// ExtensionConnected tells whether the extension is connected.
	ExtensionConnected bool `json:"extensionConnected"`
	// Problems are the problems the parts report (see AddHealthCheck), by part.
	Problems map[string]string `json:"problems,omitempty"`
}

// NewServer builds a server; Start makes it listen.
func NewServer(opts Options) (*Server, error) {
	if opts.Addr == "" {
		opts.Addr = config.DefaultAddr
	}
	if opts.Secret == nil {
		return nil, errors.New("relay: a secret store is required")
	}
	if err := config.CheckListenAddr(opts.Addr, opts.AllowNonLoopback); err != nil {
		return nil, err
	}
	if opts.TrustSameUser {
		if err := checkPeerSupport(); err != nil {
			return nil, err
		}
	}
	if len(opts.ExtensionIDs) == 0 {
		opts.ExtensionIDs = []string{config.DefaultExtensionID}
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = ReadLimit
	}
	if opts.CutGrace <= 0 {
		opts.CutGrace = 5 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 30 * time.Second
	}
	if opts.Logger == nil {
		l := zerolog.Nop()
		opts.Logger = &l
	}
	if opts.Hub.Logger == nil {
		opts.Hub.Logger = opts.Logger
	}
	s := &Server{
		opts: opts, log: *opts.Logger, hub: NewHub(opts.Hub),
		origin: originPolicy{extensionIDs: opts.ExtensionIDs}, thr: newThrottle(),
		conns: map[*websocket.Conn]socketKind{},
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.httpError
	e.Use(s.logRequests, s.checkHost)
	e.GET("/health", s.health)
	e.GET("/", s.home)

	cdp := []echo.MiddlewareFunc{s.checkCDPOrigin, s.authenticate}
	// nothing secret in these answers: every discovery client can read them without the secret
	public := []echo.MiddlewareFunc{s.checkCDPOrigin, s.authenticateIfPresent}
	for _, p := range []string{"/json/version", "/json/version/"} {
		e.GET(p, s.jsonVersion, public...)
	}
	// /json/protocol: the same middleware as /json/version (nothing in it is secret either)
	for _, p := range []string{"/json/protocol", "/json/protocol/"} {
		e.GET(p, s.jsonProtocol, public...)
	}
	for _, p := range []string{"/json", "/json/", "/json/list", "/json/list/"} {
		e.GET(p, s.jsonList, cdp...)
	}
	e.PUT("/json/new", s.jsonNew, cdp...)
	e.GET("/json/new", func(c echo.Context) error {
		return c.String(http.StatusMethodNotAllowed, "Using unsafe HTTP verb "+sentMethod(c.Request())+" to invoke /json/new. This action supports only PUT verb.")
	}, cdp...)
	e.Any("/json/activate/:id", s.jsonActivate, cdp...)
	e.Any("/json/close/:id", s.jsonClose, cdp...)
	e.GET("/cdp", s.cdpSocket, cdp...)
	e.GET("/devtools/browser", s.cdpSocket, cdp...)
	e.GET("/devtools/browser/:id", s.cdpSocket, cdp...)
	e.GET("/devtools/page/:id", s.cdpSocket, cdp...)
	e.GET("/extension", s.extensionSocket, s.checkExtensionOrigin, s.authenticate)
	if opts.Hub.TraceLegs {
		// the benchmark's per-leg mode: the commands traced since the last read
		e.GET("/debug/legs", func(c echo.Context) error { return c.JSON(http.StatusOK, s.hub.TakeLegTraces()) }, cdp...)
		// and the floor under them: round trips through the extension's socket, in µs
		e.GET("/debug/echo", s.debugEcho, cdp...)
	}
	e.POST(proof.ChallengePath, s.authChallenge, s.checkCDPOrigin)
	e.POST(proof.PairPath, s.authPair, s.checkCDPOrigin)
	e.POST(proof.PairCodePath, s.authPairCode, s.checkCDPOrigin, s.authenticate)
	s.api = e.Group("/api", s.checkCDPOrigin, s.authenticate)
	s.e = e
	return s, nil
}

// Hub returns the server's hub.
func (s *Server) Hub() *Hub { return s.hub }

// API is the authenticated /api route group, for the agent's handlers.
func (s *Server) API() *echo.Group { return s.api }

// Mount serves h at path (every method) behind the same Host, Origin and secret checks as /api
// and the CDP endpoints (the MCP server's /mcp). Call it before Start.
func (s *Server) Mount(path string, h http.Handler) {
	s.e.Any(path, echo.WrapHandler(h), s.checkCDPOrigin, s.authenticate)
}

// Token returns the current secret.
func (s *Server) Token() string { return s.opts.Secret.Token() }

// Start listens and serves in the background until ctx ends or Close.
func (s *Server) Start(ctx context.Context) error {
	network, addr := "tcp", s.opts.Addr
	host, port, _ := net.SplitHostPort(addr)
	localhost := strings.EqualFold(host, "localhost")
	if localhost {
		// localhost means both loopback addresses: listen on 127.0.0.1 and [::1], so that no
		// other program can take the one a client happens to resolve first.
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	if h, _, _ := net.SplitHostPort(addr); net.ParseIP(h).To4() != nil {
		network = "tcp4" // 0.0.0.0 means IPv4 only (Go would open a dual-stack socket)
	}
	ln, err := net.Listen(network, addr)
	if err != nil {
		return listenError(addr, err)
	}
	s.ln = ln
	if localhost {
		p := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ln6, err := net.Listen("tcp6", net.JoinHostPort("::1", p))
		switch {
		case err == nil:
			s.extra = append(s.extra, ln6)
		case ipv6Unavailable(err):
			s.log.Warn().Err(err).Msg("localhost: this machine has no IPv6 loopback (::1); listening on 127.0.0.1 only")
		default:
			ln.Close()
			return fmt.Errorf("localhost means both loopback addresses, but [::1]:%s cannot be used: %w (another program may hold it; use --addr 127.0.0.1:%s to listen on IPv4 only)", p, err, p)
		}
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	if s.opts.AllowNonLoopback {
		hosts, err := boundHosts(ln.Addr().(*net.TCPAddr).IP)
		if err != nil {
			ln.Close()
			return err
		}
		s.hosts = hosts
		if len(hosts) > 0 {
			s.log.Warn().Strs("hosts", hosts).Int("port", s.port).Msg("listening on non-loopback addresses: whoever reaches them with the secret controls the shared tabs")
		}
	}
	if s.opts.TrustSameUser {
		s.log.Warn().Int("uid", os.Getuid()).Msg("trusting same-user peers: loopback connections from this OS user's processes need no secret (requests from a browser still do)")
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.limits = s.opts.Limits.withDefaults()
	s.e.Use(s.bound)
	srv := &http.Server{
		Handler:           lenientDiscoveryMethod(s.e),
		ReadHeaderTimeout: s.limits.ReadHeaderTimeout,
		IdleTimeout:       s.limits.IdleTimeout, // keep-alive only: hijacked WebSockets are the handlers' own
		MaxHeaderBytes:    s.limits.MaxHeaderBytes,
	}
	s.e.Server = srv
	for _, l := range append([]net.Listener{ln}, s.extra...) {
		go func() { _ = srv.Serve(newCapListener(l, s.limits.MaxConns, s.log)) }() // a cap per listen address
	}
	go s.opts.Secret.Watch(ctx, time.Second, s.rotated)
	go func() {
		<-ctx.Done()
		s.shutdown()
	}()
	return nil
}

// listenError explains a failed listen.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen on %s: %w (is another tabrelay running? `tabrelay serve --addr 127.0.0.1:0` picks a free port)", addr, err)
	}
	return fmt.Errorf("listen on %s: %w", addr, err)
}

// ipv6Unavailable reports whether a listen on [::1] failed because the machine has no IPv6
// loopback (as opposed to the port being taken).
func ipv6Unavailable(err error) bool {
	return errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.EAFNOSUPPORT) || errors.Is(err, syscall.EPROTONOSUPPORT)
}

// Addr is the address the server is reached at from this machine, e.g. 127.0.0.1:18792: the
// listen address, with 127.0.0.1 or [::1] in place of an unspecified one (0.0.0.0, [::]),
// which is no address a client can connect to nor a Host the server accepts.
func (s *Server) Addr() string {
	a := s.ln.Addr().(*net.TCPAddr)
	if a.IP.IsUnspecified() {
		lo := "127.0.0.1"
		if a.IP.To4() == nil {
			lo = "::1"
		}
		return net.JoinHostPort(lo, strconv.Itoa(a.Port))
	}
	return a.String()
}

// addrFor is the address to advertise to the client of r: the non-loopback address it reached
// the server at when that one is allowed (--dangerously-listen-non-loopback), else Addr. The
// result is always one of the server's own addresses, never text copied from the request.
func (s *Server) addrFor(r *http.Request) string {
	if name, _, err := net.SplitHostPort(r.Host); err == nil {
		for _, h := range s.hosts {
			if strings.EqualFold(name, h) {
				return net.JoinHostPort(h, strconv.Itoa(s.port))
			}
		}
	}
	return s.Addr()
}

// boundHosts lists the non-loopback addresses a listener bound to ip answers on, as allowed
// Host names: ip itself, or every interface address when ip is unspecified (0.0.0.0: the
// IPv4 ones; [::]: all). Loopback, link-local and zoned addresses are left out.
func boundHosts(ip net.IP) ([]string, error) {
	if ip.IsLoopback() {
		return nil, nil
	}
	if !ip.IsUnspecified() {
		return []string{ip.String()}, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("list the network interfaces' addresses for the Host allowlist: %w", err)
	}
	var hosts []string
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() || n.IP.IsUnspecified() {
			continue
		}
		if ip.To4() != nil && n.IP.To4() == nil {
			continue // an IPv4 listener is not reached at IPv6 addresses
		}
		hosts = append(hosts, n.IP.String())
	}
	return hosts, nil
}

// HTTPURL is the server's base URL, e.g. http://127.0.0.1:18792.
func (s *Server) HTTPURL() string { return "http://" + s.Addr() }

// CDPURL is the browser-level CDP endpoint, with the secret in the query.
func (s *Server) CDPURL() string { return "ws://" + s.Addr() + "/cdp?token=" + s.Token() }

// Close stops the server and ends every connection.
func (s *Server) Close() error {
	if s.cancel != nil {
		s.cancel()
	}
	s.shutdown()
	return nil
}

func (s *Server) shutdown() {
	s.hub.Close()
	s.closeSockets(websocket.StatusGoingAway, "tabrelay server is shutting down", false)
	if s.e.Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.e.Server.Shutdown(ctx)
	}
}

// closeSockets closes live WebSockets (echo's Shutdown leaves hijacked ones open).
func (s *Server) closeSockets(code websocket.StatusCode, reason string, rotated bool) {
	s.mu.Lock()
	conns := make(map[*websocket.Conn]socketKind, len(s.conns))
	for c, k := range s.conns {
		conns[c] = k
	}
	s.mu.Unlock()
	for c, k := range conns {
		cc := code
		if rotated && k.ext {
			cc = wire.CloseTokenRotated
		}
		if k.bare {
			go c.CloseNow()
			continue
		}
		go c.Close(cc, reason)
	}
}

func (s *Server) secretRotated() {
	s.log.Info().Msg("pairing secret rotated: closing every connection made with the old one")
	s.closeSockets(websocket.StatusPolicyViolation, "tabrelay pairing secret rotated", true)
}

// socketKind says what a live WebSocket is, for closing it.
type socketKind struct {
	ext bool // the extension's
	// bare: a client that reads every frame as a message (go-rod: it ignores opcodes, and a
	// close frame's payload makes it panic); it is closed without a close frame, as a browser
	// that exits closes its connections.
	bare bool
}

func (s *Server) track(c *websocket.Conn, k socketKind) func() {
	s.mu.Lock()
	s.conns[c] = k
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}
}

// httpError writes errors as plain text, as Chrome's discovery endpoints do.
func (s *Server) httpError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, msg := http.StatusInternalServerError, err.Error()
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code = he.Code
		msg = fmt.Sprint(he.Message)
	}
	_ = c.String(code, msg)
}

func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		// the path only: the query may carry the secret
		s.log.Debug().Str("method", c.Request().Method).Str("path", c.Request().URL.Path).
			Int("status", c.Response().Status).Dur("took", time.Since(start)).Msg("http")
		return nil
	}
}

func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !hostAllowed(c.Request().Host, s.port, s.hosts) {
			s.log.Warn().Str("path", c.Request().URL.Path).Msg("refused a request with a foreign Host header (DNS rebinding?)")
			if len(s.hosts) > 0 {
				return echo.NewHTTPError(http.StatusForbidden, "tabrelay: Host header must be 127.0.0.1, localhost, [::1] or one of the listen addresses ("+strings.Join(s.hosts, ", ")+") with this server's port")
			}
			return echo.NewHTTPError(http.StatusForbidden, "tabrelay: Host header must be 127.0.0.1, localhost or [::1] with this server's port")
		}
		return next(c)
	}
}

// checkCDPOrigin refuses browser requests on the CDP, discovery and /api endpoints before the
// secret is checked, so that a web page can neither use them nor, by failing authentication on
// purpose, throttle everyone out.
func (s *Server) checkCDPOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		o := r.Header.Get("Origin")
		if !s.origin.cdpOrigin(o) {
			s.log.Warn().Str("path", r.URL.Path).Str("origin", o).Msg("refused a browser origin")
			return echo.NewHTTPError(http.StatusForbidden, "tabrelay: web pages may not use this endpoint (Origin refused)")
		}
		// Browsers send no Origin on no-cors GETs (<img src>, <script src>, navigations) but
		// always send Sec-Fetch-Site; CDP clients never do. An allowed Origin vouches for itself.
		if o == "" && pageFetch(r.Header) {
			s.log.Warn().Str("path", r.URL.Path).Str("sec-fetch-site", r.Header.Get("Sec-Fetch-Site")).Msg("refused a browser request without Origin")
			return echo.NewHTTPError(http.StatusForbidden, "tabrelay: web pages may not use this endpoint (a request from a web page: Sec-Fetch-Site is "+r.Header.Get("Sec-Fetch-Site")+" and no allowed Origin)")
		}
		return next(c)
	}
}

func (s *Server) checkExtensionOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if o := c.Request().Header.Get("Origin"); !s.origin.extensionOrigin(o) {
			s.log.Warn().Str("origin", o).Msg("refused an extension connection from a foreign origin")
			return echo.NewHTTPError(http.StatusForbidden, "tabrelay: only the tabrelay extension may connect here (Origin must be an allowed chrome-extension:// id)")
		}
		return next(c)
	}
}

// authenticate lets a request through only with the right secret; see throttle for how wrong
// and missing ones are refused.
func (s *Server) authenticate(next echo.HandlerFunc) echo.HandlerFunc {
	return s.requireSecret(next, false)
}

// authenticateIfPresent is authenticate for answers with nothing secret in them (/json/version,
// /json/protocol): a request without any credential passes too, unauthenticated (see
// authenticated); a wrong credential is refused as everywhere.
func (s *Server) authenticateIfPresent(next echo.HandlerFunc) echo.HandlerFunc {
	return s.requireSecret(next, true)
}

// authenticatedKey marks, in the echo context, a request that carried the right secret.
const authenticatedKey = "tabrelay.authenticated"

// authenticated reports whether the request carried the right secret.
func authenticated(c echo.Context) bool {
	ok, _ := c.Get(authenticatedKey).(bool)
	return ok
}

// requireSecret is authenticate, or with optional authenticateIfPresent.
func (s *Server) requireSecret(next echo.HandlerFunc, optional bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		tok, present, err := credential(r)
		if err == nil && present && s.checkSecret(tok) {
			c.Set(authenticatedKey, true)
			return next(c)
		}
		if err == nil && !present {
			if optional || s.trustedPeer(r) {
				return next(c)
			}
			return echo.NewHTTPError(http.StatusUnauthorized, "tabrelay: this endpoint needs the secret; pass it as 'Authorization: Bearer <token>' or '?token=<token>' (`tabrelay token` prints it)")
		}
		msg := "tabrelay: wrong secret (or an expired credential); pass the current one as 'Authorization: Bearer <token>' or '?token=<token>' (`tabrelay token` prints it)"
		if errors.Is(err, errConflictingTokens) {
			msg = "tabrelay: " + err.Error() + "; give ?token= once, or the same secret each time"
		}
		s.log.Warn().Str("path", r.URL.Path).Msg("refused a request with a wrong secret")
		return s.refuseWrongCredential(c, msg)
	}
}

// trustedPeer reports whether a request without a credential may pass as a same-user peer
// (Options.TrustSameUser; see peer.go). It does not count as carrying the secret: answers built
// for it (webSocketDebuggerUrl) do not carry the secret either.
func (s *Server) trustedPeer(r *http.Request) bool {
	if !s.opts.TrustSameUser || browserProvenance(r.Header) {
		return false
	}
	ok, why := samePeerUser(r)
	if !ok {
		s.log.Debug().Str("path", r.URL.Path).Str("why", why).Msg("not trusted as a same-user peer")
	}
	return ok
}

// refuseWrongCredential counts a wrong credential and refuses it with 401 and msg after the
// throttle's wait (only this request waits), or at once with 429 when too many refusals are
// waiting already.
func (s *Server) refuseWrongCredential(c echo.Context, msg string) error {
	d, ok := s.thr.fail()
	if !ok {
		c.Response().Header().Set("Retry-After", fmt.Sprint(int(s.thr.max.Seconds())))
		return echo.NewHTTPError(http.StatusTooManyRequests, "tabrelay: too many wrong secrets at once; wait and retry with the right one")
	}
	if d > 0 {
		defer s.thr.done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.Request().Context().Done():
			return nil // the client gave up: no one to answer
		}
	}
	return echo.NewHTTPError(http.StatusUnauthorized, msg)
}

func (s *Server) health(c echo.Context) error {
	h := Health{Status: "ok", Version: Version, ExtensionConnected: s.hub.ExtensionConnected()}
	for name, check := range s.checks {
		if p := check(); p != "" {
			if h.Problems == nil {
				h.Problems = map[string]string{}
			}
			h.Problems[name] = p
		}
	}
	return c.JSON(http.StatusOK, h)
}

// accept upgrades to a WebSocket whose writes can be batched (see corkConn), with a handshake as
// lenient as Chrome's (see lenientKey). bare reports a client whose key only Chrome's leniency
// accepts (go-rod's "nil"): its WebSocket client reads close frames as messages, so its
// connection is closed without one.
func (s *Server) accept(c echo.Context) (conn *websocket.Conn, cc *corkConn, bare bool, err error) {
	r, acceptKey := lenientKey(c.Request())
	cw := &corkWriter{ResponseWriter: c.Response(), accept: acceptKey}
	conn, err = websocket.Accept(cw, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return nil, nil, false, err // Accept already wrote the HTTP error
	}
	conn.SetReadLimit(s.opts.MaxMessageBytes)
	return conn, cw.cc, acceptKey != "", nil
}

// closeReason is the close frame a socket ends with when the hub drops its peer.
type closeReason struct {
	code   websocket.StatusCode
	reason string
}

// writeLoop writes what the hub queues on out until the outbox closes or a write fails. When
// the outbox closes, the socket ends with the hub's reason from kc, else with fallback (nil:
// dropped without a close frame); a bare socket (see socketKind) is always dropped without one;
// a failed write drops it at once. A write that makes no progress for timeout calls onStall,
// which is to make the hub drop the connection.
func writeLoop(ctx context.Context, conn *websocket.Conn, cc *corkConn, out *Outbox, kc <-chan closeReason, fallback *closeReason, timeout time.Duration, bare bool, onStall func()) {
	stall := time.AfterFunc(time.Hour, onStall)
	stall.Stop()
	defer stall.Stop()
	for {
		msgs, err := out.Take(ctx)
		if err != nil {
			if bare {
				conn.CloseNow()
				return
			}
			if out.Dropped() { // cut as too slow: the reason is on its way
				select {
				case k := <-kc:
					_ = conn.Close(k.code, k.reason)
				case <-ctx.Done():
					conn.CloseNow()
				}
				return
			}
			select {
			case k := <-kc:
				_ = conn.Close(k.code, k.reason)
			default:
				if fallback != nil {
					_ = conn.Close(fallback.code, fallback.reason)
				} else {
					conn.CloseNow()
				}
			}
			return
		}
		err = writeBatch(ctx, conn, cc, out, msgs, stall, timeout)
		msgs = nil
		out.Release()
		if err != nil {
			conn.CloseNow()
			return
		}
	}
}

// writeBatch writes queued messages, in one flush when there are several, each message (and
// the flush) watched by stall; it stops early when the hub dropped the queue.
func writeBatch(ctx context.Context, conn *websocket.Conn, cc *corkConn, out *Outbox, msgs [][]byte, stall *time.Timer, timeout time.Duration) error {
	corked := len(msgs) > 1 && cc != nil
	if corked {
		cc.cork()
		defer cc.uncork()
	}
	for i, m := range msgs {
		if out.Dropped() {
			return nil
		}
		if out.o.sending != nil {
			out.o.sending(m)
		}
		stall.Reset(timeout)
		err := conn.Write(ctx, websocket.MessageText, m)
		stall.Stop()
		if out.o.wrote != nil && err == nil {
			out.o.wrote(m)
		}
		msgs[i] = nil // written: its memory can go
		if err != nil {
			return err
		}
	}
	if corked {
		stall.Reset(timeout)
		defer stall.Stop()
		return cc.uncork()
	}
	return nil
}

// debugEcho answers GET /debug/echo?target=ID&n=N with N round trips through the extension's
// socket (see Hub.EchoExtension), in microseconds.
func (s *Server) debugEcho(c echo.Context) error {
	n, err := strconv.Atoi(c.QueryParam("n"))
	if err != nil || n < 1 || n > 100_000 {
		return echo.NewHTTPError(http.StatusBadRequest, "n must be a count from 1 to 100000")
	}
	d, err := s.hub.EchoExtension(c.Request().Context(), c.QueryParam("target"), n)
	if err != nil {
		return echo.NewHTTPError(http.StatusConflict, err.Error())
	}
	us := make([]float64, len(d))
	for i, v := range d {
		us[i] = float64(v) / 1e3
	}
	return c.JSON(http.StatusOK, us)
}

func (s *Server) cdpSocket(c echo.Context) error {
	page := ""
	if strings.HasPrefix(c.Path(), "/devtools/page/") {
		page = c.Param("id")
	} else if id := c.Param("id"); id != "" && id != s.hub.BrowserID() {
		return echo.NewHTTPError(http.StatusNotFound, "tabrelay: unknown browser id; use the webSocketDebuggerUrl from /json/version")
	}
	if page != "" {
		// during a restart of the server or the extension, the tab may be about to come back
		wctx, cancel := context.WithTimeout(c.Request().Context(), s.hub.opts.Grace)
		s.hub.WaitTarget(wctx, page)
		cancel()
	}
	kc := make(chan closeReason, 1)
	var live atomic.Pointer[websocket.Conn]
	cl, err := s.hub.NewClient("cdp", page, func(code int, reason string) {
		kc <- closeReason{websocket.StatusCode(code), reason}
		if code == int(websocket.StatusPolicyViolation) {
			// too slow: the message being written may never be taken; do not wait on it for long
			time.AfterFunc(s.opts.CutGrace, func() {
				if conn := live.Load(); conn != nil {
					conn.CloseNow()
				}
			})
		}
	})
	if err != nil {
		return echo.NewHTTPError(http.StatusNotFound, err.Error())
	}
	conn, cc, bare, err := s.accept(c)
	if err != nil {
		cl.Leave()
		return nil
	}
	live.Store(conn)
	defer s.track(conn, socketKind{bare: bare})()
	ctx, cancel := context.WithCancel(c.Request().Context())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		writeLoop(ctx, conn, cc, cl.Outbox(), kc, &closeReason{websocket.StatusNormalClosure, ""}, s.opts.WriteTimeout, bare, func() {
			cl.TooSlow(fmt.Sprintf("a write to it made no progress for %s", s.opts.WriteTimeout))
		})
	}()
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			break
		}
		cl.Handle(msg)
	}
	cl.Leave()
	cancel()
	<-done
	return nil
}

func (s *Server) extensionSocket(c echo.Context) error {
	conn, cc, _, err := s.accept(c)
	if err != nil {
		return nil
	}
	defer s.track(conn, socketKind{ext: true})()
	ctx, cancel := context.WithCancel(c.Request().Context())
	defer cancel()
	kc := make(chan closeReason, 1)
	ext := s.hub.ConnectExtension(func(code int, reason string) { kc <- closeReason{websocket.StatusCode(code), reason} })
	if s.opts.OnExtension != nil {
		s.opts.OnExtension()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		writeLoop(ctx, conn, cc, ext.Outbox(), kc, nil, 60*time.Second, false, func() {
			s.log.Warn().Msg("a write to the extension made no progress for 60s; dropping the connection")
			conn.CloseNow()
		})
	}()
	go func() { // the browser answers ping frames by itself; a dead peer is noticed
		t := time.NewTicker(20 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				pctx, pcancel := context.WithTimeout(ctx, 40*time.Second)
				err := conn.Ping(pctx)
				pcancel()
				if err != nil && ctx.Err() == nil {
					s.log.Warn().Err(err).Msg("extension stopped answering pings; dropping the connection")
					conn.CloseNow()
					return
				}
			}
		}
	}()
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			break
		}
		ext.Handle(msg)
	}
	ext.Disconnected()
	cancel()
	<-done
	return nil
}
