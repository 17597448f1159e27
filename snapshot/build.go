package snapshot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// axText is the value of a CDP AXValue as text: a JSON string unquoted, null as "", any other
// JSON value as written (true, 3). It is decoded once, where json.RawMessage kept a copy of the
// bytes to decode again on every read.
type axText string

// UnmarshalJSON implements json.Unmarshaler.
func (v *axText) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) >= 2 && b[0] == '"':
		if bytes.IndexByte(b, '\\') < 0 {
			*v = axText(b[1 : len(b)-1])
			return nil
		}
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("AX value: %w", err)
		}
		*v = axText(s)
	case string(b) == "null":
		*v = ""
	default:
		*v = axText(b)
	}
	return nil
}

// axValue is a CDP Accessibility.AXValue (its value; type and sources are not read).
type axValue struct {
	Value axText `json:"value"`
}

func (v *axValue) str() string {
	if v == nil {
		return ""
	}
	return string(v.Value)
}

type axProp struct {
	Name  string  `json:"name"`
	Value axValue `json:"value"`
}

// axNode is a CDP Accessibility.AXNode (the fields snapshots use).
type axNode struct {
	NodeID     string   `json:"nodeId"`
	Ignored    bool     `json:"ignored"`
	Role       *axValue `json:"role"`
	Name       *axValue `json:"name"`
	Value      *axValue `json:"value"`
	Properties []axProp `json:"properties"`
	ParentID   string   `json:"parentId"`
	ChildIDs   []string `json:"childIds"`
	BackendID  int      `json:"backendDOMNodeId"`
	FrameID    string   `json:"frameId"`
}

// node is one element of a built snapshot tree.
type node struct {
	role    string // role shown
	axRole  string // role as the accessibility tree reports it (identity checks)
	name    string // name shown and matched (text-derived for script-clickable elements)
	axName  string // name as the accessibility tree reports it
	value   string
	url     string
	states  []string
	text    string // StaticText content (role "text")
	options []string
	kids    []*node

	frame     *Frame
	backendID int
	pid       int // the in-page walker's id of the element (in-page builds; 0 otherwise)
	wantRef   bool
	ref       string
	ctx       string // text of the row or item around it (re-resolution)
	nth       int
	count     int
	modal     bool
	below     bool // below the visible viewport (set by finish from the page state)
	hoist     bool // always replaced by its children in output (the rendered root)
	focused   bool
	password  bool // an <input type=password> (the accessibility tree shows it as a plain textbox)
	// ariaHidden marks an element with aria-hidden=true that is shown on screen: the
	// accessibility tree leaves it out, the outline lists it (and what is in it) marked
	ariaHidden bool
	inferred   string    // a name the element lacks, inferred (in-page builds; see Node.Inferred)
	inferredBy Inference // where inferred comes from
	y          float64   // document y of the element's box (main frame only), -1 if unknown
	bottom     float64
}

func (n *node) isText() bool { return n.role == "text" }

// interactiveRoles get a ref whenever they appear.
var interactiveRoles = map[string]bool{
	"button": true, "link": true, "textbox": true, "searchbox": true, "checkbox": true, "radio": true,
	"combobox": true, "listbox": true, "option": true, "menuitem": true, "menuitemcheckbox": true,
	"menuitemradio": true, "slider": true, "spinbutton": true, "switch": true, "tab": true,
	"treeitem": true, "ToggleButton": true, "PopUpButton": true, "ColorWell": true, "Date": true,
	"DateTime": true, "InputTime": true, "DisclosureTriangle": true, "textField": true,
}

// aimRoles get a ref when named: not interactive, but useful to aim at (scroll to, screenshot, scope).
// Headings get none: they are many, and text is enough to find them.
var aimRoles = map[string]bool{"dialog": true, "alertdialog": true, "Iframe": true}

// leafRoles are shown without children: their content is their value.
var leafRoles = map[string]bool{
	"textbox": true, "searchbox": true, "spinbutton": true, "slider": true, "Date": true, "DateTime": true,
	"InputTime": true, "ColorWell": true, "textField": true, "combobox": true, "PopUpButton": true,
}

// structural roles are dropped (children hoisted) when unnamed in compact output.
var structural = map[string]bool{
	"generic": true, "none": true, "presentation": true, "LabelText": true, "group": true, "Section": true,
	"Div": true, "Pre": true, "Abbr": true, "Ruby": true, "Canvas": true, "Unknown": true, "Legend": false,
	"section": true, "GenericContainer": true, "rowgroup": true, "blockquote": false, "Details": false,
}

