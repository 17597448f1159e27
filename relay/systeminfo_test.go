package relay_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"sync"
	"testing"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
)

// TestSystemInfo: the relay answers SystemInfo.getInfo and getProcessInfo on the browser
// session with Chrome's shape and nothing it cannot know, and refuses them on page sessions and
// the page endpoint with Chrome's words (e2e's TestSystemInfoLikeChrome compares with Chrome).
func TestSystemInfo(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	var info struct {
		GPU          map[string]json.RawMessage `json:"gpu"`
		ModelName    *string                    `json:"modelName"`
		ModelVersion *string                    `json:"modelVersion"`
		CommandLine  *string                    `json:"commandLine"`
	}
	if err := c.Call(ctx(t), "", "SystemInfo.getInfo", nil, &info); err != nil {
		t.Fatalf("SystemInfo.getInfo: %v", err)
	}
	var keys []string
	for k := range info.GPU {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := []string{"auxAttributes", "devices", "driverBugWorkarounds", "featureStatus", "videoDecoding", "videoEncoding"}
	if !reflect.DeepEqual(keys, want) || string(info.GPU["devices"]) != "[]" {
		t.Errorf("gpu = %v (devices %s), want keys %v and no device", keys, info.GPU["devices"], want)
	}
	if info.ModelName == nil || info.ModelVersion == nil || info.CommandLine == nil {
		t.Errorf("getInfo lacks modelName, modelVersion or commandLine: %+v", info)
	}
	var procs struct {
		ProcessInfo []any `json:"processInfo"`
	}
	if err := c.Call(ctx(t), "", "SystemInfo.getProcessInfo", nil, &procs); err != nil || procs.ProcessInfo == nil {
		t.Errorf("SystemInfo.getProcessInfo: %v %+v", err, procs)
	}
	if err := c.Call(ctx(t), "", "Runtime.runIfWaitingForDebugger", nil, nil); err != nil {
		t.Errorf("Runtime.runIfWaitingForDebugger on the browser session: %v", err)
	}

	sid := attach(t, c, tabA)
	page := e.client("/devtools/page/" + tabA)
	for _, tc := range []struct {
		name string
		c    *cdpclient.Client
		sid  string
	}{{"page session", c, sid}, {"page endpoint", page, ""}} {
		err := tc.c.Call(ctx(t), tc.sid, "SystemInfo.getInfo", nil, nil)
		var ce *cdpclient.Error
		if !errors.As(err, &ce) || ce.Message != "SystemInfo.getInfo is only supported on the browser target" {
			t.Errorf("%s: SystemInfo.getInfo: %v, want Chrome's refusal", tc.name, err)
		}
	}
}

// TestWaitingForDebugger: auto-attached targets report waitingForDebugger as Chrome does (e2e's
// TestWaitingForDebuggerLikeChrome measures it): false for those already there when
// setAutoAttach is sent, waitForDebuggerOnStart for those that appear later; the
// Runtime.runIfWaitingForDebugger clients then send is answered.
func TestWaitingForDebugger(t *testing.T) {
	for _, tc := range []struct {
		name    string
		wait    bool
		filter  any
		typ     string
		wantNew bool
	}{
		{"pages, waiting on start", true, nil, "page", true},
		{"pages, not waiting", false, nil, "page", false},
		{"tabs, waiting on start", true, []any{map[string]any{"type": "page", "exclude": true}, map[string]any{}}, "tab", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, relay.HubOptions{})
			e.share(tabA, "https://a.example/")
			c := e.client("/cdp")
			type attached struct {
				SessionID  string `json:"sessionId"`
				TargetInfo struct {
					TargetID string `json:"targetId"`
					Type     string `json:"type"`
				} `json:"targetInfo"`
				Waiting bool `json:"waitingForDebugger"`
			}
			var mu sync.Mutex
			var got []attached
			c.Subscribe(func(ev cdpclient.Event) {
				var a attached
				if ev.Method == "Target.attachedToTarget" && ev.SessionID == "" && json.Unmarshal(ev.Params, &a) == nil {
					mu.Lock()
					got = append(got, a)
					mu.Unlock()
				}
			})
			params := map[string]any{"autoAttach": true, "waitForDebuggerOnStart": tc.wait, "flatten": true}
			if tc.filter != nil {
				params["filter"] = tc.filter
			}
			if err := c.Call(ctx(t), "", "Target.setAutoAttach", params, nil); err != nil {
				t.Fatal(err)
			}
			var res struct {
				TargetID string `json:"targetId"`
			}
			if err := c.Call(ctx(t), "", "Target.createTarget", map[string]string{"url": "about:blank"}, &res); err != nil {
				t.Fatal(err)
			}
			e.waitFor("the new tab announced", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 2 })
			mu.Lock()
			existing, created := got[0], got[1]
			mu.Unlock()
			if existing.TargetInfo.Type != tc.typ || existing.Waiting {
				t.Errorf("existing target: %+v, want a %s not waiting", existing, tc.typ)
			}
			if created.TargetInfo.Type != tc.typ || created.Waiting != tc.wantNew {
				t.Errorf("created target: %+v, want a %s with waitingForDebugger %v", created, tc.typ, tc.wantNew)
			}
			if err := c.Call(ctx(t), created.SessionID, "Runtime.runIfWaitingForDebugger", nil, nil); err != nil {
				t.Errorf("Runtime.runIfWaitingForDebugger on the created target: %v", err)
			}
			if tc.typ != "tab" {
				return
			}
			// the page under a tab is there already when the tab session's setAutoAttach comes
			w := c.Expect(created.SessionID, "Target.attachedToTarget", nil)
			if err := c.Call(ctx(t), created.SessionID, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true}, nil); err != nil {
				t.Fatal(err)
			}
			ev, err := w.Wait(ctx(t))
			var pg attached
			if err != nil || json.Unmarshal(ev.Params, &pg) != nil || pg.TargetInfo.Type != "page" || pg.Waiting {
				t.Errorf("page under the new tab: %v %s, want a page not waiting", err, ev.Params)
			}
		})
	}
}
