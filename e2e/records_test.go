package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/browser"
)

// TestTaskRecords runs a task of a scripted model on real Chromium with the real extension
// that extracts twice (the extraction fixtures' product table with its inferred fields, then
// the card grid with two fields named like the table's) and exports what it read: the records
// report as CSV through the HTTP API (every record asserted, the table's fields and the cards'
// joined in one header), typed on the steps of the JSON report, as a Markdown table, through
// the built CLI (`tabrelay tasks report ID --records --format csv`, `tasks list`), from the
// side panel's "Download records (CSV)" link (and no link for a task without records), and
// again after the server restarts on the same SQLite file.
func TestTaskRecords(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	opts := api.Options{Model: model.Model(t), ModelName: "scripted"}
	ae := startAgentEnv(t, opts)
	origin := strings.TrimSuffix(ae.site.URL("/"), "/")
	page := ae.share(t, ae.site.URL("/extract/table.html"))
	cards, _ := json.Marshal(map[string]string{"url": ae.site.URL("/extract/cards.html")})
	model.Push(
		llmtest.ToolCall("extract", `{}`),
		llmtest.ToolCall("navigate", string(cards)),
		llmtest.ToolCall("extract", `{"fields":["Product=title","Price"]}`),
		llmtest.ToolCall("finish", `{"answer":"5 appliances and 6 kitchen items"}`))
	r := ae.call(t, http.MethodPost, "/api/tasks", map[string]any{"goal": "list the products of both pages", "tab": page.TargetID})
	id, _ := r.JSON(t)["id"].(string)
	if r.Status != http.StatusAccepted || id == "" {
		t.Fatalf("POST /api/tasks: HTTP %d %s", r.Status, r.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	collect(t, ae.follow(t, ctx, id), 60*time.Second)
	tk := ae.getTask(t, id)
	if tk.Status != task.StatusSucceeded || len(tk.Steps) != 4 || tk.Steps[0].Tool != "extract" || tk.Steps[2].Tool != "extract" ||
		tk.Steps[0].Status != task.StepOK || tk.Steps[2].Status != task.StepOK {
		t.Fatalf("task %s (%s): %+v", tk.Status, tk.Error, tk.Steps)
	}

	// every record, the table's and the cards', in one table: the cards fill the fields
	// named like the table's and leave the others empty
	wantCSV := strings.ReplaceAll("step,Product,Product url,SKU,Price,Stock\n"+
		"1,Kettle,ORIGIN/p/kettle,K-100,$24.00,12\n"+
		"1,Toaster,ORIGIN/p/toaster,T-200,$31.50,0\n"+
		"1,Blender,ORIGIN/p/blender,B-300,$89.99,\n"+
		"1,Mixer,ORIGIN/p/mixer,M-400,$120.00,3\n"+
		"1,Grill,ORIGIN/p/grill,G-500,$45.25,7\n"+
		"3,Blue mug,,,$12.00,\n"+
		"3,Red kettle,,,$39.00,\n"+
		"3,Green teapot,,,$27.50,\n"+
		"3,Steel pan,,,$55.00,\n"+
		"3,Wooden spoon,,,$4.25,\n"+
		"3,Glass jar,,,$8.00,\n", "ORIGIN", origin)
	checkCSV := func(t *testing.T, when string) {
		t.Helper()
		r := ae.call(t, http.MethodGet, "/api/tasks/"+id+"/report?format=csv&data=records", nil)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			r.Header.Get("Content-Disposition") != `attachment; filename="tabrelay-task-`+id+`-records.csv"` || string(r.Body) != wantCSV {
			t.Errorf("%s: GET report?format=csv&data=records: HTTP %d %s %q\n%s\nwant\n%s", when, r.Status, r.Header.Get("Content-Type"),
				r.Header.Get("Content-Disposition"), r.Body, wantCSV)
		}
	}

	t.Run("API", func(t *testing.T) {
		checkCSV(t, "after the task")
		// typed on the extract steps of the task's JSON report
		r := ae.call(t, http.MethodGet, "/api/tasks/"+id+"/report?format=json", nil)
		var got task.Task
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &got) != nil || len(got.Steps) != 4 {
			t.Fatalf("JSON report: HTTP %d %.300s", r.Status, r.Body)
		}
		wantTable := &actions.Records{Fields: []string{"Product", "Product url", "SKU", "Price", "Stock"}, Pages: 1, Items: []map[string]string{
			{"Product": "Kettle", "Product url": origin + "/p/kettle", "SKU": "K-100", "Price": "$24.00", "Stock": "12"},
			{"Product": "Toaster", "Product url": origin + "/p/toaster", "SKU": "T-200", "Price": "$31.50", "Stock": "0"},
			{"Product": "Blender", "Product url": origin + "/p/blender", "SKU": "B-300", "Price": "$89.99", "Stock": ""},
			{"Product": "Mixer", "Product url": origin + "/p/mixer", "SKU": "M-400", "Price": "$120.00", "Stock": "3"},
			{"Product": "Grill", "Product url": origin + "/p/grill", "SKU": "G-500", "Price": "$45.25", "Stock": "7"}}}
		if rec := got.Steps[0].Records; rec == nil || !reflect.DeepEqual(rec.Records, *wantTable) || rec.Omitted != 0 {
			t.Errorf("step 1's records %+v\nwant %+v", rec, wantTable)
		}
		if rec := got.Steps[2].Records; rec == nil || !reflect.DeepEqual(rec.Fields, []string{"Product", "Price"}) || len(rec.Items) != 6 ||
			rec.Items[5]["Product"] != "Glass jar" || rec.Items[5]["Price"] != "$8.00" {
			t.Errorf("step 3's records %+v", rec)
		}
		if got.Steps[1].Records != nil || got.Steps[3].Records != nil {
			t.Errorf("navigate or finish has records: %+v %+v", got.Steps[1].Records, got.Steps[3].Records)
		}
		// the Markdown report shows them as a table
		r = ae.call(t, http.MethodGet, "/api/tasks/"+id+"/report?format=markdown", nil)
		for _, want := range []string{"## Records\n\n11 records extracted by steps 1 and 3.\n\n| step | Product | Product url | SKU | Price | Stock |\n",
			"| 1 | Kettle | " + origin + "/p/kettle | K-100 | $24.00 | 12 |\n", "| 3 | Glass jar |  |  | $8.00 |  |\n"} {
			if !strings.Contains(string(r.Body), want) {
				t.Errorf("the Markdown report lacks %q:\n%s", want, r.Body)
			}
		}
	})

	t.Run("CLI", func(t *testing.T) {
		tr := cliRunner(t, ae, buildCLI(t))
		out, errOut, code := tr("tasks", "report", id, "--format", "csv", "--records")
		if code != 0 || out != wantCSV {
			t.Errorf("tabrelay tasks report --format csv --records: exit %d\n%s\nwant\n%s\nstderr: %s", code, out, wantCSV, errOut)
		}
		out, errOut, code = tr("tasks", "list")
		if code != 0 || !strings.Contains(out, id+"  succeeded") || !strings.Contains(out, "11 records  list the products of both pages") {
			t.Errorf("tabrelay tasks list: exit %d\n%s\nstderr: %s", code, out, errOut)
		}
	})

	// a task of the fast path, which extracts nothing: no records, and an error that says so
	r = ae.call(t, http.MethodPost, "/api/command", map[string]any{"text": "scroll down", "tab": page.TargetID})
	plain, _ := r.JSON(t)["id"].(string)
	if r.Status != http.StatusOK || plain == "" {
		t.Fatalf("POST /api/command scroll down: HTTP %d %s", r.Status, r.Body)
	}
	r = ae.call(t, http.MethodGet, "/api/tasks/"+plain+"/report?format=csv&data=records", nil)
	var e api.ErrorBody
	if r.Status != http.StatusNotFound || json.Unmarshal(r.Body, &e) != nil || e.Task != plain ||
		!strings.Contains(e.Error, "the task extracted nothing: none of its 1 steps ran extract") {
		t.Errorf("records of a task without extract: HTTP %d %s", r.Status, r.Body)
	}

	t.Run("SidePanel", func(t *testing.T) {
		pe := openPanel(t, ae, page)
		shown := func(task string) {
			t.Helper()
			eventually(t, 15*time.Second, "the panel lists task "+task, func() (bool, string) {
				var n int
				pe.js(t, fmt.Sprintf(`tabrelayPanel.loadRecent().then(() => document.querySelectorAll('#recent li[data-task=%q]').length)`, task), &n)
				return n == 1, ""
			})
			pe.js(t, fmt.Sprintf(`(document.querySelector('#recent li[data-task=%q] div').click(), true)`, task), nil)
		}
		// a task without records offers no link
		shown(plain)
		var hidden bool
		pe.js(t, `document.getElementById('records-csv').hidden`, &hidden)
		if !hidden {
			t.Error("the panel offers records for a task that extracted nothing")
		}
		// the task with records offers them; the link downloads the CSV
		shown(id)
		var link struct {
			Hidden bool   `json:"hidden"`
			Text   string `json:"text"`
			Title  string `json:"title"`
		}
		eventually(t, 10*time.Second, "the panel shows the task's records link", func() (bool, string) {
			pe.js(t, `(() => { const a = document.getElementById('records-csv'); return {hidden: a.hidden || !!a.closest('[hidden]'), text: a.innerText, title: a.title}; })()`, &link)
			return !link.Hidden, fmt.Sprint(link)
		})
		if link.Text != "Download records (CSV)" || link.Title != "11 records from steps 1, 3" {
			t.Errorf("records link %+v", link)
		}
		pe.js(t, `(tabrelayPanel.state.downloads.length = 0, document.getElementById('records-csv').click(), true)`, nil)
		var dl []struct {
			Data string `json:"data"`
			Size int    `json:"size"`
			Type string `json:"type"`
			Name string `json:"name"`
		}
		eventually(t, 10*time.Second, "the records are downloaded", func() (bool, string) {
			pe.js(t, `tabrelayPanel.state.downloads`, &dl)
			return len(dl) == 1, fmt.Sprint(dl)
		})
		if d := dl[0]; d.Data != "records" || d.Size != len(wantCSV) || d.Type != "text/csv; charset=utf-8" || d.Name != "tabrelay-task-"+id+"-records.csv" {
			t.Errorf("download %+v, want %d bytes of text/csv named tabrelay-task-%s-records.csv", d, len(wantCSV), id)
		}
		var notice string
		pe.js(t, `document.getElementById('notice').hidden ? '' : document.getElementById('notice').innerText`, &notice)
		if strings.Contains(notice, "records") {
			t.Errorf("notice %q", notice)
		}
	})

	t.Run("AfterRestart", func(t *testing.T) {
		ae.restart(t, opts, page)
		checkCSV(t, "after a restart")
		tr := cliRunner(t, ae, buildCLI(t))
		if out, errOut, code := tr("tasks", "report", id, "--format=csv", "--records"); code != 0 || out != wantCSV {
			t.Errorf("tabrelay tasks report after a restart: exit %d\n%s\nstderr: %s", code, out, errOut)
		}
	})
}

// openPanel opens the side panel as a tab in its own window, about tab page, and waits until
// it has read the server's state.
func openPanel(t *testing.T, ae *agentEnv, page browser.Tab) *panelEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	panel, err := ae.b.NewWindowTab(ctx, fmt.Sprintf("chrome-extension://%s/sidepanel.html?tabId=%d", ae.b.ExtensionID, page.TabID))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ae.b.CloseTab(context.Background(), panel) })
	pe := &panelEnv{agentEnv: ae, page: page, panel: panel}
	eventually(t, 15*time.Second, "the panel sees the server and the pairing", func() (bool, string) {
		var st struct{ Server, Pairing string }
		pe.js(t, `({server: tabrelayPanel.state.server, pairing: tabrelayPanel.state.pairing})`, &st)
		return st.Server == "up" && st.Pairing == "ok", fmt.Sprint(st)
	})
	return pe
}
