package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/api"
)

// TestOutlineInferredOverMCP: through the real extension and the MCP door, a control the page
// gives no name is shown by the name its icon gives it, marked [icon], in the snapshot and in
// find's answer alike, and a field by the text just before it.
func TestOutlineInferredOverMCP(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	tab := ae.share(t, ae.site.URL("/outline/unnamed.html"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := ae.mcpConnect(ctx, t, "e2e", "/mcp")
	ok := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s %v: tool error: %s", name, args, mcpText(res))
		}
		return mcpText(res)
	}
	ok("switch_tab", map[string]any{"tab": tab.TargetID})
	snap := ok("snapshot", nil)
	trash := mcpRef(t, snap, "button", "trash")
	for _, want := range []string{`button "trash" [icon] [ref=` + trash + `]`, `button "reply" [icon]`, `link "close" [icon]`, `button "Archive" [ref=`} {
		if !strings.Contains(snap, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, snap)
		}
	}
	if found := ok("find", map[string]any{"text": "trash"}); !strings.Contains(found, `button "trash" [icon] [ref=`+trash+`]`) {
		t.Errorf("find trash answers:\n%s\nwant the trash button as the snapshot shows it", found)
	}
	ok("navigate", map[string]any{"url": ae.site.URL("/outline/labels.html")})
	if snap := ok("snapshot", nil); !strings.Contains(snap, `textbox "Time" [text before] [ref=`) || !strings.Contains(snap, `slider "Volume" [text before] [ref=`) {
		t.Errorf("snapshot of the form lacks the fields named by the text before them:\n%s", snap)
	}
}
