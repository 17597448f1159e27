package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// malformedCases are messages a CDP endpoint must answer without tripping: each is followed by
// a valid command, to show the connection stays open and ids are not confused.
var malformedCases = []struct{ name, msg string }{
	{"fractional id", `{"id":1.5,"method":"Browser.getVersion"}`},
	{"truncated JSON with an id", `{"id": 1, "method": "Browser.getVers`},
	{"not an object (array)", `[1,2,3]`},
	{"not an object (string)", `"Browser.getVersion"`},
	{"not JSON", `hello`},
	{"params not an object", `{"id":2,"method":"Target.getTargets","params":"x"}`},
	{"params not an object on a page", `{"id":3,"method":"Runtime.evaluate","params":"x","sessionId":"SESSION"}`},
	{"missing method", `{"id":4}`},
	{"method not a string", `{"id":5,"method":7}`},
	{"missing id", `{"method":"Browser.getVersion"}`},
	{"string id", `{"id":"6","method":"Browser.getVersion"}`},
	{"negative id", `{"id":-7,"method":"Browser.getVersion"}`},
	{"unknown session", `{"id":8,"method":"Runtime.evaluate","sessionId":"NOPE"}`},
}

// shape is what is compared of an answer: whether it has an id (and which), the error code.
func shape(b []byte) string {
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(b, &m) != nil {
		return "unparseable: " + string(b)
	}
	s := "no id"
	if m.ID != nil {
		s = "id " + string(m.ID)
	}
	switch {
	case m.Error != nil:
		s += fmt.Sprintf(", error %d", m.Error.Code)
	case m.Result != nil:
		s += ", result"
	}
	return s
}

func malformedAnswers(t *testing.T, ctx context.Context, wsURL string, header http.Header, targetID string) []string {
	t.Helper()
	c := dialDiff(t, ctx, wsURL, header, targetID)
	var out []string
	for i, tc := range malformedCases {
		c.mu.Lock()
		from := len(c.raw)
		c.mu.Unlock()
		msg := strings.ReplaceAll(tc.msg, "SESSION", c.sid)
		if err := c.conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatalf("%s: write: %v", tc.name, err)
		}
		// a valid command after it: its answer shows the connection is still open, and what
		// came before it is all the malformed message got
		id := int64(1000 + i)
		b, _ := json.Marshal(map[string]any{"id": id, "method": "Target.getTargets"})
		if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatalf("%s: the connection closed: %v", tc.name, err)
		}
		var got []string
		for done := false; !done; {
			c.mu.Lock()
			raws := c.raw[from:]
			c.mu.Unlock()
			got = got[:0]
			for _, r := range raws {
				if shape(r) == fmt.Sprintf("id %d, result", id) {
					done = true
					break
				}
				got = append(got, shape(r))
			}
			if !done {
				if ctx.Err() != nil {
					t.Fatalf("%s: no answer to the valid command after it (connection closed?); got %v", tc.name, got)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		out = append(out, fmt.Sprintf("%s: %v", tc.name, got))
	}
	return out
}

// TestMalformedLikeChrome: malformed messages get the same answers from tabrelay as from
// Chrome's own endpoint (same id or none, same error code), and the connection stays open.
func TestMalformedLikeChrome(t *testing.T) {
	e := shared(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := e.site.URL("/other.html?malformed")
	chrome, err := snapshottest.Launch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer chrome.Close()
	target, err := chrome.NewTab(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	want := malformedAnswers(t, ctx, chrome.WSURL, nil, target)
	tab := e.share(t, start)
	got := malformedAnswers(t, ctx, e.cdpURL(), http.Header{"Authorization": {"Bearer " + e.token()}}, tab.TargetID)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("tabrelay: %s\n   chrome: %s", got[i], want[i])
		}
	}
}
