package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/rs/zerolog"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tmc/langchaingo/llms"
)

// Store persists tasks (implemented by agent/task/taskstore).
type Store interface {
	// SaveTask inserts or replaces the task with its plan and steps.
	SaveTask(ctx context.Context, t *Task) error
	// GetTask returns the task with the id, or an error wrapping ErrNotFound.
	GetTask(ctx context.Context, id string) (*Task, error)
	// ListTasks returns tasks, most recent first.
	ListTasks(ctx context.Context, limit, offset int) ([]*Task, error)
}

// ErrNotFound is returned (wrapped) for unknown task ids.
var ErrNotFound = errors.New("task not found")

// Options configure a [Runner]. Model and Browser are required to run tasks.
type Options struct {
	// Model is the language model; nil makes Start fail with an llm.NotConfiguredError.
	Model llms.Model
	// ModelName is recorded on tasks (e.g. cfg.String()).
	ModelName string
	// ImageMode tells how screenshots are attached (see llm.Config.ImageMode).
	ImageMode llm.ImageMode
	// Vision offers the screenshot tool (needs a Browser implementing Screenshotter).
	Vision bool
	// Browser reads and acts on tabs.
	Browser Browser
	// Hold, when set, keeps a tab's debugger and the agent's session on it until ctx ends
	// (relay.Hub.HoldWhile): a task holds each tab it works in while it waits for its model or
	// for the person, so the refs the model was shown still work when it answers.
	Hold func(ctx context.Context, tabID string)
	// Store persists tasks; nil keeps them in memory only.
	Store Store
	// Log receives debug and info lines (never page contents or secrets at info). The zero
	// value logs nothing.
	Log zerolog.Logger
	// MaxSteps bounds the model calls per task (default 30).
	MaxSteps int
	// Timeout bounds a task's wall time, waiting for confirmation included (default 10 min);
	// the time it waits for the user's answer to a question or for their Continue after a
	// hand-over does not count (those waits have their own limits).
	Timeout time.Duration
	// MaxSnapshotChars caps a snapshot sent to the model (default 30000).
	MaxSnapshotChars int
	// MaxTokens caps each model reply (default 1024).
	MaxTokens int
	// AllowedSites, when not empty, limits page-changing actions to these hosts (and their
	// subdomains); reading and navigating stay free.
	AllowedSites []string
	// Memory is how many recent tasks are summarised in the prompt (default 5, -1 for none).
	Memory int
	// Stream streams the model's prose as EventText events.
	Stream bool
	// AskTimeout bounds the wait for the answer to a question the agent asks (ask_user;
	// default DefaultAskTimeout); the model is then told nobody answered.
	AskTimeout time.Duration
	// HandoverTimeout bounds the wait for the person to press Continue after a hand-over
	// (hand_over; default DefaultHandoverTimeout).
	HandoverTimeout time.Duration
	// ConversationTokens is the budget, in tokens (about four characters each), of the
	// earlier requests, answers and findings of the tab's conversation given to a follow-up
	// task (default DefaultConversationTokens, -1 for none): the oldest are left out first.
	ConversationTokens int
	// Toolbox, when not nil, builds the toolbox whose tools the runner's tasks offer the model
	// next to the browser tools. NewRunner calls it once, with the runner itself: the toolbox
	// (the skills service) runs its skills as this runner's tasks and hands steps to it, so
	// the two are made together here rather than joined by a setter afterwards. It may
	// return nil (no toolbox).
	Toolbox func(*Runner) Toolbox
}

// Runner starts, tracks, confirms and cancels tasks.
type Runner struct {
	opts Options
	bus  *Bus

	base       context.Context
	baseCancel context.CancelFunc

	mu           sync.Mutex
	runs         map[string]*run
	memory       []*Task
	memoryLoaded bool
	convs        map[string]string // tab id → its current conversation id
	wg           sync.WaitGroup

	box Toolbox // set once by NewRunner (Options.Toolbox), never changed

	saver *saver // nil without a store
}

type run struct {
	mu      sync.Mutex
	task    *Task
	cancel  context.CancelCauseFunc
	done    chan struct{}
	pending map[string]chan bool
	// answers are the questions and hand-overs waiting, by id: an answer's text (empty for
	// a Continue).
	answers map[string]chan string
	// words are the person's own words the task was started with, for the safety gate (""
	// when the goal is a model's: StartRequest.ModelGoal)
	words string
}

func newRun(t *Task, cancel context.CancelCauseFunc) *run {
	return &run{task: t, cancel: cancel, done: make(chan struct{}), pending: map[string]chan bool{}, answers: map[string]chan string{}}
}

