package task

import (
	"sync"
	"sync/atomic"
	"time"
)

// EventType names a live event.
type EventType string

// Event types.
const (
	// EventStatus: the task's status changed (also sent when a task starts).
	EventStatus EventType = "status"
	// EventPlan: the plan changed.
	EventPlan EventType = "plan"
	// EventStepStarted and EventStepFinished bracket each tool call.
	EventStepStarted  EventType = "step_started"
	EventStepFinished EventType = "step_finished"
	// EventConfirmation: a step waits for Confirm(taskID, stepID, approve).
	EventConfirmation EventType = "confirmation_needed"
	// EventQuestion: the agent asked the user a question (Event.Question); answer it with
	// Runner.Answer.
	EventQuestion EventType = "question_asked"
	// EventHandover: the agent handed the tab over to the person (Event.Handover); resume
	// with Runner.Continue.
	EventHandover EventType = "handover_requested"
	// EventAnswer: the task finished with an answer (or a failure reason in Error).
	EventAnswer EventType = "answer"
	// EventText: streamed model prose (when streaming is on).
	EventText EventType = "text"
)

// Event is one live update about a task, ready to be sent as JSON (e.g. over SSE).
type Event struct {
	Type   EventType  `json:"type"`
	TaskID string     `json:"taskId"`
	Time   time.Time  `json:"time"`
	Status Status     `json:"status,omitempty"`
	Plan   []PlanItem `json:"plan,omitempty"`
	Step   *Step      `json:"step,omitempty"`
	Answer string     `json:"answer,omitempty"`
	Error  string     `json:"error,omitempty"`
	Text   string     `json:"text,omitempty"`
	// Question and Handover come with question_asked and handover_requested.
	Question *Question `json:"question,omitempty"`
	Handover *Handover `json:"handover,omitempty"`
	// Usage comes with the answer: the task's model calls and tokens.
	Usage *Usage `json:"usage,omitempty"`
}

// Bus is a small publish/subscribe hub for events. Publishing never blocks: a subscriber whose
// buffer is full misses events (counted by Dropped), so a slow SSE client cannot stall a task.
type Bus struct {
	mu      sync.Mutex
	subs    map[int]*subscriber
	next    int
	dropped atomic.Int64
}

type subscriber struct {
	taskID string
	ch     chan Event
}

// NewBus returns an empty bus.
func NewBus() *Bus { return &Bus{subs: map[int]*subscriber{}} }

// Subscribe returns a channel of events for taskID ("" for every task) with a buffer of buf
// (default 256), and a function that unsubscribes and closes the channel.
func (b *Bus) Subscribe(taskID string, buf int) (<-chan Event, func()) {
	if buf <= 0 {
		buf = 256
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.next
	b.next++
	s := &subscriber{taskID: taskID, ch: make(chan Event, buf)}
	b.subs[id] = s
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			delete(b.subs, id)
			close(s.ch)
		})
	}
}

// Publish sends e to every matching subscriber without blocking.
func (b *Bus) Publish(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, s := range b.subs {
		if s.taskID != "" && s.taskID != e.TaskID {
			continue
		}
		select {
		case s.ch <- e:
		default:
			b.dropped.Add(1)
		}
	}
}

// Dropped is the number of events lost to full subscriber buffers.
func (b *Bus) Dropped() int64 { return b.dropped.Load() }
