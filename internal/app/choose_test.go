package app

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/mcpserver"
	"github.com/tabrelay/tabrelay/relay/relaytest"
)

// TestMCPChooseTabTimesOut: an MCP tool that needs a tab while none is shared. With no
// extension connected it answers at once with how to share one (nothing can be offered); with
// one connected (a simulated extension here; the real one is in the e2e tests) the relay asks
// it to offer a choice of tab (chooseTab, "agent"), the call reports that it waits, and when
// nobody picks within ChooseWait it answers a tool error saying so.
func TestMCPChooseTabTimesOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const wait = 2 * time.Second
	srv, tok := startMCP(t, ctx, mcpserver.Options{ChooseWait: wait})
	var mu sync.Mutex
	var progress []string
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, req.Params.Message)
		},
	})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.HTTPURL() + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	snapshot := func() (string, time.Duration) {
		t.Helper()
		params := &mcp.CallToolParams{Name: "snapshot", Arguments: map[string]any{}}
		params.SetProgressToken("t")
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Fatalf("snapshot with no tab shared is not a tool error: %+v", res.Content)
		}
		return res.Content[0].(*mcp.TextContent).Text, time.Since(start)
	}

	text, took := snapshot()
	if !strings.Contains(text, "No shared tab: ask the user to share") || strings.Contains(text, "none was chosen") || took >= wait {
		t.Fatalf("with no extension (%s): %s", took, text)
	}

	ext, err := relaytest.Dial(ctx, srv.Addr(), tok, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	for !srv.Hub().ExtensionConnected() {
		select {
		case <-ctx.Done():
			t.Fatal("the extension did not connect")
		case <-time.After(10 * time.Millisecond):
		}
	}
	text, took = snapshot()
	if !strings.Contains(text, "none was chosen within 2s") || took < wait {
		t.Fatalf("with nobody picking (%s): %s", took, text)
	}
	if got := ext.ChooseTabs(); len(got) != 1 || got[0] != "agent" {
		t.Fatalf("chooseTab notices: %q, want [agent]", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(progress) == 0 || !strings.Contains(progress[0], "asks the user which tab to share") {
		t.Fatalf("progress while waiting: %q", progress)
	}
}
