package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/task"
)

// declinedAnswer is the answer the model gets when the user declines an elicited question.
const declinedAnswer = "(no answer: the user declined to answer)"

// canElicit reports whether the client of the call takes elicitation requests (form mode).
func canElicit(c *call) bool {
	if c.req == nil || c.req.Session == nil {
		return false
	}
	p := c.req.Session.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // neither set: form, for older clients
}

// elicit puts the task's question or hand-over to the user through the client (an
// elicitation request) and sends their answer, or their Continue, to the runner. It runs on its
// own goroutine while the task waits: the answer may also come from elsewhere (the side panel,
// the API), and the task's time limit still holds.
func (s *Server) elicit(ctx context.Context, c *call, taskID string, ev task.Event) {
	switch {
	case ev.Question != nil:
		q := *ev.Question
		prop := map[string]any{"type": "string", "title": "Answer", "description": q.Text}
		if len(q.Choices) > 0 {
			prop["enum"] = q.Choices
		}
		res, err := c.req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form", Message: q.Text,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": prop}, "required": []string{"answer"}}})
		if err != nil {
			s.opts.Log.Debug().Err(err).Str("task", taskID).Msg("eliciting the answer")
			return
		}
		answer := declinedAnswer
		if res.Action == "accept" {
			answer = strings.TrimSpace(fmt.Sprint(res.Content["answer"]))
			if answer == "" || res.Content["answer"] == nil {
				answer = declinedAnswer
			}
		}
		if err := s.opts.Runner.Answer(taskID, q.ID, answer); err != nil {
			s.opts.Log.Debug().Err(err).Str("task", taskID).Msg("the elicited answer came too late")
		}
	case ev.Handover != nil:
		h := *ev.Handover
		res, err := c.req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "form",
			Message:         h.Instruction + "\n\nAccept when you are done; decline to stop the task.",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{}}})
		if err != nil {
			s.opts.Log.Debug().Err(err).Str("task", taskID).Msg("eliciting the hand-over")
			return
		}
		switch res.Action {
		case "accept":
			if err := s.opts.Runner.Continue(taskID, h.ID); err != nil {
				s.opts.Log.Debug().Err(err).Str("task", taskID).Msg("the elicited Continue came too late")
			}
		case "decline":
			_ = s.opts.Runner.Cancel(taskID)
		}
	}
}

// confirmWaitingResult is run_task's result for a client without elicitation when the
// safety gate holds a step of the task: the task waits for the person's answer in the side
// panel (or over the HTTP API with the secret); the client's model cannot give it.
func confirmWaitingResult(t *task.Task, st *task.Step) *mcp.CallToolResult {
	cf := st.Confirmation
	res := text("Task %s is waiting for the user's approval to %s (%s). A tool call cannot approve it: tell the user; they approve or decline it in the tabrelay side panel (or with POST /api/tasks/%s/confirm {\"stepId\":%q,\"approve\":true}, which needs tabrelay's secret). GET /api/tasks/%s shows how it ends.",
		t.ID, cf.Prompt, cf.Reason, t.ID, st.ID, t.ID)
	res.IsError = true
	return res
}

// waitingResult is run_task's result for a client without elicitation when the task stops to
// wait for the user: the task goes on waiting, and the text says how to answer.
func waitingResult(t *task.Task, ev task.Event) *mcp.CallToolResult {
	var b strings.Builder
	switch {
	case ev.Question != nil:
		q := ev.Question
		fmt.Fprintf(&b, "Task %s is waiting for the user's answer to: %s", t.ID, q.Text)
		if len(q.Choices) > 0 {
			fmt.Fprintf(&b, " (choices: %s)", strings.Join(q.Choices, ", "))
		}
		fmt.Fprintf(&b, "\nAsk the user, then answer in the tabrelay side panel or with POST /api/tasks/%s/answer {\"questionId\":%q,\"answer\":\"…\"}, before %s; GET /api/tasks/%s shows how it ends.",
			t.ID, q.ID, q.Deadline.Format(time.RFC3339), t.ID)
	case ev.Handover != nil:
		h := ev.Handover
		fmt.Fprintf(&b, "Task %s handed the tab over to the user and waits: %s", t.ID, h.Instruction)
		fmt.Fprintf(&b, "\nWhen the user is done, they press Continue in the tabrelay side panel (or POST /api/tasks/%s/continue {\"handoverId\":%q}) before %s; GET /api/tasks/%s shows how it ends.",
			t.ID, h.ID, h.Deadline.Format(time.RFC3339), t.ID)
	}
	return text("%s", b.String())
}