// roleNames maps Chromium's internal role names to the names shown.
var roleNames = map[string]string{
	"Iframe": "iframe", "image": "img", "ToggleButton": "button", "PopUpButton": "combobox",
	"ColorWell": "colorpicker", "Date": "date", "DateTime": "datetime", "InputTime": "time",
	"DisclosureTriangle": "summary", "textField": "textbox", "LabelText": "label", "Canvas": "canvas",
	"Legend": "legend", "Details": "group", "Figcaption": "caption", "DescriptionListTerm": "term",
	"DescriptionListDetail": "definition", "Pre": "generic", "Section": "generic", "Div": "generic",
}

// frameData is what one frame contributes to a snapshot.
type frameData struct {
	frame *Frame
	ax    []axNode
	err   error
	click map[int]uint8      // backend id -> clickListener|clickPointer (DOMSnapshot)
	boxes map[int][2]float64 // backend id -> top, bottom (document coordinates)
	pass  map[int]bool       // backend ids of <input type=password> (DOMSnapshot)
}

// Reasons an element is script-clickable.
const (
	clickListener uint8 = 1 << iota // has a click listener (DOMSnapshot isClickable)
	clickPointer                    // outermost element of a cursor:pointer region
)

// domInfo is the part of DOMSnapshot.captureSnapshot a snapshot uses.
type domInfo struct {
	Documents []domDocument `json:"documents"`
	Strings   []string      `json:"strings"`
}

// domDocument is one document (frame) of a DOM snapshot.
type domDocument struct {
	FrameID int `json:"frameId"` // index into Strings
	Nodes   struct {
		ParentIndex   []int `json:"parentIndex"`
		NodeType      []int `json:"nodeType"`
		NodeName      []int `json:"nodeName"`
		BackendNodeID []int `json:"backendNodeId"`
		// Attributes are each node's attributes as name, value string indexes.
		Attributes  [][]int `json:"attributes"`
		IsClickable struct {
			Index []int `json:"index"`
		} `json:"isClickable"`
	} `json:"nodes"`
	Layout struct {
		NodeIndex []int       `json:"nodeIndex"`
		Styles    [][]int     `json:"styles"`
		Bounds    [][]float64 `json:"bounds"`
	} `json:"layout"`
}

// clickables extracts, per frame id, the elements that respond to clicks without an interactive
// role: those with click listeners (DOMSnapshot isClickable) and the outermost elements with
// cursor:pointer. It also returns element boxes and password inputs per frame.
func (d *domInfo) clickables() (map[string]map[int]uint8, map[string]map[int][2]float64, map[string]map[int]bool) {
	clicks := map[string]map[int]uint8{}
	boxes := map[string]map[int][2]float64{}
	passwords := map[string]map[int]bool{}
	str := func(i int) string {
		if i >= 0 && i < len(d.Strings) {
			return d.Strings[i]
		}
		return ""
	}
	for _, doc := range d.Documents {
		n := doc.Nodes
		set := map[int]uint8{}
		bx := map[int][2]float64{}
		count := len(n.BackendNodeID)
		elem := func(i int) bool {
			if i < 0 || i >= count || i >= len(n.NodeType) || n.NodeType[i] != 1 {
				return false
			}
			switch str(n.NodeName[i]) {
			case "HTML", "BODY", "IFRAME", "FRAME", "LABEL":
				return false
			}
			return true
		}
		for _, i := range n.IsClickable.Index {
			if elem(i) {
				set[n.BackendNodeID[i]] |= clickListener
			}
		}
		pointer := make(map[int]bool)
		for li, ni := range doc.Layout.NodeIndex {
			if li < len(doc.Layout.Styles) && len(doc.Layout.Styles[li]) > 0 && str(doc.Layout.Styles[li][0]) == "pointer" {
				pointer[ni] = true
			}
			if li < len(doc.Layout.Bounds) && len(doc.Layout.Bounds[li]) == 4 && ni >= 0 && ni < count {
				b := doc.Layout.Bounds[li]
				bx[n.BackendNodeID[ni]] = [2]float64{b[1], b[1] + b[3]}
			}
		}
		for ni := range pointer {
			if !elem(ni) {
				continue
			}
			// the outermost element of a pointer region: its nearest element ancestor has no pointer
			p := -1
			if ni < len(n.ParentIndex) {
				p = n.ParentIndex[ni]
			}
			for p >= 0 && p < count && n.NodeType[p] != 1 {
				if p < len(n.ParentIndex) {
					p = n.ParentIndex[p]
				} else {
					p = -1
				}
			}
			if p >= 0 && pointer[p] {
				continue
			}
			set[n.BackendNodeID[ni]] |= clickPointer
		}
		clicks[str(doc.FrameID)] = set
		boxes[str(doc.FrameID)] = bx
		passwords[str(doc.FrameID)] = d.passwordInputs(n.NodeName, n.BackendNodeID, n.Attributes)
	}
	return clicks, boxes, passwords
}

