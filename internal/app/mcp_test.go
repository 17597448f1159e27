package app

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/mcpserver"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
)

// startMCP starts a server (no extension, no model) for the /mcp tests.
func startMCP(t *testing.T, ctx context.Context, mo mcpserver.Options) (*App, string) {
	t.Helper()
	home := t.TempDir()
	store, err := secret.NewStore(home)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(ctx, Config{
		Relay: relay.Options{Addr: "127.0.0.1:0", Secret: store},
		Agent: api.Options{Home: home},
		Voice: voice.Options{Getenv: func(string) string { return "" }},
		MCP:   mo,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, store.Token()
}

// bearer adds the secret to every request of an MCP client.
type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, ctx context.Context, url, tok string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{tok}}}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// TestMCPRefusesLikeEveryRoute checks that /mcp is behind the relay's checks: no or a wrong
// secret is 401, a foreign Origin and a foreign Host are 403, and an unknown tool selection
// is 400 naming the known tools.
func TestMCPRefusesLikeEveryRoute(t *testing.T) {
	ctx := t.Context()
	srv, tok := startMCP(t, ctx, mcpserver.Options{})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	cases := []struct {
		name, auth, origin, host, query string
		want                            int
		says                            string
	}{
		{name: "no secret", want: http.StatusUnauthorized, says: "secret"},
		{name: "wrong secret", auth: "Bearer wrong", want: http.StatusUnauthorized, says: "secret"},
		{name: "foreign origin", auth: "Bearer " + tok, origin: "https://evil.example", want: http.StatusForbidden, says: "Origin"},
		{name: "foreign host", auth: "Bearer " + tok, host: "evil.example:80", want: http.StatusForbidden, says: "Host"},
		{name: "unknown tool", auth: "Bearer " + tok, query: "?tools=teleport", want: http.StatusBadRequest, says: "teleport"},
		{name: "right secret", auth: "Bearer " + tok, want: http.StatusOK, says: "tabrelay"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.HTTPURL()+"/mcp"+tc.query, strings.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			var body strings.Builder
			buf := make([]byte, 4096)
			n, _ := res.Body.Read(buf)
			body.Write(buf[:n])
			if res.StatusCode != tc.want || !strings.Contains(body.String(), tc.says) {
				t.Errorf("status %d %q, want %d mentioning %q", res.StatusCode, body.String(), tc.want, tc.says)
			}
		})
	}
}

// TestMCPToolsSmallAndActionable lists the tools through the Go SDK's client: the core set
// fits in 2,000 tokens (4 characters a token of the tools/list JSON), "all" offers every action
// kind but evaluate (not allowed), and page-level failures are tool errors that say what to do.
func TestMCPToolsSmallAndActionable(t *testing.T) {
	ctx := t.Context()
	srv, tok := startMCP(t, ctx, mcpserver.Options{})
	cs := connect(t, ctx, srv.HTTPURL()+"/mcp", tok)
	core, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(core)
	tokens := len(b) / 4
	t.Logf("core tools/list: %d tools, %d bytes, ~%d tokens", len(core.Tools), len(b), tokens)
	if tokens > 2000 {
		t.Errorf("core tools/list is ~%d tokens, over 2,000", tokens)
	}
	var names []string
	for _, tl := range core.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range mcpserver.Core {
		if !slices.Contains(names, want) {
			t.Errorf("core tools %v lack %s", names, want)
		}
	}

	all, err := connect(t, ctx, srv.HTTPURL()+"/mcp?tools=all", tok).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(all)
	t.Logf("all tools/list: %d tools, ~%d tokens", len(all.Tools), len(b)/4)
	var allNames []string
	for _, tl := range all.Tools {
		allNames = append(allNames, tl.Name)
	}
	for _, k := range srv.Agent.Actions().Registry().All() {
		if n := k.ToolName(); n != "" && !slices.Contains(allNames, n) {
			t.Errorf("action kind %s (tool %s) is not offered with tools=all: %v", k.Name, n, allNames)
		}
	}
	if slices.Contains(allNames, "evaluate") {
		t.Error("evaluate is offered without the option allowing it")
	}

	call := func(name string, args map[string]any) (bool, string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: a protocol error for a page-level failure: %v", name, err)
		}
		var txt strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				txt.WriteString(tc.Text)
			}
		}
		return res.IsError, txt.String()
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
		says string
	}{
		{"snapshot", nil, "Alt+Shift+S on it"},
		{"click", map[string]any{"ref": "e1"}, "Alt+Shift+S on it"},
		{"click", map[string]any{}, "needs ref"},
		{"run_task", map[string]any{"goal": "find a kettle"}, "TABRELAY_LLM_PROVIDER"},
		{"run_skill", map[string]any{"name": "no-such-skill"}, "skills"},
	} {
		isErr, txt := call(tc.tool, tc.args)
		if !isErr || !strings.Contains(txt, tc.says) {
			t.Errorf("%s %v: isError=%v %q, want a tool error saying %q", tc.tool, tc.args, isErr, txt, tc.says)
		}
	}
	if isErr, txt := call("tabs", nil); isErr || !strings.Contains(txt, "0 tabs") {
		t.Errorf("tabs: isError=%v %q", isErr, txt)
	}
}

// TestMCPEvaluateOnlyWhenAllowed checks that the option offers evaluate.
func TestMCPEvaluateOnlyWhenAllowed(t *testing.T) {
	ctx := t.Context()
	srv, tok := startMCP(t, ctx, mcpserver.Options{AllowEvaluate: true})
	res, err := connect(t, ctx, srv.HTTPURL()+"/mcp?tools=evaluate", tok).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == "evaluate" }) {
		t.Error("evaluate is not offered although allowed")
	}
}
