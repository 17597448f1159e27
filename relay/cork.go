package relay

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
)

// corkConn batches writes: between cork and uncork, frames the WebSocket library writes are kept
// and sent with one write call. A writer that finds several messages queued sends them together,
// which under load turns one syscall per message into one per batch.
type corkConn struct {
	net.Conn
	mu     sync.Mutex
	corked bool
	buf    []byte
}

const corkLimit = 1 << 20

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked && len(c.buf)+len(p) <= corkLimit {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

func (c *corkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork sends what was kept.
func (c *corkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.flushLocked()
}

func (c *corkConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	// no deadline here: the write loop's stall watchdog ends a write that makes no progress
	// (cutting the client, then closing the socket), after the close frame when it can
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > 4*corkLimit {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}

// corkWriter hands the WebSocket library a corkable connection when it hijacks.
type corkWriter struct {
	http.ResponseWriter
	cc *corkConn
	// accept, when set, replaces the library's Sec-WebSocket-Accept in the 101 answer (see
	// lenientKey).
	accept string
}

func (w *corkWriter) WriteHeader(code int) {
	if code == http.StatusSwitchingProtocols && w.accept != "" {
		w.Header().Set("Sec-WebSocket-Accept", w.accept)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *corkWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("response writer cannot be hijacked")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.cc = &corkConn{Conn: conn}
	return w.cc, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(w.cc, 8192)), nil
}
