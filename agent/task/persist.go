package task

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Saving tasks to the history: a task whose latest state could not be written (the disk is
// full, the database is locked by another program…) keeps its place in memory, says so on
// itself (Task.NotSaved) and is written again with backoff, on the next successful write of
// any task, and once more when the runner closes. Nothing that ended is dropped while the
// server runs.

// NotSavedPrefix starts Task.NotSaved: "not saved to history: <reason>".
const NotSavedPrefix = "not saved to history: "

// saveTimeout bounds one write of a task.
const saveTimeout = 5 * time.Second

// Retry backoff for tasks waiting to be saved: the first retry after retryFirst, each next one
// twice as late, at most retryMax apart.
const (
	retryFirst = 500 * time.Millisecond
	retryMax   = 30 * time.Second
)

// HistoryState tells whether the task history can be written.
type HistoryState struct {
	// Err is the last failed write; nil once a write succeeds.
	Err error
	// Unsaved are the ids of the tasks whose latest state waits to be written, oldest first.
	Unsaved []string
}

// OK reports whether every task is saved and the last write succeeded.
func (h HistoryState) OK() bool { return h.Err == nil && len(h.Unsaved) == 0 }

// Problem says in one line what is wrong ("" when OK): "2 tasks not saved to history: database
// or disk is full".
func (h HistoryState) Problem() string {
	if h.OK() {
		return ""
	}
	reason := "the last write failed"
	if h.Err != nil {
		reason = Reason(h.Err)
	}
	switch len(h.Unsaved) {
	case 0:
		return "the task history cannot be written: " + reason
	case 1:
		return "1 task " + NotSavedPrefix + reason
	}
	return fmt.Sprintf("%d tasks %s%s", len(h.Unsaved), NotSavedPrefix, reason)
}

// Reason is the innermost cause of err, what a person can act on ("database or disk is full
// (13)"), without the ids and paths the wrapping adds.
func Reason(err error) string {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			return err.Error()
		}
		err = inner
	}
}

// UnsavedError is returned by [Runner.Close] for the tasks it could not save.
type UnsavedError struct {
	// Tasks are the tasks not saved, oldest first.
	Tasks []*Task
	// Err is the last write's error.
	Err error
}

func (e *UnsavedError) Error() string {
	ids := make([]string, len(e.Tasks))
	for i, t := range e.Tasks {
		ids[i] = fmt.Sprintf("%s (%q, %s)", t.ID, truncate(oneLine(t.Shown()), 60), t.Status)
	}
	return fmt.Sprintf("%d tasks not saved to history (%v): %s", len(e.Tasks), e.Err, strings.Join(ids, ", "))
}

func (e *UnsavedError) Unwrap() error { return e.Err }

// saver writes tasks to the store, one write at a time (so a retry never writes an older
// state over a newer one), and keeps the ones it could not write.
type saver struct {
	store Store
	log   zerolog.Logger
	// mark sets or clears (notSaved "") a task's Task.NotSaved in memory.
	mark func(id, notSaved string)

	mu      sync.Mutex // held across writes
	pending map[string]*Task
	order   []string // pending ids, oldest failure first
	err     error
	retry   bool // a retry loop runs
}

func newSaver(store Store, log zerolog.Logger, mark func(id, notSaved string)) *saver {
	return &saver{store: store, log: log, mark: mark, pending: map[string]*Task{}}
}

// save writes t (a copy the caller no longer changes). On failure t waits in memory for the
// next attempt and the retry loop starts under base; on success the tasks waiting are
// written too.
func (s *saver) save(ctx context.Context, base context.Context, t *Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.write(ctx, t); err != nil {
		s.keep(t, err)
		s.startRetry(base)
		return
	}
	s.flushLocked(ctx)
}

// write writes one task and records the outcome. Call with s.mu held.
func (s *saver) write(ctx context.Context, t *Task) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), saveTimeout)
	defer cancel()
	err := s.store.SaveTask(ctx, t)
	if err != nil {
		s.err = err
		return err
	}
	s.err = nil
	if _, ok := s.pending[t.ID]; ok {
		delete(s.pending, t.ID)
		s.order = slices.DeleteFunc(s.order, func(id string) bool { return id == t.ID })
		s.log.Info().Str("task", t.ID).Msg("task saved to history after all")
	}
	s.mark(t.ID, "")
	return nil
}

// keep holds t as its task's latest unsaved state. Call with s.mu held.
func (s *saver) keep(t *Task, err error) {
	if _, ok := s.pending[t.ID]; !ok {
		s.order = append(s.order, t.ID)
		s.log.Error().Err(err).Str("task", t.ID).Msg("task not saved to history; kept in memory, saving again when the store can write")
	}
	s.pending[t.ID] = t
	s.mark(t.ID, NotSavedPrefix+Reason(err))
}

// flushLocked writes the tasks waiting, oldest first, and stops at the first failure.
// Call with s.mu held.
func (s *saver) flushLocked(ctx context.Context) {
	for len(s.order) > 0 {
		id := s.order[0]
		t := s.pending[id]
		if err := s.write(ctx, t); err != nil {
			s.mark(id, NotSavedPrefix+Reason(err))
			return
		}
	}
}

// startRetry starts the retry loop unless it runs. Call with s.mu held.
func (s *saver) startRetry(base context.Context) {
	if s.retry || base.Err() != nil {
		return
	}
	s.retry = true
	go s.retryLoop(base)
}

// retryLoop writes the tasks waiting with backoff until none waits or base ends.
func (s *saver) retryLoop(base context.Context) {
	wait := retryFirst
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-base.Done():
			s.mu.Lock()
			s.retry = false
			s.mu.Unlock()
			return
		case <-timer.C:
		}
		s.mu.Lock()
		s.flushLocked(base)
		if len(s.order) == 0 {
			s.retry = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		wait = min(2*wait, retryMax)
		timer.Reset(wait)
	}
}

// state is the history's state now.
func (s *saver) state() HistoryState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return HistoryState{Err: s.err, Unsaved: slices.Clone(s.order)}
}

// unsaved returns copies of the tasks waiting, oldest first (none on a nil saver).
func (s *saver) unsaved() []*Task {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Task, 0, len(s.order))
	for _, id := range s.order {
		c := s.pending[id].Clone()
		if s.err != nil {
			c.NotSaved = NotSavedPrefix + Reason(s.err)
		}
		out = append(out, c)
	}
	return out
}

// close tries once more to write the tasks waiting and returns an *UnsavedError naming those
// it could not write.
func (s *saver) close(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flushLocked(ctx)
	if len(s.order) == 0 {
		return nil
	}
	e := &UnsavedError{Err: s.err}
	for _, id := range s.order {
		e.Tasks = append(e.Tasks, s.pending[id].Clone())
	}
	return e
}
