package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"
)

var envelopeSeeds = []string{
	`{"id":1,"method":"Runtime.evaluate","params":{"expression":"1"},"sessionId":"S1"}`,
	`{"id":2,"method":"Page.captureScreenshot"}`,
	`{"type":"response","id":3,"result":{"data":"iVBOR\"\\u00e9"}}`,
	`{"type":"event","targetId":"T","sessionId":"C","method":"Target.attachedToTarget","params":{"sessionId":"C2","targetInfo":{"targetId":"F","type":"iframe"}}}`,
	`{"type":"tabShared","tab":{"tabId":1,"targetId":"T","url":"https://a/","title":"x"}}`,
	`{"id":1e3,"method":"x"}`, `{"id":null}`, `{}`, `[]`, `{"a":[1,{"b":[true,false,null]}]}`, `{"method":"\ud83d\ude00"}`,
}

func FuzzEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := parseEnvelope(b)
		if !json.Valid(b) || !utf8.Valid(b) || len(b) == 0 || bytes.TrimSpace(b)[0] != '{' {
			return
		}
		var ref map[string]json.RawMessage
		if json.Unmarshal(b, &ref) != nil {
			return
		}
		if bytes.Contains(b, []byte(`\u0000`)) {
			return
		}
		if raw, ok := ref["id"]; ok {
			if _, perr := strconv.ParseInt(string(raw), 10, 64); perr != nil && string(raw) != "null" {
				if err == nil {
					t.Fatalf("non-integer id %s accepted", raw)
				}
				return
			}
		}
		for _, k := range []string{"method", "sessionId", "targetId", "type"} {
			if raw, ok := ref[k]; ok && len(raw) > 0 && raw[0] != '"' && string(raw) != "null" {
				return // a non-string where we want one: an error is right
			}
		}
		if err != nil {
			t.Fatalf("valid JSON object rejected: %v: %q", err, b)
		}
		var want struct {
			ID        *int64 `json:"id"`
			Method    string `json:"method"`
			SessionID string `json:"sessionId"`
			TargetID  string `json:"targetId"`
			Type      string `json:"type"`
		}
		if json.Unmarshal(b, &want) != nil {
			return
		}
		if want.Method != e.method || want.SessionID != e.sessionID || want.TargetID != e.targetID || want.Type != e.typ {
			t.Fatalf("envelope %+v differs from encoding/json %+v for %q", e, want, b)
		}
		if want.ID != nil && (!e.hasID || e.id != *want.ID) {
			t.Fatalf("id %d parsed as %d for %q", *want.ID, e.id, b)
		}
		if p, ok := ref["params"]; ok && string(p) != "null" && !bytes.Equal(bytes.TrimSpace(p), e.params) {
			t.Fatalf("params %s kept as %s", p, e.params)
		}
	})
}

