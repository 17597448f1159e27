// Package proof defines the mutual proof of a shared key between a tabrelay client and server
// (relay/wire/PROTOCOL.md, "Authentication"): the client sends a nonce, the server answers with
// its own nonce and an HMAC that only a holder of the key can compute, bound to the address the
// client connected to; only when that proof checks out does the client send anything derived
// from the key, and then a short-lived credential, never the key itself.
//
// The key is the pairing secret (Secret) or a one-time pairing code (Pairing); each has its own
// labels so that no value made for one purpose is accepted for another. The extension's
// chrome-extension/auth.js computes the same values; TestVector pins them for both.
package proof

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// TTL is how long a server nonce, and so a credential made with it, stays valid.
const TTL = 2 * time.Minute

// CredentialPrefix starts every derived credential ("tr1.<expiry>.<random>.<clientNonce>.<mac>").
const CredentialPrefix = "tr1."

// Errors of Verify and ParseCredential; test with errors.Is.
var (
	// ErrMalformed: the value is not a well-formed credential.
	ErrMalformed = errors.New("malformed tabrelay credential")
	// ErrExpired: the credential's server nonce has expired (or claims a lifetime no server gives).
	ErrExpired = errors.New("expired tabrelay credential")
	// ErrBadMAC: the credential was not made with this key.
	ErrBadMAC = errors.New("tabrelay credential not made with this key")
)

// Key is a shared key with the labels of one purpose.
type Key struct {
	key            []byte
	server, client string
}

// Secret is the key for proofs of the pairing secret.
func Secret(secret string) Key {
	return Key{key: []byte(secret), server: "tabrelay-server-v1", client: "tabrelay-client-v1"}
}

// Pairing is the key for proofs of a one-time pairing code.
func Pairing(code string) Key {
	return Key{key: []byte(code), server: "tabrelay-pair-server-v1", client: "tabrelay-pair-client-v1"}
}

func (k Key) mac(parts ...string) string {
	m := hmac.New(sha256.New, k.key)
	m.Write([]byte(strings.Join(parts, "|")))
	return hex.EncodeToString(m.Sum(nil))
}

// ServerProof is the server's answer to a challenge: HMAC-SHA256(key, label|nc|ns|addr) in hex,
// where addr is the server's own address of the connection (Addr form).
func (k Key) ServerProof(nc, ns, addr string) string {
	return k.mac(k.server, nc, ns, addr)
}

// CheckServerProof reports, in constant time, whether proof is the server proof for nc, ns
// and addr (the address the client connected to).
func (k Key) CheckServerProof(nc, ns, addr, proof string) bool {
	want := k.ServerProof(nc, ns, addr)
	return subtle.ConstantTimeCompare([]byte(want), []byte(proof)) == 1
}

// Credential is the client's short-lived credential for the nonces of one challenge.
func (k Key) Credential(nc, ns string) string {
	return CredentialPrefix + ns + "." + nc + "." + k.mac(k.client, nc, ns)
}

// Verify checks a credential statelessly at time now: well formed, not expired, not valid for
// longer than TTL, and made with this key (constant-time comparison).
func (k Key) Verify(cred string, now time.Time) error {
	c, err := ParseCredential(cred)
	if err != nil {
		return err
	}
	if !now.Before(c.Expiry) || c.Expiry.After(now.Add(TTL+time.Minute)) {
		return ErrExpired
	}
	want := k.mac(k.client, c.ClientNonce, c.ServerNonce)
	if subtle.ConstantTimeCompare([]byte(want), []byte(c.MAC)) != 1 {
		return ErrBadMAC
	}
	return nil
}

// Parsed is a credential taken apart.
type Parsed struct {
	ServerNonce string
	ClientNonce string
	MAC         string
	Expiry      time.Time
}

// IsCredential reports whether s has the form of a derived credential (as opposed to the plain
// secret, which third-party CDP clients send).
func IsCredential(s string) bool { return strings.HasPrefix(s, CredentialPrefix) }

