// Package relay makes the tabs a user shared through the tabrelay extension look like a Chrome
// DevTools endpoint. The Hub joins the one extension connection (speaking the protocol in
// relay/wire) with any number of CDP clients, each with its own session and message ids, its own
// events, and cleanup of what it switched on when it leaves. The Server puts HTTP discovery
// (/json/*), the browser-level /cdp endpoint, one /devtools/page/<id> endpoint per tab and per
// out-of-process iframe of a tab, and the /extension link behind loopback-only Host checks, an
// Origin policy and the pairing secret.
package relay
