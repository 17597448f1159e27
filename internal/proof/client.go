package proof

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// The handshake's HTTP paths (relay/wire/PROTOCOL.md, "Authentication").
const (
	// ChallengePath answers a ChallengeRequest with a ChallengeAnswer (no authentication).
	ChallengePath = "/auth/challenge"
	// PairPath exchanges a pairing code's credential for the secret (PairRequest, PairAnswer).
	PairPath = "/auth/pair"
	// PairCodePath makes a new pairing code (authenticated; PairCodeAnswer).
	PairCodePath = "/auth/pair-code"
)

// ChallengeRequest is the body of POST /auth/challenge.
type ChallengeRequest struct {
	// ClientNonce is the client's fresh nonce (CheckClientNonce).
	ClientNonce string `json:"clientNonce"`
	// Pairing is a pairing code's id (PairingCodeID) to be proved instead of the secret.
	Pairing string `json:"pairing,omitempty"`
}

// ChallengeAnswer is the server's answer: its nonce and the proof of the key.
type ChallengeAnswer struct {
	ServerNonce string `json:"serverNonce"`
	Proof       string `json:"proof"`
}

// PairRequest is the body of POST /auth/pair.
type PairRequest struct {
	// Pairing is the code's id.
	Pairing string `json:"pairing"`
	// Credential is Pairing(code).Credential(nc, ns) for a challenge the server passed.
	Credential string `json:"credential"`
}

// PairAnswer carries the secret to a client that proved the pairing code.
type PairAnswer struct {
	Token string `json:"token"`
}

// PairCodeAnswer is a new pairing code, valid for PairCodeTTL, once.
type PairCodeAnswer struct {
	Code    string    `json:"code"`
	Expires time.Time `json:"expires"`
}

// PairCodeTTL is how long a pairing code stays usable.
const PairCodeTTL = 10 * time.Minute

// NotProvedError means the server at Addr failed the proof: it does not know the key.
type NotProvedError struct {
	Addr string
	// Detail says what the server answered instead of a valid proof ("" for a wrong proof).
	Detail string
}

func (e *NotProvedError) Error() string {
	d := ""
	if e.Detail != "" {
		d = " (it answered " + e.Detail + ")"
	}
	return fmt.Sprintf("the server at %s does not know this secret: another program may be using the port, or the server runs with another secret (pass the --home it runs with)%s; nothing secret was sent to it", e.Addr, d)
}

// UnreachableError means nothing answered at Addr.
type UnreachableError struct {
	Addr string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("nothing answers at %s: %v", e.Addr, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Session is a credential for the server at Addr, usable until Expiry.
type Session struct {
	// Addr is the literal address the proof was checked for; send every request there.
	Addr string
	// Credential goes in 'Authorization: Bearer' (or ?token=).
	Credential string
	// Expiry is when the server stops accepting Credential.
	Expiry time.Time
}

// DialAddr is the literal address clients connect to for addr: "localhost" means 127.0.0.1
// (a server started on localhost listens on both loopback addresses), other names are
// resolved once, and IPs are written in Addr form. Every request of a session goes to the
// address the proof was checked for, so no other listener can receive its credential.
func DialAddr(ctx context.Context, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("server address %q: %w (want host:port, e.g. 127.0.0.1:18792)", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if net.ParseIP(host) == nil {
		ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil || len(ips) == 0 {
			return "", fmt.Errorf("server address %q: resolve %s: %w", addr, host, err)
		}
		host = ips[0].IP.String()
	}
	return CanonicalAddr(net.JoinHostPort(host, port))
}

// Authorize runs the challenge for secret against the server at addr and returns a session
// once the server proved it knows the secret. A server that fails gets nothing but a random
// nonce, and the error is a *NotProvedError; a server that does not answer, *UnreachableError.
func Authorize(ctx context.Context, hc *http.Client, addr, secret string) (Session, error) {
	lit, err := DialAddr(ctx, addr)
	if err != nil {
		return Session{}, err
	}
	nc := NewClientNonce()
	var ans ChallengeAnswer
	if err := post(ctx, hc, lit, ChallengePath, ChallengeRequest{ClientNonce: nc}, &ans); err != nil {
		return Session{}, err
	}
	k := Secret(secret)
	exp, err := ServerNonceExpiry(ans.ServerNonce)
	if err != nil || !k.CheckServerProof(nc, ans.ServerNonce, lit, ans.Proof) {
		return Session{}, &NotProvedError{Addr: lit}
	}
	return Session{Addr: lit, Credential: k.Credential(nc, ans.ServerNonce), Expiry: exp}, nil
}

// post sends body as JSON to http://addr+path and decodes a 200 answer into out.
func post(ctx context.Context, hc *http.Client, addr, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("build %s request: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &UnreachableError{Addr: addr, Err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("read the answer to %s from %s: %w", path, addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return &NotProvedError{Addr: addr, Detail: fmt.Sprintf("%s with HTTP %d: %.200s", path, resp.StatusCode, strings.TrimSpace(string(data)))}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &NotProvedError{Addr: addr, Detail: fmt.Sprintf("%s with something else than the expected JSON", path)}
	}
	return nil
}
