package relay

import (
	"context"
	"errors"
	"sync"
)

// errOutboxClosed ends a connection's writer.
var errOutboxClosed = errors.New("connection closed")

// outbox is a connection's bounded queue of outgoing messages. Pushing never blocks: past the byte
// limit the push fails and the owner disconnects the slow reader.
type outbox struct {
	mu      sync.Mutex
	q       [][]byte
	bytes   int
	max     int
	closed  bool
	writing bool // a goroutine is writing a batch: others wait for it
	wake    chan struct{}
}

func newOutbox(max int) *outbox { return &outbox{max: max, wake: make(chan struct{}, 1)} }

// push queues b; it fails when the outbox is closed or past its byte limit.
func (o *outbox) push(b []byte) bool {
	o.mu.Lock()
	if o.closed || o.bytes+len(b) > o.max {
		o.mu.Unlock()
		return false
	}
	o.q = append(o.q, b)
	o.bytes += len(b)
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
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
			o.q, o.bytes = nil, 0
			o.mu.Unlock()
			return q, nil
		}
		closed := o.closed && len(o.q) == 0
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
	more := len(o.q) > 0
	o.mu.Unlock()
	if more {
		select {
		case o.wake <- struct{}{}:
		default:
		}
	}
}

// isClosed reports whether close was called (a failed push then is no sign of a slow reader).
func (o *outbox) isClosed() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.closed
}

func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Outbox is the read side of a client's outgoing queue, for transports.
type Outbox struct{ o *outbox }

// Take waits for outgoing messages and returns all that are queued; call Release once they are
// written. It fails once the client was dropped and everything queued before was taken.
func (b *Outbox) Take(ctx context.Context) ([][]byte, error) { return b.o.take(ctx) }

// Release ends the writer role taken by Take.
func (b *Outbox) Release() { b.o.release() }
