package proof

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	// Pairing is true when the key was a pairing code.
	Pairing bool
}

func (e *NotProvedError) Error() string {
	d := ""
	if e.Detail != "" {
		d = " (it answered " + e.Detail + ")"
	}
	if e.Pairing {
		return fmt.Sprintf("the server at %s does not know this pairing code: another program may be using the port, or the code was used or expired (`tabrelay pair` prints a new link)%s; nothing secret was sent to it", e.Addr, d)
	}
	return fmt.Sprintf("the server at %s does not know this secret: another program may be using the port, or the server runs with another secret (pass the --home it runs with)%s; nothing secret was sent to it", e.Addr, d)
}

// AnswerError is an unexpected answer to one of the /auth requests.
type AnswerError struct {
	Path   string
	Status int
	Body   string
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %.200s", e.Path, e.Status, e.Body)
}

// challenge posts a challenge request; an answer other than a well-formed proof of the key for
// addr is a *NotProvedError.
func challenge(ctx context.Context, hc *http.Client, addr string, k Key, req ChallengeRequest) (ChallengeAnswer, error) {
	var ans ChallengeAnswer
	if err := post(ctx, hc, addr, ChallengePath, req, &ans); err != nil {
		var ae *AnswerError
		if errors.As(err, &ae) {
			return ans, &NotProvedError{Addr: addr, Detail: ae.Error(), Pairing: req.Pairing != ""}
		}
		return ans, err
	}
	if _, err := ServerNonceExpiry(ans.ServerNonce); err != nil {
		return ans, &NotProvedError{Addr: addr, Detail: "a malformed server nonce", Pairing: req.Pairing != ""}
	}
	if !k.CheckServerProof(req.ClientNonce, ans.ServerNonce, addr, ans.Proof) {
		return ans, &NotProvedError{Addr: addr, Pairing: req.Pairing != ""}
	}
	return ans, nil
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
	nc, k := NewClientNonce(), Secret(secret)
	ans, err := challenge(ctx, hc, lit, k, ChallengeRequest{ClientNonce: nc})
	if err != nil {
		return Session{}, err
	}
	exp, _ := ServerNonceExpiry(ans.ServerNonce)
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
		return &AnswerError{Path: path, Status: resp.StatusCode, Body: strings.TrimSpace(string(data))}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return &AnswerError{Path: path, Status: resp.StatusCode, Body: "something else than the expected JSON"}
	}
	return nil
}

// Pair exchanges a one-time pairing code for the secret with the server at addr, as the
// options page does: the server must first prove it knows the code (else *NotProvedError, and
// the server got only the code's id and a nonce); the code is used up.
func Pair(ctx context.Context, hc *http.Client, addr, code string) (string, error) {
	lit, err := DialAddr(ctx, addr)
	if err != nil {
		return "", err
	}
	id, nc, k := PairingCodeID(code), NewClientNonce(), Pairing(code)
	ans, err := challenge(ctx, hc, lit, k, ChallengeRequest{ClientNonce: nc, Pairing: id})
	if err != nil {
		return "", err
	}
	var got PairAnswer
	if err := post(ctx, hc, lit, PairPath, PairRequest{Pairing: id, Credential: k.Credential(nc, ans.ServerNonce)}, &got); err != nil {
		return "", fmt.Errorf("pairing with the server at %s: %w", lit, err)
	}
	return got.Token, nil
}
