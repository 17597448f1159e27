package relay_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// TestBatchFramesToExtension: to an extension whose hello says "batches", commands queued
// together go out as batch frames, and every command of many clients at once is answered
// with its own result; the default extension (no "batches") never gets one.
func TestBatchFramesToExtension(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	ext := e.replaceExt(&relaytest.Options{Batches: true})
	e.share(tabA, "https://a.example/")
	const clients, each = 10, 50
	e.evaluateAtOnce(clients, each)
	if ext.BatchFrames() == 0 {
		t.Errorf("%d commands at once went out in no batch frame", clients*each)
	}

	plain := newEnv(t, relay.HubOptions{}) // its extension says no "batches"
	plain.share(tabA, "https://a.example/")
	c := plain.client("/cdp")
	sid := attach(t, c, tabA)
	var wg2 sync.WaitGroup
	for k := 0; k < 100; k++ {
		wg2.Add(1)
		go func() {
			defer wg2.Done()
			if err := evaluate(c, sid, fmt.Sprintf("p%d", k)); err != nil {
				t.Error(err)
			}
		}()
	}
	wg2.Wait()
	if n := plain.ext.BatchFrames(); n != 0 {
		t.Errorf("an extension that did not ask for batch frames got %d", n)
	}
}

// TestLegTraces: with TraceLegs on, /debug/legs serves each forwarded command's way through
// the relay, in order, once; without it the route does not exist.
func TestLegTraces(t *testing.T) {
	e := newEnv(t, relay.HubOptions{TraceLegs: true})
	e.share(tabA, "https://a.example/")
	c := e.client("/cdp")
	sid := attach(t, c, tabA)
	for i := 0; i < 3; i++ {
		if err := evaluate(c, sid, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	get := func(e *env) (int, []relay.LegTrace) {
		var out []relay.LegTrace
		return e.getDebug("/debug/legs", &out), out
	}
	// the relay notes a trace done just after writing the answer the client may already have
	// read: collect until all three came (each is served once)
	var (
		status int
		traces []relay.LegTrace
		evals  []relay.LegTrace
	)
	for deadline := time.Now().Add(5 * time.Second); len(evals) < 3 && time.Now().Before(deadline); {
		var got []relay.LegTrace
		status, got = get(e)
		if status != http.StatusOK {
			break
		}
		traces = append(traces, got...)
		for _, tr := range got {
			if tr.Method == "Runtime.evaluate" {
				evals = append(evals, tr)
			}
		}
		if len(evals) < 3 {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if status != http.StatusOK || len(evals) != 3 {
		t.Fatalf("HTTP %d, %d evaluate traces, want 3: %+v", status, len(evals), traces)
	}
	for _, tr := range evals {
		if !(tr.RelayIn > 0 && tr.RelayIn <= tr.ToExtension && tr.ToExtension <= tr.RelayReceived && tr.RelayReceived <= tr.ClientSent) {
			t.Errorf("trace out of order or incomplete: %+v", tr)
		}
	}
	if _, again := get(e); len(again) != 0 {
		t.Errorf("traces served twice: %+v", again)
	}
	if status, _ := get(newEnv(t, relay.HubOptions{})); status != http.StatusNotFound {
		t.Errorf("/debug/legs without tracing: HTTP %d, want 404", status)
	}
}

// TestBatchFramesFromExtension: the relay's welcome says it takes batch frames, and answers
// the extension sends together in one (JSON array) frame each reach their own client command,
// while a malformed batch frame is ignored without harm.
func TestBatchFramesFromExtension(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	ext := e.replaceExt(&relaytest.Options{BatchAnswers: true})
	e.share(tabA, "https://a.example/")
	if err := ext.SendRaw([]byte(`[{"type":"event","targetId":"` + tabA + `","method":"X.y","params":{}},`)); err != nil {
		t.Fatal(err)
	}
	const clients, each = 5, 40
	e.evaluateAtOnce(clients, each)
	if ext.SentBatchFrames() == 0 {
		t.Errorf("%d commands at once were answered in no batch frame", clients*each)
	}
}

// TestEchoExtension: with TraceLegs on, /debug/echo times round trips through the extension's
// socket to a shared tab; an unknown tab is refused, and without tracing the route does not
// exist.
func TestEchoExtension(t *testing.T) {
	e := newEnv(t, relay.HubOptions{TraceLegs: true})
	e.share(tabA, "https://a.example/")
	get := func(e *env, query string) (int, []float64) {
		var out []float64
		return e.getDebug("/debug/echo?"+query, &out), out
	}
	tests := []struct {
		name, query string
		status, n   int
	}{
		{"five round trips", "target=" + tabA + "&n=5", http.StatusOK, 5},
		{"unknown tab", "target=NOPE&n=5", http.StatusConflict, 0},
		{"no count", "target=" + tabA, http.StatusBadRequest, 0},
	}
	for _, tt := range tests { // in the test's goroutine: getDebug fails the test itself
		status, us := get(e, tt.query)
		if status != tt.status || len(us) != tt.n {
			t.Errorf("%s: HTTP %d with %d figures, want %d with %d", tt.name, status, len(us), tt.status, tt.n)
		}
		for _, v := range us {
			if v <= 0 {
				t.Errorf("%s: a round trip of %v µs", tt.name, v)
			}
		}
	}
	if got := e.ext.Debugger(); len(got) != 5 {
		t.Errorf("the extension got %d attachTab requests, want 5: %v", len(got), got)
	}
	if status, _ := get(newEnv(t, relay.HubOptions{}), "target="+tabA+"&n=1"); status != http.StatusNotFound {
		t.Errorf("/debug/echo without tracing: HTTP %d, want 404", status)
	}
}

// evaluateAtOnce has clients clients send each commands each, all at once, to tabA, and fails
// the test unless every command gets its own answer.
func (e *env) evaluateAtOnce(clients, each int) {
	e.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for i := 0; i < clients; i++ {
		c := e.client("/cdp")
		sid := attach(e.t, c, tabA)
		for k := 0; k < each; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := evaluate(c, sid, fmt.Sprintf("c%d-%d", i, k)); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Fatal(err)
	}
}

// getDebug GETs one of the per-leg mode's /debug routes with the token and decodes an answer
// of 200 into out; it returns the status.
func (e *env) getDebug(path string, out any) int {
	e.t.Helper()
	req, _ := http.NewRequest("GET", "http://"+e.srv.Addr()+path, nil)
	req.Header.Set("Authorization", "Bearer "+e.srv.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("%s: %v", b, err)
		}
	}
	return resp.StatusCode
}
