package task

import (
	"context"
	"sync"
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
	tr.rn.task = c
	tr.rn.mu.Unlock()
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
