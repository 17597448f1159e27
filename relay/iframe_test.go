package relay_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/wire"
)

type listEntry struct {
	ID, Type, URL, ParentID, WebSocketDebuggerURL string
}

func (e *env) list() []listEntry {
	e.t.Helper()
	code, body := e.get("/json/list?token="+e.srv.Token(), nil)
	var raw []map[string]string
	if code != 200 || json.Unmarshal([]byte(body), &raw) != nil {
		e.t.Fatalf("/json/list: %d %s", code, body)
	}
	out := make([]listEntry, len(raw))
	for i, m := range raw {
		out[i] = listEntry{m["id"], m["type"], m["url"], m["parentId"], m["webSocketDebuggerUrl"]}
	}
	return out
}

// Clients without flat sessions (mafredri/cdp) reach a cross-origin iframe as in Chrome: it is
// listed in /json/list with its own page endpoint, where commands without sessionId go to the
// iframe's session and its events come back.
func TestIframePageEndpoint(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.share(tabA, "https://a.example/")
	if err := e.ext.AttachChild(tabA, "EXTCHILD1", "FRAMETARGET1", "https://other.example/frame"); err != nil {
		t.Fatal(err)
	}
	// a nested out-of-process iframe, inside the first
	if err := e.ext.Event(tabA, "EXTCHILD1", "Target.attachedToTarget", map[string]any{
		"sessionId":  "EXTCHILD2",
		"targetInfo": map[string]any{"targetId": "FRAMETARGET2", "type": "iframe", "title": "", "url": "https://third.example/", "attached": true},
	}); err != nil {
		t.Fatal(err)
	}
	// workers are not listed (Chrome does not list dedicated workers either)
	if err := e.ext.Event(tabA, "", "Target.attachedToTarget", map[string]any{
		"sessionId":  "EXTWORKER",
		"targetInfo": map[string]any{"targetId": "WORKER1", "type": "worker", "title": "", "url": "https://a.example/w.js", "attached": true},
	}); err != nil {
		t.Fatal(err)
	}
	var l []listEntry
	e.waitFor("iframes listed", func() bool { l = e.list(); return len(l) == 3 })
	want := []listEntry{
		{tabA, "page", "https://a.example/", "", ""},
		{"FRAMETARGET1", "iframe", "https://other.example/frame", tabA, ""},
		{"FRAMETARGET2", "iframe", "https://third.example/", "FRAMETARGET1", ""},
	}
	for i, w := range want {
		w.WebSocketDebuggerURL = "ws://" + e.srv.Addr() + "/devtools/page/" + w.ID + "?token=" + e.srv.Token()
		if l[i] != w {
			t.Errorf("/json/list[%d] = %+v, want %+v", i, l[i], w)
		}
	}

	c := e.client("/devtools/page/FRAMETARGET1")
	var r struct {
		Result struct{ Value string } `json:"result"`
	}
	if err := c.Call(ctx(t), "", "Runtime.evaluate", map[string]string{"expression": "inframe"}, &r); err != nil || r.Result.Value != "evaluated:inframe" {
		t.Fatalf("evaluate on the iframe's endpoint: %v %+v", err, r)
	}
	cmds := e.ext.Commands()
	if last := cmds[len(cmds)-1]; last.Method != "Runtime.evaluate" || last.TargetID != tabA || last.SessionID != "EXTCHILD1" {
		t.Fatalf("the command reached the extension as %+v, want on the tab's child session EXTCHILD1", last)
	}
	var info struct {
		TargetInfo struct{ TargetID, Type string } `json:"targetInfo"`
	}
	if err := c.Call(ctx(t), "", "Target.getTargetInfo", nil, &info); err != nil || info.TargetInfo.TargetID != "FRAMETARGET1" || info.TargetInfo.Type != "iframe" {
		t.Fatalf("getTargetInfo on the iframe's endpoint: %v %+v", err, info)
	}
	// its events arrive without sessionId; the tab's own do not
	if err := c.Call(ctx(t), "", "Page.enable", nil, nil); err != nil {
		t.Fatal(err)
	}
	if !e.ext.Enabled(tabA, "EXTCHILD1", "Page") || e.ext.Enabled(tabA, "", "Page") {
		t.Fatal("Page.enable on the iframe's endpoint did not switch on Page in the iframe's session only")
	}
	got := make(chan string, 10)
	c.Subscribe(func(ev cdpclient.Event) {
		if ev.Method == "Page.frameNavigated" {
			got <- ev.SessionID + "|" + string(ev.Params)
		}
	})
	_ = e.ext.Event(tabA, "", "Page.frameNavigated", map[string]any{"frame": map[string]string{"id": "main"}})
	_ = e.ext.Event(tabA, "EXTCHILD2", "Page.frameNavigated", map[string]any{"frame": map[string]string{"id": "nested"}})
	_ = e.ext.Event(tabA, "EXTCHILD1", "Page.frameNavigated", map[string]any{"frame": map[string]string{"id": "inframe"}})
	select {
	case ev := <-got:
		if !strings.HasPrefix(ev, "|") || !strings.Contains(ev, "inframe") {
			t.Fatalf("iframe endpoint got %s, want the iframe's event without sessionId", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the iframe's event did not reach its endpoint")
	}
	// a nested iframe reached through auto-attach on the iframe's endpoint gets a flat session
	w := c.Expect("", "Target.attachedToTarget", nil)
	if err := c.Call(ctx(t), "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "flatten": true}, nil); err != nil {
		t.Fatal(err)
	}
	if ev, err := w.Wait(ctx(t)); err != nil || !strings.Contains(string(ev.Params), "FRAMETARGET2") {
		t.Fatalf("nested iframe not auto-attached on the iframe's endpoint: %v", err)
	}

	// when the iframe goes, its endpoint is told and closed, as Chrome does
	wd := c.Expect("", "Inspector.detached", nil)
	_ = e.ext.Event(tabA, "", "Target.detachedFromTarget", map[string]string{"sessionId": "EXTCHILD1"})
	if _, err := wd.Wait(ctx(t)); err != nil {
		t.Fatalf("no Inspector.detached on the gone iframe's endpoint: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("the gone iframe's endpoint stays open")
	}
	e.waitFor("gone iframes unlisted", func() bool { return len(e.list()) == 1 })
	_, resp, err := websocket.Dial(ctx(t), "ws://"+e.srv.Addr()+"/devtools/page/FRAMETARGET1?token="+e.srv.Token(), nil)
	if err == nil || resp == nil || resp.StatusCode != 404 {
		t.Fatalf("dial a gone iframe: %v", err)
	}

	// an iframe endpoint is closed when its tab stops being shared
	if err := e.ext.AttachChild(tabA, "EXTCHILD3", "FRAMETARGET3", "https://other.example/again"); err != nil {
		t.Fatal(err)
	}
	e.waitFor("new iframe listed", func() bool { return len(e.list()) == 2 })
	c3 := e.client("/devtools/page/FRAMETARGET3")
	if err := c3.Call(ctx(t), "", "Runtime.evaluate", map[string]string{"expression": "1"}, nil); err != nil {
		t.Fatal(err)
	}
	wd3 := c3.Expect("", "Inspector.detached", nil)
	_ = e.ext.Unshare(tabA, wire.ReasonUser)
	if _, err := wd3.Wait(ctx(t)); err != nil {
		t.Fatalf("no Inspector.detached on an iframe endpoint of an unshared tab: %v", err)
	}
	select {
	case <-c3.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("an iframe endpoint stays open after its tab was unshared")
	}
}
