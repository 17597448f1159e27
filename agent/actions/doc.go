// Package actions is the browser action API that the agent loop, the HTTP API and the command
// line share: a Service over one browser-level CDP connection that takes role snapshots of tabs
// and acts on their elements by ref (e7), with one serial queue per tab (different tabs run in
// parallel).
//
//	svc := actions.New(client, actions.Options{})
//	tabs, _ := svc.Tabs(ctx)
//	snap, _ := svc.Snapshot(ctx, "", snapshot.Options{})           // "" = first tab
//	res, err := svc.Act(ctx, "", actions.Action{Kind: "click", Ref: "e7"})
//
// Everything uses only what a Chrome extension's chrome.debugger allows (no Browser domain), so
// it works the same on the tabrelay relay and on a real Chrome endpoint.
//
// # Action JSON
//
// An Action is a JSON object with a "kind" and the fields that kind needs; HTTP and CLI
// decode straight into it and Act validates it with messages an agent can act on. Refs come
// from the tab's latest snapshot ("e7"; "@e7" and "[ref=e7]" are accepted too).
//
//	{"kind":"snapshot", "snapshot":{"interactive":false,"full":false,"maxDepth":0,"maxChars":0,"scope":"e3","frame":""}}
//	{"kind":"click", "ref":"e7", "button":"left|right|middle", "double":false, "modifiers":["Shift"]}
//	{"kind":"type", "ref":"e3", "text":"hello", "append":false, "slowly":false, "submit":false}
//	{"kind":"press", "key":"Control+A", "ref":"e3"}            // ref optional: focus it first
//	{"kind":"hover", "ref":"e7"}
//	{"kind":"drag", "ref":"e7", "to":"e9"}
//	{"kind":"select", "ref":"e5", "values":["France"]}          // native <select>, ARIA combobox or listbox
//	{"kind":"fill", "fields":[{"ref":"e3","value":"Ann"},{"ref":"e4","value":"true"}]}
//	{"kind":"scroll", "direction":"down|up|left|right", "amount":600, "ref":"e2"}  // ref alone: into view
//	{"kind":"wait", "text":"Saved"} | {"textGone":"Loading"} | {"url":"/done"} | {"state":"load|domcontentloaded|networkidle"} | {"expression":"window.ready"} | {"seconds":2}
//	{"kind":"evaluate", "expression":"document.title"}         // with ref: "el => el.value"
//	{"kind":"resize", "width":1024, "height":768}              // 0,0 restores the window size
//	{"kind":"navigate", "url":"https://example.com"}
//	{"kind":"back"} {"kind":"forward"} {"kind":"reload"}
//	{"kind":"upload", "ref":"e8", "files":["/tmp/a.pdf"]}
//	{"kind":"dialog", "accept":true, "promptText":"yes"}
//	{"kind":"screenshot", "fullPage":false, "ref":"e7", "labels":false, "format":"png|jpeg"}
//	{"kind":"pdf"}
//	{"kind":"console"|"errors"|"network", "limit":50}
//	{"kind":"tabs"} {"kind":"open", "url":"https://example.com"} {"kind":"focus"} {"kind":"close"}
//
// navigate and open load only http, https and about:blank URLs (file: with
// Options.AllowFileURLs), read the way the browser reads them; anything else fails with an
// error matching ErrURLNotAllowed and the tab is left as it was. Scheme-less input
// ("example.com") becomes https, and relative input ("/docs") resolves against the tab's URL.
// See package urlpolicy.
//
// Every action may set "timeout" (seconds). A Result says what happened in "message", with
// "url"/"title" when they changed, "dialog" when the action opened a JavaScript dialog, and
// "value", "data" (+"mime"), "snapshot", "console", "errors", "requests" or "tabs" as the kind
// calls for. Errors name the element and the way out, e.g.
// `e5 (button "Buy now") is covered by dialog "Cookies"; dismiss it first` or
// `e7 (button "Save") is gone: the page changed; take a new snapshot`.
package actions
