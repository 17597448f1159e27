package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// TestOptionsPage: a pairing link fills and saves the settings (and leaves the token out of the
// address bar), and "Test connection" answers in plain words: connected with N shared tabs,
// token rejected, server not running.
func TestOptionsPage(t *testing.T) {
	e := private(t) // wrong-token checks would throttle a shared relay
	e.share(t, e.site.URL("/?client=options"))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Unpair first so the link really does the pairing.
	if err := e.b.Pair(ctx, "127.0.0.1:1", "stale"); err != nil {
		t.Fatal(err)
	}
	link := fmt.Sprintf("chrome-extension://%s/options.html#addr=%s&token=%s", e.b.ExtensionID, e.addr, e.token())
	opts, err := e.b.NewTab(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "pairing link applied and tested", func() (bool, string) {
		var got string
		_ = e.b.PageEval(ctx, opts, `document.getElementById('result').textContent`, &got)
		return strings.HasPrefix(got, "Connected: the tabrelay server at "+e.addr) && strings.Contains(got, "sees 1 shared tab."), got
	})
	var hash string
	if err := e.b.PageEval(ctx, opts, `location.hash`, &hash); err != nil || hash != "" {
		t.Errorf("the token stays in the address bar: hash %q (%v)", hash, err)
	}
	st, err := e.b.Status(ctx)
	if err != nil || st.Addr != e.addr {
		t.Fatalf("extension settings after the link: %+v %v", st, err)
	}
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	test := func(addr, token string) string {
		var got string
		expr := fmt.Sprintf(`(document.getElementById('addr').value = %q, document.getElementById('token').value = %q, tabrelayOptions.testConnection().then(r => r.text))`, addr, token)
		if err := e.b.PageEval(ctx, opts, expr, &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := test(e.addr, "wrong-token"); !strings.Contains(got, "Pairing token rejected") {
		t.Errorf("Test connection with a wrong token: %q", got)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	if got := test(dead, e.token()); got != "tabrelay server not running at "+dead+"." {
		t.Errorf("Test connection with nothing listening: %q", got)
	}
}
