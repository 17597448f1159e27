package mcpserver

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/actions"
)

// TestSessionCap: however many clients initialize, at most MaxSessions stay open; the one
// idle the longest is ended first.
func TestSessionCap(t *testing.T) {
	s, err := New(Options{Actions: actions.New(nil, actions.Options{}), MaxSessions: 3})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := s.MCP("")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var clients []*mcp.ClientSession
	for i := 0; i < 12; i++ {
		st, ct := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, cs)
		s.Admit()
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.LiveSessions() != 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.LiveSessions(); n != 3 {
		t.Fatalf("%d sessions open, want 3", n)
	}
	// the newest still works; the first was ended
	if _, err := clients[11].ListTools(ctx, nil); err != nil {
		t.Errorf("newest session: %v", err)
	}
	if _, err := clients[0].ListTools(ctx, nil); err == nil {
		t.Errorf("the oldest session still answers")
	}
	for _, c := range clients {
		_ = c.Close()
	}
}
