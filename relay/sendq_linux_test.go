package relay

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// TestSendQueueEmpty reads a real socket's send queue: empty while the peer keeps up, not
// empty once the peer stopped reading and the kernel's buffers filled, empty again after the
// peer read everything.
func TestSendQueueEmpty(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	w, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r := <-accepted
	defer r.Close()
	// wrapped as the server's connections are
	conn := &capConn{Conn: w}

	if _, err := conn.Write(make([]byte, 1024)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the send queue to drain after a small write", func() bool { return sendQueueEmpty(conn) })

	// fill the peer's receive buffer and the send queue
	chunk := make([]byte, 64<<10)
	for {
		_ = w.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		if _, err := w.Write(chunk); err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatal(err)
			}
			break
		}
	}
	if sendQueueEmpty(conn) {
		t.Fatal("the send queue reads empty while the peer reads nothing and writes block")
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	waitFor(t, "the send queue to drain once the peer reads", func() bool { return sendQueueEmpty(conn) })

	if sendQueueEmpty(struct{ net.Conn }{w}) {
		t.Fatal("a connection that does not give its socket reads as drained")
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
