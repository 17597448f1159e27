package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Tracked is a task another part of the agent runs itself (a skill replay), registered with
// [Runner.Track] so that the runner lists, waits for and cancels it like its own tasks. Its
// methods do nothing on a nil *Tracked.
type Tracked struct {
	r       *Runner
	rn      *run
	stop    func() bool
	counted bool
	once    sync.Once
	// handovers counts the hand-overs (see WaitHandover), under rn.mu.
	handovers int
}

// Track registers t, a task run outside the runner's loop, so that Get, List (without a
// store), Wait and Cancel see it and the session memory recalls it. It returns the context to
// run the task under: it ends when ctx does, when Cancel is called (cause: cancelled by the
// user) and when the runner closes. Report each change of the task with Update and its end
// with End, always: Close waits for the tracked tasks to end. The caller saves and publishes
// the task itself.
func (r *Runner) Track(ctx context.Context, t *Task) (context.Context, *Tracked) {
	tctx, cancel := context.WithCancelCause(ctx)
	rn := newRun(t.Clone(), cancel)
	tr := &Tracked{r: r, rn: rn, stop: func() bool { return false }}
	r.mu.Lock()
	r.runs[t.ID] = rn
	r.mu.Unlock()
	if r.base.Err() != nil {
		cancel(errClosed)
		return tctx, tr
	}
	r.wg.Add(1)
	tr.counted = true
	tr.stop = context.AfterFunc(r.base, func() { cancel(errClosed) })
	return tctx, tr
}

// Update replaces the tracked task's state with a copy of t.
func (tr *Tracked) Update(t *Task) {
	if tr == nil {
		return
	}
	c := t.Clone()
	tr.rn.mu.Lock()
	c.NotSaved = tr.rn.task.NotSaved // the runner's to say (see Save)
	tr.rn.task = c
	tr.rn.mu.Unlock()
}

// Save is Update, then saves a copy of t to the runner's store the way the runner saves its own
// tasks: one that cannot be written is kept and written later, and says so (Task.NotSaved).
func (tr *Tracked) Save(ctx context.Context, t *Task) {
	if tr == nil {
		return
	}
	tr.Update(t)
	tr.r.save(ctx, t.Clone())
}

// End records the task's final state t and releases it: Wait returns, Close no longer waits
// for it. Later calls do nothing.
func (tr *Tracked) End(t *Task) {
	if tr == nil {
		return
	}
	tr.once.Do(func() {
		tr.Update(t)
		tr.stop()
		tr.rn.cancel(nil)
		tr.r.finished(tr.rn)
		close(tr.rn.done)
		if tr.counted {
			tr.r.wg.Done()
		}
	})
}

// WaitHandover hands the tracked task's tab over to the person (a skill's hand_over step): it
// makes the hand-over (id h1, h2, …; its deadline the runner's HandoverTimeout), calls announce
// with it (the caller sets it and status waiting_user on its task, saves and publishes), and
// waits until Runner.Continue names it (ok true), the time limit passes (ok false) or ctx ends
// (the error). A nil *Tracked has no runner to continue it: it fails at once.
func (tr *Tracked) WaitHandover(ctx context.Context, instruction string, announce func(Handover)) (ok bool, err error) {
	if tr == nil {
		return false, errors.New("handing over needs the agent's task runner (the server's), which this run has not")
	}
	limit := tr.r.opts.HandoverTimeout
	ch := make(chan string, 1)
	tr.rn.mu.Lock()
	tr.handovers++
	id := fmt.Sprintf("h%d", tr.handovers)
	tr.rn.answers[id] = ch
	tr.rn.mu.Unlock()
	defer func() {
		tr.rn.mu.Lock()
		delete(tr.rn.answers, id)
		tr.rn.mu.Unlock()
	}()
	now := time.Now().UTC()
	announce(Handover{ID: id, Instruction: instruction, AskedAt: now, Deadline: now.Add(limit)})
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-ch:
		return true, nil
	case <-timer.C:
		return false, nil
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
}

// WaitConfirm asks the person to confirm a step of the tracked task (a skill step the safety
// gate holds): it registers step id as waiting, calls announce (the caller sets status
// waiting_confirmation, saves and publishes the confirmation event), and waits until
// Runner.Confirm answers it or ctx ends (the error). A nil *Tracked has no runner to answer
// it: it fails at once.
func (tr *Tracked) WaitConfirm(ctx context.Context, id string, announce func()) (bool, error) {
	if tr == nil {
		return false, errors.New("asking for confirmation needs the agent's task runner (the server's), which this run has not")
	}
	ch := make(chan bool, 1)
	tr.rn.mu.Lock()
	tr.rn.pending[id] = ch
	tr.rn.mu.Unlock()
	defer func() {
		tr.rn.mu.Lock()
		delete(tr.rn.pending, id)
		tr.rn.mu.Unlock()
	}()
	announce()
	select {
	case ok := <-ch:
		return ok, nil
	case <-ctx.Done():
		return false, context.Cause(ctx)
	}
}
