package relay_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/relay"
)

// TestDiscoveryMethodSpellings: the discovery routes answer any method spelling, as Chrome's do
// (zendriver sends "get"); /json/new takes PUT in any case and refuses every other method with
// 405, naming the method as sent. e2e's TestDiscoveryMethodsLikeChrome checks the same table
// against Chromium's own endpoint.
func TestDiscoveryMethodSpellings(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://example.com/")
	tok := e.srv.Token()
	for _, tc := range []struct {
		method, path string
		want         int
		body         string // a part of the answer
	}{
		{"get", "/json/version", 200, `"Protocol-Version"`},
		{"Get", "/json/version/", 200, `"Protocol-Version"`},
		{"POST", "/json/version", 200, `"Protocol-Version"`},
		{"FOO", "/json/version", 200, `"Protocol-Version"`},
		{"get", "/json/list", 200, tabA},
		{"delete", "/json", 200, tabA},
		{"post", "/json/protocol", 200, `"domains"`},
		{"put", "/json/activate/" + tabA, 200, "Target activated"},
		{"post", "/json/activate/NOPE", 404, "No such target id"},
		{"put", "/json/new?about:blank", 200, `"id"`},
		{"get", "/json/new?about:blank", 405, "Using unsafe HTTP verb get to invoke /json/new"},
		{"POST", "/json/new?about:blank", 405, "Using unsafe HTTP verb POST to invoke"},
		{"GET", "/json/new?about:blank", 405, "Using unsafe HTTP verb GET to invoke"},
	} {
		t.Run(tc.method+tc.path, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, "http://"+e.srv.Addr()+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header = bearer(tok)
			code, body := do(t, req)
			if code != tc.want || !strings.Contains(body, tc.body) {
				t.Errorf("%s %s = %d %.200s, want %d with %q", tc.method, tc.path, code, body, tc.want, tc.body)
			}
		})
	}
	// no secret: still only /json/version and /json/protocol
	req, _ := http.NewRequest("get", "http://"+e.srv.Addr()+"/json/list", nil)
	if code, body := do(t, req); code != http.StatusUnauthorized {
		t.Errorf("get /json/list without the secret = %d %s, want 401", code, body)
	}
}

// TestJSONVersionFields: /json/version carries the fields Chrome's does.
func TestJSONVersionFields(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://example.com/")
	code, body := e.get("/json/version", nil)
	var v map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &v) != nil {
		t.Fatalf("/json/version: %d %s", code, body)
	}
	for _, k := range []string{"Browser", "File-Path-Style", "Protocol-Version", "User-Agent", "V8-Version", "WebKit-Version", "webSocketDebuggerUrl"} {
		if _, ok := v[k]; !ok {
			t.Errorf("/json/version has no %q: %v", k, v)
		}
	}
	if v["WebKit-Version"] != "537.36" || v["File-Path-Style"] == "" {
		t.Errorf("/json/version = %v, want WebKit-Version 537.36 (from the user agent) and a File-Path-Style", v)
	}
}