// passwordInputs returns the backend ids of a document's <input type=password> elements,
// which the accessibility tree does not tell from other text fields.
func (d *domInfo) passwordInputs(names, backend []int, attrs [][]int) map[int]bool {
	var set map[int]bool
	input := map[int]bool{} // string indexes of "INPUT" (or "input" in XML documents)
	for i, s := range d.Strings {
		if len(s) == 5 && strings.EqualFold(s, "input") {
			input[i] = true
		}
	}
	if len(input) == 0 {
		return nil
	}
	for i, name := range names {
		if !input[name] || i >= len(attrs) || i >= len(backend) {
			continue
		}
		a := attrs[i]
		for j := 0; j+1 < len(a); j += 2 {
			if a[j] >= 0 && a[j] < len(d.Strings) && a[j+1] >= 0 && a[j+1] < len(d.Strings) &&
				strings.EqualFold(d.Strings[a[j]], "type") && strings.EqualFold(strings.TrimSpace(d.Strings[a[j+1]]), "password") {
				if set == nil {
					set = map[int]bool{}
				}
				set[backend[i]] = true
				break
			}
		}
	}
	return set
}

// fetch gathers accessibility trees and DOM snapshots for every frame of the tab, in parallel.
// The main frame's tree and the page session's DOM snapshot do not wait for the frame list:
// they start at once, beside Page.getFrameTree.
func (t *Tab) fetch(ctx context.Context) ([]Frame, map[string]*frameData, error) {
	type domResult struct {
		clicks map[string]map[int]uint8
		boxes  map[string]map[int][2]float64
		pass   map[string]map[int]bool
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var doms []domResult
	capture := func(session string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d domInfo
			if err := t.c.Call(ctx, session, "DOMSnapshot.captureSnapshot", map[string]any{"computedStyles": []string{"cursor"}}, &d); err != nil {
				return // clickables are a bonus; the AX tree still works
			}
			clicks, boxes, pass := d.clickables()
			mu.Lock()
			doms = append(doms, domResult{clicks, boxes, pass})
			mu.Unlock()
		}()
	}
	// axTree fetches one frame's tree; frameID "" is the session's main frame.
	axTree := func(session, frameID string, fd *frameData) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			params := map[string]any{}
			if frameID != "" {
				params["frameId"] = frameID
			}
			var r struct {
				Nodes []axNode `json:"nodes"`
			}
			t.enableAX(ctx, session)
			err := t.c.Call(ctx, session, "Accessibility.getFullAXTree", params, &r)
			mu.Lock()
			fd.ax, fd.err = r.Nodes, err
			mu.Unlock()
		}()
	}
	page := t.Session()
	mainData := &frameData{}
	axTree(page, "", mainData)
	capture(page)
	frames, err := t.Frames(ctx)
	if err != nil {
		wg.Wait()
		return nil, nil, err
	}
	data := map[string]*frameData{}
	captured := map[string]bool{page: true}
	for i := range frames {
		f := &frames[i]
		if i == 0 && f.Session == page {
			mu.Lock()
			mainData.frame = f
			mu.Unlock()
			data[f.ID] = mainData
			continue
		}
		fd := &frameData{frame: f}
		data[f.ID] = fd
		axTree(f.Session, f.ID, fd)
		if !captured[f.Session] {
			captured[f.Session] = true
			capture(f.Session)
		}
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	for _, d := range doms {
		for fid, set := range d.clicks {
			if fd := data[fid]; fd != nil {
				fd.click, fd.boxes, fd.pass = set, d.boxes[fid], d.pass[fid]
			}
		}
	}
	main := data[frames[0].ID]
	if main.err != nil {
		return nil, nil, fmt.Errorf("accessibility tree: %w", main.err)
	}
	return frames, data, nil
}

