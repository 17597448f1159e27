package relay

import (
	"encoding/json"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
)

// DOM node ids belong to a CDP session in Chrome: each session's DOM agent has its own. Through
// chrome.debugger every client of a tab shares the extension's one session, and DOM.getDocument
// there discards every node id handed out so far ("Could not find node with given id" for the
// other clients; chromedp, which queries by node id, hangs). So while a client holds the ids of
// a document, the hub does not forward another client's DOM.getDocument: it describes the
// document itself (DOM.describeNode, same depth and pierce), binds the described nodes with
// DOM.pushNodesByBackendIdsToFrontend and answers with the tree as getDocument gives it, with
// those node ids. Ids are then shared between the clients, but none resets them; a navigation
// (DOM.documentUpdated) still resets everyone's, as in Chrome.
//
// Known difference: a <template>'s content fragment cannot be bound by backend id; it is
// answered with nodeId 0.

// domDoc is the document whose node ids clients hold in one extension session of a tab.
type domDoc struct {
	backendID int64 // the document's backend node id (stable while the document lives)
}

// noteDocument records, from a forwarded DOM.getDocument's answer, the document whose node ids
// its client now holds. Call with h.mu held.
func (t *target) noteDocument(ext string, result []byte) {
	var res struct {
		Root struct {
			BackendNodeID int64 `json:"backendNodeId"`
		} `json:"root"`
	}
	if json.Unmarshal(result, &res) == nil && res.Root.BackendNodeID != 0 {
		t.docs[ext] = &domDoc{backendID: res.Root.BackendNodeID}
	}
}

// shareDocument answers r, a DOM.getDocument, without resetting the node ids another client
// of the tab holds (see the top of this file). It reports whether it took r; if not, r is
// forwarded. Call with h.mu held.
func (h *Hub) shareDocument(r *req) bool {
	s, t := r.s, r.s.t
	doc := t.docs[s.ext]
	users := t.enabled[s.ext]["DOM"]
	if doc == nil || len(users)-btoi(hasSession(users, s)) == 0 {
		return false // nobody else holds node ids: Chrome's own reset is harmless
	}
	var par struct {
		Depth  *int64 `json:"depth"`
		Pierce bool   `json:"pierce"`
	}
	if len(r.params) > 0 && json.Unmarshal(r.params, &par) != nil {
		return false // Chrome tells the client what is wrong
	}
	depth := int64(2) // getDocument's default
	if par.Depth != nil {
		depth = *par.Depth
	}
	if depth == 0 || depth < -1 {
		return false // Chrome refuses it
	}
	if !s.enabled["DOM"] {
		h.markEnabled(s, "DOM") // getDocument switches DOM events on for its client
	}
	n := s.opened()
	r.c.inflight++
	s.emulating++
	s.quietDOM++ // the binding's setChildNodes are not for this client: getDocument sends none
	finished := false
	finish := func(send func()) {
		if finished {
			return
		}
		finished = true
		s.quietDOM--
		s.emulating--
		r.c.inflight--
		if _, ok := r.c.sessions[s.id]; ok && !r.c.closed {
			s.inOrder(n, send)
		}
		s.answered(n)
	}
	// fallback forwards the command after all (the document went away meanwhile, say)
	fallback := func() {
		if finished {
			return
		}
		finished = true
		s.quietDOM--
		s.emulating--
		p := &pending{c: r.c, clientID: r.id, replySID: r.sid, s: s, method: r.method, target: t, ext: s.ext, n: n}
		if !h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, s.ext, r.method, r.params) }, h.opts.CommandTimeout) {
			r.c.inflight--
			s.inOrder(n, func() { r.fail(codeServerError, "tabrelay: the browser extension is not connected") })
			s.answered(n)
		}
	}
	describe := func(depth int64, done func(node map[string]any)) bool {
		params := mustJSON(&dom.DescribeNodeParams{BackendNodeID: cdp.BackendNodeID(doc.backendID), Depth: new(depth), Pierce: new(par.Pierce)})
		p := &pending{method: dom.CommandDescribeNode, target: t, done: func(result, errRaw []byte) {
			var res struct {
				Node map[string]any `json:"node"`
			}
			if errRaw != nil || json.Unmarshal(result, &res) != nil || res.Node == nil {
				done(nil)
				return
			}
			done(res.Node)
		}}
		return h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, s.ext, p.method, params) }, h.opts.CommandTimeout)
	}
	var tree, deeper map[string]any
	waiting := 1
	got := func() {
		if waiting--; waiting > 0 || finished {
			return
		}
		if tree == nil || (depth != -1 && deeper == nil) {
			fallback()
			return
		}
		if deeper != nil {
			inlineTextChildren(tree, deeper)
		}
		var ids []cdp.BackendNodeID
		walkNodes(tree, nil, func(node, _ map[string]any) {
			if id, ok := node["backendNodeId"].(float64); ok {
				ids = append(ids, cdp.BackendNodeID(id))
			}
		})
		params := mustJSON(&dom.PushNodesByBackendIDsToFrontendParams{BackendNodeIDs: ids})
		p := &pending{method: dom.CommandPushNodesByBackendIDsToFrontend, target: t, done: func(result, errRaw []byte) {
			var res struct {
				NodeIDs []int64 `json:"nodeIds"`
			}
			if errRaw != nil || json.Unmarshal(result, &res) != nil || len(res.NodeIDs) != len(ids) {
				fallback()
				return
			}
			byBackend := make(map[cdp.BackendNodeID]int64, len(ids))
			for i, b := range ids {
				byBackend[b] = res.NodeIDs[i]
			}
			walkNodes(tree, nil, func(node, parent map[string]any) {
				if b, ok := node["backendNodeId"].(float64); ok {
					node["nodeId"] = byBackend[cdp.BackendNodeID(b)]
				}
				if _, ok := node["parentId"]; ok && parent != nil {
					node["parentId"] = parent["nodeId"]
				}
			})
			result = mustJSON(map[string]any{"root": tree})
			finish(func() { r.ok(result) })
		}}
		if !h.request(p, func(id int64) []byte { return extCDPMsg(id, t.id, s.ext, p.method, params) }, h.opts.CommandTimeout) {
			fallback()
		}
	}
	ok := describe(depth, func(node map[string]any) { tree = node; got() })
	if ok && depth != -1 {
		// getDocument also gives a node at the depth limit its only child when that is text
		// (Blink "pretends its children were requested"); describeNode does not: one level
		// more tells which
		waiting++
		ok = describe(depth+1, func(node map[string]any) { deeper = node; got() })
	}
	if !ok {
		waiting = -1 // answers that may still come are ignored
		fallback()
	}
	return true
}