// ParseCredential takes a credential apart, checking every field's form.
func ParseCredential(s string) (Parsed, error) {
	rest, ok := strings.CutPrefix(s, CredentialPrefix)
	if !ok {
		return Parsed{}, fmt.Errorf("%w: no %q prefix", ErrMalformed, CredentialPrefix)
	}
	f := strings.Split(rest, ".")
	if len(f) != 4 {
		return Parsed{}, fmt.Errorf("%w: want 4 dot-separated fields after the prefix, got %d", ErrMalformed, len(f))
	}
	ns := f[0] + "." + f[1]
	exp, err := ServerNonceExpiry(ns)
	if err != nil {
		return Parsed{}, err
	}
	if err := CheckClientNonce(f[2]); err != nil {
		return Parsed{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if len(f[3]) != 64 || !isLowerHex(f[3]) {
		return Parsed{}, fmt.Errorf("%w: the MAC is not 64 lowercase hex digits", ErrMalformed)
	}
	return Parsed{ServerNonce: ns, ClientNonce: f[2], MAC: f[3], Expiry: exp}, nil
}

// NewClientNonce returns a fresh client nonce (32 hex digits).
func NewClientNonce() string { return randomHex(16) }

// CheckClientNonce accepts 16 to 64 characters of [A-Za-z0-9_-].
func CheckClientNonce(nc string) error {
	if len(nc) < 16 || len(nc) > 64 {
		return fmt.Errorf("client nonce must be 16 to 64 characters, got %d", len(nc))
	}
	for _, r := range nc {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return errors.New("client nonce may contain only letters, digits, '_' and '-'")
		}
	}
	return nil
}

// NewServerNonce returns a fresh server nonce valid until now+TTL: "<unix expiry>.<32 hex>".
func NewServerNonce(now time.Time) string {
	return strconv.FormatInt(now.Add(TTL).Unix(), 10) + "." + randomHex(16)
}

// ServerNonceExpiry checks a server nonce's form and returns its expiry.
func ServerNonceExpiry(ns string) (time.Time, error) {
	sec, rnd, ok := strings.Cut(ns, ".")
	if !ok || len(sec) == 0 || len(sec) > 12 || len(rnd) != 32 || !isLowerHex(rnd) {
		return time.Time{}, fmt.Errorf("%w: the server nonce is not <unix seconds>.<32 hex digits>", ErrMalformed)
	}
	for _, r := range sec {
		if r < '0' || r > '9' {
			return time.Time{}, fmt.Errorf("%w: the server nonce's expiry is not a number", ErrMalformed)
		}
	}
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: the server nonce's expiry: %w", ErrMalformed, err)
	}
	return time.Unix(n, 0), nil
}

// NewPairingCode returns a fresh one-time pairing code (32 hex digits: 128 random bits).
func NewPairingCode() string { return randomHex(16) }

// PairingCodeID names a pairing code without revealing it: the first 32 hex digits of
// SHA-256("tabrelay-pair-id-v1|"+code). The client sends the id to ask for a proof of the code.
func PairingCodeID(code string) string {
	h := sha256.Sum256([]byte("tabrelay-pair-id-v1|" + code))
	return hex.EncodeToString(h[:16])
}

// Addr is the canonical form of a TCP address in proofs: the IP's shortest form, IPv6 in
// brackets, and the port ("127.0.0.1:18792", "[::1]:18792"); an IPv4-mapped IPv6 address is
// written as IPv4.
func Addr(ip net.IP, port int) string {
	return net.JoinHostPort(ip.String(), strconv.Itoa(port))
}

// CanonicalAddr rewrites host:port with a literal IP host in Addr form; names are refused
// (clients connect to literal addresses, so that every request of a session reaches the server
// that gave the proof).
func CanonicalAddr(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("address %q: %w (want IP:port, e.g. 127.0.0.1:18792)", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || strings.Contains(host, "%") {
		return "", fmt.Errorf("address %q: %q is not a literal IP address", addr, host)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p <= 0 || p > 65535 {
		return "", fmt.Errorf("address %q: bad port %q", addr, port)
	}
	return Addr(ip, p), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms (Go 1.24+)
	return hex.EncodeToString(b)
}

func isLowerHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// Answer is the server's side of the challenge: a fresh server nonce and k's proof for the
// client's nonce, bound to local, the server's own address of the connection the challenge
// came on (http.LocalAddrContextKey). The relay and the tests' fake servers both answer with it.
func (k Key) Answer(clientNonce string, local net.Addr, now time.Time) (ChallengeAnswer, error) {
	if err := CheckClientNonce(clientNonce); err != nil {
		return ChallengeAnswer{}, err
	}
	a, ok := local.(*net.TCPAddr)
	if !ok {
		return ChallengeAnswer{}, fmt.Errorf("the connection's local address %v is not TCP", local)
	}
	ns := NewServerNonce(now)
	return ChallengeAnswer{ServerNonce: ns, Proof: k.ServerProof(clientNonce, ns, Addr(a.IP, a.Port))}, nil
}