// builder turns per-frame accessibility trees into one snapshot tree.
type builder struct {
	t      *Tab
	ctx    context.Context
	data   map[string]*frameData
	frames []Frame
	done   map[string]bool // frames already grafted
}

func (b *builder) buildFrame(fd *frameData) *node {
	if fd == nil || fd.err != nil || len(fd.ax) == 0 {
		return nil
	}
	b.done[fd.frame.ID] = true
	byID := make(map[string]*axNode, len(fd.ax))
	for i := range fd.ax {
		byID[fd.ax[i].NodeID] = &fd.ax[i]
	}
	root := &fd.ax[0]
	for i := range fd.ax {
		if fd.ax[i].ParentID == "" {
			root = &fd.ax[i]
			break
		}
	}
	r := &node{role: "document", axRole: "RootWebArea", frame: fd.frame, backendID: root.BackendID, y: -1}
	r.name = root.Name.str()
	for _, cid := range root.ChildIDs {
		r.kids = append(r.kids, b.convert(fd, byID, byID[cid], false)...)
	}
	return r
}

// convert converts one AX node (and its subtree); ignored nodes yield their children.
func (b *builder) convert(fd *frameData, byID map[string]*axNode, ax *axNode, inPopup bool) []*node {
	if ax == nil {
		return nil
	}
	role := ax.Role.str()
	var kids []*node
	convertKids := func(popup bool) {
		for _, cid := range ax.ChildIDs {
			kids = append(kids, b.convert(fd, byID, byID[cid], popup)...)
		}
	}
	if role == "InlineTextBox" || role == "LineBreak" {
		return nil
	}
	if ax.Ignored && !(fd.click[ax.BackendID] != 0 && !inPopup) {
		convertKids(inPopup)
		return kids
	}
	if role == "StaticText" {
		txt := collapse(ax.Name.str())
		if txt == "" {
			return nil
		}
		return []*node{{role: "text", text: txt, frame: fd.frame, y: -1}}
	}
	n := &node{axRole: role, role: role, name: collapse(ax.Name.str()), frame: fd.frame, backendID: ax.BackendID, y: -1}
	n.axName = n.name
	if v, ok := roleNames[role]; ok {
		n.role = v
	}
	n.value = collapse(ax.Value.str())
	n.password = fd.pass[ax.BackendID]
	var focusable, editable bool
	for _, p := range ax.Properties {
		v := p.Value.str()
		switch p.Name {
		case "checked", "pressed":
			if v == "true" {
				n.states = append(n.states, p.Name)
			} else if v == "mixed" {
				n.states = append(n.states, p.Name+"=mixed")
			}
		case "selected", "expanded", "disabled", "required", "readonly", "multiselectable", "multiline":
			if v == "true" && !(p.Name == "readonly" && role == "RootWebArea") {
				n.states = append(n.states, p.Name)
			}
		case "level":
			if role == "heading" {
				n.states = append(n.states, "level="+v)
			}
		case "modal":
			n.modal = v == "true"
		case "focused":
			n.focused = v == "true"
		case "focusable":
			focusable = v == "true"
		case "editable":
			editable = v != "" && v != "false"
		case "url":
			n.url = v
		case "valuetext":
			if v != "" {
				n.value = collapse(v)
			}
		}
	}
	if fd.boxes != nil {
		if bx, ok := fd.boxes[ax.BackendID]; ok {
			n.y, n.bottom = bx[0], bx[1]
		}
	}
	switch {
	case role == "MenuListPopup" || inPopup:
		// options of a native <select>: listed on the combobox, not given refs
		if role == "MenuListPopup" {
			convertKids(true)
			return kids
		}
		if role == "option" || role == "menuitem" || role == "MenuListOption" {
			return []*node{{role: "popup-option", name: n.name}}
		}
		convertKids(true)
		return kids
	case role == "Iframe":
		n.wantRef = n.name != ""
		if child := b.iframeContent(fd, ax.BackendID); child != nil {
			n.kids = child.kids
			if n.name == "" {
				n.name = child.name
			}
		}
		return []*node{n}
	}
	convertKids(false)
	return classify(n, role, kids, focusable, editable, fd.click[ax.BackendID])
}

