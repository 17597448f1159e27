package relay_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// settingsText renders the extension's content settings as "type pattern setting" lines.
func settingsText(s []wire.ContentSetting) string {
	out := make([]string, 0, len(s))
	for _, c := range s {
		out = append(out, fmt.Sprintf("%s %s %s", c.ContentType, c.Pattern, c.Setting))
	}
	return strings.Join(out, "; ")
}

// TestPermissionsPerClient: each client's overrides become the extension's content settings;
// the latest wins for the same type and sites; a client's reset or departure takes its own away
// and leaves the others'; a reconnecting extension is told them again.
func TestPermissionsPerClient(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	a, b := e.client("/cdp"), e.client("/cdp")
	call := func(c *cdpclient.Client, method string, params map[string]any) {
		t.Helper()
		if err := c.Call(ctx(t), "", method, params, nil); err != nil {
			t.Fatalf("%s: %v", method, err)
		}
	}
	expect := func(what, want string) {
		t.Helper()
		e.waitFor(what+": "+want, func() bool { return settingsText(e.ext.Permissions()) == want })
	}
	const site = "http://127.0.0.1:8000/*"
	call(a, "Browser.setPermission", map[string]any{"permission": map[string]any{"name": "geolocation"}, "setting": "granted", "origin": "http://127.0.0.1:8000"})
	expect("a's grant", "location "+site+" allow")
	call(b, "Browser.setPermission", map[string]any{"permission": map[string]any{"name": "geolocation"}, "setting": "denied", "origin": "http://127.0.0.1:8000"})
	call(b, "Browser.setPermission", map[string]any{"permission": map[string]any{"name": "push"}, "setting": "prompt"})
	expect("b's later denial wins", "location "+site+" block; notifications <all_urls> ask")
	call(b, "Browser.resetPermissions", map[string]any{})
	expect("b reset: a's again", "location "+site+" allow")
	call(b, "Browser.grantPermissions", map[string]any{"permissions": []string{"clipboardReadWrite", "notifications"}})
	expect("b's grant rejects the others for every site", "camera <all_urls> block; clipboard <all_urls> allow; location <all_urls> block; location "+site+" allow; microphone <all_urls> block; notifications <all_urls> allow")
	e.replaceExt(nil)
	expect("told again after reconnecting", "camera <all_urls> block; clipboard <all_urls> allow; location <all_urls> block; location "+site+" allow; microphone <all_urls> block; notifications <all_urls> allow")
	b.Close()
	expect("b gone", "location "+site+" allow")
	a.Close()
	expect("a gone", "")
}

// TestPermissionsRefused: permissions without a content setting, bad origins and settings are
// refused with what is wrong, and change nothing.
func TestPermissionsRefused(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	c := e.client("/cdp")
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"Browser.grantPermissions", map[string]any{"permissions": []string{"geolocation", "midi"}}, `the permission "midi" cannot be set`},
		{"Browser.setPermission", map[string]any{"permission": map[string]any{"name": "sensors"}, "setting": "granted"}, `the permission "sensors" cannot be set`},
		{"Browser.setPermission", map[string]any{"permission": map[string]any{"name": "camera"}, "setting": "maybe"}, `unknown value "maybe"`},
		{"Browser.grantPermissions", map[string]any{"permissions": []string{"geolocation"}, "origin": "file:///etc"}, "permissions apply to http and https origins"},
		{"Browser.grantPermissions", map[string]any{"permissions": []string{"geolocation"}, "browserContextId": "OTHER"}, "Failed to find browser context"},
	} {
		t.Run(tc.method+" "+tc.want, func(t *testing.T) {
			err := c.Call(ctx(t), "", tc.method, tc.params, nil)
			var ce *cdpclient.Error
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, tc.want) {
				t.Errorf("%v, want an error saying %q", err, tc.want)
			}
		})
	}
	if p := e.ext.Permissions(); len(p) != 0 {
		t.Errorf("content settings after refused calls: %s", settingsText(p))
	}
}
