package relay_test

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// TestPageCloseFollowsClosePolicy: Page.close closes the tab like Target.closeTarget, so it is
// refused on the user's own tabs unless AllowCloseUserTabs, and on tabs a client opened it closes
// them the way Target.closeTarget does (the extension's tab close, which restores focus).
func TestPageCloseFollowsClosePolicy(t *testing.T) {
	cases := []struct {
		name       string
		allow      bool
		clientTab  bool // close a tab opened by Target.createTarget instead of the user's
		pageSocket bool // speak on /devtools/page/<id> instead of a flat session
		refused    bool
	}{
		{name: "user tab refused", refused: true},
		{name: "user tab refused on the page endpoint", pageSocket: true, refused: true},
		{name: "user tab allowed by option", allow: true},
		{name: "client-created tab", clientTab: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{AllowCloseUserTabs: tc.allow})
			e.share(tabA, "https://a.example/")
			target := tabA
			c := e.client("/cdp")
			if tc.clientTab {
				var r struct {
					TargetID string `json:"targetId"`
				}
				if err := c.Call(ctx(t), "", "Target.createTarget", map[string]string{"url": "https://new.example/"}, &r); err != nil {
					t.Fatal(err)
				}
				target = r.TargetID
				e.waitFor("new tab shared", func() bool { return e.hasTab(target) })
			}
			var err error
			if tc.pageSocket {
				err = e.client("/devtools/page/"+target).Call(ctx(t), "", "Page.close", nil, nil)
			} else {
				err = c.Call(ctx(t), attach(t, c, target), "Page.close", nil, nil)
			}
			if tc.refused {
				if err == nil || !strings.Contains(err.Error(), "user's own tab") || !strings.Contains(err.Error(), "--allow-close-user-tabs") {
					t.Fatalf("Page.close on the user's tab: %v, want a refusal naming --allow-close-user-tabs", err)
				}
				if e.ext.Received(target, "Page.close") {
					t.Fatal("a refused Page.close reached the tab")
				}
				return
			}
			if err != nil {
				t.Fatalf("Page.close: %v", err)
			}
			// closed through the extension's tab close, as Target.closeTarget closes tabs (which
			// brings back the tab that was in front when a client opened this one)
			e.waitFor("the tab closed", func() bool { return !e.hasTab(target) })
			if e.ext.Received(target, "Page.close") {
				t.Fatal("Page.close went to the tab's debugger instead of the extension's tab close")
			}
		})
	}
}

// fetchRequest sends what a browser sends for a no-cors fetch: no Origin but Sec-Fetch-*
// headers; origin, when set, is added too.
func fetchRequest(t *testing.T, e *env, method, path string, ws bool, sec http.Header, origin, token string) int {
	t.Helper()
	req := newRequest(e, method, path, ws, origin, token)
	for k, v := range sec {
		req.Header[k] = v
	}
	code, _ := do(t, req)
	return code
}

