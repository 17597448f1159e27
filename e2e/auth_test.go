package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// TestAuthJSMatchesGoVector: the extension's auth.js (crypto.subtle HMAC, run in an extension
// page: service workers may not import() modules) computes the same
// proofs, credentials and pairing-code id as internal/proof for the fixed test vector.
func TestAuthJSMatchesGoVector(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v := proof.TestVector()
	page, err := e.b.NewTab(ctx, fmt.Sprintf("chrome-extension://%s/options.html", e.b.ExtensionID))
	if err != nil {
		t.Fatal(err)
	}
	defer e.b.CloseTab(ctx, page) //nolint:errcheck
	expr := fmt.Sprintf(`import('./auth.js').then(async ({ proofs: p }) => [
		await p.serverProof(%[1]q, %[3]q, %[4]q, %[5]q),
		await p.credential(%[1]q, %[3]q, %[4]q),
		await p.pairServerProof(%[2]q, %[3]q, %[4]q, %[6]q),
		await p.pairCredential(%[2]q, %[3]q, %[4]q),
		await p.pairingCodeId(%[2]q),
	])`, v.Secret, v.Code, v.ClientNonce, v.ServerNonce, v.Addr, v.Addr6)
	var got []string
	if err := e.b.PageEval(ctx, page, expr, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{v.ServerProof, v.Credential, v.PairServerProof6, v.PairCredential, v.PairingID}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("auth.js gives\n%s\nwant (internal/proof)\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestExtensionRefusesImpostor: the real extension in real Chromium, pointed at a fake server
// on the port (which records everything it receives), stops with the impostor named on its
// badge ("!") and tooltip, and the options page's connection test says the same; the impostor
// receives neither the secret nor anything the real server accepts, and no shared tab. Paired
// back with the real server, the extension connects and shares again.
func TestExtensionRefusesImpostor(t *testing.T) {
	e := private(t)
	shared := e.share(t, e.site.URL("/?client=impostor"))
	im, err := relaytest.StartImpostor("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer im.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := e.b.Pair(ctx, im.Addr, e.token()); err != nil {
		t.Fatal(err)
	}
	want := "the server at " + im.Addr + " does not know this secret: another program may be using the port"
	eventually(t, 15*time.Second, "the extension stops on the impostor", func() (bool, string) {
		st, err := e.b.Status(ctx)
		return err == nil && st.Status == "stopped" && strings.HasPrefix(st.Reason, want), fmt.Sprintf("%+v %v", st, err)
	})
	other, err := e.b.NewTab(ctx, e.site.URL("/other.html?client=impostor-badge"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.b.WaitBadge(ctx, other, "!"); err != nil {
		t.Errorf("badge of an unshared tab: %v", err)
	}
	if tip, _ := e.b.Tooltip(ctx, other); !strings.Contains(tip, want) {
		t.Errorf("tooltip of an unshared tab: %q", tip)
	}
	if err := e.b.WaitBadge(ctx, shared, "!"); err != nil {
		t.Errorf("badge of the shared tab: %v", err)
	}
	if tip, _ := e.b.Tooltip(ctx, shared); !strings.Contains(tip, want) {
		t.Errorf("tooltip of the shared tab: %q", tip)
	}

	// The options page's connection test, pointed at the impostor.
	opts, err := e.b.NewTab(ctx, fmt.Sprintf("chrome-extension://%s/options.html", e.b.ExtensionID))
	if err != nil {
		t.Fatal(err)
	}
	var got string
	expr := fmt.Sprintf(`(document.getElementById('addr').value = %q, document.getElementById('token').value = %q, tabrelayOptions.testConnection().then(r => r.text))`, im.Addr, e.token())
	if err := e.b.PageEval(ctx, opts, expr, &got); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, "The server at "+im.Addr+" does not know this secret: another program may be using the port") {
		t.Errorf("options page test against the impostor: %q", got)
	}
	for _, s := range im.Received() {
		if strings.Contains(s, shared.TargetID) || strings.Contains(s, "tabShared") {
			t.Errorf("the impostor learned of the shared tab: %q", s)
		}
	}

	// Back to the real server: connected, and sharing works (before the impostor's values are
	// tried, whose failures throttle the server).
	if err := e.b.Pair(ctx, e.addr, e.token()); err != nil {
		t.Fatal(err)
	}
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	tab := e.share(t, e.site.URL("/other.html?client=after-impostor"))
	if _, ok := e.listedIDs(t)[tab.TargetID]; !ok {
		t.Errorf("the tab shared after re-pairing is not listed")
	}
	im.AssertNothingUsable(t, e.srv)
}
