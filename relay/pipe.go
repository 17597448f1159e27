package relay

import (
	"context"
	"errors"
)

// Pipe is an in-process CDP connection to the hub: the agent's way in, without a socket but
// through exactly the same routing as any other client. It satisfies cdpclient.Transport.
type Pipe struct {
	c    *Client
	out  *Outbox
	buf  [][]byte
	done chan struct{}
}

// Pipe connects a new in-process browser-level client. Its sessions hold a tab only while it
// acts: DetachAfter after a session's last command the hub ends it (the client gets
// Target.detachedFromTarget) and lets the tab's debugger go, as when an outside client leaves;
// the client attaches again to act again (see ondemand.go).
func (h *Hub) Pipe(name string) (*Pipe, error) {
	done := make(chan struct{})
	c, err := h.NewClient(name, "", func(int, string) {})
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	c.releases = true
	h.mu.Unlock()
	return &Pipe{c: c, out: c.Outbox(), done: done}, nil
}

// Read returns the next message for the client.
func (p *Pipe) Read(ctx context.Context) ([]byte, error) {
	for len(p.buf) == 0 {
		msgs, err := p.out.Take(ctx)
		if err != nil {
			if errors.Is(err, errOutboxClosed) {
				return nil, errors.New("in-process CDP connection closed")
			}
			return nil, err
		}
		p.out.Release()
		p.buf = msgs
	}
	m := p.buf[0]
	p.buf = p.buf[1:]
	return m, nil
}

// Write hands one message from the client to the hub. msg must not be modified afterwards.
func (p *Pipe) Write(_ context.Context, msg []byte) error {
	p.c.Handle(msg)
	return nil
}

// Close leaves the hub, undoing what the client switched on.
func (p *Pipe) Close() error {
	p.c.Leave()
	return nil
}
