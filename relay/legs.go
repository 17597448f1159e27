package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// LegTrace is one client command's way through the relay and the extension, each field the
// time (Unix nanoseconds; 0 when not seen) it passed one point. It is recorded only when
// HubOptions.TraceLegs is on (the benchmark's per-leg mode); the extension's four times come
// from its own clock (see PROTOCOL.md, "Tracing a command's legs").
type LegTrace struct {
	Client   string `json:"client"`
	ClientID int64  `json:"clientId"` // the command's id as the client sent it
	Method   string `json:"method"`
	// RelayIn: the relay read the client's frame.
	RelayIn int64 `json:"relayIn"`
	// ToExtension: the relay wrote the request to the extension's socket.
	ToExtension int64 `json:"toExtension"`
	// ExtReceived: the extension's socket handler got the request.
	ExtReceived int64 `json:"extReceived"`
	// ExtSendCommand: the extension called chrome.debugger.sendCommand.
	ExtSendCommand int64 `json:"extSendCommand"`
	// ExtCallback: sendCommand's answer reached the extension.
	ExtCallback int64 `json:"extCallback"`
	// ExtSent: the extension handed the response to its socket.
	ExtSent int64 `json:"extSent"`
	// RelayReceived: the relay read the extension's response.
	RelayReceived int64 `json:"relayReceived"`
	// ClientSent: the relay wrote the answer to the client's socket.
	ClientSent int64 `json:"clientSent"`
}

// maxLegTraces bounds the traces kept until read (TakeLegTraces).
const maxLegTraces = 1 << 17

// legKey names a command by its client and the id the client gave it.
type legKey struct {
	c  *Client
	id int64
}

// legTracer records LegTraces. Its own mutex: the write loops report writes without h.mu.
type legTracer struct {
	mu       sync.Mutex
	byExt    map[int64]*LegTrace  // by extension request id, until the extension answers
	byClient map[legKey]*LegTrace // until the answer is written to the client
	done     []LegTrace
}

func newLegTracer() *legTracer {
	return &legTracer{byExt: map[int64]*LegTrace{}, byClient: map[legKey]*LegTrace{}}
}

// start begins the trace of a command forwarded as extension request extID.
func (l *legTracer) start(extID int64, c *Client, clientID int64, method string, in int64) {
	tr := &LegTrace{Client: c.name, ClientID: clientID, Method: method, RelayIn: in}
	l.mu.Lock()
	l.byExt[extID] = tr
	l.byClient[legKey{c, clientID}] = tr
	l.mu.Unlock()
}

// wroteExtension notes that msg, a request to the extension or a batch frame of them, is
// being written.
func (l *legTracer) wroteExtension(msg []byte) {
	now := time.Now().UnixNano()
	if len(msg) > 0 && msg[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(msg, &batch) == nil {
			for _, m := range batch {
				l.wroteExtensionAt(m, now)
			}
		}
		return
	}
	l.wroteExtensionAt(msg, now)
}

// wroteExtensionAt notes that msg, one request to the extension, was written at now.
func (l *legTracer) wroteExtensionAt(msg []byte, now int64) {
	e, err := parseEnvelope(msg)
	if err != nil || !e.hasID {
		return
	}
	l.mu.Lock()
	if tr := l.byExt[e.id]; tr != nil && tr.ToExtension == 0 {
		tr.ToExtension = now
	}
	l.mu.Unlock()
}

// answered notes the extension's response to request extID, read at recv, with the
// extension's own times (its "trace" field: four Unix times in milliseconds).
func (l *legTracer) answered(extID, recv int64, ext []byte) {
	var ms []float64
	_ = json.Unmarshal(ext, &ms)
	l.mu.Lock()
	defer l.mu.Unlock()
	tr := l.byExt[extID]
	if tr == nil {
		return
	}
	delete(l.byExt, extID)
	tr.RelayReceived = recv
	if len(ms) == 4 {
		at := func(v float64) int64 { return int64(v * 1e6) }
		tr.ExtReceived, tr.ExtSendCommand, tr.ExtCallback, tr.ExtSent = at(ms[0]), at(ms[1]), at(ms[2]), at(ms[3])
	}
}

// wroteClient notes that msg was written to client c: the answer to a traced command ends its
// trace.
func (l *legTracer) wroteClient(c *Client, msg []byte) {
	now := time.Now().UnixNano()
	e, err := parseEnvelope(msg)
	if err != nil || !e.hasID {
		return
	}
	k := legKey{c, e.id}
	l.mu.Lock()
	defer l.mu.Unlock()
	tr := l.byClient[k]
	if tr == nil || tr.RelayReceived == 0 {
		return
	}
	delete(l.byClient, k)
	tr.ClientSent = now
	if len(l.done) < maxLegTraces {
		l.done = append(l.done, *tr)
	}
}

// forget drops the traces of a client that left.
func (l *legTracer) forget(c *Client) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k := range l.byClient {
		if k.c == c {
			delete(l.byClient, k)
		}
	}
	for id, tr := range l.byExt {
		if tr.Client == c.name {
			delete(l.byExt, id)
		}
	}
}

// take returns the finished traces and forgets them.
func (l *legTracer) take() []LegTrace {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.done
	l.done = nil
	return out
}

// TakeLegTraces returns the commands traced since the last call (nil unless
// HubOptions.TraceLegs is on) and forgets them.
func (h *Hub) TakeLegTraces() []LegTrace {
	if h.legs == nil {
		return nil
	}
	return h.legs.take()
}

// traceRequest marks a request to the extension as traced: the extension answers with its own
// times (see PROTOCOL.md).
func traceRequest(msg []byte) []byte {
	return append(msg[:len(msg)-1], `,"trace":true}`...)
}

// EchoExtension times n round trips through the extension's socket with no browser work in
// them: an attachTab request for targetID, a tab whose debugger is attached, which the
// extension answers at once. Each time runs from the request's queueing to its answer's
// reading (the relay's hand-off to its writer, both socket legs and the extension's message
// handling): the floor under a forwarded command's legs 2 to 7. Only with
// HubOptions.TraceLegs on (the benchmark's per-leg mode).
func (h *Hub) EchoExtension(ctx context.Context, targetID string, n int) ([]time.Duration, error) {
	if h.legs == nil {
		return nil, errors.New("tabrelay: echo needs leg tracing on")
	}
	out := make([]time.Duration, 0, n)
	for range n {
		done := make(chan []byte, 1)
		h.mu.Lock()
		t := h.targets[targetID]
		if t == nil || !t.live {
			h.mu.Unlock()
			return out, fmt.Errorf("tabrelay: echo: target %s is not a shared tab", targetID)
		}
		start := time.Now()
		h.tabRequest(nil, wire.TypeAttachTab, t, func(errRaw []byte) { done <- errRaw }, func() { done <- []byte(`"the extension is not connected"`) })
		h.mu.Unlock()
		select {
		case errRaw := <-done:
			if errRaw != nil {
				return out, fmt.Errorf("tabrelay: echo: the extension answered %s", errRaw)
			}
			out = append(out, time.Since(start))
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	return out, nil
}
