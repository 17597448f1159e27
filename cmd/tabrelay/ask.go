package main

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tabrelay/tabrelay/agent/task"
)

// askTerminal handles, for `tabrelay run`, a question the agent asked or a hand-over: on a
// terminal (lines is its input) it asks there and sends the answer or the Continue; otherwise it
// prints how to answer through the API while the task waits.
func askTerminal(ctx context.Context, c *apiClient, io stdio, lines *bufio.Reader, taskID string, e task.Event) {
	switch {
	case e.Type == task.EventQuestion && e.Question != nil:
		q := *e.Question
		fmt.Fprintf(io.out, "? the agent asks: %s\n", q.Text)
		for i, ch := range q.Choices {
			fmt.Fprintf(io.out, "  %d) %s\n", i+1, ch)
		}
		if lines == nil {
			fmt.Fprintf(io.out, "  waiting for your answer (until %s): POST /api/tasks/%s/answer {\"questionId\":%q,\"answer\":\"…\"}\n",
				q.Deadline.Local().Format("15:04:05"), taskID, q.ID)
			return
		}
		go func() {
			for {
				if len(q.Choices) > 0 {
					fmt.Fprint(io.out, "  your answer (a number or your own words): ")
				} else {
					fmt.Fprint(io.out, "  your answer: ")
				}
				line, err := lines.ReadString('\n')
				a := chosen(strings.TrimSpace(line), q.Choices)
				if a == "" && err == nil {
					fmt.Fprintln(io.out, "  (an empty answer is not sent; type something)")
					continue
				}
				if a == "" {
					return // input closed: the task's time limit tells the model
				}
				post(ctx, c, io, "/tasks/"+taskID+"/answer", map[string]any{"questionId": q.ID, "answer": a})
				return
			}
		}()
	case e.Type == task.EventHandover && e.Handover != nil:
		h := *e.Handover
		fmt.Fprintf(io.out, "! your turn in the tab: %s\n", h.Instruction)
		if lines == nil {
			fmt.Fprintf(io.out, "  waiting for you (until %s): POST /api/tasks/%s/continue {\"handoverId\":%q} when done\n",
				h.Deadline.Local().Format("15:04:05"), taskID, h.ID)
			return
		}
		fmt.Fprint(io.out, "  press Enter when done ")
		go func() {
			if _, err := lines.ReadString('\n'); err != nil {
				return
			}
			post(ctx, c, io, "/tasks/"+taskID+"/continue", map[string]any{"handoverId": h.ID})
		}()
	}
}

// chosen is the answer typed: a choice's number stands for the choice.
func chosen(typed string, choices []string) string {
	if n, err := strconv.Atoi(typed); err == nil && n >= 1 && n <= len(choices) {
		return choices[n-1]
	}
	return typed
}

// post sends body to the API path, reporting a failure on stderr.
func post(ctx context.Context, c *apiClient, io stdio, path string, body any) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := c.postJSON(ctx, path, body, nil); err != nil {
		fmt.Fprintf(io.err, "sending your answer failed: %v\n", err)
	}
}

// newConversation starts a new conversation in the tab (run --new-conversation): the request
// does not see the tab's earlier ones.
func newConversation(ctx context.Context, c *apiClient, tab string) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	if err := c.postJSON(ctx, "/conversation/new", map[string]any{"tab": tab}, nil); err != nil {
		return fmt.Errorf("starting a new conversation: %w", err)
	}
	return nil
}
