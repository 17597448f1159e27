package relay_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
)

// browserLevelMethods lists the Browser and Target commands of the protocol description the
// server serves on /json/protocol.
func browserLevelMethods(t *testing.T, e *env) []string {
	t.Helper()
	code, body := e.get("/json/protocol", nil)
	var proto struct {
		Domains []struct {
			Domain   string
			Commands []struct{ Name string }
		}
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &proto) != nil {
		t.Fatalf("/json/protocol: %d", code)
	}
	var out []string
	for _, d := range proto.Domains {
		if d.Domain != "Browser" && d.Domain != "Target" {
			continue
		}
		for _, c := range d.Commands {
			out = append(out, d.Domain+"."+c.Name)
		}
	}
	if len(out) < 30 {
		t.Fatalf("only %d Browser and Target commands in /json/protocol", len(out))
	}
	return out
}

// TestBrowserLevelMethods: every Browser and Target command is either served (a result, or an
// error about its parameters) or refused with its stated reason; none is unknown.
func TestBrowserLevelMethods(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	refused := map[string]string{}
	for _, r := range relay.RefusedMethods() {
		refused[r[0]] = r[1]
	}
	methods := browserLevelMethods(t, e)
	for _, m := range methods {
		if m == "Browser.close" {
			continue // ends the connection: below
		}
		t.Run(m, func(t *testing.T) {
			c := e.client("/cdp")
			err := c.Call(ctx(t), "", m, map[string]any{}, nil)
			var ce *cdpclient.Error
			switch why, isRefused := refused[m]; {
			case isRefused:
				if err == nil || !strings.Contains(err.Error(), why) {
					t.Errorf("%s = %v, want the refusal %q", m, err, why)
				}
			case err == nil:
			case errors.As(err, &ce) && strings.Contains(ce.Message, "wasn't found"):
				t.Errorf("%s is unknown to tabrelay: %v", m, err)
			case errors.As(err, &ce) && ce.Code == -32602, errors.As(err, &ce) && ce.Code == -32000:
				// served: its parameters ({} here) or its target were refused
			default:
				t.Errorf("%s = %v", m, err)
			}
		})
	}
	c := e.client("/cdp")
	if err := c.Call(ctx(t), "", "Browser.grantPermissions", map[string]any{"permissions": []string{"clipboardReadWrite"}, "origin": "https://a.example"}, nil); err != nil {
		t.Errorf("Browser.grantPermissions: %v", err)
	}
	if err := c.Call(ctx(t), "", "Browser.close", nil, nil); err != nil {
		t.Errorf("Browser.close: %v", err)
	}
}

// TestRefusedMethodsInREADME: the README lists every refused method with its reason.
func TestRefusedMethodsInREADME(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range relay.RefusedMethods() {
		if row := "| `" + r[0] + "` | " + r[1] + " |"; !strings.Contains(string(b), row) {
			t.Errorf("README.md lacks the row %s", row)
		}
	}
}
