package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tabrelay/tabrelay/internal/csvsafe"
	"github.com/tabrelay/tabrelay/snapshot"
)

// Extract reads repeated items (table rows, cards, list results) as records with named fields:
// of the collection ref names (the container or one item), else of the page's largest one;
// with the fields asked for, else the ones the items' structure gives (a table's headers; a
// card's title, url, price, text…); across pages by following the page's "Next" control.
type Extract struct {
	Ref string `json:"ref,omitempty" jsonschema:"list, table or one item (default: the largest)" cli:"ref?"`
	// Fields name the record's fields, each "name" or "name=hint": a hint is a column header,
	// a role (link, heading, img, paragraph, url…) or #N, the item's Nth value.
	Fields Strings `json:"fields,omitempty" jsonschema:"name or name=hint (column header, role, #N); default: inferred" cli:"list?"`
	// MaxItems caps the records (default 100).
	MaxItems int `json:"maxItems,omitempty" jsonschema:"default 100"`
	// Pages is how many pages to read, following the "Next" control between them (default 1).
	Pages int `json:"pages,omitempty" jsonschema:"pages to read via Next (default 1)"`

	fields []extractField
}

// extractField is one field asked for.
type extractField struct{ name, hint string }

// Extract limits.
const (
	defaultExtractItems = 100
	maxExtractItems     = 10000
	maxExtractPages     = 50
)

// Validate checks the ref, the limits and the fields.
func (p *Extract) Validate() error {
	if err := checkRef(p.Ref, "ref", false); err != nil {
		return err
	}
	if p.MaxItems < 0 || p.MaxItems > maxExtractItems {
		return fmt.Errorf("maxItems must be between 1 and %d (0: %d)", maxExtractItems, defaultExtractItems)
	}
	if p.Pages < 0 || p.Pages > maxExtractPages {
		return fmt.Errorf("pages must be between 1 and %d (0: 1)", maxExtractPages)
	}
	p.fields = nil
	seen := map[string]bool{}
	for _, f := range p.Fields {
		name, hint, _ := strings.Cut(f, "=")
		name, hint = strings.TrimSpace(name), strings.TrimSpace(hint)
		if name == "" {
			return fmt.Errorf("field %q has no name: use name or name=hint (e.g. price or price=Cost)", f)
		}
		if seen[strings.ToLower(name)] {
			return fmt.Errorf("field %q is asked twice", name)
		}
		seen[strings.ToLower(name)] = true
		p.fields = append(p.fields, extractField{name, hint})
	}
	return nil
}

// Records are what kind extract read: rows of named values, one per item.
type Records struct {
	// Fields are the field names, in order (the CSV's columns).
	Fields []string `json:"fields"`
	// Items are the records: every field, "" where an item has no value.
	Items []map[string]string `json:"items"`
	// Pages is how many pages were read.
	Pages int `json:"pages"`
}

