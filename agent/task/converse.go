package task

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Questions and hand-overs: the ask_user and hand_over tools, Runner.Answer and Runner.Continue,
// and the task clock that stands still while a task waits for the user.

// ErrNotWaiting is wrapped when an answer or a Continue names a question or hand-over the task
// is not waiting for (answered already, timed out, or never asked).
var ErrNotWaiting = errors.New("not waiting")

// ErrEmptyAnswer is wrapped when an answer is empty.
var ErrEmptyAnswer = errors.New("empty answer")

// Default time limits of the waits for the user (Options.AskTimeout, Options.HandoverTimeout).
const (
	DefaultAskTimeout      = 5 * time.Minute
	DefaultHandoverTimeout = 5 * time.Minute
)

// maxChoices bounds the choices of one question.
const maxChoices = 12

// Answer answers the question questionID the task waits for (status waiting_input): the
// answer goes to the model as the ask_user tool's result and the task goes on. It fails
// wrapping ErrNotFound for an unknown task, ErrEmptyAnswer for an empty answer and
// ErrNotWaiting when that question is not waiting.
func (r *Runner) Answer(taskID, questionID, answer string) error {
	answer = strings.TrimSpace(answer)
	if answer == "" {
		return fmt.Errorf("answer to question %s of task %s: %w: say or type the answer", questionID, taskID, ErrEmptyAnswer)
	}
	rn := r.lookup(taskID)
	if rn == nil {
		return fmt.Errorf("answer task %s: %w", taskID, ErrNotFound)
	}
	rn.mu.Lock()
	ch := rn.answers[questionID]
	if strings.HasPrefix(questionID, "q") {
		delete(rn.answers, questionID)
	} else {
		ch = nil // a hand-over is not answered but continued
	}
	rn.mu.Unlock()
	if ch == nil {
		return fmt.Errorf("answer: question %q of task %s is %w for an answer (answered already, timed out or never asked)", questionID, taskID, ErrNotWaiting)
	}
	ch <- answer
	return nil
}

// Continue tells the task waiting for the person (status waiting_user, hand-over handoverID)
// that they are done: the task reads the page afresh and goes on. It fails wrapping
// ErrNotFound for an unknown task and ErrNotWaiting when that hand-over is not waiting.
func (r *Runner) Continue(taskID, handoverID string) error {
	rn := r.lookup(taskID)
	if rn == nil {
		return fmt.Errorf("continue task %s: %w", taskID, ErrNotFound)
	}
	rn.mu.Lock()
	ch := rn.answers[handoverID]
	if strings.HasPrefix(handoverID, "h") {
		delete(rn.answers, handoverID)
	} else {
		ch = nil // a question needs an answer
	}
	rn.mu.Unlock()
	if ch == nil {
		return fmt.Errorf("continue: hand-over %q of task %s is %w for the person (continued already, timed out or never asked)", handoverID, taskID, ErrNotWaiting)
	}
	ch <- ""
	return nil
}

// askUser runs the ask_user tool: the task waits for Runner.Answer, its time limit or its end.
func (l *loop) askUser(args map[string]any) result {
	text := strings.TrimSpace(argStr(args, "question"))
	if text == "" {
		return result{err: errors.New("ask_user needs a question; call it again with \"question\"")}
	}
	var choices []string
	if cs, ok := args["choices"].([]any); ok {
		for _, c := range cs {
			if s := strings.TrimSpace(fmt.Sprint(c)); s != "" && len(choices) < maxChoices {
				choices = append(choices, truncate(oneLine(s), 200))
			}
		}
	}
	if choices == nil {
		choices = []string{}
	}
	now := time.Now().UTC()
	limit := l.opts.AskTimeout
	q := &Question{Text: truncate(text, 1000), Choices: choices, AskedAt: now, Deadline: now.Add(limit)}
	answer, ok, err := l.wait(StatusWaitingInput, "q", func(t *Task, id string) Event {
		q.ID = id
		t.Question = q
		c := *q
		return Event{Type: EventQuestion, Question: &c}
	})
	if err != nil {
		return result{err: err}
	}
	if !ok {
		return result{text: fmt.Sprintf("nobody answered within %s. Do not guess anything that matters: if the goal can be done safely without the answer, go on and say in finish what you assumed; otherwise call fail saying what you needed to know.", limit)}
	}
	return result{text: answeredPrefix + answer}
}