// classify finishes node n of accessibility role role with its converted children: native
// select options become n.options, fields lose their user-agent parts, and n gets a ref when it
// is interactive, editable, a named dialog or frame, or script-clickable (click says why, see
// clickListener). Both builders (the accessibility tree's and the in-page walker's) use it, so
// they agree on what gets a ref.
func classify(n *node, role string, kids []*node, focusable, editable bool, click uint8) []*node {
	// collect native select options
	if role == "combobox" || role == "PopUpButton" {
		var rest []*node
		for _, k := range kids {
			if k.role == "popup-option" {
				n.options = append(n.options, k.name)
			} else {
				rest = append(rest, k)
			}
		}
		kids = rest
	}
	if leafRoles[role] {
		if n.value == "" && (role == "textbox" || role == "searchbox") {
			n.value = textOf(&node{kids: kids})
		}
		kids = nil // the user-agent parts of inputs (date fields, inner editors)
	}
	n.kids = kids
	switch {
	case interactiveRoles[role]:
		n.wantRef = true
	case editable && focusable && (role == "generic" || role == "none" || role == "paragraph"):
		n.wantRef, n.role = true, "textbox"
	case aimRoles[role] && n.name != "":
		n.wantRef = true
	case role == "LabelText":
		// a label's clicks go to its control, which has its own ref
	case click&clickPointer != 0 || (click&clickListener != 0 && !anyRef(kids)) ||
		(focusable && role != "RootWebArea"):
		// script-clickable; a listener on a container of controls is event delegation, not a target
		n.wantRef = true
		if n.role == "generic" || n.role == "none" || n.role == "presentation" {
			n.role = "clickable"
		}
	}
	if n.wantRef && n.name == "" {
		n.name = clip(textOf(n), 80)
	}
	return []*node{n}
}

// iframeContent builds the content of the iframe element backendID of frame fd's document.
func (b *builder) iframeContent(fd *frameData, backendID int) *node {
	if backendID == 0 {
		return nil
	}
	var r struct {
		Node struct {
			FrameID string `json:"frameId"`
		} `json:"node"`
	}
	if err := b.t.c.Call(b.ctx, fd.frame.Session, "DOM.describeNode", map[string]any{"backendNodeId": backendID}, &r); err != nil || r.Node.FrameID == "" {
		return nil
	}
	if b.done[r.Node.FrameID] {
		return nil
	}
	return b.buildFrame(b.data[r.Node.FrameID])
}

func anyRef(ns []*node) bool {
	for _, n := range ns {
		if n.wantRef || anyRef(n.kids) {
			return true
		}
	}
	return false
}

func textOf(n *node) string {
	var sb strings.Builder
	var walk func(*node)
	walk = func(n *node) {
		if sb.Len() > 200 {
			return
		}
		if n.isText() {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(n.text)
			return
		}
		if n.wantRef && n.name != "" && n.role != "clickable" {
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(n.name)
			return
		}
		for _, k := range n.kids {
			walk(k)
		}
	}
	for _, k := range n.kids {
		walk(k)
	}
	return collapse(sb.String())
}

func collapse(s string) string {
	if s == "" {
		return ""
	}
	return strings.Join(strings.Fields(s), " ")
}

// numberNth sets ctx, nth and count on every node that wants a ref. ctx is the text of the
// nearest of its three closest ancestors whose text says more than the node's name (the row or
// item it sits in); nth is its index among the nodes of the same frame document with the same
// role, name and ctx, in document order.
func numberNth(root *node) {
	type key struct {
		frame, role, name, ctx string
	}
	counts := map[key]int{}
	var all []*node
	var walk func(n *node, anc []*node)
	walk = func(n *node, anc []*node) {
		if n.wantRef {
			for i := len(anc) - 1; i >= 0 && i >= len(anc)-3; i-- {
				if anc[i].frame != n.frame || anc[i].axRole == "RootWebArea" {
					break
				}
				if t := textOf(anc[i]); t != "" && t != n.name {
					n.ctx = clip(t, 120)
					break
				}
			}
			k := key{n.frame.ID, n.axRole, n.name, n.ctx}
			n.nth = counts[k]
			counts[k]++
			all = append(all, n)
		}
		anc = append(anc, n)
		for _, c := range n.kids {
			walk(c, anc)
		}
	}
	walk(root, nil)
	for _, n := range all {
		n.count = counts[key{n.frame.ID, n.axRole, n.name, n.ctx}]
	}
}
