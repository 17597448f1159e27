package e2e

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
)

// mcpBearer adds the secret to every request of an MCP client, as a client configured with an
// Authorization header does.
type mcpBearer struct{ tok string }

func (b mcpBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects an MCP client named name to the agent's MCP endpoint (path: "/mcp" and
// its query, e.g. "/mcp?tools=all") with the secret, as a configured client does; the session
// closes when the test ends.
func (ae *agentEnv) mcpConnect(ctx context.Context, t *testing.T, name, path string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: ae.httpURL() + path, HTTPClient: &http.Client{Transport: mcpBearer{ae.token()}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// mcpText is the text of a tool result.
func mcpText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// mcpRef finds the ref of the element with role and name in a snapshot's text.
func mcpRef(t *testing.T, snap, role, name string) string {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(role+` "`+name+`"`) + `[^\n]*\[ref=(e\d+)\]`).FindStringSubmatch(snap)
	if m == nil {
		t.Fatalf("no %s %q with a ref in the snapshot:\n%s", role, name, snap)
	}
	return m[1]
}

// TestMCP drives real shared tabs (real Chromium, the real extension) through tabrelay's MCP
// server at /mcp with the official Go SDK's client over streamable HTTP: tools, tabs,
// snapshot, type, click by ref (the result shows what changed), console, screenshot (JPEG,
// labels, scaled), a stale ref's tool error, a skill run without a model, and an agent task
// against the scripted model with its plan and steps as progress notifications. Then the
// official TypeScript SDK's client does the same over streamable HTTP and over stdio (the
// built `tabrelay mcp` binary relaying to this server).
func TestMCP(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "scripted"})
	contacts := ae.share(t, ae.site.URL("/skills/contacts.html"))
	form := ae.share(t, ae.site.URL("/mcp.html"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var progress []string
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, req.Params.Message)
		},
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ae.httpURL() + "/mcp?tools=all",
		HTTPClient: &http.Client{Transport: mcpBearer{ae.token()}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	ok := func(name string, args map[string]any) string {
		t.Helper()
		res := call(name, args)
		if res.IsError {
			t.Fatalf("%s %v: tool error: %s", name, args, mcpText(res))
		}
		return mcpText(res)
	}

	t.Run("ListTools", func(t *testing.T) {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, tl := range tools.Tools {
			names[tl.Name] = true
		}
		for _, want := range []string{"tabs", "switch_tab", "new_tab", "close_tab", "snapshot", "click", "type", "fill", "select",
			"press", "hover", "drag", "upload", "scroll", "wait", "navigate", "back", "forward", "dialog", "check",
			"screenshot", "console", "errors", "network", "run_task", "skills", "run_skill"} {
			if !names[want] {
				t.Errorf("tools/list lacks %s", want)
			}
		}
	})

	t.Run("Page", func(t *testing.T) {
		if txt := ok("tabs", nil); !strings.Contains(txt, form.TargetID) || !strings.Contains(txt, contacts.TargetID) {
			t.Fatalf("tabs does not list both shared tabs:\n%s", txt)
		}
		ok("switch_tab", map[string]any{"tab": form.TargetID})
		snap := ok("snapshot", nil)
		name, send, greet := mcpRef(t, snap, "textbox", "Name"), mcpRef(t, snap, "button", "Send"), mcpRef(t, snap, "button", "Greet")
		ok("type", map[string]any{"ref": name, "text": "Ada"})
		// The safety gate asks the user before an outside model clicks "Send" (a risky word):
		// the click is a tool error naming the button, and the form is not sent.
		refused := call("click", map[string]any{"ref": send})
		if txt := mcpText(refused); !refused.IsError || !strings.Contains(txt, "needs the user's confirmation") || !strings.Contains(txt, `"Send"`) {
			t.Errorf("click on Send: isError=%v %q, want a tool error asking for the user's confirmation of button \"Send\"", refused.IsError, txt)
		}
		if snap := ok("snapshot", nil); strings.Contains(snap, "Hello, Ada") {
			t.Errorf("the refused click on Send still submitted the form:\n%s", snap)
		}
		if txt := ok("console", nil); strings.Contains(txt, "submitted Ada") {
			t.Errorf("the refused click on Send still submitted the form (console):\n%s", txt)
		}
		after := ok("click", map[string]any{"ref": greet})
		if !strings.Contains(after, "Hello, Ada") || strings.Contains(after, "Sign up") {
			t.Errorf("the click's result should show the change (Hello, Ada), not the whole page:\n%s", after)
		}
		eventually(t, 10*time.Second, "the console message", func() (bool, string) {
			txt := ok("console", nil)
			return strings.Contains(txt, "submitted Ada"), txt
		})
		shot := call("screenshot", map[string]any{"labels": true, "format": "jpeg", "maxWidth": 320})
		img, isImg := shot.Content[0].(*mcp.ImageContent)
		if shot.IsError || !isImg || img.MIMEType != "image/jpeg" {
			t.Fatalf("screenshot: %+v", shot.Content)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
		if err != nil || format != "jpeg" || cfg.Width != 320 {
			t.Errorf("screenshot: %s %dx%d %v, want a JPEG 320 wide", format, cfg.Width, cfg.Height, err)
		}
		stale := call("click", map[string]any{"ref": "e999"})
		if !stale.IsError || !strings.Contains(mcpText(stale), "call snapshot") {
			t.Errorf("a stale ref: isError=%v %q, want a tool error saying to take a snapshot", stale.IsError, mcpText(stale))
		}
	})

	t.Run("Skill", func(t *testing.T) {
		ok("switch_tab", map[string]any{"tab": contacts.TargetID})
		if txt := ok("skills", nil); !strings.Contains(txt, "site-search") {
			t.Fatalf("skills does not list site-search:\n%s", txt)
		}
		calls := model.Calls()
		txt := ok("run_skill", map[string]any{"name": "site-search", "params": map[string]any{"query": "Hopper"}})
		if !strings.Contains(txt, "succeeded") || model.Calls() != calls {
			t.Errorf("run_skill: %s (model calls %d → %d)", txt, calls, model.Calls())
		}
		if snap := ok("snapshot", nil); !strings.Contains(snap, "Results for Hopper") {
			t.Errorf("the skill did not land on the results:\n%s", snap)
		}
	})

	t.Run("Task", func(t *testing.T) {
		ok("switch_tab", map[string]any{"tab": form.TargetID})
		model.Push(
			llmtest.ToolCall("update_plan", `{"steps":[{"text":"read the greeting","status":"active"}]}`),
			llmtest.ToolCall("finish", `{"answer":"The page greets Ada."}`),
		)
		params := &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"goal": "what does the page say?"}}
		params.SetProgressToken("task-1")
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || !strings.Contains(mcpText(res), "The page greets Ada.") {
			t.Fatalf("run_task: isError=%v %s", res.IsError, mcpText(res))
		}
		mu.Lock()
		got := strings.Join(progress, "\n")
		mu.Unlock()
		for _, want := range []string{"started", "plan: 1. [active] read the greeting"} {
			if !strings.Contains(got, want) {
				t.Errorf("the progress notifications lack %q:\n%s", want, got)
			}
		}
	})

	bin := buildCLI(t)
	for _, transport := range []string{"http", "stdio"} {
		t.Run("TypeScriptSDK/"+transport, func(t *testing.T) {
			env := ae.clientEnv("mcp-" + transport)
			env["MCP_TRANSPORT"], env["TABRELAY_BIN"], env["TABRELAY_HOME"], env["TABRELAY_ADDR"] = transport, bin, ae.home, ae.addr
			env["FORM_TAB"], env["CONTACTS_TAB"], env["CONTACTS_URL"] = form.TargetID, contacts.TargetID, ae.site.URL("/skills/contacts.html")
			model.Push(
				llmtest.ToolCall("update_plan", `{"steps":[{"text":"answer","status":"active"}]}`),
				llmtest.ToolCall("finish", `{"answer":"done from `+transport+`"}`),
			)
			out := runNode(t, ctx, "mcp-client.mjs", env)
			if out["answer"] != "done from "+transport || out["greeting"] != true || out["image"] != "image/png" ||
				out["console"] != true || out["skill"] != true {
				t.Errorf("the TypeScript client over %s: %v", transport, out)
			}
			if n, _ := out["progress"].(float64); n < 2 {
				t.Errorf("the TypeScript client over %s got %v progress notifications", transport, out["progress"])
			}
			if n, _ := out["listTokens"].(float64); n <= 0 || n > 2000 {
				t.Errorf("core tools/list over %s: ~%v tokens", transport, out["listTokens"])
			}
			t.Logf("TypeScript SDK over %s: %v", transport, out)
		})
	}
}