var (
	errCancelled = errors.New("cancelled by the user")
	errTimeout   = errors.New("time limit reached")
	errClosed    = errors.New("the agent is shutting down")
)

// NewRunner returns a runner with defaults applied.
func NewRunner(opts Options) *Runner {
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = 30
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Minute
	}
	if opts.MaxSnapshotChars <= 0 {
		opts.MaxSnapshotChars = 30000
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = 1024
	}
	if opts.Memory == 0 {
		opts.Memory = 5
	}
	if opts.AskTimeout <= 0 {
		opts.AskTimeout = DefaultAskTimeout
	}
	if opts.HandoverTimeout <= 0 {
		opts.HandoverTimeout = DefaultHandoverTimeout
	}
	if opts.ConversationTokens == 0 {
		opts.ConversationTokens = DefaultConversationTokens
	}
	base, cancel := context.WithCancel(context.Background())
	r := &Runner{opts: opts, bus: NewBus(), base: base, baseCancel: cancel, runs: map[string]*run{}, convs: map[string]string{}}
	if opts.Store != nil {
		r.saver = newSaver(opts.Store, opts.Log, r.markSaved)
	}
	if opts.Toolbox != nil {
		r.box = opts.Toolbox(r)
	}
	return r
}

// Events returns the runner's event bus.
func (r *Runner) Events() *Bus { return r.bus }

// Subscribe is a shortcut for Events().Subscribe.
func (r *Runner) Subscribe(taskID string, buf int) (<-chan Event, func()) {
	return r.bus.Subscribe(taskID, buf)
}

// StartRequest is a task for [Runner.StartWith] and [Runner.RunWith].
type StartRequest struct {
	// Goal is what the model is asked to do.
	Goal string
	// Request is what the user asked, shown in task lists ("" means Goal).
	Request string
	// Tab is the tab's target id ("" for the active tab).
	Tab string
	// Conversation makes the task a turn of the tab's conversation: it sees the earlier
	// turns, and later tasks in the tab see it. Only requests of the user should be turns.
	Conversation bool
	// ModelGoal marks Goal as a model's words (an MCP client's run_task), not the person's:
	// the task does it, but the safety gate counts none of it as the person's (it names no
	// site, value or file, and approves nothing); the steps it holds go to the person.
	ModelGoal bool
	// Words are the person's own words the task acts for when Goal is a model's or a program's
	// (ModelGoal): a skill's hand-over, whose goal holds parameters an MCP client may have
	// passed, acts for the words that started the skill's run ("" when none did).
	Words string
}

// Start creates a task for the user's request goal on tab tabID ("" for the active tab), as
// the next turn of the tab's conversation, and runs it in the background; it returns the new
// task at once. The task outlives ctx (which only carries values and bounds the initial
// bookkeeping): stop it with Cancel.
func (r *Runner) Start(ctx context.Context, goal, tabID string) (*Task, error) {
	return r.StartWith(ctx, StartRequest{Goal: goal, Tab: tabID, Conversation: true})
}

// StartWith is Start with options (see StartRequest).
func (r *Runner) StartWith(ctx context.Context, req StartRequest) (*Task, error) {
	rn, err := r.start(context.WithoutCancel(ctx), req, nil)
	if err != nil {
		return nil, err
	}
	return r.snapshotOf(rn), nil
}

// Run runs a task to its end and returns it; cancelling ctx cancels the task. It is not a
// turn of the tab's conversation (see RunWith).
func (r *Runner) Run(ctx context.Context, goal, tabID string) (*Task, error) {
	return r.RunWith(ctx, StartRequest{Goal: goal, Tab: tabID})
}

// RunWith is Run with options (see StartRequest).
func (r *Runner) RunWith(ctx context.Context, req StartRequest) (*Task, error) {
	rn, err := r.start(ctx, req, nil)
	if err != nil {
		return nil, err
	}
	<-rn.done
	return r.snapshotOf(rn), nil
}

