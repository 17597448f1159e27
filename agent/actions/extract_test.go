package actions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// TestExtractRecords: records from typed items, the fields inferred (a table's headers, a
// card's title, url, price and text; a control every item has left out) or asked for (by
// name, synonym, column header, role or position), and the CSV written from them.
func TestExtractRecords(t *testing.T) {
	headers := []string{"Product", "Price"}
	row := func(name, price string) []*snapshot.Node {
		return []*snapshot.Node{pagetest.El("row", "",
			pagetest.El("cell", name, pagetest.El("link", name, pagetest.Ref("e1"), pagetest.URL("https://a.test/"+name))),
			pagetest.El("cell", price))}
	}
	card := func(title, text string) []*snapshot.Node {
		return []*snapshot.Node{
			pagetest.El("heading", "", "level=3", pagetest.El("link", title, pagetest.Ref("e2"), pagetest.URL("https://a.test/"+title))),
			pagetest.Text(text),
			pagetest.El("button", "Add to cart", pagetest.Ref("e3"))}
	}
	table := [][]slot{slotsOf(row("Kettle", "$24.00"), headers), slotsOf(row("Mug", "$3.50"), headers)}
	cards := [][]slot{slotsOf(card("Mug", "$12.00 4.5 stars"), nil), slotsOf(card("Pan", "€ 5"), nil)}
	cases := []struct {
		name   string
		items  [][]slot
		fields []string
		want   string // the CSV
		miss   []string
	}{
		{"table inferred", table, nil, "Product,Product url,Price\nKettle,https://a.test/Kettle,$24.00\nMug,https://a.test/Mug,$3.50\n", nil},
		{"cards inferred", cards, nil, "title,url,price,text\nMug,https://a.test/Mug,$12.00,4.5 stars\nPan,https://a.test/Pan,€ 5,\n", nil},
		{"by name, synonym, header and role", table, []string{"name", "cost=price", "href=url"},
			"name,cost,href\nKettle,$24.00,https://a.test/Kettle\nMug,$3.50,https://a.test/Mug\n", nil},
		{"by position and role", cards, []string{"what=#1", "p=#2", "rating=text", "button"}, "what,p,rating,button\nMug,$12.00,4.5 stars,Add to cart\nPan,€ 5,,Add to cart\n", nil},
		{"missing field", cards, []string{"title", "colour"}, "title,colour\nMug,\nPan,\n", []string{"colour"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Extract{Fields: c.fields}
			if err := p.Validate(); err != nil {
				t.Fatal(err)
			}
			names, recs, miss := records(c.items, p.fields)
			var b bytes.Buffer
			if err := (&Records{Fields: names, Items: recs}).WriteCSV(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != c.want || strings.Join(miss, ",") != strings.Join(c.miss, ",") {
				t.Errorf("CSV\n%s(missing %v), want\n%s(missing %v)", b.String(), miss, c.want, c.miss)
			}
		})
	}
}

func TestExtractValidate(t *testing.T) {
	for _, c := range []struct {
		p   Extract
		err string
	}{
		{Extract{Fields: Strings{"a", "A"}}, `extract: field "A" is asked twice`},
		{Extract{Fields: Strings{"=x"}}, `extract: field "=x" has no name: use name or name=hint (e.g. price or price=Cost)`},
		{Extract{MaxItems: -1}, "extract: maxItems must be between 1 and 10000 (0: 100)"},
		{Extract{Pages: 51}, "extract: pages must be between 1 and 50 (0: 1)"},
		{Extract{Ref: "x7"}, ""},
	} {
		a := Do(c.p)
		err := a.Validate()
		if c.err == "" {
			if err == nil {
				t.Errorf("%+v: no error", c.p)
			}
			continue
		}
		if err == nil || err.Error() != c.err || !errors.Is(err, ErrBadAction) {
			t.Errorf("%+v: %v, want %s", c.p, err, c.err)
		}
	}
}

// TestExtract reads the fixture pages in Chromium: a table, a card grid of plain divs and a
// results list over three pages whose items arrive by fetch after each click on Next.
func TestExtract(t *testing.T) {
	need(t)
	ctx, cancel := context.WithTimeout(callerCtx(), 90*time.Second)
	defer cancel()
	origin := strings.TrimSuffix(shared.srv.URL("/"), "/")
	cases := []struct {
		name string
		path string
		p    Extract
		want string // records as JSON
		msg  string
	}{
		{"table", "/extract/table.html", Extract{}, `{"fields":["Product","Product url","SKU","Price","Stock"],"items":[` +
			`{"Price":"$24.00","Product":"Kettle","Product url":"ORIGIN/p/kettle","SKU":"K-100","Stock":"12"},` +
			`{"Price":"$31.50","Product":"Toaster","Product url":"ORIGIN/p/toaster","SKU":"T-200","Stock":"0"},` +
			`{"Price":"$89.99","Product":"Blender","Product url":"ORIGIN/p/blender","SKU":"B-300","Stock":""},` +
			`{"Price":"$120.00","Product":"Mixer","Product url":"ORIGIN/p/mixer","SKU":"M-400","Stock":"3"},` +
			`{"Price":"$45.25","Product":"Grill","Product url":"ORIGIN/p/grill","SKU":"G-500","Stock":"7"}],"pages":1}`,
			"extracted 5 records with fields Product, Product url, SKU, Price, Stock"},
		{"table fields by header, max items", "/extract/table.html", Extract{Fields: Strings{"name=product", "price"}, MaxItems: 2},
			`{"fields":["name","price"],"items":[{"name":"Kettle","price":"$24.00"},{"name":"Toaster","price":"$31.50"}],"pages":1}`,
			"extracted 2 records with fields name, price; stopped at maxItems=2"},
		{"cards", "/extract/cards.html", Extract{}, `{"fields":["title","url","price","text"],"items":[` +
			`{"price":"$12.00","text":"4.5 stars","title":"Blue mug","url":"ORIGIN/p/1"},` +
			`{"price":"$39.00","text":"4.1 stars","title":"Red kettle","url":"ORIGIN/p/2"},` +
			`{"price":"$27.50","text":"3.9 stars","title":"Green teapot","url":"ORIGIN/p/3"},` +
			`{"price":"$55.00","text":"4.8 stars","title":"Steel pan","url":"ORIGIN/p/4"},` +
			`{"price":"$4.25","text":"","title":"Wooden spoon","url":"ORIGIN/p/5"},` +
			`{"price":"$8.00","text":"4.0 stars","title":"Glass jar","url":"ORIGIN/p/6"}],"pages":1}`,
			"extracted 6 records with fields title, url, price, text"},
		{"results over three pages", "/extract/results.html", Extract{Fields: Strings{"title", "price", "description"}, Pages: 5},
			`{"fields":["title","price","description"],"items":[` +
				`{"description":"Bright LED desk lamp","price":"$19.99","title":"Desk lamp"},` +
				`{"description":"Tall reading lamp","price":"$49.00","title":"Floor lamp"},` +
				`{"description":"Retro glow","price":"$15.50","title":"Lava lamp"},` +
				`{"description":"Clamps to shelves","price":"$12.00","title":"Clip lamp"},` +
				`{"description":"Linen shade","price":"$34.00","title":"Table lamp"},` +
				`{"description":"Warm and dim","price":"$9.99","title":"Night lamp"},` +
				`{"description":"Swing arm","price":"$59.00","title":"Wall lamp"},` +
				`{"description":"Himalayan salt","price":"$22.00","title":"Salt lamp"}],"pages":3}`,
			"extracted 8 records from 3 pages with fields title, price, description; no Next control after page 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := open(t, ctx, c.path)
			if c.path == "/extract/results.html" {
				act(t, ctx, id, Do(Wait{Text: "Page 1 of 3"}))
			}
			r := act(t, ctx, id, Do(c.p))
			got, _ := json.Marshal(r.Records)
			if want := strings.ReplaceAll(c.want, "ORIGIN", origin); string(got) != want {
				t.Errorf("records\n%s\nwant\n%s", got, want)
			}
			if r.Message != c.msg {
				t.Errorf("message %q, want %q", r.Message, c.msg)
			}
		})
	}
	t.Run("ref of one item", func(t *testing.T) {
		id := open(t, ctx, "/extract/form.html")
		s := snap(t, ctx, id, snapshot.Options{})
		var billing string
		for _, n := range s.Nodes() {
			if n.Name == "Billing" {
				billing = n.Ref
			}
		}
		r := act(t, ctx, id, Do(Extract{Ref: billing}))
		got, _ := json.Marshal(r.Records.Items)
		want := `[{"title":"Billing","url":"ORIGIN/t/1"},{"title":"Shipping","url":"ORIGIN/t/2"},{"title":"Returns","url":"ORIGIN/t/3"},{"title":"Accounts","url":"ORIGIN/t/4"},{"title":"Privacy","url":"ORIGIN/t/5"}]`
		if want = strings.ReplaceAll(want, "ORIGIN", origin); string(got) != want {
			t.Errorf("records %s, want %s", got, want)
		}
	})
}

