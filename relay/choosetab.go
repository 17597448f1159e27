package relay

import (
	"context"
	"encoding/json"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// OfferTabWhile is OfferTab for a caller that waits for the person's pick until ctx ends (an
// MCP tool call, say): it asks the extension to offer a choice of tab, when no tab is shared
// and an extension is connected, and counts the caller as waiting until ctx is done. When the
// last one waiting (these callers, and the CDP clients of the browser endpoint that connected
// while no tab was shared) stops before a tab is shared, the extension is told that nobody
// waits any more (chooseTabEnded), so that its tab chooser does not share a tab with no one to
// use it. It reports whether the extension was asked; when it was not, nothing is counted.
func (h *Hub) OfferTabWhile(ctx context.Context, who string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.offerTab(who) {
		return false
	}
	h.tabWaits++
	context.AfterFunc(ctx, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.tabWaits--
		h.log.Debug().Str("client", who).Int("stillWaiting", h.tabWaits).Msg("a wait for a tab ended")
		h.endOfferIfNobodyWaits()
	})
	return true
}

// endOfferIfNobodyWaits tells the extension that nobody waits for a tab any more, when no wait
// held through OfferTabWhile is left, no connected client of the browser endpoint waits for a
// tab, and no tab is shared. Call with h.mu held, after the one that stopped waiting was
// counted out.
func (h *Hub) endOfferIfNobodyWaits() {
	if h.closed || h.ext == nil || h.tabWaits > 0 || len(h.liveTargets()) > 0 {
		return
	}
	for c := range h.clients {
		if c.wantsTab && !c.closed {
			return
		}
	}
	msg, err := json.Marshal(wire.ChooseTabEnded{Type: wire.TypeChooseTabEnded})
	if err != nil || !h.ext.out.push(msg) {
		return
	}
	h.log.Debug().Msg("nobody waits for a tab any more: told the extension")
}
