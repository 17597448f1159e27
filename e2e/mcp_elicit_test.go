package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
)

// TestMCPElicitation: run_task over MCP (the official Go SDK's client, streamable HTTP, real
// Chromium and extension, the scripted model) puts the agent's question to a client that
// supports elicitation as an elicitation form with the choices, and the hand-over as one to
// accept when done; a client without elicitation gets a result saying the task waits and how
// to answer, and the task goes on when the answer comes through the API.
func TestMCPElicitation(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "scripted"})
	form := ae.share(t, ae.site.URL("/mcp.html"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	connect := func(opts *mcp.ClientOptions) *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-elicit", Version: "1"}, opts).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: ae.httpURL() + "/mcp?tools=all", HTTPClient: &http.Client{Transport: mcpBearer{ae.token()}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	lastResult := func(r llmtest.Request) string {
		res := r.ToolResults()
		if len(res) == 0 {
			return ""
		}
		return res[len(res)-1].Text
	}
	script := func() {
		model.Push(
			llmtest.ToolCall("ask_user", `{"question":"Which address?","choices":["Home","Work"]}`),
			llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
				if lastResult(r) != "the user answered: Work" {
					return llmtest.ToolCall("fail", `{"reason":"the answer was `+lastResult(r)+`"}`)
				}
				return llmtest.ToolCall("hand_over", `{"instruction":"Sign in, then continue."}`)
			}),
			llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
				if !strings.Contains(lastResult(r), "pressed Continue") {
					return llmtest.ToolCall("fail", `{"reason":"no Continue"}`)
				}
				return llmtest.ToolCall("finish", `{"answer":"Sent to Work."}`)
			}),
		)
	}

	t.Run("Elicitation", func(t *testing.T) {
		var asked []*mcp.ElicitParams
		cs := connect(&mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params)
			if strings.Contains(req.Params.Message, "Which address?") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "Work"}}, nil
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		}})
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "switch_tab", Arguments: map[string]any{"tab": form.TargetID}}); err != nil {
			t.Fatal(err)
		}
		script()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"goal": "send the parcel"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || !strings.Contains(mcpText(res), "Sent to Work.") {
			t.Fatalf("run_task: isError=%v %s", res.IsError, mcpText(res))
		}
		if len(asked) != 2 || !strings.Contains(asked[1].Message, "Sign in, then continue.") {
			t.Fatalf("elicitations %+v", asked)
		}
		schema, _ := asked[0].RequestedSchema.(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		answer, _ := props["answer"].(map[string]any)
		if enum, _ := answer["enum"].([]any); len(enum) != 2 || enum[0] != "Home" || enum[1] != "Work" {
			t.Errorf("the question's schema %v does not offer the choices", asked[0].RequestedSchema)
		}
	})

	t.Run("NoElicitation", func(t *testing.T) {
		cs := connect(nil)
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "switch_tab", Arguments: map[string]any{"tab": form.TargetID}}); err != nil {
			t.Fatal(err)
		}
		script()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"goal": "send the parcel"}})
		if err != nil {
			t.Fatal(err)
		}
		got := mcpText(res)
		if res.IsError || !strings.Contains(got, "is waiting for the user's answer to: Which address? (choices: Home, Work)") || !strings.Contains(got, `/answer {"questionId":"q1"`) {
			t.Fatalf("run_task without elicitation: isError=%v %s", res.IsError, got)
		}
		id := strings.Fields(strings.TrimPrefix(got, "Task "))[0]
		if r := ae.call(t, "POST", "/api/tasks/"+id+"/answer", map[string]any{"questionId": "q1", "answer": "Work"}); r.Status != 200 {
			t.Fatalf("answer: HTTP %d %s", r.Status, r.Body)
		}
		var tk task.Task
		eventually(t, 20*time.Second, "the task hands over", func() (bool, string) {
			tk = getTask(t, ae, id)
			return tk.Status == task.StatusWaitingUser, string(tk.Status)
		})
		if r := ae.call(t, "POST", "/api/tasks/"+id+"/continue", map[string]any{"handoverId": "h1"}); r.Status != 200 {
			t.Fatalf("continue: HTTP %d %s", r.Status, r.Body)
		}
		eventually(t, 20*time.Second, "the task succeeds", func() (bool, string) {
			tk = getTask(t, ae, id)
			return tk.Status == task.StatusSucceeded, string(tk.Status) + " " + tk.Error
		})
	})
}

// getTask reads a task through the API.
func getTask(t *testing.T, ae *agentEnv, id string) task.Task {
	t.Helper()
	var tk task.Task
	r := ae.call(t, "GET", "/api/tasks/"+id, nil)
	if r.Status != 200 {
		t.Fatalf("GET task %s: HTTP %d %s", id, r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &tk); err != nil {
		t.Fatalf("GET task %s: %v", id, err)
	}
	return tk
}
