package relay_test

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/tabrelay/tabrelay/relay"
)

// TestJSONProtocol: /json/protocol answers the protocol description as Chrome serves it
// ({"version":{"major","minor"},"domains":[…]}, browser domains then JavaScript ones), plain or
// gzip-compressed as the client asks, and with the same guard as /json/version.
func TestJSONProtocol(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	for _, tc := range []struct {
		name, acceptEncoding string
		wantGzip             bool
	}{
		{"identity", "identity", false},
		{"gzip", "gzip, deflate", true},
		{"gzip refused", "gzip;q=0, br", false},
		{"none", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, "http://"+e.srv.Addr()+"/json/protocol", nil)
			req.Header.Set("Authorization", "Bearer "+e.srv.Token())
			if tc.acceptEncoding != "" {
				req.Header.Set("Accept-Encoding", tc.acceptEncoding)
			}
			// a transport that does not decompress on its own, to see what is sent
			resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=UTF-8" {
				t.Errorf("Content-Type %q", ct)
			}
			body := io.Reader(resp.Body)
			if gz := resp.Header.Get("Content-Encoding") == "gzip"; gz != tc.wantGzip {
				t.Fatalf("Content-Encoding %q with Accept-Encoding %q", resp.Header.Get("Content-Encoding"), tc.acceptEncoding)
			} else if gz {
				zr, err := gzip.NewReader(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				body = zr
			}
			var p struct {
				Version struct{ Major, Minor string } `json:"version"`
				Domains []struct {
					Domain   string            `json:"domain"`
					Commands []json.RawMessage `json:"commands"`
				} `json:"domains"`
			}
			if err := json.NewDecoder(body).Decode(&p); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if p.Version.Major != "1" || p.Version.Minor != "3" {
				t.Errorf("version %+v, want 1.3", p.Version)
			}
			idx := map[string]int{}
			for i, d := range p.Domains {
				idx[d.Domain] = i
			}
			for _, d := range []string{"Page", "DOM", "Target", "Browser", "Runtime", "Debugger"} {
				if _, ok := idx[d]; !ok {
					t.Errorf("no %s domain", d)
				}
			}
			if idx["Runtime"] < idx["Page"] {
				t.Errorf("JavaScript domains (Runtime) before browser ones (Page), unlike Chrome")
			}
		})
	}
	if code, _ := e.get("/json/protocol", http.Header{"Origin": {"https://evil.example"}}); code != http.StatusForbidden {
		t.Errorf("a web page's request: %d, want 403", code)
	}
}
