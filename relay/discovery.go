package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// ErrNotShared is returned for a target id that is not a shared tab.
var ErrNotShared = errors.New("not a tab shared with tabrelay")

// wsURL is the WebSocket URL of path on this server. For a request that carried the secret it
// carries it too, for clients that only take a URL; for one that did not (token-less discovery on
// /json/version) it carries none, and the client's own headers or ?token= authenticate the
// socket. It is built from the server's own addresses (see addrFor), never copied from the
// request's Host header.
func (s *Server) wsURL(c echo.Context, path string) string {
	u := "ws://" + s.addrFor(c.Request()) + path
	if authenticated(c) {
		u += "?token=" + url.QueryEscape(s.Token())
	}
	return u
}

func (s *Server) jsonVersion(c echo.Context) error {
	product, ua := s.hub.Version()
	return c.JSON(http.StatusOK, map[string]string{
		"Browser":              product,
		"File-Path-Style":      filePathStyle,
		"Protocol-Version":     "1.3",
		"User-Agent":           ua,
		"V8-Version":           "",
		"WebKit-Version":       webKitVersion(ua),
		"webSocketDebuggerUrl": s.wsURL(c, "/devtools/browser/"+s.hub.BrowserID()),
	})
}

// webKitVersion is the WebKit version a user agent names ("537.36" from "AppleWebKit/537.36"),
// "" if it names none. Chrome adds its source revision in parentheses, which an extension cannot
// learn.
func webKitVersion(ua string) string {
	_, v, ok := strings.Cut(ua, "AppleWebKit/")
	if !ok {
		return ""
	}
	if i := strings.IndexFunc(v, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); i >= 0 {
		v = v[:i]
	}
	return v
}

// sentMethodKey holds, in a discovery request's context, the method as the client spelt it.
type sentMethodKey struct{}

