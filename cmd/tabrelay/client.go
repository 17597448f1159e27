package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/internal/secret"
)

// stdio is what a client command reads and writes (os.Stdin/Stdout/Stderr in main, buffers
// in tests).
type stdio struct {
	in       io.Reader
	out, err io.Writer
	// terminal is true when in is an interactive terminal (run asks y/n there).
	terminal bool
	// outTerminal is true when out is an interactive terminal (serve shows the secret there).
	outTerminal bool
}

// osStdio is the process's own standard streams.
func osStdio() stdio {
	term := false
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		term = true
	}
	return stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, terminal: term, outTerminal: isTerminal(os.Stdout)}
}

// apiClient calls a running tabrelay server's /api. It never sends the secret: the server first
// proves it knows the secret (internal/proof), then each request carries a short-lived
// credential, sent only to the literal address the proof was made for.
type apiClient struct {
	addr, home string
	http       *http.Client
	mu         sync.Mutex
	// sess is the current credential (renewed shortly before it expires).
	sess proof.Session
}

// newClient is the client of the server f names.
func newClient(f *config.Client) *apiClient {
	f.Normalize()
	return &apiClient{addr: f.Addr, home: f.Home, http: &http.Client{}}
}

// notRunning is the error for a server that does not answer.
func (c *apiClient) notRunning(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("tabrelay server not running at %s: start it with `tabrelay serve` (or pass --addr / TABRELAY_ADDR): %w", c.addr, err)
}

// token reads the secret from the home, without creating one.
func (c *apiClient) token() (string, error) {
	b, err := os.ReadFile(filepath.Join(c.home, secret.FileName))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("no tabrelay secret in %s: pass the --home (or TABRELAY_HOME) the server runs with", c.home)
		}
		return "", fmt.Errorf("read the tabrelay secret: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// session returns a credential for the server, running the mutual proof when there is none
// or it expires within a minute.
func (c *apiClient) session(ctx context.Context, tok string) (proof.Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess.Credential != "" && time.Until(c.sess.Expiry) > time.Minute {
		return c.sess, nil
	}
	s, err := proof.Authorize(ctx, c.http, c.addr, tok)
	if err != nil {
		var ue *proof.UnreachableError
		if errors.As(err, &ue) {
			return s, c.notRunning(ue.Err)
		}
		return s, err
	}
	c.sess = s
	return s, nil
}

// apiError is a non-2xx answer of the server.
type apiError struct {
	Status int
	Body   api.ErrorBody
}

func (e *apiError) Error() string {
	msg := e.Body.Error
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if len(e.Body.Kinds) > 0 && !strings.Contains(msg, e.Body.Kinds[0]) {
		msg += " (kinds: " + strings.Join(e.Body.Kinds, ", ") + ")"
	}
	return msg
}

// post POSTs body to path (outside /api, e.g. /auth/pair-code) with a credential and decodes
// the JSON answer into v.
func (c *apiClient) post(ctx context.Context, path string, body, v any) error {
	resp, err := c.request(ctx, http.MethodPost, path, nil, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v); err != nil {
		return fmt.Errorf("the server's answer to %s is not the expected JSON: %w", path, err)
	}
	return nil
}

// do sends a request to /api<path> and returns the answer's body and header; a non-2xx answer
// is an *apiError.
func (c *apiClient) do(ctx context.Context, method, path string, query url.Values, body any) ([]byte, http.Header, error) {
	resp, err := c.open(ctx, method, path, query, body)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer to %s %s: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, nil, c.answerError(resp.StatusCode, b)
	}
	return b, resp.Header, nil
}

// open sends the request and returns the response with its body unread (for streams); a
// non-2xx answer is an *apiError.
func (c *apiClient) open(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	return c.request(ctx, method, "/api"+path, query, body)
}

// request is open for any path.
func (c *apiClient) request(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	tok, err := c.token()
	if err != nil {
		if _, herr := proof.DialAddr(ctx, c.addr); herr == nil && !c.answers(ctx) {
			return nil, c.notRunning(errors.New("connection refused"))
		}
		return nil, err
	}
	sess, err := c.session(ctx, tok)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode the request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	u := "http://" + sess.Addr + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, fmt.Errorf("build the request to %s: %w", c.addr, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+sess.Credential)
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.notRunning(err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, c.answerError(resp.StatusCode, b)
	}
	return resp, nil
}

// answers reports whether anything accepts connections at the server address (for the error
// of a client without a secret: "not running" says more than "no secret").
func (c *apiClient) answers(ctx context.Context) bool {
	lit, err := proof.DialAddr(ctx, c.addr)
	if err != nil {
		return false
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	conn, err := d.DialContext(dctx, "tcp", lit)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

func (c *apiClient) answerError(status int, b []byte) error {
	switch status {
	case http.StatusUnauthorized:
		c.mu.Lock()
		c.sess = proof.Session{} // the secret was rotated meanwhile, say: prove it again next time
		c.mu.Unlock()
		return fmt.Errorf("the tabrelay server at %s does not accept the secret in %s: pass the --home (or TABRELAY_HOME) it runs with", c.addr, filepath.Join(c.home, secret.FileName))
	case http.StatusTooManyRequests:
		return fmt.Errorf("the tabrelay server at %s refuses requests after too many wrong secrets: wait a few seconds and retry", c.addr)
	}
	e := &apiError{Status: status}
	if json.Unmarshal(b, &e.Body) != nil || e.Body.Error == "" {
		e.Body.Error = strings.TrimSpace(string(b))
		if status == http.StatusNotFound { // not the agent API's error shape: a route it lacks
			e.Body.Error = fmt.Sprintf("the server at %s has no agent API (is it an older tabrelay?): HTTP %d", c.addr, status)
		}
	}
	return e
}

// getJSON GETs path and decodes the JSON answer into v.
func (c *apiClient) getJSON(ctx context.Context, path string, query url.Values, v any) error {
	b, _, err := c.do(ctx, http.MethodGet, path, query, nil)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("the server's answer to %s is not the expected JSON: %w", path, err)
	}
	return nil
}

// postJSON POSTs body to path and decodes the JSON answer into v (may be nil).
func (c *apiClient) postJSON(ctx context.Context, path string, body, v any) error {
	b, _, err := c.do(ctx, http.MethodPost, path, nil, body)
	if err != nil {
		return err
	}
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("the server's answer to %s is not the expected JSON: %w", path, err)
	}
	return nil
}

// requestTimeout bounds one-shot requests (snapshots and actions take seconds at most).
const requestTimeout = 90 * time.Second
