package relay_test

import (
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/relay"
)

// TestPageCloseFollowsClosePolicy: Page.close closes the tab like Target.closeTarget, so it is
// refused on the user's own tabs unless AllowCloseUserTabs, and forwarded on tabs a client opened.
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
			if !e.ext.Received(target, "Page.close") {
				t.Fatal("Page.close did not reach the tab")
			}
		})
	}
}