// TestExtractDoors: the extract kind reaches every door from its one Register entry: the
// model's tool (schema and FromTool), the CLI (usage and positional arguments), the HTTP
// API's JSON (Decode), with its errors for bad input.
func TestExtractDoors(t *testing.T) {
	reg := Default()
	tools, err := reg.Tools()
	if err != nil {
		t.Fatal(err)
	}
	var schema []byte
	for _, tl := range tools {
		if tl.Name == "extract" {
			schema, _ = json.Marshal(tl.Parameters)
		}
	}
	for _, p := range []string{`"ref"`, `"fields"`, `"maxItems"`, `"pages"`} {
		if !bytes.Contains(schema, []byte(p)) {
			t.Errorf("the model's extract tool has no %s: %s", p, schema)
		}
	}
	a, err := reg.FromTool("extract", json.RawMessage(`{"fields":["title","price=Cost"],"pages":2}`))
	if err != nil || a.Kind != "extract" || len(a.Params.(*Extract).fields) != 2 || a.Params.(*Extract).fields[1] != (extractField{"price", "Cost"}) {
		t.Errorf("FromTool: %v %+v", err, a)
	}
	if u := reg.Usage(); !strings.Contains(u, "extract [ref] [fields…]") {
		t.Errorf("usage:\n%s", u)
	}
	for _, c := range []struct {
		args   []string
		ref    string
		fields []string
	}{
		{nil, "", nil},
		{[]string{"e5"}, "e5", nil},
		{[]string{"e5", "title", "price=Cost"}, "e5", []string{"title", "price=Cost"}},
		{[]string{"title"}, "", []string{"title"}},
	} {
		a, err := reg.ParseArgs("extract", c.args)
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		p := a.Params.(*Extract)
		if p.Ref != c.ref || strings.Join(p.Fields, "|") != strings.Join(c.fields, "|") {
			t.Errorf("%q: %+v", c.args, p)
		}
	}
	a, err = reg.Decode([]byte(`{"kind":"extract","ref":"e2","fields":"title","maxItems":5}`))
	if err != nil || a.Params.(*Extract).MaxItems != 5 || a.Params.(*Extract).Fields[0] != "title" {
		t.Errorf("Decode: %v %+v", err, a)
	}
	if _, err := reg.Decode([]byte(`{"kind":"extract","pages":"two"}`)); err == nil || !errors.Is(err, ErrBadAction) {
		t.Errorf("Decode with bad pages: %v", err)
	}
}
