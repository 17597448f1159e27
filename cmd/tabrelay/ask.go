package main

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/tabrelay/tabrelay/agent/task"
)

// asker puts, for `tabrelay run`, the questions the agent asks and its hand-overs to the user:
// on a terminal (lines is its input) it asks there and sends the answer or the Continue;
// otherwise it prints how to answer through the API while the task waits. Each is put once,
// whether it comes as an event or in the task's state when the stream opens.
type asker struct {
	ctx    context.Context
	c      *apiClient
	io     stdio
	lines  *bufio.Reader
	taskID string
	seen   map[string]bool
}

// task puts what the task waits for, as the stream's first event shows it.
func (a *asker) task(t *task.Task) {
	switch {
	case t.Question != nil:
		a.event(task.Event{Type: task.EventQuestion, Question: t.Question})
	case t.Handover != nil:
		a.event(task.Event{Type: task.EventHandover, Handover: t.Handover})
	}
}

// event puts a question_asked or handover_requested event's question or hand-over.
func (a *asker) event(e task.Event) {
	id := ""
	switch {
	case e.Question != nil:
		id = e.Question.ID
	case e.Handover != nil:
		id = e.Handover.ID
	}
	if id == "" || a.seen[id] {
		return
	}
	if a.seen == nil {
		a.seen = map[string]bool{}
	}
	a.seen[id] = true
	askTerminal(a.ctx, a.c, a.io, a.lines, a.taskID, e)
}

// askTerminal asks one question or hand-over (see asker).
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
