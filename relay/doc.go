// Package relay makes the tabs a user shared through the tabrelay extension look like a Chrome
// DevTools endpoint. The Hub joins the one extension connection (speaking the protocol in
// relay/wire) with any number of CDP clients, each with its own session and message ids, its own
// events, and cleanup of what it switched on when it leaves. The Server puts HTTP discovery
// (/json/*), the browser-level /cdp endpoint, one /devtools/page/<id> endpoint per tab and per
// out-of-process iframe of a tab, and the /extension link behind loopback-only Host checks, an
// Origin policy and the pairing secret.
//
// The relay ends a CDP client's WebSocket with 1000 when the client's work is over (it sent
// Browser.close, or the tab of its page endpoint is no longer shared), 1001 when the server is
// shutting down, 1008 when the client stopped reading while its messages piled up, and 1009 for
// a message over the size limit; the close reason says which in words. A client too slow to
// read (its queue past HubOptions.MaxQueueBytes, all queues together past
// MaxQueueTotalBytes — the largest is cut first —, or a write to it stalled for
// Options.WriteTimeout) gets 1008 "tabrelay: client too slow: N MB queued" after what was already
// on its way; its queue is dropped at once.
//
// While shared tabs may be about to come back — the server just started, the extension is
// reconnecting (a service-worker restart) — requests for them wait, up to the grace period,
// instead of failing (see Hub.WaitTarget).
package relay