// lenientDiscoveryMethod takes /json/* requests in any method spelling, as Chrome does: Chrome
// answers every method on its discovery routes (zendriver asks "get /json/version") and checks
// only that /json/new comes as PUT, in any case. The request is routed as GET (PUT for a /json/new
// sent as put, Put, …), on a copy: the response is still written for the method sent (no body
// for HEAD). The method as sent is kept for /json/new's refusal (see sentMethod).
func lenientDiscoveryMethod(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" || strings.HasPrefix(r.URL.Path, "/json/") {
			want := http.MethodGet
			if (r.URL.Path == "/json/new" || r.URL.Path == "/json/new/") && strings.EqualFold(r.Method, http.MethodPut) {
				want = http.MethodPut
			}
			if r.Method != want {
				r = r.WithContext(context.WithValue(r.Context(), sentMethodKey{}, r.Method))
				r.Method = want
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sentMethod is the request's method as the client spelt it (see lenientDiscoveryMethod).
func sentMethod(r *http.Request) string {
	if m, ok := r.Context().Value(sentMethodKey{}).(string); ok {
		return m
	}
	return r.Method
}

// targetJSON is one entry of /json/list.
type targetJSON struct {
	Description          string `json:"description"`
	DevtoolsFrontendURL  string `json:"devtoolsFrontendUrl"`
	ID                   string `json:"id"`
	ParentID             string `json:"parentId,omitempty"`
	Title                string `json:"title"`
	Type                 string `json:"type"`
	URL                  string `json:"url"`
	WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
}

func (s *Server) targetJSON(c echo.Context, t DebugTarget) targetJSON {
	ws := s.wsURL(c, "/devtools/page/"+t.TargetID)
	return targetJSON{
		ID: t.TargetID, ParentID: t.ParentID, Type: t.Type, Title: t.Title, URL: t.URL, WebSocketDebuggerURL: ws,
		DevtoolsFrontendURL: "devtools://devtools/bundled/inspector.html?ws=" + url.QueryEscape(strings.TrimPrefix(ws, "ws://")),
	}
}

// jsonList lists the shared tabs and their out-of-process iframes, each with its own page
// endpoint, as Chrome does: clients without flat sessions reach a cross-origin iframe there.
func (s *Server) jsonList(c echo.Context) error {
	list := []targetJSON{}
	for _, t := range s.hub.DebugTargets() {
		list = append(list, s.targetJSON(c, t))
	}
	return c.JSON(http.StatusOK, list)
}

func (s *Server) jsonNew(c echo.Context) error {
	// the query is the URL to open, with its own query kept as is; a token=<secret> pair the
	// client added to authenticate is ours
	u := stripToken(c.Request().URL.RawQuery, s.opts.Secret.Check)
	if u == "" {
		u = "about:blank"
	} else if dec, err := url.QueryUnescape(u); err == nil {
		u = dec
	}
	id, err := s.hub.CreateTab(c.Request().Context(), u)
	if err != nil {
		return echo.NewHTTPError(http.StatusInternalServerError, err.Error())
	}
	for _, t := range s.hub.Tabs() {
		if t.TargetID == id {
			return c.JSON(http.StatusOK, s.targetJSON(c, DebugTarget{TargetID: id, Type: "page", URL: t.URL, Title: t.Title}))
		}
	}
	return c.JSON(http.StatusOK, s.targetJSON(c, DebugTarget{TargetID: id, Type: "page", URL: u}))
}

// stripToken cuts the last token=<secret> pair out of a raw query, textually: the rest, such as
// a URL with a query of its own for /json/new, is left byte for byte. A token pair that does not
// hold the secret belongs to the rest and stays.
func stripToken(raw string, isSecret func(string) bool) string {
	parts := strings.Split(raw, "&")
	for i := len(parts) - 1; i >= 0; i-- {
		v, ok := strings.CutPrefix(parts[i], "token=")
		if !ok {
			continue
		}
		if dec, err := url.QueryUnescape(v); err == nil && isSecret(dec) {
			return strings.Join(append(parts[:i:i], parts[i+1:]...), "&")
		}
	}
	return raw
}

func (s *Server) jsonActivate(c echo.Context) error {
	if err := s.hub.ActivateTab(c.Request().Context(), c.Param("id")); err != nil {
		if errors.Is(err, ErrNotShared) {
			return echo.NewHTTPError(http.StatusNotFound, "No such target id: "+c.Param("id"))
		}
		return echo.NewHTTPError(http.StatusInternalServerError, err.Error())
	}
	return c.String(http.StatusOK, "Target activated")
}

func (s *Server) jsonClose(c echo.Context) error {
	if err := s.hub.CloseTab(c.Request().Context(), c.Param("id")); err != nil {
		if errors.Is(err, ErrNotShared) {
			return echo.NewHTTPError(http.StatusNotFound, "No such target id: "+c.Param("id"))
		}
		return echo.NewHTTPError(http.StatusForbidden, err.Error())
	}
	return c.String(http.StatusOK, "Target is closing")
}

// CreateTab opens url in a new shared tab and returns its target id.
func (h *Hub) CreateTab(ctx context.Context, u string) (string, error) {
	res, err := h.tabCall(ctx, func(id int64) []byte {
		return mustJSON(wire.TabRequest{Type: wire.TypeCreateTab, ID: id, URL: u})
	})
	if err != nil {
		return "", fmt.Errorf("open %s: %w", u, err)
	}
	var r struct {
		TargetID string `json:"targetId"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.TargetID == "" {
		return "", fmt.Errorf("open %s: the extension answered without a target id", u)
	}
	return r.TargetID, nil
}

// ActivateTab focuses a shared tab.
func (h *Hub) ActivateTab(ctx context.Context, targetID string) error {
	_, err := h.tabCallFor(ctx, targetID, wire.TypeActivateTab)
	return err
}

// CloseTab closes a shared tab, unless it is the user's own and that is not allowed.
func (h *Hub) CloseTab(ctx context.Context, targetID string) error {
	_, err := h.tabCallFor(ctx, targetID, wire.TypeCloseTab)
	return err
}

func (h *Hub) tabCallFor(ctx context.Context, targetID, typ string) ([]byte, error) {
	h.mu.Lock()
	t, _ := h.lookup(targetID)
	var refusal string
	if t != nil && typ == wire.TypeCloseTab {
		refusal = h.closeRefusal(t)
	}
	h.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("tab %s: %w", targetID, ErrNotShared)
	}
	if refusal != "" {
		return nil, errors.New(refusal)
	}
	return h.tabCall(ctx, func(id int64) []byte {
		return mustJSON(wire.TabRequest{Type: typ, ID: id, TargetID: t.id})
	})
}

// tabCall sends a tab request to the extension and waits for its answer.
func (h *Hub) tabCall(ctx context.Context, msg func(id int64) []byte) ([]byte, error) {
	type outcome struct{ res, errRaw []byte }
	ch := make(chan outcome, 1)
	h.mu.Lock()
	ok := h.request(&pending{method: "", done: func(res, errRaw []byte) { ch <- outcome{res, errRaw} }}, msg, h.opts.TabTimeout)
	h.mu.Unlock()
	if !ok {
		return nil, errors.New("the tabrelay browser extension is not connected")
	}
	select {
	case o := <-ch:
		if o.errRaw != nil {
			var e wire.Error
			_ = json.Unmarshal(o.errRaw, &e)
			return nil, errors.New(e.Message)
		}
		return o.res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
