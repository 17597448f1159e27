package relay_test

import (
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/relay"
)

// TestHomePage: GET / answers, without the secret, a page saying what the server is, whether
// the extension is connected and where the set-up steps are; never the secret nor a tab.
func TestHomePage(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://secret-tab.example/")
	for _, tc := range []struct {
		name      string
		connected bool
	}{{"extension connected", true}, {"extension gone", false}} {
		if !tc.connected {
			e.ext.Close()
			e.waitFor("extension gone", func() bool { return !e.srv.Hub().ExtensionConnected() })
		}
		code, body := e.get("/", nil)
		if code != 200 {
			t.Fatalf("%s: GET / = %d %s", tc.name, code, body)
		}
		want := map[bool]string{true: "The extension is connected.", false: "The extension is not connected."}[tc.connected]
		for _, s := range []string{"tabrelay server", want, relay.ReadmeURL} {
			if !strings.Contains(body, s) {
				t.Errorf("%s: GET / lacks %q:\n%s", tc.name, s, body)
			}
		}
		if strings.Contains(body, e.srv.Token()) || strings.Contains(body, "secret-tab") || strings.Contains(body, tabA) {
			t.Errorf("%s: GET / shows the secret or a tab:\n%s", tc.name, body)
		}
	}
	if code := request(t, e, "GET", "/", false, "evil.example:80", "", ""); code != 403 {
		t.Errorf("GET / with a foreign Host: %d, want 403", code)
	}
}
