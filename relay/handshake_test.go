package relay_test

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/go-rod/rod/lib/cdp"

	"github.com/tabrelay/tabrelay/relay"
)

// TestLenientWebSocketKey: the CDP handshake accepts what Chrome's DevTools server accepts, any
// non-empty Sec-WebSocket-Key (go-rod sends "nil"), and answers with the Sec-WebSocket-Accept the
// client computes for the key it sent; an empty or missing key is refused as Chrome refuses it.
func TestLenientWebSocketKey(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	accept := func(key string) string {
		h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		return base64.StdEncoding.EncodeToString(h[:])
	}
	for _, tc := range []struct {
		name, path string
		keys       []string // nil: no header
		want       int
	}{
		{"valid key", "/cdp", []string{"dGhlIHNhbXBsZSBub25jZQ=="}, http.StatusSwitchingProtocols},
		{"go-rod's nil", "/cdp", []string{"nil"}, http.StatusSwitchingProtocols},
		{"nil on a page endpoint", "/devtools/page/" + tabA, []string{"nil"}, http.StatusSwitchingProtocols},
		{"too short", "/cdp", []string{"c2hvcnQ="}, http.StatusSwitchingProtocols},
		{"empty", "/cdp", []string{""}, http.StatusBadRequest},
		{"missing", "/cdp", nil, http.StatusBadRequest},
		{"two keys", "/cdp", []string{"nil", "nil"}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(e, http.MethodGet, tc.path, true, "", e.srv.Token())
			req.Header.Del("Sec-WebSocket-Key")
			for _, k := range tc.keys {
				req.Header.Add("Sec-WebSocket-Key", k)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
			if tc.want == http.StatusSwitchingProtocols {
				if got, want := resp.Header.Get("Sec-WebSocket-Accept"), accept(tc.keys[0]); got != want {
					t.Errorf("Sec-WebSocket-Accept %q, want %q (computed from the key the client sent)", got, want)
				}
			}
		})
	}
}

// TestGoRodConnects: go-rod's own WebSocket client (which sends Sec-WebSocket-Key "nil", checks
// the accept value and reads every frame as a JSON message, close frames included: one makes its
// reader panic) connects, gets answers, and sees its connection end without a close frame, when
// it sends Browser.close and when the server shuts down.
func TestGoRodConnects(t *testing.T) {
	for _, end := range []string{"Browser.close", "server shutdown"} {
		t.Run(end, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{})
			ws := &cdp.WebSocket{}
			if err := ws.Connect(ctx(t), "ws://"+e.srv.Addr()+"/cdp?token="+e.srv.Token(), nil); err != nil {
				t.Fatalf("go-rod connect: %v", err)
			}
			defer ws.Close()
			c := cdp.New().Start(ws)
			raw, err := c.Call(ctx(t), "", "Browser.getVersion", nil)
			if err != nil {
				t.Fatalf("Browser.getVersion through go-rod: %v", err)
			}
			var v struct {
				Product string `json:"product"`
			}
			if err := json.Unmarshal(raw, &v); err != nil || v.Product == "" {
				t.Fatalf("Browser.getVersion: %s (%v)", raw, err)
			}
			if end == "Browser.close" {
				if _, err := c.Call(ctx(t), "", "Browser.close", nil); err != nil {
					t.Fatalf("Browser.close: %v", err)
				}
			} else {
				e.srv.Close()
			}
			// the reader ends (its event channel closes) instead of panicking on a close frame
			for {
				select {
				case _, ok := <-c.Event():
					if !ok {
						return
					}
				case <-ctx(t).Done():
					t.Fatal("go-rod's connection did not end")
				}
			}
		})
	}
}
