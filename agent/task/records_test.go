package task_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/agent/task/taskstore"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// recs is an extract step's records.
func recs(fields []string, items ...map[string]string) *task.StepRecords {
	if items == nil {
		items = []map[string]string{}
	}
	return &task.StepRecords{Records: actions.Records{Fields: fields, Items: items, Pages: 1}}
}

// withSteps is a task whose steps are the tools given, the records given by step index.
func withSteps(tools []string, records map[int]*task.StepRecords) *task.Task {
	t := &task.Task{ID: "t1", Goal: "read the products", Status: task.StatusSucceeded, Plan: []task.PlanItem{}}
	for i, tool := range tools {
		t.Steps = append(t.Steps, task.Step{ID: fmt.Sprintf("s%d", i+1), Index: i + 1, Tool: tool, Status: task.StepOK, Records: records[i+1]})
	}
	return t
}

func TestRecordTable(t *testing.T) {
	mug := map[string]string{"title": "Mug", "price": "$12.00"}
	pot := map[string]string{"title": "Pot", "price": ""}
	cases := []struct {
		name      string
		task      *task.Task
		fields    []string
		items     []map[string]string
		steps     []int
		pages     int
		omitted   int
		noRecords bool
	}{
		{name: "no extract step", task: withSteps([]string{"snapshot", "click", "finish"}, nil), noRecords: true},
		{name: "no steps", task: withSteps(nil, nil), noRecords: true},
		{
			name:   "one extract step",
			task:   withSteps([]string{"snapshot", "extract", "finish"}, map[int]*task.StepRecords{2: recs([]string{"title", "price"}, mug, pot)}),
			fields: []string{"step", "title", "price"},
			items:  []map[string]string{{"step": "2", "title": "Mug", "price": "$12.00"}, {"step": "2", "title": "Pot", "price": ""}},
			steps:  []int{2}, pages: 1,
		},
		{
			name: "different fields: their union in the order first seen, blanks for the others",
			task: withSteps([]string{"extract", "click", "extract"}, map[int]*task.StepRecords{
				1: recs([]string{"Product", "SKU"}, map[string]string{"Product": "Kettle", "SKU": "K-100"}),
				3: recs([]string{"title", "SKU", "price"}, map[string]string{"title": "Mug", "SKU": "M-1", "price": "$12.00"}),
			}),
			fields: []string{"step", "Product", "SKU", "title", "price"},
			items: []map[string]string{
				{"step": "1", "Product": "Kettle", "SKU": "K-100", "title": "", "price": ""},
				{"step": "3", "Product": "", "SKU": "M-1", "title": "Mug", "price": "$12.00"},
			},
			steps: []int{1, 3}, pages: 2,
		},
		{
			name:   "a field named step: the step column gives way",
			task:   withSteps([]string{"extract"}, map[int]*task.StepRecords{1: recs([]string{"step", "_step", "text"}, map[string]string{"step": "Boil", "_step": "1", "text": "water"})}),
			fields: []string{"__step", "step", "_step", "text"},
			items:  []map[string]string{{"__step": "1", "step": "Boil", "_step": "1", "text": "water"}},
			steps:  []int{1}, pages: 1,
		},
		{
			name:   "an extract that read nothing: a table without rows",
			task:   withSteps([]string{"extract"}, map[int]*task.StepRecords{1: recs([]string{"title"})}),
			fields: []string{"step", "title"},
			items:  []map[string]string{},
			steps:  []int{1}, pages: 1,
		},
		{
			name: "records left out are counted",
			task: withSteps([]string{"extract", "extract"}, map[int]*task.StepRecords{
				1: {Records: actions.Records{Fields: []string{"title"}, Items: []map[string]string{{"title": "Mug"}}, Pages: 3}, Omitted: 4},
				2: {Records: actions.Records{Fields: []string{"title"}, Items: []map[string]string{}, Pages: 1}, Omitted: 2},
			}),
			fields: []string{"step", "title"},
			items:  []map[string]string{{"step": "1", "title": "Mug"}},
			steps:  []int{1, 2}, pages: 4, omitted: 6,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := json.Marshal(c.task)
			rt, err := c.task.RecordTable()
			if c.noRecords {
				if !errors.Is(err, task.ErrNoRecords) || rt != nil {
					t.Fatalf("table %+v, error %v; want ErrNoRecords", rt, err)
				}
				for _, want := range []string{"task t1", "ran extract", "tabrelay act extract --format csv"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rt.Fields, c.fields) || !reflect.DeepEqual(rt.Items, c.items) || !reflect.DeepEqual(rt.Steps, c.steps) ||
				rt.Pages != c.pages || rt.Omitted != c.omitted {
				t.Errorf("table %+v\nwant fields %q items %v steps %v pages %d omitted %d", rt, c.fields, c.items, c.steps, c.pages, c.omitted)
			}
			if after, _ := json.Marshal(c.task); !bytes.Equal(before, after) {
				t.Errorf("RecordTable changed the task:\n%s\n%s", before, after)
			}
		})
	}
}

