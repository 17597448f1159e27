package relay

import (
	"context"
	"errors"
	"sync"
)

// errOutboxClosed ends a connection's writer.
var errOutboxClosed = errors.New("connection closed")

// outbox is a connection's bounded queue of outgoing messages. Pushing never blocks: past the byte
// limit the push fails and the owner disconnects the slow reader. Client outboxes also share a
// queueBudget: past it, the largest queue is cut (see queueBudget.charge).
type outbox struct {
	mu      sync.Mutex
	q       [][]byte
	bytes   int // queued, not yet taken
	taken   int // taken by the writer, not yet released
	max     int
	closed  bool // the writer ends once the queue is drained
	dropped bool // the queue was discarded: nothing more is queued nor written
	writing bool // a goroutine is writing a batch: others wait for it
	wake    chan struct{}

	// budget is the shared budget this outbox counts against (nil: none); onCut is called, in
	// a goroutine of its own, when the budget cut this outbox, with the bytes it held.
	budget *queueBudget
	onCut  func(held int)
	// writing and wrote, when set, are told of each message just before (sending) and just after (wrote) it is
	// written (per-leg tracing, see legs.go: the extension's leg starts before its write, as
	// its answer can be read before the write call returns).
	sending, wrote func(msg []byte)
	// join, when set, may turn the messages taken into fewer frames (see batchFrames).
	join func(msgs [][]byte) [][]byte
}

func newOutbox(max int) *outbox { return &outbox{max: max, wake: make(chan struct{}, 1)} }

// push queues b; it fails when the outbox is closed or past its byte limit (the queue and the
// batch being written together).
func (o *outbox) push(b []byte) bool {
	o.mu.Lock()
	if o.closed || o.dropped || o.bytes+o.taken+len(b) > o.max {
		o.mu.Unlock()
		return false
	}
	o.q = append(o.q, b)
	o.bytes += len(b)
	budget := o.budget
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
	if budget != nil {
		budget.charge(len(b))
	}
	return true
}

// take waits until messages are queued and no other goroutine is writing, then returns all of
// them; the caller holds the writer role until it calls release.
func (o *outbox) take(ctx context.Context) ([][]byte, error) {
	for {
		o.mu.Lock()
		if !o.writing && len(o.q) > 0 {
			o.writing = true
			q := o.q
			o.taken += o.bytes
			o.q, o.bytes = nil, 0
			join := o.join
			o.mu.Unlock()
			if join != nil && len(q) > 1 {
				q = join(q)
			}
			return q, nil
		}
		closed := (o.closed || o.dropped) && len(o.q) == 0
		o.mu.Unlock()
		if closed {
			return nil, errOutboxClosed
		}
		select {
		case <-o.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release gives up the writer role taken by take, waking the next writer if more came.
func (o *outbox) release() {
	o.mu.Lock()
	o.writing = false
	freed := o.taken
	o.taken = 0
	more := len(o.q) > 0
	budget := o.budget
	o.mu.Unlock()
	if budget != nil {
		budget.credit(freed)
	}
	if more {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
}

// isClosed reports whether close or drop was called (a failed push then is no sign of a slow
// reader).
func (o *outbox) isClosed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed || o.dropped
}

// isDropped reports whether the queue was discarded: the writer should stop writing.
func (o *outbox) isDropped() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dropped
}

// size is what the outbox holds: the queue and the batch being written.
func (o *outbox) size() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bytes + o.taken
}

// close lets the writer drain what is queued, then end.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.signal()
}

// drop discards the queue and refuses everything from now on, leaving the budget. It returns the
// bytes the outbox held (queued and being written); the batch being written stays in the
// writer's hands until the connection ends.
func (o *outbox) drop() int {
	o.mu.Lock()
	held := o.bytes + o.taken
	if o.dropped {
		o.mu.Unlock()
		return held
	}
	o.dropped = true
	freed := o.bytes
	o.q, o.bytes = nil, 0
	budget := o.budget
	o.mu.Unlock()
	if budget != nil {
		budget.leave(o, freed)
	}
	o.signal()
	return held
}

func (o *outbox) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// queueBudget is one memory budget for every client's outbox together: when what they hold
// passes max, the largest is cut (dropped, its client disconnected as too slow) until the rest
// fits. A batch being written counts until it is written.
type queueBudget struct {
	mu      sync.Mutex
	max     int
	used    int
	members map[*outbox]struct{}
}

func newQueueBudget(max int) *queueBudget {
	return &queueBudget{max: max, members: map[*outbox]struct{}{}}
}

// join makes o count against the budget; onCut is called (in a goroutine) if the budget cuts it.
func (b *queueBudget) join(o *outbox, onCut func(held int)) {
	o.mu.Lock()
	o.budget, o.onCut = b, onCut
	o.mu.Unlock()
	b.mu.Lock()
	b.members[o] = struct{}{}
	b.mu.Unlock()
}

// leave removes o, whose queue held freed bytes besides its batch being written.
func (b *queueBudget) leave(o *outbox, freed int) {
	o.mu.Lock()
	taken := o.taken
	o.budget = nil
	o.mu.Unlock()
	b.mu.Lock()
	if _, ok := b.members[o]; ok {
		delete(b.members, o)
		b.used -= freed + taken
	}
	b.mu.Unlock()
}

func (b *queueBudget) credit(n int) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// charge counts n more bytes and cuts the largest outboxes while the total is past the budget.
func (b *queueBudget) charge(n int) {
	b.mu.Lock()
	b.used += n
	over := b.used > b.max
	b.mu.Unlock()
	for over {
		victim := b.largest()
		if victim == nil {
			return
		}
		held := victim.drop()
		if victim.onCut != nil {
			go victim.onCut(held)
		}
		b.mu.Lock()
		over = b.used > b.max
		b.mu.Unlock()
	}
}

// largest returns the member holding the most bytes, or nil when none holds any.
func (b *queueBudget) largest() *outbox {
	b.mu.Lock()
	members := make([]*outbox, 0, len(b.members))
	for o := range b.members {
		members = append(members, o)
	}
	b.mu.Unlock()
	var best *outbox
	bestSize := 0
	for _, o := range members {
		if s := o.size(); s > bestSize {
			best, bestSize = o, s
		}
	}
	return best
}

// total is the bytes every member holds together.
func (b *queueBudget) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Outbox is the read side of a client's outgoing queue, for transports.
type Outbox struct{ o *outbox }

// Take waits for outgoing messages and returns all that are queued; call Release once they are
// written. It fails once the client was dropped and everything queued before was taken.
func (b *Outbox) Take(ctx context.Context) ([][]byte, error) { return b.o.take(ctx) }

// Release ends the writer role taken by Take.
func (b *Outbox) Release() { b.o.release() }

// Dropped reports whether the hub discarded the queue (the client was cut as too slow): the
// writer should stop writing the batch it holds and close the connection.
func (b *Outbox) Dropped() bool { return b.o.isDropped() }