// FuzzRouter feeds arbitrary messages from a client and from the extension into a hub with a
// shared tab and an attached client, then checks that the client's departure leaves nothing
// of it behind.
func FuzzRouter(f *testing.F) {
	f.Add([]byte(`{"id":1,"method":"Target.setAutoAttach","params":{"autoAttach":true,"flatten":true}}`), []byte(`{"type":"event","targetId":"T1","method":"Target.attachedToTarget","params":{"sessionId":"X1","targetInfo":{"targetId":"F1","type":"iframe"}}}`))
	f.Add([]byte(`{"id":2,"method":"Runtime.enable","sessionId":"@"}`), []byte(`{"type":"response","id":1,"result":{}}`))
	f.Add([]byte(`{"id":3,"method":"Fetch.enable","sessionId":"@"}`), []byte(`{"type":"tabUnshared","targetId":"T1","reason":"closed"}`))
	f.Add([]byte(`{"id":4,"method":"Target.setDiscoverTargets","params":{"discover":true}}`), []byte(`{"type":"tabShared","tab":{"tabId":2,"targetId":"T2","url":"u"}}`))
	f.Add([]byte(`{"id":5,"method":"Target.detachFromTarget","params":{"sessionId":"@"}}`), []byte(`{"type":"event","targetId":"T1","method":"Runtime.executionContextCreated","params":{"context":{"id":1}}}`))
	f.Add([]byte(`{"id":6,"method":"Target.createTarget","params":{"url":"about:blank"}}`), []byte(`{"type":"response","id":2,"error":{"code":-1,"message":"x"}}`))
	f.Add([]byte(`{"id":7,"method":"Emulation.setDeviceMetricsOverride","sessionId":"@","params":{}}`), []byte(`not json`))
	f.Add([]byte("{\"id\":8,\"method\":\"Runtime.enable\",\"sessionId\":\"@\"}\n2 {\"id\":9,\"method\":\"Runtime.enable\",\"sessionId\":\"@\"}"), []byte(`{"type":"event","targetId":"T1","method":"Runtime.executionContextCreated","params":{"context":{"id":1}}}`))
	f.Fuzz(func(t *testing.T, fromClient, fromExt []byte) {
		h := NewHub(HubOptions{CommandTimeout: time.Second})
		defer h.Close()
		ext := h.ConnectExtension(nil)
		ext.Handle([]byte(`{"type":"hello","protocol":1,"product":"Chrome/1"}`))
		ext.Handle([]byte(`{"type":"tabShared","tab":{"tabId":1,"targetId":"T1","url":"https://a/","title":"a","origin":"user"}}`))
		c, err := h.NewClient("fuzz", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Handle([]byte(`{"id":100,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`))
		// a second client on the same tab: lines starting with "2 " are its
		c2, err := h.NewClient("fuzz2", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		c2.Handle([]byte(`{"id":100,"method":"Target.attachToTarget","params":{"targetId":"T1","flatten":true}}`))
		pageSession := func(c *Client) string {
			h.mu.Lock()
			defer h.mu.Unlock()
			for id, s := range c.sessions {
				if s.kind == kindPage {
					return id
				}
			}
			return ""
		}
		sid, sid2 := pageSession(c), pageSession(c2)
		for _, line := range bytes.Split(fromClient, []byte("\n")) {
			if rest, ok := bytes.CutPrefix(line, []byte("2 ")); ok {
				c2.Handle(bytes.ReplaceAll(rest, []byte("@"), []byte(sid2)))
				continue
			}
			c.Handle(bytes.ReplaceAll(line, []byte("@"), []byte(sid)))
		}
		for _, line := range bytes.Split(fromExt, []byte("\n")) {
			ext.Handle(line)
		}
		// drain what was queued, so a bug that blocks shows as a hang
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.out.close()
		for {
			if _, err := c.out.take(ctx); err != nil {
				break
			}
			c.out.release()
		}
		c.Leave()
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, t2 := range h.targets {
			for ext, m := range t2.bound {
				for s := range m {
					if s.c == c {
						t.Fatalf("session of a departed client still bound to %s/%q", t2.id, ext)
					}
				}
			}
			for _, doms := range t2.enabled {
				for d, users := range doms {
					for s := range users {
						if s.c == c {
							t.Fatalf("departed client still counted as a user of %s", d)
						}
					}
				}
			}
		}
		for _, p := range h.pending {
			if p.c == c {
				t.Fatal("departed client still has pending commands")
			}
		}
		// no waiters left stranded: a Runtime.enable waiting for another one is from a client
		// still there, and the one it waits for is still pending, so its answer releases it
		for _, t2 := range h.targets {
			for ext, rs := range t2.runtime {
				for _, w := range rs.waiters {
					if w.c == c {
						t.Fatalf("departed client still waits for Runtime.enable on %s/%q", t2.id, ext)
					}
				}
				if len(rs.waiters) > 0 && (rs.enabler == nil || h.pending[rs.enabler.id] != rs.enabler) {
					t.Fatalf("%d Runtime.enable waiters on %s/%q with nothing pending to release them", len(rs.waiters), t2.id, ext)
				}
			}
		}
	})
}

// FuzzMalformed feeds one arbitrary message from a client and checks the answer is Chrome's:
// a message that is not a JSON object with an integer id gets one error without id (-32700
// when it is not JSON, -32600 otherwise), so it can never be taken for the answer to a command
// in flight; any answer with an id carries the message's own integer id.
func FuzzMalformed(f *testing.F) {
	for _, s := range []string{
		`{"id":1.5,"method":"Browser.getVersion"}`, `{"id": 1, "method": "Browser.getVers`, `[1,2]`, `"x"`, `hello`,
		`{"id":2,"method":"Target.getTargets","params":"x"}`, `{"id":4}`, `{"id":5,"method":7}`, `{"method":"Browser.getVersion"}`,
		`{"id":"6","method":"Browser.getVersion"}`, `{"id":1e3,"method":"x"}`, `{"id":7,"method":"Browser.getVersion"}`,
		`{"id":8,"method":"Runtime.evaluate","sessionId":5}`, `{"id":9,"method":"Target.getTargets","params":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		h := NewHub(HubOptions{CommandTimeout: time.Second})
		defer h.Close()
		c, err := h.NewClient("fuzz", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Handle(msg)
		c.out.close()
		var answers [][]byte
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		for {
			batch, err := c.out.take(ctx)
			if err != nil {
				break
			}
			answers = append(answers, batch...)
			c.out.release()
		}
		var obj map[string]json.RawMessage
		isObject := json.Unmarshal(msg, &obj) == nil
		id, idErr := int64(0), error(nil)
		if isObject {
			id, idErr = strconv.ParseInt(string(obj["id"]), 10, 64)
		}
		for _, a := range answers {
			var m struct {
				ID    *int64 `json:"id"`
				Error *struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(a, &m); err != nil {
				t.Fatalf("answer %q is not JSON: %v", a, err)
			}
			if !isObject || idErr != nil {
				if len(answers) != 1 || m.ID != nil || m.Error == nil {
					t.Fatalf("%q answered %q, want one error without id", msg, answers)
				}
				want := codeInvalidRequest
				if !json.Valid(msg) {
					want = codeParseError
				}
				if m.Error.Code != want {
					t.Fatalf("%q answered with code %d, want %d", msg, m.Error.Code, want)
				}
				continue
			}
			if m.ID != nil && *m.ID != id {
				t.Fatalf("%q answered with id %d", msg, *m.ID)
			}
		}
	})
}
