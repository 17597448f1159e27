package relay

import (
	"context"
	"time"
)

// A gap is a time when shared tabs may be about to (re)appear: the hub just started and the
// extension has not connected yet, the extension disconnected (service-worker restart, network
// blip) and its grace period runs, or the extension just (re)connected and is announcing its
// tabs again. During a gap, a request for a target the hub does not have live (yet) waits for
// it instead of failing: new page-endpoint connections and the agent's tab lookups (WaitTarget),
// commands on sessions whose tab is away and Target.attachToTarget (park). A gap is bounded:
// HubOptions.Grace from the start or the disconnect, gapSettle from the extension's hello.

// gapSettle is how long after the extension's hello the hub still waits for tabs it may
// announce again: it announces them right after hello (about 0.2 s for a few tabs).
const gapSettle = 3 * time.Second

// parkedReq is a request waiting for its target during a gap.
type parkedReq struct {
	c     *Client
	retry func()
}

// inGap reports whether a missing target may still appear. Call with h.mu held.
func (h *Hub) inGap() bool {
	return !h.closed && time.Now().Before(h.gapUntil)
}

// setGap makes the gap last until until (replacing the current end), and arms the timer that
// retries parked requests when it ends. Call with h.mu held.
func (h *Hub) setGap(until time.Time) {
	h.gapUntil = until
	if h.gapTimer != nil {
		h.gapTimer.Stop()
	}
	h.gapTimer = time.AfterFunc(time.Until(until), func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.unpark()
	})
}

// park keeps retry, a request of c for a target that is not live, until the target is back or
// the gap ends, when it reports true; outside a gap it reports false and the caller fails the
// request. retry runs with h.mu held and must park again, succeed or fail. Call with h.mu held.
func (h *Hub) park(c *Client, retry func()) bool {
	if !h.inGap() {
		return false
	}
	h.parked = append(h.parked, parkedReq{c: c, retry: retry})
	h.log.Debug().Str("client", c.name).Int("parked", len(h.parked)).Time("until", h.gapUntil).Msg("a request waits for its tab to come back")
	return true
}

// unpark retries every parked request: those whose target is live now go through, the others
// park again while the gap lasts, else fail. Call with h.mu held.
func (h *Hub) unpark() {
	ps := h.parked
	h.parked = nil
	for _, p := range ps {
		if p.c.closed {
			continue
		}
		p.retry()
	}
}

// liveTarget reports whether id is a live shared tab, its tab target, or a child target of one.
// Call with h.mu held.
func (h *Hub) liveTarget(id string) bool {
	if t, _ := h.lookup(id); t != nil {
		return true
	}
	_, ch := h.lookupChild(id)
	return ch != nil
}

// WaitTarget waits, during a gap (see above), until id is a live shared tab (or its tab target,
// or an iframe of one), the gap ends, or ctx ends, and reports whether the target is live.
// Outside a gap it answers at once.
func (h *Hub) WaitTarget(ctx context.Context, id string) bool {
	first := true
	for {
		h.mu.Lock()
		live := h.liveTarget(id)
		left := time.Until(h.gapUntil)
		gap := h.inGap()
		changed := h.changed
		h.mu.Unlock()
		if live {
			return true
		}
		if !gap {
			return false
		}
		if first {
			h.log.Debug().Str("target", id).Dur("upTo", left).Msg("waiting for the tab to come back")
			first = false
		}
		t := time.NewTimer(left)
		select {
		case <-changed:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false
		}
		t.Stop()
	}
}
