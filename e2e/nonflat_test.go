package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	mcdp "github.com/mafredri/cdp"
	mtarget "github.com/mafredri/cdp/protocol/target"
	"github.com/mafredri/cdp/session"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// wrapped collects what Target.receivedMessageFromTarget carries for each non-flat session.
type wrapped struct {
	mu   sync.Mutex
	msgs map[string][]map[string]json.RawMessage
}

func recordWrapped(c *cdpclient.Client) *wrapped {
	w := &wrapped{msgs: map[string][]map[string]json.RawMessage{}}
	c.Subscribe(func(ev cdpclient.Event) {
		if ev.Method != "Target.receivedMessageFromTarget" {
			return
		}
		var p struct {
			SessionID string `json:"sessionId"`
			Message   string `json:"message"`
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(ev.Params, &p) != nil || json.Unmarshal([]byte(p.Message), &m) != nil {
			return
		}
		w.mu.Lock()
		w.msgs[p.SessionID] = append(w.msgs[p.SessionID], m)
		w.mu.Unlock()
	})
	return w
}

// answer waits for the answer with this id on a non-flat session.
func (w *wrapped) answer(t *testing.T, sid string, id int) map[string]json.RawMessage {
	t.Helper()
	var got map[string]json.RawMessage
	eventually(t, 20*time.Second, fmt.Sprintf("answer %d on the non-flat session", id), func() (bool, string) {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, m := range w.msgs[sid] {
			if string(m["id"]) == fmt.Sprint(id) {
				got = m
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d messages", len(w.msgs[sid]))
	})
	return got
}

// TestNonFlatSessionLikeChrome: Target.attachToTarget without flatten, Runtime.evaluate through
// Target.sendMessageToTarget with its answer in Target.receivedMessageFromTarget, the
// non-flat session's id refused as a flat sessionId, an unknown session, browser-level non-flat
// auto-attach, and detachFromTarget by session id — on Chrome's endpoint and on tabrelay.
func TestNonFlatSessionLikeChrome(t *testing.T) {
	e := shared(t)
	likeChrome(t, e.site.URL("/other.html?nonflat"), func(t *testing.T, ctx context.Context, c *cdpclient.Client, pageTarget string) []string {
		w := recordWrapped(c)
		attached := c.Expect("", "Target.attachedToTarget", func(ev cdpclient.Event) bool { return strings.Contains(string(ev.Params), pageTarget) })
		var a struct {
			SessionID string `json:"sessionId"`
		}
		if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": pageTarget}, &a); err != nil {
			t.Fatalf("Target.attachToTarget without flatten: %v", err)
		}
		out := []string{}
		if _, err := attached.Wait(ctx); err != nil {
			out = append(out, "no attachedToTarget")
		} else {
			out = append(out, "attachedToTarget")
		}
		send := func(id int, method string, params any) string {
			m := map[string]any{"id": id, "method": method}
			if params != nil {
				m["params"] = params
			}
			b, _ := json.Marshal(m)
			return cdpOutcome(c.Call(ctx, "", "Target.sendMessageToTarget", map[string]any{"sessionId": a.SessionID, "message": string(b)}, nil))
		}
		out = append(out, "sendMessageToTarget: "+send(1, "Runtime.evaluate", map[string]any{"expression": "6*7", "returnByValue": true}))
		ans := w.answer(t, a.SessionID, 1)
		var r struct {
			Result struct {
				Value json.RawMessage `json:"value"`
			} `json:"result"`
		}
		_ = json.Unmarshal(ans["result"], &r)
		out = append(out, "evaluate answer: "+string(r.Result.Value)+" sessionId in it: "+fmt.Sprint(ans["sessionId"] != nil))
		out = append(out, "as a flat sessionId: "+cdpOutcome(c.Call(ctx, a.SessionID, "Runtime.evaluate", map[string]any{"expression": "1"}, nil)))
		out = append(out, "unknown session: "+cdpOutcome(c.Call(ctx, "", "Target.sendMessageToTarget", map[string]any{"sessionId": "NOPE", "message": "{}"}, nil)))
		out = append(out, "browser-level non-flat auto-attach: "+cdpOutcome(c.Call(ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false}, nil)))
		detached := c.Expect("", "Target.detachedFromTarget", func(ev cdpclient.Event) bool { return strings.Contains(string(ev.Params), a.SessionID) })
		out = append(out, "detach: "+cdpOutcome(c.Call(ctx, "", "Target.detachFromTarget", map[string]any{"sessionId": a.SessionID}, nil)))
		if _, err := detached.Wait(ctx); err != nil {
			out = append(out, "no detachedFromTarget")
		}
		out = append(out, "after detach: "+send(2, "Runtime.evaluate", map[string]any{"expression": "1"}))
		return out
	})
}

// TestMafrediSessionTwoTabs: mafredri/cdp's session package (non-flat sessions through
// Target.sendMessageToTarget) drives two shared tabs over one browser-level connection.
func TestMafrediSessionTwoTabs(t *testing.T) {
	e := shared(t)
	tabs := []string{e.share(t, e.pageURL("session-one")).TargetID, e.share(t, e.pageURL("session-two")).TargetID}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := mafrediDial(ctx, e.cdpURL()+"?token="+e.token())
	if err != nil {
		t.Fatalf("rpcc dial: %v", err)
	}
	defer conn.Close()
	m, err := session.NewManager(mcdp.NewClient(conn))
	if err != nil {
		t.Fatalf("session.NewManager: %v", err)
	}
	defer m.Close()
	for i, id := range tabs {
		sc, err := m.Dial(ctx, mtarget.ID(id))
		if err != nil {
			t.Fatalf("session Dial %s: %v", id, err)
		}
		defer sc.Close()
		c := mcdp.NewClient(sc)
		want := []string{"session-one", "session-two"}[i]
		if got, err := mEval(ctx, c, "location.search"); err != nil || !strings.Contains(got, want) {
			t.Errorf("tab %d through a non-flat session: %q (%v), want %q", i, got, err, want)
		}
		if got, err := mEval(ctx, c, "6*7"); err != nil || got != "42" {
			t.Errorf("tab %d: 6*7 = %q (%v)", i, got, err)
		}
	}
	select {
	case err := <-m.Err():
		t.Errorf("session manager: %v", err)
	default:
	}
}
