package relay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// postJSON posts body to the relay and returns the status and answer.
func (e *env) postJSON(path string, body any, header http.Header) (int, string) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, "http://"+e.srv.Addr()+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	return do(e.t, req)
}

// TestAuthChallengeProvesSecret: the server proves the secret for the address the client
// connected to; the credential made after the proof opens every authenticated door (discovery,
// /api, the extension socket, a CDP socket), and the plain secret still works for third-party
// clients.
func TestAuthChallengeProvesSecret(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	s, err := proof.Authorize(ctx(t), http.DefaultClient, e.srv.Addr(), e.srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	if s.Addr != e.srv.Addr() || !proof.IsCredential(s.Credential) || time.Until(s.Expiry) > proof.TTL || time.Until(s.Expiry) < proof.TTL-time.Minute {
		t.Fatalf("session %+v", s)
	}
	if strings.Contains(s.Credential, e.srv.Token()) {
		t.Fatal("the credential contains the secret")
	}
	for _, tok := range []string{s.Credential, e.srv.Token()} {
		if code, body := e.get("/json/version", bearer(tok)); code != http.StatusOK {
			t.Errorf("/json/version with %.8s…: %d %s", tok, code, body)
		}
		if code, body := e.get("/json/version?token="+url.QueryEscape(tok), nil); code != http.StatusOK {
			t.Errorf("/json/version?token=%.8s…: %d %s", tok, code, body)
		}
	}
	ext, err := relaytest.Dial(ctx(t), e.srv.Addr(), s.Credential, nil)
	if err != nil {
		t.Fatalf("the extension socket with a credential: %v", err)
	}
	defer ext.Close()
	conn, _, err := websocket.Dial(ctx(t), "ws://"+e.srv.Addr()+"/cdp?token="+s.Credential, nil)
	if err != nil {
		t.Fatalf("a CDP socket with a credential: %v", err)
	}
	conn.CloseNow()

	// A client with another secret is told the server does not know it, and sends nothing more.
	_, err = proof.Authorize(ctx(t), http.DefaultClient, e.srv.Addr(), strings.Repeat("f", 64))
	var np *proof.NotProvedError
	if !errors.As(err, &np) || np.Addr != e.srv.Addr() {
		t.Fatalf("Authorize with another secret: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "the server at "+e.srv.Addr()+" does not know this secret: another program may be using the port") {
		t.Errorf("error in words: %v", err)
	}
}

// TestDerivedCredentialRefused: expired, replayed after expiry, forged with another key,
// tampered or over-long credentials are refused with 401; a fresh one is accepted.
func TestDerivedCredentialRefused(t *testing.T) {
	now := time.Now()
	nc := proof.NewClientNonce()
	flip := func(s string, i int) string {
		b := []byte(s)
		b[i] = "01"[(b[i]+1)%2]
		if b[i] == s[i] {
			b[i] = 'a'
		}
		return string(b)
	}
	for _, c := range []struct {
		name string
		cred func(secret string) string
		want int
	}{
		{"fresh", func(k string) string { return proof.Secret(k).Credential(nc, proof.NewServerNonce(now)) }, http.StatusOK},
		{"expired", func(k string) string {
			return proof.Secret(k).Credential(nc, proof.NewServerNonce(now.Add(-proof.TTL-time.Second)))
		}, http.StatusUnauthorized},
		{"server nonce replayed after its expiry", func(k string) string {
			ns := strconv.FormatInt(now.Add(-time.Second).Unix(), 10) + "." + strings.Repeat("ab", 16)
			return proof.Secret(k).Credential(nc, ns)
		}, http.StatusUnauthorized},
		{"lifetime beyond the TTL", func(k string) string {
			ns := strconv.FormatInt(now.Add(time.Hour).Unix(), 10) + "." + strings.Repeat("ab", 16)
			return proof.Secret(k).Credential(nc, ns)
		}, http.StatusUnauthorized},
		{"another secret", func(k string) string {
			return proof.Secret(k+"x").Credential(nc, proof.NewServerNonce(now))
		}, http.StatusUnauthorized},
		{"a pairing credential", func(k string) string {
			return proof.Pairing(k).Credential(nc, proof.NewServerNonce(now))
		}, http.StatusUnauthorized},
		{"tampered MAC", func(k string) string {
			c := proof.Secret(k).Credential(nc, proof.NewServerNonce(now))
			return flip(c, len(c)-1)
		}, http.StatusUnauthorized},
		{"tampered client nonce", func(k string) string {
			c := proof.Secret(k).Credential(nc, proof.NewServerNonce(now))
			return flip(c, len(c)-70)
		}, http.StatusUnauthorized},
		{"tampered expiry", func(k string) string {
			c := proof.Secret(k).Credential(nc, proof.NewServerNonce(now))
			return flip(c, len(proof.CredentialPrefix)+9)
		}, http.StatusUnauthorized},
		{"a server proof as credential", func(k string) string {
			ns := proof.NewServerNonce(now)
			return proof.CredentialPrefix + ns + "." + nc + "." + proof.Secret(k).ServerProof(nc, ns, "127.0.0.1:1")
		}, http.StatusUnauthorized},
		{"plain secret (third-party clients)", func(k string) string { return k }, http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{}) // a fresh server: failures here must not throttle the next case
			cred := c.cred(e.srv.Token())
			if code, body := e.get("/json/version", bearer(cred)); code != c.want {
				t.Errorf("/json/version: %d %s, want %d", code, body, c.want)
			}
			if code, body := e.get("/api/tabs", bearer(cred)); c.want == http.StatusUnauthorized && code != c.want {
				t.Errorf("/api/tabs: %d %s, want %d", code, body, c.want)
			}
		})
	}
}