// WriteCSV writes the records as CSV: a header row of the field names, then one row per record.
func (r *Records) WriteCSV(w io.Writer) error {
	cw := csvsafe.NewWriter(w)
	if err := cw.Write(r.Fields); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	for _, it := range r.Items {
		row := make([]string, len(r.Fields))
		for i, f := range r.Fields {
			row[i] = it[f]
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("writing CSV: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// slot is one value of an item: the field it infers (key), the role it was read from ("url"
// for a link's target), its column header in a table, and the value.
type slot struct{ key, role, header, value string }

// priceRe finds a price in a run of text.
var priceRe = regexp.MustCompile(`(?:[$€£¥₹]\s?\d[\d,.]*\d|[$€£¥₹]\s?\d|\d[\d,.]*\s?(?:€|£|USD|EUR|GBP|CHF|kr)(?:\b|$))`)

// controlRoles are values an item offers as controls: inferred fields leave them out when
// every item says the same ("Add to cart").
var controlRoles = map[string]bool{"button": true, "checkbox": true, "radio": true, "switch": true, "menuitem": true}

// slotsOf reads an item's values in document order.
func slotsOf(item []*snapshot.Node, headers []string) []slot {
	var out []slot
	add := func(s slot) {
		s.value = strings.Join(strings.Fields(s.value), " ")
		out = append(out, s)
	}
	if len(item) == 1 && item[0].Role == "row" {
		for i, c := range item[0].Children {
			h := ""
			if i < len(headers) {
				h = headers[i]
			}
			key := h
			if key == "" {
				key = "column " + strconv.Itoa(i+1)
			}
			add(slot{key: key, role: c.Role, header: h, value: textIn(c)})
			if l := linkIn(c); l != nil && l.URL != "" {
				add(slot{key: key + " url", role: "url", header: h, value: l.URL})
			}
		}
		return out
	}
	title := false
	var visit func(n *snapshot.Node)
	visit = func(n *snapshot.Node) {
		switch {
		case n.IsText():
			t := strings.TrimSpace(n.Text)
			if loc := priceRe.FindStringIndex(t); loc != nil {
				add(slot{key: "price", role: "price", value: t[loc[0]:loc[1]]})
				t = strings.TrimSpace(t[:loc[0]] + " " + t[loc[1]:])
			}
			if t != "" {
				add(slot{key: "text", role: "text", value: t})
			}
		case n.Role == "heading" || n.Role == "link" && !title:
			key := "heading"
			if !title {
				key, title = "title", true
			}
			add(slot{key: key, role: n.Role, value: textIn(n)})
			if l := linkIn(n); l != nil && l.URL != "" {
				add(slot{key: "url", role: "url", value: l.URL})
			}
		case n.Role == "link":
			add(slot{key: "link", role: "link", value: textIn(n)})
			if n.URL != "" {
				add(slot{key: "link url", role: "url", value: n.URL})
			}
		case n.Role == "paragraph":
			add(slot{key: "description", role: n.Role, value: textIn(n)})
		case n.Role == "img" || n.Role == "image":
			add(slot{key: "image", role: "img", value: n.Name})
		case fieldRoles[n.Role] || controlRoles[n.Role]:
			key := n.Role
			if !controlRoles[n.Role] && n.Name != "" {
				key = strings.ToLower(n.Name)
			}
			v := n.Value
			if controlRoles[n.Role] {
				v = n.Words()
			}
			add(slot{key: key, role: n.Role, value: v})
		case len(n.Children) == 0:
			if w := n.Words(); w != "" {
				add(slot{key: n.Role, role: n.Role, value: w})
			}
		default:
			if n.Name != "" && (n.Role == "cell" || n.Role == "gridcell" || n.Role == "term" || n.Role == "definition") {
				add(slot{key: n.Role, role: n.Role, value: textIn(n)})
				return
			}
			for _, k := range n.Children {
				visit(k)
			}
		}
	}
	for _, n := range item {
		visit(n)
	}
	// the second "text" of an item is "text 2", and so on
	count := map[string]int{}
	for i := range out {
		if count[out[i].key]++; count[out[i].key] > 1 {
			out[i].key += " " + strconv.Itoa(count[out[i].key])
		}
	}
	return out
}

// fieldRoles are roles whose value is what a user typed or chose.
var fieldRoles = map[string]bool{"textbox": true, "searchbox": true, "combobox": true, "spinbutton": true, "slider": true}

// textIn is what n says: its name, else the words of its subtree.
func textIn(n *snapshot.Node) string {
	if w := n.Words(); w != "" {
		return w
	}
	var parts []string
	for _, d := range n.Descendants() {
		if w := d.Words(); w != "" && (d.IsText() || len(d.Children) == 0 || d.Name != "") {
			parts = append(parts, w)
			if !d.IsText() {
				break
			}
		}
	}
	return strings.Join(parts, " ")
}

// linkIn is n if it is a link, else the first link inside it.
func linkIn(n *snapshot.Node) *snapshot.Node {
	var found *snapshot.Node
	n.Walk(func(d *snapshot.Node) bool {
		if found == nil && d.Role == "link" {
			found = d
		}
		return found == nil
	})
	return found
}

// synonyms are other names of inferred fields, for fields asked by name.
var synonyms = map[string]string{"name": "title", "product": "title", "headline": "title", "href": "url", "link": "url",
	"cost": "price", "amount": "price", "snippet": "description", "summary": "description", "picture": "image", "photo": "image"}

// pick finds field f's value among an item's slots ("" and false when it has none).
func pick(slots []slot, f extractField) (string, bool) {
	h := strings.ToLower(f.hint)
	if h == "" {
		h = strings.ToLower(f.name)
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(h, "#")); err == nil && strings.HasPrefix(h, "#") {
		i := 0
		for _, s := range slots {
			if s.role == "url" {
				continue
			}
			if i++; i == n {
				return s.value, true
			}
		}
		return "", false
	}
	tries := []func(s slot) bool{
		func(s slot) bool { return strings.EqualFold(s.key, h) },
		func(s slot) bool { return strings.EqualFold(s.header, h) && s.role != "url" },
		func(s slot) bool { return s.role == h },
		func(s slot) bool { return synonyms[h] != "" && s.key == synonyms[h] },
		// a table's title is its first column
		func(s slot) bool {
			return (h == "title" || synonyms[h] == "title") && s.header != "" && s.role != "url"
		},
		func(s slot) bool {
			return s.header != "" && s.role != "url" && strings.Contains(strings.ToLower(s.header), h)
		},
	}
	for _, try := range tries {
		for _, s := range slots {
			if try(s) {
				return s.value, true
			}
		}
	}
	return "", false
}

// records turns items into records: the fields asked for, else the inferred ones (every key
// some item has, in order of appearance, less those empty everywhere and controls that say
// the same in every item). missing names the fields asked for that no item had.
func records(items [][]slot, fields []extractField) (names []string, recs []map[string]string, missing []string) {
	if len(fields) > 0 {
		found := make([]bool, len(fields))
		for _, sl := range items {
			rec := map[string]string{}
			for i, f := range fields {
				v, ok := pick(sl, f)
				rec[f.name] = v
				found[i] = found[i] || ok
			}
			recs = append(recs, rec)
		}
		for i, f := range fields {
			names = append(names, f.name)
			if !found[i] {
				missing = append(missing, f.name)
			}
		}
		return names, recs, missing
	}
	var keys []string
	role := map[string]string{}
	values := map[string]map[string]bool{}
	for _, sl := range items {
		for _, s := range sl {
			if values[s.key] == nil {
				keys = append(keys, s.key)
				values[s.key], role[s.key] = map[string]bool{}, s.role
			}
			values[s.key][s.value] = true
		}
	}
	for _, k := range keys {
		vs := values[k]
		if len(vs) == 1 && vs[""] {
			continue // empty everywhere
		}
		if controlRoles[role[k]] && len(vs) == 1 && len(items) > 1 {
			continue // the same control in every item
		}
		names = append(names, k)
	}
	for _, sl := range items {
		rec := map[string]string{}
		for _, n := range names {
			rec[n] = ""
		}
		for _, s := range sl {
			if _, ok := rec[s.key]; ok {
				rec[s.key] = s.value
			}
		}
		recs = append(recs, rec)
	}
	return names, recs, nil
}

// findCollection is the collection ref names (its container, one of its items, or a node
// inside an item), or the page's largest one; like, when set, is the signature its items must
// start with (the first page's, on later pages).
func findCollection(snap *snapshot.Snapshot, ref, like string) (snapshot.Collection, error) {
	if ref != "" {
		n := snap.Find(ref)
		if n == nil {
			return snapshot.Collection{}, fmt.Errorf("%s is not on the page (any more): take a snapshot for current refs", ref)
		}
		// the container itself (a list or table may hold a single item), or the nearest
		// ancestor whose children repeat
		for a := n; a != nil; a = a.Parent() {
			if c, ok := snapshot.CollectionIn(a, 2); ok && len(c.Items) > 1 {
				return c, nil
			}
			if c, ok := snapshot.CollectionIn(a, 1); ok && a == n && containerRoles[n.Role] {
				return c, nil
			}
		}
		return snapshot.Collection{}, fmt.Errorf("nothing repeats in or around %s: give the list or table's ref, or no ref for the largest collection", ref)
	}
	if like != "" {
		var best snapshot.Collection
		snap.Root.Walk(func(n *snapshot.Node) bool {
			if c, ok := snapshot.CollectionIn(n, 1); ok && snapshot.Signature(c.Items[0][0]) == like && len(c.Items) > len(best.Items) {
				best = c
			}
			return true
		})
		if len(best.Items) > 0 {
			return best, nil
		}
	}
	cs := snapshot.Collections(snap.Root)
	if len(cs) == 0 {
		return snapshot.Collection{}, fmt.Errorf("nothing repeats on this page (no rows, cards or results found): give the list or table's ref")
	}
	return cs[0], nil
}

// containerRoles hold items: given as ref, even one item is a collection.
var containerRoles = map[string]bool{"list": true, "table": true, "grid": true, "treegrid": true, "listbox": true,
	"feed": true, "menu": true, "tree": true, "rowgroup": true, "tablist": true, "radiogroup": true}

// nextRe names a control that goes to the next page.
var nextRe = regexp.MustCompile(`(?i)^\s*(next( page| results?)?|more results|older( posts)?|›|»|>|→|weiter|suivant|siguiente|次へ|下一页)\s*[›»>→]?\s*$`)

// nextControl is the page's enabled link or button to the next page, nil if none.
func nextControl(snap *snapshot.Snapshot) *snapshot.Node {
	for _, n := range snap.Nodes() {
		if n.Ref != "" && (n.Role == "link" || n.Role == "button") && !n.Has("disabled") && nextRe.MatchString(n.Name) {
			return n
		}
	}
	return nil
}

// extract reads the records, page after page.
func (r *runner) extract(ctx context.Context, p *Extract) (*Result, error) {
	maxItems := p.MaxItems
	if maxItems == 0 {
		maxItems = defaultExtractItems
	}
	pages := max(p.Pages, 1)
	var items [][]slot
	var headers []string
	like, ref := "", p.Ref
	seen := map[string]bool{}
	read, stop := 0, ""
	var snap *snapshot.Snapshot
	for page := 1; page <= pages && len(items) < maxItems; page++ {
		var err error
		// the full model: table cells stay cells, each with its own text
		if snap, err = r.ts.tab.Snapshot(ctx, snapshot.Options{Full: true}); err != nil {
			return nil, err
		}
		c, err := findCollection(snap, ref, like)
		if err != nil {
			if page == 1 {
				return nil, fmt.Errorf("extract: %w", err)
			}
			stop = fmt.Sprintf("; page %d has no items like the first page's", page)
			break
		}
		read++
		if like == "" {
			like, headers = snapshot.Signature(c.Items[0][0]), c.Headers
		}
		if len(c.Headers) > 0 {
			headers = c.Headers
		}
		fresh := 0
		for _, it := range c.Items {
			sl := slotsOf(it, headers)
			key := fmt.Sprint(sl)
			if seen[key] {
				continue // the same item again (a page that did not change)
			}
			seen[key] = true
			fresh++
			if len(items) < maxItems {
				items = append(items, sl)
			}
		}
		if page > 1 && fresh == 0 {
			stop = fmt.Sprintf("; page %d showed the same items as before", page)
			read--
			break
		}
		if page == pages || len(items) >= maxItems {
			break
		}
		next := nextControl(snap)
		if next == nil {
			if page < pages {
				stop = fmt.Sprintf("; no Next control after page %d", page)
			}
			break
		}
		if _, err := r.observe(ctx, r.ts, func() (string, error) { return r.click(ctx, r.ts, Click{Ref: next.Ref}) }); err != nil {
			return nil, fmt.Errorf("extract: following %s to page %d: %w", snap.Line(next), page+1, err)
		}
		if r.opts.SettleTimeout > 0 {
			r.settlePage(ctx, r.ts)
		}
		ref = "" // the container's ref may change with the page
	}
	names, recs, missing := records(items, p.fields)
	out := &Records{Fields: names, Items: recs, Pages: read}
	if out.Fields == nil {
		out.Fields = []string{}
	}
	if out.Items == nil {
		out.Items = []map[string]string{}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "extracted %d records", len(recs))
	if read > 1 {
		fmt.Fprintf(&b, " from %d pages", read)
	}
	fmt.Fprintf(&b, " with fields %s", strings.Join(names, ", "))
	if len(items) >= maxItems {
		fmt.Fprintf(&b, "; stopped at maxItems=%d", maxItems)
	}
	b.WriteString(stop)
	if len(missing) > 0 {
		var offered []string
		for _, sl := range items {
			for _, s := range sl {
				if !slices.Contains(offered, s.key) {
					offered = append(offered, s.key)
				}
			}
		}
		fmt.Fprintf(&b, "; no item had %s (the items offer %s)", strings.Join(missing, ", "), strings.Join(offered, ", "))
	}
	return &Result{Message: b.String(), Records: out, URL: snap.URL, Title: snap.Title}, nil
}

// WriteJSONLines writes one JSON object per record, its fields in order.
func (r *Records) WriteJSONLines(w io.Writer) error {
	for _, it := range r.Items {
		var b bytes.Buffer
		b.WriteByte('{')
		for i, f := range r.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(f)
			v, _ := json.Marshal(it[f])
			b.Write(k)
			b.WriteByte(':')
			b.Write(v)
		}
		b.WriteString("}\n")
		if _, err := w.Write(b.Bytes()); err != nil {
			return fmt.Errorf("writing records: %w", err)
		}
	}
	return nil
}
