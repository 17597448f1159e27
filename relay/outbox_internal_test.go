package relay

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestOutboxFlush checks when a goroutine that queued messages writes them itself: only with a
// writer installed, nobody else writing and a batch the connection takes without blocking;
// otherwise the writer goroutine is woken, and nothing is written twice or lost.
func TestOutboxFlush(t *testing.T) {
	tests := []struct {
		name        string
		install     bool
		cheap       bool
		otherWrites bool // another goroutine holds the writer role
		wantThrough int  // messages written by flush
		wantWoken   bool // the writer goroutine was woken
	}{
		{"written by the goroutine that queued", true, true, false, 2, false},
		{"no writer installed: woken", false, true, false, 0, true},
		{"not cheap: woken", true, false, false, 0, true},
		{"another writer: left to it", true, true, true, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newOutbox(1 << 20)
			var wrote [][]byte
			if tt.install {
				o.setThrough(func(msgs [][]byte) { wrote = append(wrote, msgs...) }, func(int) bool { return tt.cheap })
			}
			var held []*outbox
			o.held = func(x *outbox) bool { held = append(held, x); return true }
			if tt.otherWrites {
				o.push([]byte("first"))
				if _, err := o.take(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			o.push([]byte("a"))
			o.push([]byte("b"))
			select {
			case <-o.wake:
				t.Fatal("a held push woke the writer")
			default:
			}
			o.flush()
			if len(wrote) != tt.wantThrough {
				t.Fatalf("flush wrote %d messages, want %d", len(wrote), tt.wantThrough)
			}
			woken := false
			select {
			case <-o.wake:
				woken = true
			default:
			}
			if woken != tt.wantWoken {
				t.Fatalf("writer woken: %v, want %v", woken, tt.wantWoken)
			}
			if tt.otherWrites {
				o.release() // the other writer ends and finds the queue
				msgs, err := o.take(context.Background())
				if err != nil || len(msgs) != 2 {
					t.Fatalf("after the other writer, take gave %d messages, %v; want the 2 queued", len(msgs), err)
				}
				o.release()
			}
			if o.size() != 0 && tt.wantThrough > 0 {
				t.Fatalf("%d bytes still counted after the flush", o.size())
			}
		})
	}
}

// TestOutboxCloseWaitsForFlush: a writer goroutine told the outbox closed while another
// goroutine is writing through does not end (and close the socket) before that write ends.
func TestOutboxCloseWaitsForFlush(t *testing.T) {
	o := newOutbox(1 << 20)
	inWrite, finish := make(chan struct{}), make(chan struct{})
	o.setThrough(func([][]byte) { close(inWrite); <-finish }, func(int) bool { return true })
	o.push([]byte("last answer"))
	go o.flush()
	<-inWrite
	o.close()
	ended := make(chan error, 1)
	go func() { _, err := o.take(context.Background()); ended <- err }()
	select {
	case err := <-ended:
		t.Fatalf("the writer ended (%v) while a message was being written through", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(finish)
	select {
	case err := <-ended:
		if !errors.Is(err, errOutboxClosed) {
			t.Fatalf("take after the write: %v, want errOutboxClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the writer did not end after the write through ended")
	}
}