// handOver runs the hand_over tool: the task waits for Runner.Continue, its time limit or its
// end, then reads the page afresh.
func (l *loop) handOver(args map[string]any) result {
	text := strings.TrimSpace(argStr(args, "instruction"))
	if text == "" {
		return result{err: errors.New("hand_over needs an instruction; call it again saying what the person must do in this tab")}
	}
	if l.tabID == "" {
		return result{err: errors.New("no current tab to hand over: open one with new_tab first")}
	}
	now := time.Now().UTC()
	limit := l.opts.HandoverTimeout
	h := &Handover{Instruction: truncate(text, 1000), AskedAt: now, Deadline: now.Add(limit)}
	_, ok, err := l.wait(StatusWaitingUser, "h", func(t *Task, id string) Event {
		h.ID = id
		t.Handover = h
		c := *h
		return Event{Type: EventHandover, Handover: &c}
	})
	if err != nil {
		return result{err: err}
	}
	if !ok {
		return result{text: fmt.Sprintf("the person did not press Continue within %s. Call fail saying what they must do in the tab before asking again.", limit)}
	}
	_ = l.refreshTab()
	snap, err := l.snapshot()
	if err != nil {
		return result{text: "the person pressed Continue; reading the page afterwards failed: " + pageErr(err)}
	}
	full := l.fullPage(snap)
	full.text = "the person pressed Continue (they say they are done). The page now:\n" + full.text
	return full
}

// wait puts the task in status s with the question or hand-over that ask sets on it (given
// the new id, prefix plus a number) and waits for Runner.Answer or Runner.Continue. ok is false
// when the time limit passed first; err is set when the task ended meanwhile.
func (l *loop) wait(s Status, prefix string, ask func(t *Task, id string) Event) (answer string, ok bool, err error) {
	if l.waits == nil {
		l.waits = map[string]int{}
	}
	l.waits[prefix]++
	id := fmt.Sprintf("%s%d", prefix, l.waits[prefix])
	ch := make(chan string, 1)
	l.rn.mu.Lock()
	l.rn.answers[id] = ch
	l.rn.mu.Unlock()
	var ev Event
	limit := l.opts.AskTimeout
	if s == StatusWaitingUser {
		limit = l.opts.HandoverTimeout
	}
	prev := l.rn.task.Status
	t := l.update(func(t *Task) {
		t.Status = s
		ev = ask(t, id)
	})
	ev.TaskID = t.ID
	// saved first: a client that hears the event and reads the task finds it waiting
	l.r.save(l.ctx, t)
	l.r.bus.Publish(Event{Type: EventStatus, TaskID: t.ID, Status: s})
	l.r.bus.Publish(ev)
	l.opts.Log.Info().Str("task", t.ID).Str("wait", id).Dur("limit", limit).Msg("waiting for the user")
	// the user's time is not the task's: its time limit stands still meanwhile
	defer l.clock.pause()()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	defer func() {
		l.rn.mu.Lock()
		delete(l.rn.answers, id)
		l.rn.mu.Unlock()
		if prev == StatusPlanning {
			prev = StatusRunning
		}
		t := l.update(func(t *Task) {
			t.Question, t.Handover = nil, nil
			if !t.Status.Done() {
				t.Status = prev
			}
		})
		if err == nil {
			l.r.save(l.ctx, t)
			l.r.bus.Publish(Event{Type: EventStatus, TaskID: t.ID, Status: t.Status})
		}
	}()
	select {
	case answer = <-ch:
		return answer, true, nil
	case <-timer.C:
		return "", false, nil
	case <-l.ctx.Done():
		return "", false, context.Cause(l.ctx)
	}
}

// answeredPrefix starts the ask_user step's result when the user answered; the answer
// follows.
const answeredPrefix = "the user answered: "

// clock is a task's time limit, which can stand still while the task waits for the user.
type clock struct {
	mu        sync.Mutex
	timer     *time.Timer
	deadline  time.Time
	remaining time.Duration // while paused
	paused    bool
}

// startClock calls expire after d of running time.
func startClock(d time.Duration, expire func()) *clock {
	return &clock{timer: time.AfterFunc(d, expire), deadline: time.Now().Add(d)}
}

// pause stops the clock and returns the function that restarts it with the time that was left.
// On a nil clock (a loop without one) both do nothing.
func (c *clock) pause() (resume func()) {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused || !c.timer.Stop() {
		return func() {} // paused already, or expired: nothing to resume
	}
	c.paused, c.remaining = true, time.Until(c.deadline)
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.paused = false
		c.deadline = time.Now().Add(c.remaining)
		c.timer.Reset(c.remaining)
	}
}

// stop stops the clock for good.
func (c *clock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timer.Stop()
}
