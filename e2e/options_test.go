package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestOptionsPage: a one-time pairing link (#addr=…&code=…) is cleared from the address bar at
// once, asks "Pair with ADDR?" before anything is saved, and on confirmation exchanges the code
// for the token with the server (which proves it knows the code); the extension then connects
// and shares tabs. The code does not work twice; non-loopback addresses and links carrying the
// token itself are refused; "Test connection" answers in plain words.
func TestOptionsPage(t *testing.T) {
	e := private(t) // wrong-token checks would throttle a shared relay
	e.share(t, e.site.URL("/?client=options"))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Unpair first so the link really does the pairing.
	if err := e.b.Pair(ctx, "127.0.0.1:1", "stale"); err != nil {
		t.Fatal(err)
	}
	code, _ := e.srv.NewPairingCode()
	link := fmt.Sprintf("chrome-extension://%s/options.html#addr=%s&code=%s", e.b.ExtensionID, e.addr, code)
	opts, err := e.b.NewTab(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	eval := func(expr string) string {
		t.Helper()
		var got string
		if err := e.b.PageEval(ctx, opts, expr, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	text := func(id string) string { return eval(fmt.Sprintf(`document.getElementById(%q).textContent`, id)) }
	confirmShown := func() bool { return eval(`String(!document.getElementById('confirm').hidden)`) == "true" }
	eventually(t, 10*time.Second, "the pairing question", func() (bool, string) {
		return confirmShown() && text("confirm-text") == "Pair with "+e.addr+"?", text("confirm-text")
	})
	if h := eval(`location.href`); strings.Contains(h, "#") || strings.Contains(h, code) {
		t.Errorf("the pairing link stays in the address bar: %q", h)
	}
	if st, err := e.b.Status(ctx); err != nil || st.Addr != "127.0.0.1:1" {
		t.Fatalf("settings changed before the user confirmed: %+v %v", st, err)
	}

	eval(`(document.getElementById('confirm-pair').click(), '')`)
	eventually(t, 15*time.Second, "pairing applied and tested", func() (bool, string) {
		got := text("result")
		return strings.HasPrefix(got, "Connected: the tabrelay server at "+e.addr) && strings.Contains(got, "sees 1 shared tab."), got
	})
	// the answer shows where the person clicked, above the settings that follow (on a small
	// window it was below the fold)
	if got := eval(`String(document.getElementById('result').getBoundingClientRect().top < document.getElementById('sharing').getBoundingClientRect().top)`); got != "true" {
		t.Error("the pairing result is shown below the Sharing settings, away from the Pair button")
	}
	if got := eval(`document.getElementById('token').value`); got != e.token() {
		t.Errorf("the token field after pairing is not the server's secret")
	}
	st, err := e.b.Status(ctx)
	if err != nil || st.Addr != e.addr {
		t.Fatalf("extension settings after pairing: %+v %v", st, err)
	}
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	// The harness learns the (unchanged) settings, and a new tab is shared through the pairing.
	if err := e.b.Pair(ctx, e.addr, e.token()); err != nil {
		t.Fatal(err)
	}
	tab := e.share(t, e.site.URL("/other.html?client=after-pairing"))
	if _, ok := e.listedIDs(t)[tab.TargetID]; !ok {
		t.Errorf("the tab shared after pairing is not listed")
	}

	// The same code a second time, on this browser that is paired with that server and
	// connected: said plainly, not as an error, and nothing changes.
	setHash := func(h string) {
		eval(fmt.Sprintf(`(location.hash = %q, '')`, h))
	}
	setHash("addr=" + e.addr + "&code=" + code)
	eventually(t, 10*time.Second, "the pairing question again", func() (bool, string) { return confirmShown(), text("confirm-text") })
	eval(`(document.getElementById('confirm-pair').click(), '')`)
	eventually(t, 10*time.Second, "a used code on a paired browser said plainly", func() (bool, string) {
		got := text("result")
		return got == "This pairing link was already used (or has expired), and nothing needs it: this browser is already paired with the tabrelay server at "+e.addr+" and connected.", got
	})
	if cls := eval(`document.getElementById('result').className`); cls == "bad" {
		t.Errorf("a used link on a paired, connected browser is shown as an error (class %q)", cls)
	}
	pageShot(t, ctx, e.b, opts, 1000, 700, "options-used-link-paired")
	if st, err := e.b.Status(ctx); err != nil || st.Addr != e.addr || !st.Connected {
		t.Errorf("settings after the used link: %+v %v", st, err)
	}

	// The same code on a browser paired with another server: refused in words, nothing saved.
	if err := e.b.Pair(ctx, "127.0.0.1:1", "stale"); err != nil {
		t.Fatal(err)
	}
	setHash("addr=" + e.addr + "&code=" + code)
	eventually(t, 10*time.Second, "the pairing question again", func() (bool, string) { return confirmShown(), text("confirm-text") })
	eval(`(document.getElementById('confirm-pair').click(), '')`)
	eventually(t, 10*time.Second, "a used code refused", func() (bool, string) {
		got := text("result")
		return strings.HasPrefix(got, "Not paired: the server at "+e.addr+" does not know this pairing code"), got
	})
	if cls := eval(`document.getElementById('result').className`); cls != "bad" {
		t.Errorf("a used link on a browser not paired with that server is not shown as an error (class %q)", cls)
	}
	if st, err := e.b.Status(ctx); err != nil || st.Addr != "127.0.0.1:1" {
		t.Errorf("the used link changed the settings: %+v %v", st, err)
	}
	if err := e.b.Pair(ctx, e.addr, e.token()); err != nil {
		t.Fatal(err)
	}
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}

	// Non-loopback addresses and names are refused without a question; so are token links.
	for _, bad := range []string{"0.0.0.0:" + portOf(e.addr), "10.1.2.3:" + portOf(e.addr), "localhost:" + portOf(e.addr), "evil.example:80"} {
		setHash("addr=" + bad + "&code=" + code)
		eventually(t, 10*time.Second, "refusal of "+bad, func() (bool, string) {
			got := text("result")
			return strings.HasPrefix(got, "Pairing refused: tabrelay pairs only with a loopback address") && !confirmShown(), got
		})
		if h := eval(`location.href`); strings.Contains(h, "#") {
			t.Errorf("the refused link stays in the address bar: %q", h)
		}
	}
	setHash("addr=" + e.addr + "&token=" + e.token())
	eventually(t, 10*time.Second, "a token link refused", func() (bool, string) {
		got := text("result")
		return strings.Contains(got, "carries the token itself") && !confirmShown(), got
	})
	if st, err := e.b.Status(ctx); err != nil || st.Addr != e.addr || !st.Connected {
		t.Errorf("settings after the refused links: %+v %v", st, err)
	}

	test := func(addr, token string) string {
		return eval(fmt.Sprintf(`(document.getElementById('addr').value = %q, document.getElementById('token').value = %q, tabrelayOptions.testConnection().then(r => r.text))`, addr, token))
	}
	if got := test(e.addr, "wrong-token"); !strings.HasPrefix(got, "The server at "+e.addr+" does not know this secret: another program may be using the port") {
		t.Errorf("Test connection with a wrong token: %q", got)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	if got := test(dead, e.token()); got != "tabrelay server not running at "+dead+"." {
		t.Errorf("Test connection with nothing listening: %q", got)
	}
	if got := test("0.0.0.0:"+portOf(e.addr), e.token()); !strings.HasPrefix(got, "tabrelay pairs only with a loopback address") {
		t.Errorf("Test connection with 0.0.0.0: %q", got)
	}
}

// portOf is addr's port.
func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
