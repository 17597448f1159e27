package relay_test

import (
	"testing"

	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// TestWindowForTarget: Browser.getWindowForTarget on the browser session answers the window of
// the tab its targetId names, as Chrome does (chromedp reads a new window's tab this way), and on
// a page session the window of that session's tab.
func TestWindowForTarget(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	for _, tab := range []wire.Tab{
		{TabID: 11, TargetID: "T-W7", URL: "https://a.example/", Title: "a", Origin: wire.OriginUser, Active: true, WindowID: 7},
		{TabID: 12, TargetID: "T-W9", URL: "https://b.example/", Title: "b", Origin: wire.OriginUser, Active: true, WindowID: 9},
	} {
		if err := e.ext.ShareTab(tab); err != nil {
			t.Fatal(err)
		}
		e.waitFor("tab "+tab.TargetID+" shared", func() bool { return e.hasTab(tab.TargetID) })
	}
	c := e.client("/cdp")
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx(t), "", "Target.attachToTarget", map[string]any{"targetId": "T-W9", "flatten": true}, &attached); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, session string
		params        map[string]string
		want          int64
	}{
		{"browser session, first tab", "", map[string]string{"targetId": "T-W7"}, 7},
		{"browser session, second tab", "", map[string]string{"targetId": "T-W9"}, 9},
		{"page session, no targetId", attached.SessionID, nil, 9},
		{"page session, another tab named", attached.SessionID, map[string]string{"targetId": "T-W7"}, 7},
		{"browser session, no targetId", "", nil, 1},
	} {
		var res struct {
			WindowID int64 `json:"windowId"`
		}
		var params any
		if tc.params != nil {
			params = tc.params
		}
		if err := c.Call(ctx(t), tc.session, "Browser.getWindowForTarget", params, &res); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if res.WindowID != tc.want {
			t.Errorf("%s: window %d, want %d", tc.name, res.WindowID, tc.want)
		}
	}
}