func (r *Runner) start(parent context.Context, req StartRequest, fast *fastMatch) (*run, error) {
	goal, tabID := req.Goal, req.Tab
	if !llm.Ready(r.opts.Model) && fast == nil {
		return nil, &llm.NotConfiguredError{Reason: "the agent was started without a model"}
	}
	if r.opts.Browser == nil {
		return nil, errors.New("task: no browser connection: the agent needs the relay's in-process client")
	}
	if goal == "" {
		return nil, errors.New("task: empty goal: say what the agent should do")
	}
	if err := r.base.Err(); err != nil {
		return nil, fmt.Errorf("task: %w", errClosed)
	}
	r.loadMemory(parent)
	now := time.Now().UTC()
	model := llm.Name(r.opts.Model, r.opts.ModelName)
	if fast != nil {
		model = ModelFastPath
	}
	request := req.Request
	if request == "" {
		request = goal
	}
	t := &Task{ID: uuid.NewString(), Goal: goal, Request: request, TabID: tabID, Status: StatusPlanning, Model: model,
		Plan: []PlanItem{}, Steps: []Step{}, CreatedAt: now, UpdatedAt: now}
	ctx, cancel := context.WithCancelCause(parent)
	stop := context.AfterFunc(r.base, func() { cancel(errClosed) })
	rn := newRun(t, cancel)
	if !req.ModelGoal {
		rn.words = goal
	} else {
		rn.words = req.Words
	}
	var turns []*Task
	var restored *storedConversation
	if req.Conversation && tabID != "" {
		restored = r.restoreConversation(parent, tabID)
	}
	r.mu.Lock()
	if req.Conversation && tabID != "" {
		if restored != nil && r.convs[tabID] == "" {
			r.convs[tabID] = restored.id
		}
		t.Conversation, turns = r.conversation(tabID, uuid.NewString())
		if restored != nil && t.Conversation == restored.id {
			turns = append(restored.turns, turns...)
		}
	}
	r.runs[t.ID] = rn
	memory := make([]*Task, 0, len(r.memory))
	for _, m := range r.memory {
		if t.Conversation == "" || m.Conversation != t.Conversation { // the conversation says it already
			memory = append(memory, m)
		}
	}
	r.mu.Unlock()
	r.save(ctx, t.Clone())
	r.bus.Publish(Event{Type: EventStatus, TaskID: t.ID, Status: t.Status})
	r.opts.Log.Info().Str("task", t.ID).Str("tab", tabID).Msg("task started")
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(rn.done)
		defer stop()
		defer cancel(nil)
		tctx, tcancel := context.WithCancelCause(gate.WithTask(ctx, gate.NewTask(rn.words, r.opts.AllowedSites)))
		defer tcancel(nil)
		clock := startClock(r.opts.Timeout, func() { tcancel(errTimeout) })
		defer clock.stop()
		l := newLoop(r, rn, tctx, memory)
		l.clock = clock
		l.conversation = conversationText(turns, r.opts.ConversationTokens)
		if fast != nil {
			l.runFast(fast)
		} else {
			l.run()
		}
		r.finished(rn)
	}()
	return rn, nil
}

