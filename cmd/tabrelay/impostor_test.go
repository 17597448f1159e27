package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// assertNothingUsable is the impostor's AssertNothingUsable, after checking that the impostor
// recorded values to try at all.
func assertNothingUsable(t *testing.T, im *relaytest.Impostor, real *relay.Server) {
	t.Helper()
	if im.Requests() > 0 && len(im.Candidates()) == 0 {
		t.Fatal("the impostor recorded no values to try")
	}
	im.AssertNothingUsable(t, real)
}

// TestCLIRefusesImpostor: with a fake server on the port, `tabrelay tabs` (the real client code
// path) reports the impostor in words, and the impostor receives nothing usable.
func TestCLIRefusesImpostor(t *testing.T) {
	f, _, srv := startTestServer(t)
	real := srv.App.Server
	im, err := relaytest.StartImpostor("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	g := *f
	g.Addr = im.Addr
	_, _, err = runCmd(t, runTabs, &g)
	var np *proof.NotProvedError
	if !errors.As(err, &np) || !strings.HasPrefix(err.Error(), "the server at "+im.Addr+" does not know this secret: another program may be using the port") {
		t.Fatalf("tabs against an impostor: %v", err)
	}
	// the same command against the real server works (before the candidates are tried: the
	// wrong tries throttle the server)
	if _, _, err := runCmd(t, runTabs, f); err != nil {
		t.Fatalf("tabs against the real server: %v", err)
	}
	assertNothingUsable(t, im, real)
}

// TestBrowserCheckRefusesImpostor: `tabrelay browser`'s "is a server already running at
// --addr?" check does not trust a fake server that says ok on /health: it reports it in words
// and sends it nothing usable (no browser is started).
func TestBrowserCheckRefusesImpostor(t *testing.T) {
	f, _, srv := startTestServer(t)
	real := srv.App.Server
	im, err := relaytest.StartImpostor("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	g := *f
	g.Addr = im.Addr
	log := zerolog.Nop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _, _, err = relayFor(ctx, &g, &log)
	var np *proof.NotProvedError
	if !errors.As(err, &np) || !strings.Contains(err.Error(), "the server at "+im.Addr+" does not know this secret: another program may be using the port") {
		t.Fatalf("relayFor against an impostor: %v", err)
	}
	// against the real server the check passes and pairs with its literal address
	httpURL, tok, stop, err := relayFor(ctx, f, &log)
	if err != nil || httpURL != real.HTTPURL() || tok != real.Token() {
		t.Fatalf("relayFor against the real server: %q %v", httpURL, err)
	}
	stop()
	assertNothingUsable(t, im, real)
}

// TestCLIRefusesImpostorRelayingFromIPv6: the real server holds 127.0.0.1:PORT, an impostor
// holds [::1]:PORT and relays everything to the real one; `tabrelay tabs --addr [::1]:PORT`
// and `tabrelay browser`'s check refuse it, and it receives nothing usable.
func TestCLIRefusesImpostorRelayingFromIPv6(t *testing.T) {
	f, _, srv := startTestServer(t)
	real := srv.App.Server
	_, port, _ := net.SplitHostPort(real.Addr())
	im, err := relaytest.StartImpostor("[::1]:"+port, real.Addr())
	if err != nil {
		t.Skipf("this machine has no IPv6 loopback to run the impostor on ([::1]:%s: %v); the proof's address binding is covered by internal/proof TestServerProof", port, err)
	}
	defer im.Close()
	g := *f
	g.Addr = im.Addr
	_, _, err = runCmd(t, runTabs, &g)
	var np *proof.NotProvedError
	if !errors.As(err, &np) || np.Addr != "[::1]:"+port {
		t.Fatalf("tabs through the relaying impostor: %v", err)
	}
	log := zerolog.Nop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, _, _, err := relayFor(ctx, &g, &log); !errors.As(err, &np) {
		t.Fatalf("relayFor through the relaying impostor: %v", err)
	}
	assertNothingUsable(t, im, real)
}

// TestBannerShowsSecretOnlyOnTerminal: the startup banner shows the secret, the client lines
// with it and a one-time pairing link (whose code pairs once) only on a terminal.
func TestBannerShowsSecretOnlyOnTerminal(t *testing.T) {
	f, _, srv := startTestServer(t)
	// as on a first start: no extension has ever paired with this home
	if err := os.Remove(filepath.Join(f.Home, pairedFile)); err != nil {
		t.Fatalf("the simulated extension's connection left no paired marker: %v", err)
	}
	var piped, term strings.Builder
	printBanner(&piped, srv, false)
	printBanner(&term, srv, true)
	if strings.Contains(piped.String(), srv.Token()) || strings.Contains(piped.String(), "code=") || !strings.Contains(piped.String(), "`tabrelay token` prints it") {
		t.Errorf("banner on a pipe:\n%s", piped.String())
	}
	if !strings.Contains(term.String(), "?token="+srv.Token()) || strings.Contains(term.String(), "token="+srv.Token()+"\n") {
		t.Errorf("banner on a terminal:\n%s", term.String())
	}
	_, link, ok := strings.Cut(term.String(), "options.html#addr="+srv.Addr()+"&code=")
	if !ok {
		t.Fatalf("no pairing link on a terminal:\n%s", term.String())
	}
	code := strings.Fields(link)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := proof.Pair(ctx, http.DefaultClient, srv.Addr(), code); err != nil || got != srv.Token() {
		t.Fatalf("pairing with the banner's code: %q %v", got, err)
	}
	if _, err := proof.Pair(ctx, http.DefaultClient, srv.Addr(), code); err == nil {
		t.Fatal("the banner's code paired twice")
	}
}

// TestBannerOncePaired: once an extension has connected to a server with this home (here the
// simulated one startTestServer shares a tab with), the banner says the extension is paired,
// on a terminal and on a pipe, instead of asking to pair it again; with no extension ever
// paired it asks, as before. The share line names what works without a pinned icon.
func TestBannerOncePaired(t *testing.T) {
	f, _, srv := startTestServer(t)
	for _, terminal := range []bool{false, true} {
		var b strings.Builder
		printBanner(&b, srv, terminal)
		out := b.String()
		if strings.Contains(out, "Pair the extension (once)") || strings.Contains(out, "code=") || !strings.Contains(out, "The extension is paired") {
			t.Errorf("banner (terminal %v) with an extension paired:\n%s", terminal, out)
		}
		if !strings.Contains(out, "Alt+Shift+S") || !strings.Contains(out, "extensions menu") {
			t.Errorf("banner (terminal %v) does not say how to share without a pinned icon:\n%s", terminal, out)
		}
	}
	if err := os.Remove(filepath.Join(f.Home, pairedFile)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	printBanner(&b, srv, false)
	if !strings.Contains(b.String(), "Pair the extension (once)") {
		t.Errorf("banner with no extension ever paired does not ask to pair:\n%s", b.String())
	}
}

// TestPairCommand: `tabrelay pair` prints a one-time link for the running server.
func TestPairCommand(t *testing.T) {
	f, _, srv := startTestServer(t)
	out, _, err := runCmd(t, runPair, f)
	_, code, ok := strings.Cut(strings.TrimSpace(out), "options.html#addr="+srv.Addr()+"&code=")
	if err != nil || !ok {
		t.Fatalf("pair: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := proof.Pair(ctx, http.DefaultClient, srv.Addr(), code); err != nil || got != srv.Token() {
		t.Fatalf("pairing with the printed code: %q %v", got, err)
	}
}
