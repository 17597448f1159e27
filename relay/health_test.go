package relay_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

// TestHealthProblems: /health lists a part's problem while its check reports one, and drops it
// once the check is fine again; the server stays "ok" meanwhile.
func TestHealthProblems(t *testing.T) {
	store, err := secret.NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := relay.NewServer(relay.Options{Addr: "127.0.0.1:0", Secret: store})
	if err != nil {
		t.Fatal(err)
	}
	var problem atomic.Value
	problem.Store("")
	srv.AddHealthCheck("history", func() string { return problem.Load().(string) })
	if err := srv.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	health := func() relay.Health {
		t.Helper()
		resp, err := http.Get(srv.HTTPURL() + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var h relay.Health
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil {
			t.Fatalf("GET /health: %d %s", resp.StatusCode, body)
		}
		return h
	}
	cases := []struct {
		problem string
		want    map[string]string
	}{
		{"", nil},
		{"2 tasks not saved to history: database or disk is full (13)", map[string]string{"history": "2 tasks not saved to history: database or disk is full (13)"}},
		{"", nil},
	}
	for i, tc := range cases {
		problem.Store(tc.problem)
		h := health()
		if h.Status != "ok" || len(h.Problems) != len(tc.want) || h.Problems["history"] != tc.want["history"] {
			t.Errorf("step %d: /health = %+v, want status ok and problems %v", i, h, tc.want)
		}
	}
}
