package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
	sse "github.com/tmaxmax/go-sse"

	"github.com/tabrelay/tabrelay/agent/task"
)

// EventTask is the SSE event type of the first event of GET /api/tasks/:id/events: the task's
// whole current state (a task.Task). Live task.Event objects follow, each with its own type
// (status, plan, step_started, step_finished, confirmation_needed, question_asked,
// handover_requested, answer, text); the stream
// ends after the answer event, or at once when the task had already ended.
const EventTask = "task"

// sseKeepAlive is how often an idle stream gets a comment line; sseCheck is how often the
// task's state is re-read, in case a slow reader missed the final event.
const (
	sseKeepAlive = 15 * time.Second
	sseCheck     = time.Second
	// sseAnswerGrace is how long a stream that found its task ended waits for the task's last
	// events (status, answer) before it ends with the task's final state.
	sseAnswerGrace = 2 * time.Second
)

func (a *Agent) taskEvents(c echo.Context) *httpError {
	id := c.Param("id")
	ch, unsubscribe := a.runner.Subscribe(id, 1024)
	defer unsubscribe()
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	sess, err := sse.Upgrade(c.Response(), c.Request())
	if err != nil {
		return errorf(http.StatusInternalServerError, "opening the event stream of task %s: %v", id, err)
	}
	// The status goes through echo's response, so echo knows it is sent (go-sse flushes the
	// writer beneath it, which would send a 200 echo then tries to send again).
	h.Set("Content-Type", "text/event-stream")
	c.Response().WriteHeader(http.StatusOK)
	seq := 0
	send := func(typ string, v any) bool {
		data, err := json.Marshal(v)
		if err != nil {
			a.log.Warn().Err(err).Str("task", id).Msg("encoding a task event")
			return true
		}
		seq++
		msg := &sse.Message{ID: sse.ID(strconv.Itoa(seq)), Type: sse.Type(typ)}
		msg.AppendData(string(data))
		return sess.Send(msg) == nil && sess.Flush() == nil
	}
	if !send(EventTask, t) || t.Status.Done() {
		return nil
	}
	ctx := c.Request().Context()
	check := time.NewTicker(sseCheck)
	defer check.Stop()
	lastWrite := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-ch:
			if !ok {
				return nil
			}
			ev = a.stableEvent(ctx, ev)
			if !send(string(ev.Type), ev) {
				return nil
			}
			lastWrite = time.Now()
			if ev.Type == task.EventAnswer {
				return nil
			}
		case <-check.C:
			cur, err := a.runner.Get(ctx, id)
			if err == nil && cur.Status.Done() {
				// pass on what is queued and what the ending task is still publishing (its
				// status shows done a moment before its last events: it saves the task first);
				// if the answer was lost (a full buffer), end with the final state instead
				grace := time.NewTimer(sseAnswerGrace)
				defer grace.Stop()
				for {
					select {
					case ev, ok := <-ch:
						if !ok {
							return nil
						}
						if !send(string(ev.Type), a.stableEvent(ctx, ev)) || ev.Type == task.EventAnswer {
							return nil
						}
						continue
					case <-grace.C:
					case <-ctx.Done():
						return nil
					}
					break
				}
				send(EventTask, cur)
				return nil
			}
			if time.Since(lastWrite) >= sseKeepAlive {
				var ping sse.Message
				ping.AppendComment("keep-alive")
				if sess.Send(&ping) != nil || sess.Flush() != nil {
					return nil
				}
				lastWrite = time.Now()
			}
		}
	}
}

// stableEvent replaces the step of a step_started or step_finished event with a copy read
// under the runner's lock: the loop publishes a pointer to the step it keeps filling in, so
// encoding ev.Step itself would race with the loop. Only the step's ID (set before the event
// is published, never changed) is read from the event.
func (a *Agent) stableEvent(ctx context.Context, ev task.Event) task.Event {
	if ev.Step == nil || (ev.Type != task.EventStepStarted && ev.Type != task.EventStepFinished) {
		return ev
	}
	id := ev.Step.ID
	ev.Step = nil
	t, err := a.runner.Get(ctx, ev.TaskID)
	if err != nil {
		return ev
	}
	if s, ok := t.Step(id); ok {
		ev.Step = &s
	}
	return ev
}
