package relay_test

import (
	"slices"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay/wire"
)

// TestDialogKeepsDebugger: while a JavaScript dialog is open in a tab (in its page or an
// iframe), the hub keeps its debugger and the agent's session, which alone can answer the
// dialog, past DetachAfter; once the dialog closed (answered, or a navigation of the frame
// that showed it), the tab is let go DetachAfter later as usual.
func TestDialogKeepsDebugger(t *testing.T) {
	const detachAfter = 100 * time.Millisecond
	for _, tc := range []struct {
		name, session string
		close         func(e *env) error
	}{
		{"answered", "", func(e *env) error {
			return e.ext.Event(tabA, "", "Page.javascriptDialogClosed", map[string]any{"result": true, "userInput": ""})
		}},
		{"navigated away", "", func(e *env) error {
			return e.ext.Event(tabA, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": tabA, "url": "https://a.example/next"}})
		}},
		{"iframe's, answered", "child-1", func(e *env) error {
			return e.ext.Event(tabA, "child-1", "Page.javascriptDialogClosed", map[string]any{"result": false, "userInput": ""})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := onDemandEnv(t, true, detachAfter)
			if err := e.ext.ShareTab(wire.Tab{TabID: 1, TargetID: tabA, URL: "https://a.example/", Title: "A", Detached: true}); err != nil {
				t.Fatal(err)
			}
			e.waitFor("tab A shared", func() bool { return e.hasTab(tabA) })
			pipe, err := e.srv.Hub().Pipe("agent")
			if err != nil {
				t.Fatal(err)
			}
			agent := cdpclient.New(pipe)
			t.Cleanup(func() { agent.Close() })
			sid := attach(t, agent, tabA)
			if tc.session != "" {
				if err := e.ext.AttachChild(tabA, tc.session, "FRAME1", "https://frame.example/"); err != nil {
					t.Fatal(err)
				}
			}
			if err := evaluate(agent, sid, "1"); err != nil {
				t.Fatal(err)
			}
			if err := e.ext.Event(tabA, tc.session, "Page.javascriptDialogOpening", map[string]any{"url": "https://a.example/", "message": "hi", "type": "alert"}); err != nil {
				t.Fatal(err)
			}
			// an absence: many DetachAfter periods, then a round trip through the hub
			time.Sleep(8 * detachAfter)
			if err := evaluate(agent, sid, "2"); err != nil {
				t.Fatalf("the agent's session ended while a dialog was open: %v", err)
			}
			want := []string{"attachTab " + tabA}
			if got := e.ext.Debugger(); !slices.Equal(got, want) {
				t.Fatalf("with a dialog open the extension got %q, want %q", got, want)
			}
			if err := tc.close(e); err != nil {
				t.Fatal(err)
			}
			want = append(want, "detachTab "+tabA)
			e.waitFor("detachTab once the dialog closed", func() bool { return slices.Equal(e.ext.Debugger(), want) })
		})
	}
}