func TestRecordReports(t *testing.T) {
	two := withSteps([]string{"snapshot", "extract", "extract", "finish"}, map[int]*task.StepRecords{
		2: recs([]string{"title", "price"}, map[string]string{"title": `Mug, "blue"`, "price": "$12.00"}, map[string]string{"title": "Pot | big\nnew", "price": ""}),
		3: recs([]string{"title", "rating"}, map[string]string{"title": "Jar", "rating": "4.0"}),
	})
	two.Request = "list the products"
	var many []map[string]string
	for i := 1; i <= 25; i++ {
		many = append(many, map[string]string{"n": fmt.Sprint(i)})
	}
	big := withSteps([]string{"extract"}, map[int]*task.StepRecords{1: recs([]string{"n"}, many...)})
	big.Steps[0].Records.Omitted = 7
	none := withSteps([]string{"click"}, nil)
	// a page's cell that a spreadsheet would run as a formula
	hostile := withSteps([]string{"extract"}, map[int]*task.StepRecords{1: recs([]string{"name", "price"},
		map[string]string{"name": `=HYPERLINK("http://evil.test","Mug")`, "price": "-5"})})

	render := map[string]func(*bytes.Buffer, *task.Task) error{
		"records csv":      func(b *bytes.Buffer, t *task.Task) error { return task.ReportRecordsCSV(b, t) },
		"records json":     func(b *bytes.Buffer, t *task.Task) error { return task.ReportRecordsJSON(b, t) },
		"records markdown": func(b *bytes.Buffer, t *task.Task) error { return task.ReportRecordsMarkdown(b, t) },
		"markdown":         func(b *bytes.Buffer, t *task.Task) error { return task.ReportMarkdown(b, t) },
		"json":             func(b *bytes.Buffer, t *task.Task) error { return task.ReportJSON(b, t) },
	}
	cases := []struct {
		name, report string
		task         *task.Task
		want         string   // the whole output
		has, hasNot  []string // or parts of it
		noRecords    bool
	}{
		{name: "CSV of two steps", report: "records csv", task: two,
			want: "step,title,price,rating\n2,\"Mug, \"\"blue\"\"\",$12.00,\n2,\"Pot | big\nnew\",,\n3,Jar,,4.0\n"},
		{name: "CSV of a task without extract", report: "records csv", task: none, noRecords: true},
		{name: "CSV cells a spreadsheet would evaluate are text", report: "records csv", task: hostile,
			want: "step,name,price\n1,\"'=HYPERLINK(\"\"http://evil.test\"\",\"\"Mug\"\")\",-5\n"},
		{name: "JSON of a task without extract", report: "records json", task: none, noRecords: true},
		{name: "Markdown of a task without extract", report: "records markdown", task: none, noRecords: true},
		{name: "Markdown table of the records", report: "records markdown", task: two,
			want: "# Records: list the products\n\n3 records extracted by steps 2 and 3.\n\n| step | title | price | rating |\n|---|---|---|---|\n" +
				"| 2 | Mug, \"blue\" | $12.00 |  |\n| 2 | Pot \\| big new |  |  |\n| 3 | Jar |  | 4.0 |\n"},
		{name: "Markdown table of all records, uncapped", report: "records markdown", task: big,
			has:    []string{"| 1 | 25 |\n", "25 records extracted by step 1.", "7 more records were extracted but not kept: a task keeps at most 2 MiB of records."},
			hasNot: []string{"left out here"}},
		{name: "the task's Markdown shows the records", report: "markdown", task: two,
			has: []string{"\n## Records\n\n3 records extracted by steps 2 and 3.\n\n| step | title | price | rating |\n", "| 3 | Jar |  | 4.0 |\n"}},
		{name: "the task's Markdown caps the records", report: "markdown", task: big,
			has: []string{"| 1 | 20 |\n", "\n…and 5 more, left out here: the CSV has them all (GET /api/tasks/t1/report?format=csv&data=records, or tabrelay tasks report t1 --records --format csv).\n",
				"7 more records were extracted but not kept"},
			hasNot: []string{"| 1 | 21 |"}},
		{name: "the task's Markdown without records", report: "markdown", task: none, hasNot: []string{"Records"}},
		{name: "the task's JSON types the records on their step", report: "json", task: two,
			has: []string{`"records": {
        "fields": [
          "title",
          "price"
        ],
        "items": [
          {
            "price": "$12.00",
            "title": "Mug, \"blue\""
          },`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			err := render[c.report](&b, c.task)
			if c.noRecords {
				if !errors.Is(err, task.ErrNoRecords) || b.Len() > 0 {
					t.Fatalf("error %v, output %q; want ErrNoRecords and nothing written", err, b.String())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if c.want != "" && got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
			for _, h := range c.has {
				if !strings.Contains(got, h) {
					t.Errorf("no %q in\n%s", h, got)
				}
			}
			for _, h := range c.hasNot {
				if strings.Contains(got, h) {
					t.Errorf("%q in\n%s", h, got)
				}
			}
		})
	}

	// the JSON of the records is the table, typed
	var b bytes.Buffer
	if err := task.ReportRecordsJSON(&b, two); err != nil {
		t.Fatal(err)
	}
	var got task.RecordTable
	want, _ := two.RecordTable()
	if err := json.Unmarshal(b.Bytes(), &got); err != nil || !reflect.DeepEqual(&got, want) {
		t.Errorf("records JSON %s (%v), want %+v", b.Bytes(), err, want)
	}
}

// catalogue is a page whose extract returns the records queued, typed (as the adapter does);
// other actions do nothing.
type catalogue struct {
	mu    sync.Mutex
	queue []*actions.Records
}

func (c *catalogue) Snapshot(ctx context.Context, tabID string) (*snapshot.Snapshot, error) {
	return pagetest.Page("https://shop.test/list", "Products", pagetest.El("list", "", pagetest.Ref("e1"),
		pagetest.El("listitem", "Mug", pagetest.Ref("e2")), pagetest.El("listitem", "Pot", pagetest.Ref("e3")))), nil
}

func (c *catalogue) Act(ctx context.Context, tabID string, a actions.Action) (*actions.Result, error) {
	if a.Kind != "extract" {
		return &actions.Result{Kind: a.Kind, Message: "ok"}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.queue[0]
	c.queue = c.queue[1:]
	return &actions.Result{Kind: "extract", Message: fmt.Sprintf("extracted %d records", len(r.Items)), Records: r}, nil
}

func (c *catalogue) Tabs(ctx context.Context) ([]task.Tab, error) {
	return []task.Tab{{ID: "tab1", URL: "https://shop.test/list", Title: "Products", Active: true}}, nil
}

// TestExtractStepsKeepRecords runs a task of a scripted model that extracts twice: each
// extract step keeps what the browser read, typed, within the task's MaxRecordBytes (the
// second, larger than that, keeps what fits and counts the rest), and the task store gives
// them back after reopening.
func TestExtractStepsKeepRecords(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	st, err := taskstore.OpenHome(ctx, home)
	if err != nil {
		t.Fatal(err)
	}
	small := &actions.Records{Fields: []string{"title", "price"}, Pages: 1, Items: []map[string]string{{"title": "Mug", "price": "$12.00"}, {"title": "Pot", "price": "$30.00"}}}
	var items []map[string]string
	for i := range 40000 { // about 3.2 MB: over the cap
		items = append(items, map[string]string{"sku": fmt.Sprintf("SKU-%06d", i), "text": strings.Repeat("x", 60)})
	}
	large := &actions.Records{Fields: []string{"sku", "text"}, Pages: 5, Items: items}
	b := &catalogue{queue: []*actions.Records{small, large}}
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("extract", `{"fields":["title","price"]}`),
		llmtest.ToolCall("click", `{"ref":"e2"}`),
		llmtest.ToolCall("extract", `{"pages":5}`),
		llmtest.ToolCall("finish", `{"answer":"read them"}`))
	r := newRunner(t, srv, b, func(o *task.Options) { o.Store = st })
	tk, err := r.Run(ctx, "read the products", "tab1")
	if err != nil || tk.Status != task.StatusSucceeded || len(tk.Steps) != 4 {
		t.Fatalf("task %+v (%v)", tk, err)
	}
	if got := tk.Steps[0].Records; got == nil || !reflect.DeepEqual(got.Records, *small) || got.Omitted != 0 {
		t.Fatalf("first extract step keeps %+v, want %+v", got, small)
	}
	if tk.Steps[1].Records != nil || tk.Steps[3].Records != nil {
		t.Errorf("steps that did not extract have records: %+v %+v", tk.Steps[1].Records, tk.Steps[3].Records)
	}
	kept := tk.Steps[2].Records
	if kept == nil || len(kept.Items) == 0 || kept.Omitted == 0 || len(kept.Items)+kept.Omitted != len(items) || kept.Pages != 5 ||
		!reflect.DeepEqual(kept.Items, items[:len(kept.Items)]) {
		t.Fatalf("second extract step keeps %d records and omits %d of %d", len(kept.Items), kept.Omitted, len(items))
	}
	size := 0
	for _, s := range tk.Steps {
		if s.Records != nil {
			for _, it := range s.Records.Items {
				for k, v := range it {
					size += len(k) + len(v)
				}
			}
		}
	}
	next := len("sku") + len("text") + len(items[0]["sku"]) + len(items[0]["text"])
	if size > task.MaxRecordBytes || size+next <= task.MaxRecordBytes {
		t.Errorf("the task keeps %d bytes of records, want the most that fit in %d", size, task.MaxRecordBytes)
	}
	t.Logf("kept %d of %d records (%d bytes) in the second extract step", len(kept.Items), len(items), size)
	// the model read what the browser said, not the records kept
	if res := srv.Requests()[3].ToolResults(); len(res) != 3 || !strings.Contains(res[2].Text, "extracted 40000 records") {
		t.Errorf("the model read %+v", res)
	}

	r.Close()
	_, again := storedAfterReopen(t, ctx, st, home, tk.ID)
	want, _ := tk.RecordTable()
	got, err := again.RecordTable()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("the records after reopening differ (%v): %d items, %d omitted; want %d, %d", err, len(got.Items), got.Omitted, len(want.Items), want.Omitted)
	}
}
