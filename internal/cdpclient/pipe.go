package cdpclient

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Pipe is a Transport over a pair of byte streams carrying NUL-terminated JSON messages, the
// framing of Chrome's --remote-debugging-pipe (the browser reads commands on its file
// descriptor 3 and writes replies and events on its file descriptor 4). Reads are not bounded by
// a context: Close ends a pending Read.
type Pipe struct {
	r *bufio.Reader
	w io.Writer

	wmu     sync.Mutex
	closers []io.Closer
	once    sync.Once
	err     error
}

// NewPipe returns a Pipe that reads messages from r and writes them to w. Close closes both
// (when they are io.Closers).
func NewPipe(r io.Reader, w io.Writer) *Pipe {
	p := &Pipe{r: bufio.NewReaderSize(r, 64<<10), w: w}
	for _, c := range []any{w, r} {
		if c, ok := c.(io.Closer); ok {
			p.closers = append(p.closers, c)
		}
	}
	return p
}

// ErrMessageTooLarge is returned by Pipe.Read for a message longer than ReadLimit.
var ErrMessageTooLarge = errors.New("cdp pipe: message larger than the read limit")

// Read returns the next message, without its NUL terminator.
func (p *Pipe) Read(context.Context) ([]byte, error) {
	var msg []byte
	for {
		chunk, err := p.r.ReadSlice(0)
		msg = append(msg, chunk...)
		if len(msg) > ReadLimit {
			return nil, ErrMessageTooLarge
		}
		switch {
		case err == nil:
			return msg[:len(msg)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, fmt.Errorf("cdp pipe: read: %w", err)
		}
	}
}

// Write sends msg followed by a NUL byte. msg must not contain a NUL byte (JSON text never does:
// encoding/json escapes it).
func (p *Pipe) Write(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if bytes.IndexByte(msg, 0) >= 0 {
		return errors.New("cdp pipe: a message must not contain a NUL byte")
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), 0)
	if _, err := p.w.Write(buf); err != nil {
		return fmt.Errorf("cdp pipe: write: %w", err)
	}
	return nil
}

// Close closes the underlying streams. It is safe to call more than once.
func (p *Pipe) Close() error {
	p.once.Do(func() {
		for _, c := range p.closers {
			if err := c.Close(); err != nil && p.err == nil {
				p.err = err
			}
		}
	})
	return p.err
}
