package snapshot

import (
	"net/url"
	"strings"
	"testing"
)

func el(role, name, ref string, kids ...*node) *node {
	return &node{role: role, axRole: role, name: name, ref: ref, wantRef: ref != "", kids: kids, frame: &Frame{ID: "F"}}
}

func txt(s string) *node { return &node{role: "text", text: s} }

func TestRender(t *testing.T) {
	page, _ := url.Parse("http://h/p/index.html")
	link := el("link", "Docs", "e3")
	link.url = "http://h/docs?x=1"
	frag := el("link", "Top", "e4")
	frag.url = "http://h/p/index.html#top"
	box := el("textbox", "Email", "e5")
	box.value = "a@b.c"
	box.focused = true
	chk := el("checkbox", "Remember", "e6")
	chk.states = []string{"checked"}
	sel := el("combobox", "Country", "e7")
	sel.value, sel.options = "France", []string{"France", "Japan"}
	h := el("heading", "Title", "e1")
	h.states = []string{"level=1"}
	cases := []struct {
		name string
		root *node
		o    Options
		want string
	}{
		{"button text dropped", el("document", "", "", el("button", "Save", "e2", txt("Save"))), Options{},
			"- button \"Save\" [ref=e2]\n"},
		{"generic hoisted", el("document", "", "", el("generic", "", "", el("generic", "", "", el("button", "OK", "e2")))), Options{},
			"- button \"OK\" [ref=e2]\n"},
		{"generic kept when full", el("document", "", "", el("generic", "", "", el("button", "OK", "e2"))), Options{Full: true},
			"- generic:\n  - button \"OK\" [ref=e2]\n"},
		{"empty branch pruned", el("document", "", "", el("list", "", "", el("listitem", "", "")), el("button", "A", "e2")), Options{},
			"- button \"A\" [ref=e2]\n"},
		{"paragraph text inline", el("document", "", "", el("paragraph", "", "", txt("Hello"), txt("world"))), Options{},
			"- paragraph: Hello world\n"},
		{"label text deduplicated", el("document", "", "", txt("Email"), box), Options{},
			"- textbox \"Email\" [focused] [ref=e5]: a@b.c\n"},
		{"states, values, urls, options", el("document", "", "", h, link, frag, chk, sel), Options{},
			"- heading \"Title\" [level=1] [ref=e1]\n- link \"Docs\" [ref=e3] [url=/docs?x=1]\n- link \"Top\" [ref=e4] [url=#top]\n" +
				"- checkbox \"Remember\" [checked] [ref=e6]\n- combobox \"Country\" [ref=e7]: France (options: France, Japan)\n"},
		{"nesting", el("document", "", "", el("navigation", "Main", "", el("link", "A", "e2"), el("link", "B", "e3"))), Options{},
			"- navigation \"Main\":\n  - link \"A\" [ref=e2]\n  - link \"B\" [ref=e3]\n"},
		{"interactive only", el("document", "", "", el("navigation", "Main", "", el("link", "A", "e2"), txt("x")), el("paragraph", "", "", txt("p"))), Options{Interactive: true},
			"- link \"A\" [ref=e2]\n"},
		{"max depth", el("document", "", "", el("navigation", "Main", "", el("list", "L", "", el("link", "A", "e2")))), Options{MaxDepth: 2},
			"- navigation \"Main\":\n  - list \"L\": … (1 refs deeper)\n"},
		{"max chars", el("document", "", "", el("button", "One", "e1"), el("button", "Two", "e2"), el("button", "Three", "e3")), Options{MaxChars: 50},
			"- button \"One\" [ref=e1]\n- button \"Two\" [ref=e2]\n# … truncated: 1 more lines with 1 refs; scope to a ref, use interactive, or raise maxChars\n"},
		{"cell named by its content", el("document", "", "", el("row", "", "", el("cell", "Delete", "", el("button", "Delete", "e2")))), Options{},
			"- row:\n  - button \"Delete\" [ref=e2]\n"},
		{"quotes escaped", el("document", "", "", el("button", `Say "hi"`, "e2")), Options{},
			"- button \"Say \\\"hi\\\"\" [ref=e2]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _, _ := render(c.root, c.o, page)
			if got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestRenderCountsRefs(t *testing.T) {
	root := el("document", "", "", el("button", "A", "e1"), el("generic", "", "", el("button", "B", "e2")))
	_, refs, trunc := render(root, Options{}, nil)
	if refs != 2 || trunc {
		t.Fatalf("refs %d truncated %v", refs, trunc)
	}
}

func TestNumberNthAndAssign(t *testing.T) {
	f := &Frame{ID: "F", LoaderID: "L"}
	mk := func(ids ...int) *node {
		root := &node{role: "document", axRole: "RootWebArea", frame: f}
		for i, id := range ids {
			row := &node{role: "row", axRole: "row", frame: f, kids: []*node{
				{role: "text", text: "Item " + string(rune('A'+i))},
				{role: "button", axRole: "button", name: "Delete", wantRef: true, backendID: id, frame: f},
			}}
			root.kids = append(root.kids, row)
		}
		return root
	}
	var rt refTable
	rt.init()
	r1 := mk(10, 11, 12)
	numberNth(r1)
	rt.assign(r1)
	refs := func(r *node) []string {
		var out []string
		walkNodes(r, func(n *node) {
			if n.ref != "" {
				out = append(out, n.ref)
			}
		})
		return out
	}
	first := refs(r1)
	if strings.Join(first, ",") != "e1,e2,e3" {
		t.Fatalf("refs %v", first)
	}
	// same nodes: same refs
	r2 := mk(10, 11, 12)
	numberNth(r2)
	rt.assign(r2)
	if got := refs(r2); strings.Join(got, ",") != "e1,e2,e3" {
		t.Fatalf("unchanged nodes got %v", got)
	}
	// re-rendered (new backend ids): refs carried over to the twins
	r3 := mk(20, 21, 22)
	numberNth(r3)
	rt.assign(r3)
	if got := refs(r3); strings.Join(got, ",") != "e1,e2,e3" {
		t.Fatalf("re-rendered nodes got %v", got)
	}
	// one row fewer and re-rendered: rows keep their refs by row text, the missing one is new
	r4 := mk(30, 31)
	numberNth(r4)
	rt.assign(r4)
	if got := refs(r4); strings.Join(got, ",") != "e1,e2" {
		t.Fatalf("after removal got %v", got)
	}
}

func TestParseRef(t *testing.T) {
	for in, want := range map[string]string{"e7": "e7", " @e7 ": "e7", "[ref=e12]": "e12", "ref=e3": "e3", `"e4"`: "e4", "E5": "e5"} {
		got, err := ParseRef(in)
		if err != nil || got != want {
			t.Errorf("ParseRef(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "e", "e0", "e-1", "x7", "e7x", "e+7", "e07", "7", "e99999999999999999999"} {
		if got, err := ParseRef(in); err == nil {
			t.Errorf("ParseRef(%q) = %q, want error", in, got)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"e7", "@e7", "[ref=e7]", "ref=e1", "", "e", "e0", "E12", "e+1", "\"e3\""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		// canonical: e followed by a positive decimal without leading zeros, and idempotent
		if len(r) < 2 || r[0] != 'e' || r[1] == '0' {
			t.Fatalf("ParseRef(%q) = %q", s, r)
		}
		for _, c := range r[1:] {
			if c < '0' || c > '9' {
				t.Fatalf("ParseRef(%q) = %q", s, r)
			}
		}
		if r2, err := ParseRef(r); err != nil || r2 != r {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", s, r, r2, err)
		}
	})
}

// Password inputs look like any textbox in the accessibility tree; the DOM snapshot's
// attributes tell them apart, and the outline marks them so that safety checks and the model
// know them whatever their label says.
func TestRenderPasswordField(t *testing.T) {
	d := &domInfo{Strings: []string{"F1", "#document", "INPUT", "type", "password", "text", "id", "p", "BUTTON", "PASSWORD"}}
	d.Documents = make([]domDocument, 1)
	n := &d.Documents[0].Nodes
	n.ParentIndex = []int{-1, 0, 0, 0, 0}
	n.NodeType = []int{9, 1, 1, 1, 1}
	n.NodeName = []int{1, 2, 2, 8, 2}
	n.BackendNodeID = []int{1, 10, 11, 12, 13}
	n.Attributes = [][]int{nil, {6, 7, 3, 4}, {3, 5}, {3, 4}, {3, 9}}
	_, _, pass := d.clickables()
	if got := pass["F1"]; len(got) != 2 || !got[10] || !got[13] {
		t.Fatalf("password inputs %v, want backend ids 10 and 13 (not the text input 11 or the button 12)", got)
	}

	secret := el("textbox", "Secret", "e2")
	secret.password = true
	got, _, _ := render(el("document", "", "", el("textbox", "Name", "e1"), secret), Options{}, nil)
	if want := "- textbox \"Name\" [ref=e1]\n- textbox \"Secret\" [password] [ref=e2]\n"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got, _, _ = render(el("document", "", "", secret), Options{Interactive: true}, nil)
	if !strings.Contains(got, `textbox "Secret" [password] [ref=e2]`) {
		t.Errorf("interactive outline lacks the password mark:\n%s", got)
	}
}
