package relay

import (
	"bytes"
	"encoding/json"
)

// Chrome's console helpers ($, $$, $x, keys, values, …: the "command line API") come with
// Runtime.evaluate's includeCommandLineAPI, but not on a chrome.debugger session: there the flag
// is accepted and ignored, and `typeof $x` is "undefined". The relay gives them back by running
// such an expression inside a with-scope that holds the helpers. As in Chrome, a name the page
// defines itself (jQuery's $, say) wins over the helper, the helpers exist only while the
// expression runs, and the expression's value (its completion value) is what the evaluate
// returns. Helpers that need DevTools' front end (inspect, copy, queryObjects, debug, monitor,
// getEventListeners, $0…$4, $_) are not emulated.

// cliScope is the with-scope's object: the helpers, shown to the expression only for names the
// global object does not have. It is one line, so that exception positions keep their line
// numbers (columns on the expression's first line shift by its length).
const cliScope = `with (new Proxy({` +
	`$: (s, n) => (n || document).querySelector(s), ` +
	`$$: (s, n) => Array.from((n || document).querySelectorAll(s)), ` +
	`$x: (p, n, t) => { const d = (n && n.ownerDocument) || document; const r = d.evaluate(p, n || d, null, t ?? XPathResult.ANY_TYPE, null); ` +
	`switch (r.resultType) { case XPathResult.NUMBER_TYPE: return r.numberValue; case XPathResult.STRING_TYPE: return r.stringValue; ` +
	`case XPathResult.BOOLEAN_TYPE: return r.booleanValue; } const a = []; ` +
	`if (r.resultType === XPathResult.UNORDERED_NODE_SNAPSHOT_TYPE || r.resultType === XPathResult.ORDERED_NODE_SNAPSHOT_TYPE) { for (let i = 0; i < r.snapshotLength; i++) a.push(r.snapshotItem(i)); } ` +
	`else if (r.resultType === XPathResult.ANY_UNORDERED_NODE_TYPE || r.resultType === XPathResult.FIRST_ORDERED_NODE_TYPE) { if (r.singleNodeValue) a.push(r.singleNodeValue); } ` +
	`else { for (let x = r.iterateNext(); x; x = r.iterateNext()) a.push(x); } return a; }, ` +
	`keys: (o) => Object.keys(o), values: (o) => Object.values(o), ` +
	`dir: (...a) => console.dir(...a), dirxml: (...a) => console.dirxml(...a), table: (...a) => console.table(...a), clear: () => console.clear(), ` +
	`profile: (...a) => console.profile(...a), profileEnd: (...a) => console.profileEnd(...a)` +
	`}, {has: (h, k) => typeof k === 'string' && Object.hasOwn(h, k) && !(k in globalThis)})) {`

// withCommandLineAPI returns the params of a Runtime.evaluate with the console helpers in scope
// when they ask for them (includeCommandLineAPI) and the rewrite keeps the expression's meaning:
// not in REPL mode (top-level await and re-declarable lets need the expression at the top level).
// Other params are returned unchanged.
func withCommandLineAPI(params []byte) []byte {
	if !bytes.Contains(params, []byte(`"includeCommandLineAPI"`)) {
		return params
	}
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil {
		return params
	}
	var on, repl bool
	var expr string
	if json.Unmarshal(p["includeCommandLineAPI"], &on) != nil || !on ||
		p["replMode"] != nil && json.Unmarshal(p["replMode"], &repl) == nil && repl ||
		json.Unmarshal(p["expression"], &expr) != nil {
		return params
	}
	e, err := json.Marshal(cliScope + expr + "\n}")
	if err != nil {
		return params
	}
	p["expression"] = e
	out, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return out
}
