package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// chromeEndpoint launches a plain headless Chromium with its own DevTools endpoint and returns
// its browser-level client and its HTTP address (host:port).
func chromeEndpoint(t *testing.T, ctx context.Context) (*snapshottest.Browser, string) {
	t.Helper()
	chrome, err := snapshottest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { chrome.Close() })
	u, err := url.Parse(chrome.WSURL)
	if err != nil {
		t.Fatal(err)
	}
	return chrome, u.Host
}

// rawStatus sends "METHOD path" with a Host header (and the secret, when given) and returns the
// status code, as a client that spells methods its own way (zendriver's "get") does.
func rawStatus(t *testing.T, addr, method, path, token string) int {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n", method, path, addr, auth)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestDiscoveryMethodsLikeChrome: the discovery routes answer each method spelling with the
// status Chrome's own endpoint gives (Python clients cannot be installed here; zendriver's
// "get /json/version" is the case that matters).
func TestDiscoveryMethodsLikeChrome(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, chromeAddr := chromeEndpoint(t, ctx)
	tab := e.share(t, e.pageURL("discovery-methods"))
	for _, path := range []string{"/json/version", "/json/list", "/json", "/json/protocol", "/json/new?about:blank", "/json/activate/NOPE"} {
		for _, m := range []string{"get", "GET", "Get", "post", "PUT", "put", "DELETE", "HEAD"} {
			if strings.HasPrefix(path, "/json/new") && strings.EqualFold(m, "PUT") {
				continue // opens a tab: PUT is tested by the clients
			}
			want := rawStatus(t, chromeAddr, m, path, "")
			if got := rawStatus(t, e.addr, m, path, e.token()); got != want {
				t.Errorf("%s %s: tabrelay %d, Chrome %d", m, path, got, want)
			}
		}
	}
	_ = tab
}

// TestBrowserLevelMethodsLikeChrome walks every Browser and Target command of Chromium's own
// protocol description: each one Chrome answers at browser level, tabrelay serves (a result,
// or Chrome's kind of error for the empty parameters) or refuses with the reason README.md
// gives; none is unknown to it.
func TestBrowserLevelMethodsLikeChrome(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	chrome, chromeAddr := chromeEndpoint(t, ctx)
	resp, err := http.Get("http://" + chromeAddr + "/json/protocol")
	if err != nil {
		t.Fatal(err)
	}
	var proto struct {
		Domains []struct {
			Domain   string
			Commands []struct{ Name string }
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&proto)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]string{}
	for _, r := range relay.RefusedMethods() {
		refused[r[0]] = r[1]
	}
	skip := map[string]bool{"Browser.close": true, "Browser.crash": true, "Browser.crashGpuProcess": true} // they end the browser or connection
	tc, err := cdpclient.Dial(ctx, e.cdpURL()+"?token="+e.token(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	n := 0
	for _, d := range proto.Domains {
		if d.Domain != "Browser" && d.Domain != "Target" {
			continue
		}
		for _, c := range d.Commands {
			m := d.Domain + "." + c.Name
			if skip[m] {
				continue
			}
			n++
			chromeErr := chrome.Client.Call(ctx, "", m, map[string]any{}, nil)
			var ce *cdpclient.Error
			if errors.As(chromeErr, &ce) && ce.Code == -32601 {
				continue // Chrome does not answer it at browser level either
			}
			err := tc.Call(ctx, "", m, map[string]any{}, nil)
			switch why, isRefused := refused[m]; {
			case isRefused:
				if err == nil || !strings.Contains(err.Error(), why) {
					t.Errorf("%s: %v, want the refusal %q (Chrome: %s)", m, err, why, cdpOutcome(chromeErr))
				}
			case errors.As(err, &ce) && ce.Code == -32601:
				t.Errorf("%s is unknown to tabrelay (Chrome: %s)", m, cdpOutcome(chromeErr))
			case (err == nil) != (chromeErr == nil):
				t.Logf("%s: tabrelay %s, Chrome %s", m, cdpOutcome(err), cdpOutcome(chromeErr))
			}
		}
	}
	if n < 30 {
		t.Fatalf("only %d Browser and Target commands in Chromium's /json/protocol", n)
	}
}
