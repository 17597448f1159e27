package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/secret"
)

// stdio is what a client command reads and writes (os.Stdin/Stdout/Stderr in main, buffers
// in tests).
type stdio struct {
	in       io.Reader
	out, err io.Writer
	// terminal is true when in is an interactive terminal (run asks y/n there).
	terminal bool
}

// osStdio is the process's own standard streams.
func osStdio() stdio {
	term := false
	if fi, err := os.Stdin.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		term = true
	}
	return stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, terminal: term}
}

// clientFlags are the flags of the commands that talk to a running server.
type clientFlags struct {
	common
	tab string
}

func (f *clientFlags) register(fs *flag.FlagSet) {
	f.common.register(fs)
	fs.StringVar(&f.tab, "tab", "", "the shared tab's `targetId` (default: the tab most recently shared or focused; tabrelay tabs lists them)")
}

// apiClient calls a running tabrelay server's /api.
type apiClient struct {
	addr, home string
	http       *http.Client
}

func (f *clientFlags) client() *apiClient {
	return &apiClient{addr: f.addr, home: f.home, http: &http.Client{}}
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
	tok, terr := c.token()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode the request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	u := "http://" + c.addr + "/api" + path
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
	if terr == nil {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, c.notRunning(err)
	}
	if terr != nil {
		resp.Body.Close()
		return nil, terr
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, c.answerError(resp.StatusCode, b)
	}
	return resp, nil
}

func (c *apiClient) answerError(status int, b []byte) error {
	switch status {
	case http.StatusUnauthorized:
		return fmt.Errorf("the tabrelay server at %s does not accept the secret in %s: pass the --home (or TABRELAY_HOME) it runs with", c.addr, filepath.Join(c.home, secret.FileName))
	case http.StatusTooManyRequests:
		return fmt.Errorf("the tabrelay server at %s refuses requests after too many wrong secrets: wait a few seconds and retry", c.addr)
	}
	e := &apiError{Status: status}
	if json.Unmarshal(b, &e.Body) != nil || e.Body.Error == "" {
		e.Body.Error = strings.TrimSpace(string(b))
		if status == http.StatusNotFound && (e.Body.Error == "" || strings.Contains(e.Body.Error, "Not Found")) {
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