// TestAuthChallengeInput: the challenge takes only a well-formed nonce in a small JSON body,
// from CDP clients and the extension, never from a web page or under a foreign Host.
func TestAuthChallengeInput(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	nc := proof.NewClientNonce()
	for _, c := range []struct {
		name   string
		body   any
		header http.Header
		want   int
	}{
		{"good", proof.ChallengeRequest{ClientNonce: nc}, nil, http.StatusOK},
		{"from the extension", proof.ChallengeRequest{ClientNonce: nc}, http.Header{"Origin": {relaytest.ExtensionOrigin}}, http.StatusOK},
		{"short nonce", proof.ChallengeRequest{ClientNonce: "abc"}, nil, http.StatusBadRequest},
		{"nonce with separators", proof.ChallengeRequest{ClientNonce: nc + "|127.0.0.1:1"}, nil, http.StatusBadRequest},
		{"not JSON", "x", nil, http.StatusBadRequest},
		{"oversized", map[string]string{"clientNonce": nc, "pad": strings.Repeat("x", 8<<10)}, nil, http.StatusRequestEntityTooLarge},
		{"web page", proof.ChallengeRequest{ClientNonce: nc}, http.Header{"Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"web page without Origin", proof.ChallengeRequest{ClientNonce: nc}, http.Header{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"no-cors"}}, http.StatusForbidden},
		{"unknown pairing code", proof.ChallengeRequest{ClientNonce: nc, Pairing: proof.PairingCodeID("nope")}, nil, http.StatusNotFound},
	} {
		if code, body := e.postJSON(proof.ChallengePath, c.body, c.header); code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	b, _ := json.Marshal(proof.ChallengeRequest{ClientNonce: nc})
	req, _ := http.NewRequest(http.MethodPost, "http://"+e.srv.Addr()+proof.ChallengePath, bytes.NewReader(b))
	req.Host = "evil.example:" + e.srv.Addr()[strings.LastIndex(e.srv.Addr(), ":")+1:]
	if code, _ := do(t, req); code != http.StatusForbidden {
		t.Errorf("foreign Host: %d, want 403", code)
	}
}

// TestPairingCode: a one-time code is exchanged for the secret only after the server proved
// the code; it works once; a wrong credential is refused and leaves the code usable; making a
// code needs the secret.
func TestPairingCode(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	if code, _ := e.postJSON(proof.PairCodePath, struct{}{}, nil); code != http.StatusUnauthorized {
		t.Errorf("a pairing code without the secret: %d, want 401", code)
	}
	s, err := proof.Authorize(ctx(t), http.DefaultClient, e.srv.Addr(), e.srv.Token())
	if err != nil {
		t.Fatal(err)
	}
	code, body := e.postJSON(proof.PairCodePath, struct{}{}, bearer(s.Credential))
	var pc proof.PairCodeAnswer
	if code != http.StatusOK || json.Unmarshal([]byte(body), &pc) != nil || len(pc.Code) != 32 || time.Until(pc.Expires) > proof.PairCodeTTL {
		t.Fatalf("POST %s: %d %s", proof.PairCodePath, code, body)
	}

	// A wrong credential for the code is refused and does not use the code up.
	id := proof.PairingCodeID(pc.Code)
	wrong := proof.Pairing(pc.Code+"0").Credential(proof.NewClientNonce(), proof.NewServerNonce(time.Now()))
	if code, body := e.postJSON(proof.PairPath, proof.PairRequest{Pairing: id, Credential: wrong}, nil); code != http.StatusUnauthorized {
		t.Errorf("pair with a wrong credential: %d %s", code, body)
	}
	// A credential made with the secret is no pairing credential.
	withSecret := proof.Secret(e.srv.Token()).Credential(proof.NewClientNonce(), proof.NewServerNonce(time.Now()))
	if code, body := e.postJSON(proof.PairPath, proof.PairRequest{Pairing: id, Credential: withSecret}, nil); code != http.StatusUnauthorized {
		t.Errorf("pair with a secret credential: %d %s", code, body)
	}

	got, err := proof.Pair(ctx(t), http.DefaultClient, e.srv.Addr(), pc.Code)
	if err != nil || got != e.srv.Token() {
		t.Fatalf("Pair = %q, %v; want the secret", got, err)
	}
	_, err = proof.Pair(ctx(t), http.DefaultClient, e.srv.Addr(), pc.Code)
	var np *proof.NotProvedError
	if !errors.As(err, &np) || !np.Pairing {
		t.Fatalf("the code a second time: %v, want NotProvedError", err)
	}

	// A code made by NewPairingCode (the banner's) works the same way, once.
	c2, _ := e.srv.NewPairingCode()
	if got, err := proof.Pair(ctx(t), http.DefaultClient, e.srv.Addr(), c2); err != nil || got != e.srv.Token() {
		t.Fatalf("Pair with the banner's code = %q, %v", got, err)
	}
}

// TestImpostorRelayingFromIPv6: an impostor on [::1]:PORT that passes every request on to the
// real server on 127.0.0.1:PORT cannot pass the proof on (it is bound to 127.0.0.1:PORT), so
// the client refuses it and the impostor receives nothing it can use.
func TestImpostorRelayingFromIPv6(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	port := e.srv.Addr()[strings.LastIndex(e.srv.Addr(), ":")+1:]
	ln, err := net.Listen("tcp6", "[::1]:"+port)
	if err != nil {
		t.Skipf("this machine has no IPv6 loopback to run the impostor on ([::1]:%s: %v); the proof's address binding is covered by internal/proof TestServerProof", port, err)
	}
	target, _ := url.Parse("http://" + e.srv.Addr())
	var mu sync.Mutex
	var seen []string
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		b, _ := io.ReadAll(pr.In.Body)
		pr.Out.Body = io.NopCloser(bytes.NewReader(b))
		mu.Lock()
		seen = append(seen, pr.In.Header.Get("Authorization"), pr.In.URL.RawQuery, string(b))
		mu.Unlock()
		pr.SetURL(target) // also sets Host to the real server's address
		pr.SetXForwarded()
	}}
	srv := &http.Server{Handler: rp}
	go srv.Serve(ln)
	defer srv.Close()
	imp := "[::1]:" + port

	_, err = proof.Authorize(ctx(t), http.DefaultClient, imp, e.srv.Token())
	var np *proof.NotProvedError
	if !errors.As(err, &np) || np.Addr != imp {
		t.Fatalf("Authorize through the relaying impostor: %v, want NotProvedError for %s", err, imp)
	}
	mu.Lock()
	if len(seen) == 0 {
		t.Fatal("the impostor saw no request: the test did not go through it")
	}
	for _, s := range seen {
		if strings.Contains(s, e.srv.Token()) || strings.Contains(s, proof.CredentialPrefix) {
			t.Errorf("the impostor received %q", s)
		}
	}
	mu.Unlock()
	code, _ := e.srv.NewPairingCode()
	if _, err := proof.Pair(ctx(t), http.DefaultClient, imp, code); !errors.As(err, &np) {
		t.Fatalf("Pair through the relaying impostor: %v, want NotProvedError", err)
	}
	if got, err := proof.Pair(ctx(t), http.DefaultClient, e.srv.Addr(), code); err != nil || got != e.srv.Token() {
		t.Errorf("the code still pairs with the real server afterwards: %q %v", got, err)
	}
}

// TestLocalhostListensOnBothLoopbacks: a server started on localhost answers on 127.0.0.1 and
// [::1] (so no other program can take either), advertises 127.0.0.1, and proves the secret on
// each address for that address.
func TestLocalhostListensOnBothLoopbacks(t *testing.T) {
	store, err := secret.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log := zerolog.Nop()
	srv, err := relay.NewServer(relay.Options{Addr: "localhost:0", Secret: store, Logger: &log})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	host, port, _ := net.SplitHostPort(srv.Addr())
	if host != "127.0.0.1" {
		t.Errorf("Addr() = %s, want 127.0.0.1:PORT", srv.Addr())
	}
	if l, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Skipf("this machine has no IPv6 loopback ([::1]: %v); the server listens on 127.0.0.1 only, as logged", err)
	} else {
		l.Close()
	}
	for _, a := range []string{"127.0.0.1:" + port, "[::1]:" + port, "localhost:" + port} {
		s, err := proof.Authorize(ctx(t), http.DefaultClient, a, store.Token())
		if err != nil {
			t.Errorf("Authorize at %s: %v", a, err)
			continue
		}
		if a == "localhost:"+port && s.Addr != "127.0.0.1:"+port {
			t.Errorf("localhost is dialled as %s, want 127.0.0.1", s.Addr)
		}
	}
	if l, err := net.Listen("tcp6", "[::1]:"+port); err == nil {
		l.Close()
		t.Errorf("[::1]:%s is free for another program", port)
	}
}