// loadMemory reads recent tasks from the store once.
func (r *Runner) loadMemory(ctx context.Context) {
	r.mu.Lock()
	loaded := r.memoryLoaded
	r.memoryLoaded = true
	r.mu.Unlock()
	if loaded || r.opts.Store == nil || r.opts.Memory < 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ts, err := r.opts.Store.ListTasks(ctx, r.opts.Memory, 0)
	if err != nil {
		r.opts.Log.Warn().Err(err).Msg("reading recent tasks for the session memory")
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range ts {
		if t.Status.Done() {
			r.memory = append(r.memory, t)
		}
	}
}

func (r *Runner) finished(rn *run) {
	t := r.snapshotOf(rn)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.opts.Memory > 0 {
		r.memory = append([]*Task{t}, r.memory...)
		if len(r.memory) > r.opts.Memory {
			r.memory = r.memory[:r.opts.Memory]
		}
	}
}

func (r *Runner) snapshotOf(rn *run) *Task {
	rn.mu.Lock()
	defer rn.mu.Unlock()
	return rn.task.Clone()
}

func (r *Runner) lookup(id string) *run {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[id]
}

// Get returns a copy of the task (from memory, else from the store).
func (r *Runner) Get(ctx context.Context, id string) (*Task, error) {
	if rn := r.lookup(id); rn != nil {
		return r.snapshotOf(rn), nil
	}
	if r.opts.Store != nil {
		return r.opts.Store.GetTask(ctx, id)
	}
	return nil, fmt.Errorf("task %s: %w", id, ErrNotFound)
}

// List returns recent tasks, most recent first: from the store when there is one (with the
// tasks not saved yet in their place, see Task.NotSaved), else the tasks of this process.
func (r *Runner) List(ctx context.Context, limit, offset int) ([]*Task, error) {
	if r.opts.Store != nil {
		stored, err := r.opts.Store.ListTasks(ctx, limit, offset)
		if err != nil {
			return nil, err
		}
		return withUnsaved(stored, r.saver.unsaved(), limit, offset), nil
	}
	r.mu.Lock()
	runs := make([]*run, 0, len(r.runs))
	for _, rn := range r.runs {
		runs = append(runs, rn)
	}
	r.mu.Unlock()
	out := make([]*Task, 0, len(runs))
	for _, rn := range runs {
		out = append(out, r.snapshotOf(rn))
	}
	sortTasks(out)
	if offset >= len(out) {
		return nil, nil
	}
	out = out[offset:]
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// Wait blocks until the task ends (or ctx ends) and returns it.
func (r *Runner) Wait(ctx context.Context, id string) (*Task, error) {
	rn := r.lookup(id)
	if rn == nil {
		return r.Get(ctx, id)
	}
	select {
	case <-rn.done:
		return r.snapshotOf(rn), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for task %s: %w", id, ctx.Err())
	}
}

// Cancel stops a running task at once; it ends with status cancelled.
func (r *Runner) Cancel(id string) error {
	rn := r.lookup(id)
	if rn == nil {
		return fmt.Errorf("cancel task %s: %w", id, ErrNotFound)
	}
	rn.cancel(errCancelled)
	return nil
}

// Confirm answers a step waiting for confirmation: approve runs it, refusing stops the task.
func (r *Runner) Confirm(taskID, stepID string, approve bool) error {
	rn := r.lookup(taskID)
	if rn == nil {
		return fmt.Errorf("confirm step %s: task %s: %w", stepID, taskID, ErrNotFound)
	}
	rn.mu.Lock()
	ch := rn.pending[stepID]
	delete(rn.pending, stepID)
	rn.mu.Unlock()
	if ch == nil {
		return fmt.Errorf("confirm: step %s of task %s is not waiting for confirmation", stepID, taskID)
	}
	ch <- approve
	return nil
}

// Close is Shutdown, its error logged only.
func (r *Runner) Close() { _ = r.Shutdown(context.Background()) }

// Shutdown cancels every running task, waits for them to end and tries once more to save the
// tasks not saved yet (within ctx, and 10 s at most): it logs and returns an *UnsavedError
// naming those it could not save.
func (r *Runner) Shutdown(ctx context.Context) error {
	r.baseCancel()
	r.wg.Wait()
	if r.saver == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*saveTimeout)
	defer cancel()
	if err := r.saver.close(ctx); err != nil {
		r.opts.Log.Error().Err(err).Msg("closing the agent: tasks lost from the history")
		return err
	}
	return nil
}

// History tells whether the task history can be written (always fine without a store).
func (r *Runner) History() HistoryState {
	if r.saver == nil {
		return HistoryState{}
	}
	return r.saver.state()
}

// save persists t (a copy); a failure does not stop the task: it is kept and saved later (see
// saver), and the task says so (Task.NotSaved).
func (r *Runner) save(ctx context.Context, t *Task) {
	if r.saver == nil {
		return
	}
	r.saver.save(ctx, r.base, t)
}

// markSaved sets the in-memory task's NotSaved ("" once its latest state is saved).
func (r *Runner) markSaved(id, notSaved string) {
	rn := r.lookup(id)
	if rn == nil {
		return
	}
	rn.mu.Lock()
	rn.task.NotSaved = notSaved
	rn.mu.Unlock()
}

// withUnsaved puts the tasks not saved yet into a page of stored tasks, most recent first: an
// unsaved state replaces the stored one, and a task never stored joins the page its time puts
// it on.
func withUnsaved(stored, unsaved []*Task, limit, offset int) []*Task {
	if len(unsaved) == 0 {
		return stored
	}
	byID := make(map[string]*Task, len(unsaved))
	for _, t := range unsaved {
		byID[t.ID] = t
	}
	out := make([]*Task, 0, len(stored)+len(unsaved))
	for _, t := range stored {
		if u, ok := byID[t.ID]; ok {
			t = u
			delete(byID, t.ID)
		}
		out = append(out, t)
	}
	full := limit > 0 && len(stored) >= limit
	for _, u := range byID { // never stored: on this page when its time puts it here
		if full && u.CreatedAt.Before(stored[len(stored)-1].CreatedAt) {
			continue // a later page's
		}
		if offset > 0 && (len(stored) == 0 || u.CreatedAt.After(stored[0].CreatedAt)) {
			continue // an earlier page's
		}
		out = append(out, u)
	}
	sortTasks(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