// TestBrowserRequestsWithoutOriginRefused: a page's <img src="http://127.0.0.1:PORT/json/version">
// carries no Origin but Sec-Fetch-Site (with the other Sec-Fetch-* headers); it is refused with
// 403 before the secret is checked, so such requests can neither use the relay nor count as
// guesses. The extension, whose requests carry both its Origin and Sec-Fetch-*, is not affected,
// nor are clients that send a Sec-Fetch header without Sec-Fetch-Site (Node's fetch sends
// "Sec-Fetch-Mode: cors" alone): browsers always send Sec-Fetch-Site.
func TestBrowserRequestsWithoutOriginRefused(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	tok := e.srv.Token()
	img := http.Header{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"no-cors"}, "Sec-Fetch-Dest": {"image"}}
	headers := map[string]http.Header{
		"img":              img,
		"site only":        {"Sec-Fetch-Site": {"cross-site"}},
		"same-site":        {"Sec-Fetch-Site": {"same-site"}, "Sec-Fetch-Mode": {"navigate"}},
		"cors mode, site":  {"Sec-Fetch-Mode": {"cors"}, "Sec-Fetch-Site": {"cross-site"}},
		"same-origin":      {"Sec-Fetch-Site": {"same-origin"}}, // DNS rebinding aside, still a browser
		"lower-case k":     {"sec-fetch-site": {"cross-site"}},
		"upper-case value": {"Sec-Fetch-Site": {"CROSS-SITE"}},
		"site none, twice": {"Sec-Fetch-Site": {"none", "cross-site"}},
	}
	for _, r := range routes {
		if r.path == "/health" || r.path == "/extension" {
			continue
		}
		for name, h := range headers {
			for _, token := range []string{tok, "guess"} {
				if code := fetchRequest(t, e, r.method, r.path, r.ws, h, "", token); code != http.StatusForbidden {
					t.Errorf("%s %s with %s Sec-Fetch headers and the right secret (%v): %d, want 403", r.method, r.path, name, token == tok, code)
				}
			}
		}
	}
	// none of those wrong guesses counted: the right secret still works at once
	if code := fetchRequest(t, e, "GET", "/json/version", false, nil, "", tok); code != http.StatusOK {
		t.Fatalf("/json/version from a CDP client after the browser requests: %d, want 200 (throttled by requests that were never authenticated?)", code)
	}
	// Node's fetch (undici) sends Sec-Fetch-Mode: cors and no Origin nor Sec-Fetch-Site; other
	// non-browser clients may send a lone Sec-Fetch-Mode or -Dest: all pass
	for name, h := range map[string]http.Header{
		"undici":    {"Sec-Fetch-Mode": {"cors"}},
		"mode only": {"Sec-Fetch-Mode": {"navigate"}},
		"dest only": {"sec-fetch-dest": {"empty"}},
	} {
		for _, path := range []string{"/json/version", "/json/list"} {
			if code := fetchRequest(t, e, "GET", path, false, h, "", tok); code != http.StatusOK {
				t.Errorf("%s from a non-browser client sending %s: %d, want 200", path, name, code)
			}
		}
	}
	// the extension's own requests still pass: with its Origin and Sec-Fetch-*, or (a GET of
	// an extension with host permissions) with Sec-Fetch-Site: none and no Origin; the latter
	// is also what an address typed by the user sends
	extFetch := http.Header{"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"cors"}, "Sec-Fetch-Dest": {"empty"}}
	for _, origin := range []string{relaytest.ExtensionOrigin, ""} {
		for _, path := range []string{"/json/version", "/json/list"} {
			if code := fetchRequest(t, e, "GET", path, false, extFetch, origin, tok); code != http.StatusOK {
				t.Errorf("%s from the extension (Origin %q) with Sec-Fetch-Site: none: %d, want 200", path, origin, code)
			}
		}
	}
	// Node's fetch (undici), which MCP and CDP clients in Node use, sends "Sec-Fetch-Mode: cors"
	// alone on every request, which no browser does
	if code := fetchRequest(t, e, "GET", "/json/version", false, http.Header{"Sec-Fetch-Mode": {"cors"}}, "", tok); code != http.StatusOK {
		t.Errorf("/json/version from Node's fetch (Sec-Fetch-Mode: cors alone): %d, want 200", code)
	}
	if code := fetchRequest(t, e, "GET", "/json/version", false, http.Header{"Sec-Fetch-Site": {"cross-site"}, "Sec-Fetch-Mode": {"cors"}}, relaytest.ExtensionOrigin, tok); code != http.StatusOK {
		t.Errorf("/json/version from the extension's origin with Sec-Fetch-Site: cross-site: %d, want 200", code)
	}
	ws := http.Header{"Sec-Fetch-Site": {"none"}, "Sec-Fetch-Mode": {"websocket"}, "Sec-Fetch-Dest": {"websocket"}}
	x, err := relaytest.Dial(ctx(t), e.srv.Addr(), tok, &relaytest.Options{Header: ws})
	if err != nil {
		t.Fatalf("extension WebSocket with Sec-Fetch headers: %v", err)
	}
	defer x.Close()
	e.ext = x
	e.waitFor("extension reconnected", func() bool { return e.srv.Hub().ExtensionConnected() })
	e.share(tabB, "https://b.example/")
}

// TestJSONNewKeepsTargetQuery: /json/new's query is the URL to open; a ?token= the client added
// is cut out textually, so a URL with a query of its own arrives whole.
func TestJSONNewKeepsTargetQuery(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	tok := e.srv.Token()
	cases := []struct {
		name, query string
		bearer      bool
		want        string
	}{
		{name: "token after a URL with a query", query: "https://x.example/?a=1&token=" + tok, want: "https://x.example/?a=1"},
		{name: "token after a URL with two params", query: "https://x.example/p?a=1&b=2&token=" + tok, want: "https://x.example/p?a=1&b=2"},
		{name: "token first", query: "token=" + tok + "&https://x.example/?a=1&b=2", want: "https://x.example/?a=1&b=2"},
		{name: "URL's own token param kept", query: "https://x.example/?token=abc&token=" + tok, want: "https://x.example/?token=abc"},
		{name: "bearer: the URL's token param is the URL's", query: "https://x.example/?token=abc", bearer: true, want: "https://x.example/?token=abc"},
		{name: "token only", query: "token=" + tok, want: "about:blank"},
		{name: "plain URL", query: "https://x.example/", bearer: true, want: "https://x.example/"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPut, "http://"+e.srv.Addr()+"/json/new?"+tc.query, nil)
			if tc.bearer {
				req.Header = bearer(tok)
			}
			code, body := do(t, req)
			var created map[string]string
			if code != http.StatusOK || json.Unmarshal([]byte(body), &created) != nil {
				t.Fatalf("PUT /json/new: %d %s", code, body)
			}
			if created["url"] != tc.want {
				t.Errorf("opened %q, want %q", created["url"], tc.want)
			}
			if strings.Contains(created["url"], tok) {
				t.Errorf("the secret leaked into the opened URL %q", created["url"])
			}
		})
	}
}