// nodeFields are the fields of a DOM.Node that hold nodes, in the order Chrome sends them.
var nodeListFields = []string{"children", "shadowRoots", "pseudoElements"}
var nodeFields = []string{"contentDocument", "templateContent", "importedDocument"}

// walkNodes calls fn on node and every node below it, with the node holding it (nil for the
// root): children, shadow roots and pseudo-elements have their host as parent; a content
// document, template content or imported document has its owner.
func walkNodes(node, parent map[string]any, fn func(node, parent map[string]any)) {
	fn(node, parent)
	for _, f := range nodeListFields {
		list, _ := node[f].([]any)
		for _, ch := range list {
			if m, ok := ch.(map[string]any); ok {
				walkNodes(m, node, fn)
			}
		}
	}
	for _, f := range nodeFields {
		if m, ok := node[f].(map[string]any); ok {
			walkNodes(m, node, fn)
		}
	}
}

// inlineTextChildren gives the nodes of tree described without children (at the depth limit)
// their only child from deeper (the same tree one level deeper) when that child is text, as
// getDocument does.
func inlineTextChildren(tree, deeper map[string]any) {
	byBackend := map[float64]map[string]any{}
	walkNodes(deeper, nil, func(node, _ map[string]any) {
		if b, ok := node["backendNodeId"].(float64); ok {
			byBackend[b] = node
		}
	})
	walkNodes(tree, nil, func(node, _ map[string]any) {
		if _, has := node["children"]; has || node["childNodeCount"] != float64(1) {
			return
		}
		b, _ := node["backendNodeId"].(float64)
		d := byBackend[b]
		if d == nil {
			return
		}
		list, _ := d["children"].([]any)
		if len(list) != 1 {
			return
		}
		if ch, ok := list[0].(map[string]any); ok && ch["nodeType"] == float64(3) {
			node["children"] = list
		}
	})
}

// quietEvent reports whether event method is one session s does not get while the hub binds
// nodes for its DOM.getDocument (see shareDocument).
func (s *session) quietEvent(method string) bool {
	return s.quietDOM > 0 && method == "DOM.setChildNodes"
}

// forgetDocument drops what the hub knows of the node ids held in t's extension session ext
// (navigation, DOM switched off, re-attach). Call with h.mu held.
func (t *target) forgetDocument(ext string) { delete(t.docs, ext) }