// TestCleanupUndoesOverrides: what a client switched on in the user's tab is switched back off
// when it leaves, each with the right command and params.
func TestCleanupUndoesOverrides(t *testing.T) {
	cases := []struct {
		set        string
		params     string
		undo       string
		undoParams string
	}{
		{"Emulation.setDeviceMetricsOverride", `{"width":100,"height":100,"deviceScaleFactor":1,"mobile":false}`, "Emulation.clearDeviceMetricsOverride", `{}`},
		{"Emulation.setEmulatedMedia", `{"media":"print"}`, "Emulation.setEmulatedMedia", `{"media":"","features":[]}`},
		{"Emulation.setScriptExecutionDisabled", `{"value":true}`, "Emulation.setScriptExecutionDisabled", `{"value":false}`},
		{"Network.setExtraHTTPHeaders", `{"headers":{"X-A":"1"}}`, "Network.setExtraHTTPHeaders", `{"headers":{}}`},
		{"Input.setIgnoreInputEvents", `{"ignore":true}`, "Input.setIgnoreInputEvents", `{"ignore":false}`},
		{"Input.setInterceptDrags", `{"enabled":true}`, "Input.setInterceptDrags", `{"enabled":false}`},
		{"Page.setWebLifecycleState", `{"state":"frozen"}`, "Page.setWebLifecycleState", `{"state":"active"}`},
		{"Emulation.setPageScaleFactor", `{"pageScaleFactor":2.5}`, "Emulation.setPageScaleFactor", `{"pageScaleFactor":1}`},
		{"Emulation.setDisabledImageTypes", `{"imageTypes":["avif","webp"]}`, "Emulation.setDisabledImageTypes", `{"imageTypes":[]}`},
		{"Emulation.setHardwareConcurrencyOverride", `{"hardwareConcurrency":1}`, "Emulation.setHardwareConcurrencyOverride", `{"hardwareConcurrency":6}`},
	}
	for _, tc := range cases {
		t.Run(tc.set, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{})
			e.share(tabA, "https://a.example/")
			e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
				if cmd.Method == "Runtime.evaluate" && strings.Contains(string(cmd.Params), "navigator.hardwareConcurrency") {
					return map[string]any{"result": map[string]any{"type": "number", "value": 6}}, nil, true
				}
				return nil, nil, false
			})
			c := e.client("/cdp")
			sid := attach(t, c, tabA)
			if err := c.Call(ctx(t), sid, tc.set, json.RawMessage(tc.params), nil); err != nil {
				t.Fatal(err)
			}
			cmds := e.ext.Commands()
			if strings.Contains(tc.undoParams, "6") { // read from the tab: before the override
				read, set := -1, -1
				for i, cmd := range cmds {
					if cmd.Method == "Runtime.evaluate" && read < 0 {
						read = i
					}
					if cmd.Method == tc.set {
						set = i
					}
				}
				if read < 0 || read > set {
					t.Fatalf("the tab's own value was not read before the override: %+v", cmds)
				}
			}
			n := len(cmds)
			c.Close()
			e.waitWithin(5*time.Second, tc.undo+" "+tc.undoParams+" after the client left", func() bool {
				for _, cmd := range e.sentSince(n, tc.undo) {
					if jsonEqual(cmd.Params, tc.undoParams) {
						return true
					}
				}
				return false
			})
		})
	}
}

// TestCleanupUndoesOverrideWhoseBaselineIsLate: the tab's own value for an override without a
// "clear" command is read before the override; when its answer comes only after the client has
// left, the undo is sent once it arrives instead of being skipped.
func TestCleanupUndoesOverrideWhoseBaselineIsLate(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	release := make(chan struct{})
	e.ext.SetHandler(func(cmd relaytest.Command) (any, *wire.Error, bool) {
		if cmd.Method == "Runtime.evaluate" && strings.Contains(string(cmd.Params), "navigator.hardwareConcurrency") {
			<-release
			return map[string]any{"result": map[string]any{"type": "number", "value": 6}}, nil, true
		}
		return nil, nil, false
	})
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	if err := c.Call(ctx(t), sid, "Emulation.setHardwareConcurrencyOverride", json.RawMessage(`{"hardwareConcurrency":1}`), nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	e.waitFor("the client to leave", func() bool { return strings.Contains(e.logs.String(), "client left") })
	close(release)
	e.waitWithin(5*time.Second, "the undo once the baseline arrived", func() bool {
		for _, cmd := range e.sentSince(0, "Emulation.setHardwareConcurrencyOverride") {
			if jsonEqual(cmd.Params, `{"hardwareConcurrency":6}`) {
				return true
			}
		}
		return false
	})
}

// interfaceIPs returns this machine's non-loopback, non-link-local addresses.
func interfaceIPs(t *testing.T) (v4, v6 []net.IP) {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
			continue
		}
		if n.IP.To4() != nil {
			v4 = append(v4, n.IP)
		} else {
			v6 = append(v6, n.IP)
		}
	}
	return v4, v6
}

// TestListenNonLoopback: with AllowNonLoopback the relay answers at the addresses it is bound to
// (and only those, with its port), and /json/version advertises an address a client can reach,
// never 0.0.0.0 or [::].
func TestListenNonLoopback(t *testing.T) {
	v4, v6 := interfaceIPs(t)
	type reach struct {
		ip    net.IP
		allow bool
	}
	cases := []struct {
		name, listen string
		advertised   string // host of Addr() and of the default webSocketDebuggerUrl
		reach        []reach
	}{
		{name: "all IPv4", listen: "0.0.0.0:0", advertised: "127.0.0.1"},
		{name: "all IPv6", listen: "[::]:0", advertised: "::1"},
	}
	for _, ip := range v4 {
		cases[0].reach = append(cases[0].reach, reach{ip, true})
		cases[1].reach = append(cases[1].reach, reach{ip, true}) // dual stack
	}
	for _, ip := range v6 {
		cases[1].reach = append(cases[1].reach, reach{ip, true})
	}
	if len(v4) > 0 {
		cases = append(cases, struct {
			name, listen string
			advertised   string
			reach        []reach
		}{name: "one address", listen: net.JoinHostPort(v4[0].String(), "0"), advertised: v4[0].String(), reach: []reach{{v4[0], true}}})
		for _, ip := range v6 { // an IPv4 listener's Host allowlist has no IPv6 address
			cases[0].reach = append(cases[0].reach, reach{ip, false})
		}
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnvWith(t, func(o *relay.Options) { o.Addr = tc.listen; o.AllowNonLoopback = true })
			tok := e.srv.Token()
			host, port, _ := net.SplitHostPort(e.srv.Addr())
			if host != tc.advertised {
				t.Fatalf("Addr() = %s, want host %s", e.srv.Addr(), tc.advertised)
			}
			version := func(dial, hostHeader string) (int, string) {
				req, _ := http.NewRequest(http.MethodGet, "http://"+dial+"/json/version", nil)
				if hostHeader != "" {
					req.Host = hostHeader
				}
				req.Header = bearer(tok)
				code, body := do(t, req)
				var v map[string]string
				_ = json.Unmarshal([]byte(body), &v)
				return code, v["webSocketDebuggerUrl"]
			}
			code, ws := version(e.srv.Addr(), "")
			if code != http.StatusOK || !strings.HasPrefix(ws, "ws://"+net.JoinHostPort(tc.advertised, port)+"/") {
				t.Fatalf("/json/version at %s: %d %q", e.srv.Addr(), code, ws)
			}
			for _, r := range tc.reach {
				at := net.JoinHostPort(r.ip.String(), port)
				if !r.allow {
					if code, _ := version(e.srv.Addr(), at); code != http.StatusForbidden {
						t.Errorf("Host %s: %d, want 403", at, code)
					}
					continue
				}
				code, ws := version(at, "")
				if code != http.StatusOK || !strings.HasPrefix(ws, "ws://"+at+"/") {
					t.Errorf("/json/version at %s: %d %q, want ws://%s/...", at, code, ws, at)
				}
				if code, _ := version(at, net.JoinHostPort(r.ip.String(), "1")); code != http.StatusForbidden {
					t.Errorf("Host %s with another port: %d, want 403", r.ip, code)
				}
			}
			for _, bad := range []string{"0.0.0.0:" + port, "[::]:" + port, "evil.example:" + port, "192.0.2.02:" + port, "example.com:" + port} {
				if code, _ := version(e.srv.Addr(), bad); code != http.StatusForbidden {
					t.Errorf("Host %s: %d, want 403", bad, code)
				}
			}
		})
	}
}
