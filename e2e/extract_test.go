package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
)

// TestExtract reads the extraction fixtures through real Chromium and the real extension, on
// every door: POST /api/act (a table with its headers as fields, also as CSV; a results list over three
// pages whose items arrive by fetch after each Next), MCP through the official Go SDK's client
// (a card grid of plain divs), the built CLI (`tabrelay act extract --format csv`) and the
// agent's model (a scripted model calls the extract tool and reads the records). Every record
// is asserted.
func TestExtract(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "scripted"})
	origin := strings.TrimSuffix(ae.site.URL("/"), "/")
	share := func(t *testing.T, path string) string {
		t.Helper()
		tab := ae.share(t, ae.site.URL(path))
		t.Cleanup(func() { _ = ae.b.CloseTab(context.Background(), tab) })
		return tab.TargetID
	}
	act := func(t *testing.T, tab string, a map[string]any) actions.Result {
		t.Helper()
		r := ae.call(t, http.MethodPost, "/api/act", map[string]any{"tab": tab, "action": a})
		var res actions.Result
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &res) != nil {
			t.Fatalf("act %v: HTTP %d %.400s", a, r.Status, r.Body)
		}
		return res
	}

	t.Run("API/Table", func(t *testing.T) {
		tab := share(t, "/extract/table.html")
		res := act(t, tab, map[string]any{"kind": "extract"})
		got, _ := json.Marshal(res.Records)
		want := strings.ReplaceAll(`{"fields":["Product","Product url","SKU","Price","Stock"],"items":[`+
			`{"Price":"$24.00","Product":"Kettle","Product url":"ORIGIN/p/kettle","SKU":"K-100","Stock":"12"},`+
			`{"Price":"$31.50","Product":"Toaster","Product url":"ORIGIN/p/toaster","SKU":"T-200","Stock":"0"},`+
			`{"Price":"$89.99","Product":"Blender","Product url":"ORIGIN/p/blender","SKU":"B-300","Stock":""},`+
			`{"Price":"$120.00","Product":"Mixer","Product url":"ORIGIN/p/mixer","SKU":"M-400","Stock":"3"},`+
			`{"Price":"$45.25","Product":"Grill","Product url":"ORIGIN/p/grill","SKU":"G-500","Stock":"7"}],"pages":1}`, "ORIGIN", origin)
		if string(got) != want {
			t.Errorf("records\n%s\nwant\n%s", got, want)
		}
		// the same records as a CSV file
		r := ae.call(t, http.MethodPost, "/api/act?format=csv", map[string]any{"tab": tab, "action": map[string]any{"kind": "extract", "fields": []string{"Product", "Stock"}}})
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
			string(r.Body) != "Product,Stock\nKettle,12\nToaster,0\nBlender,\nMixer,3\nGrill,7\n" {
			t.Errorf("POST /api/act?format=csv: HTTP %d %s\n%s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
	})

	t.Run("API/ResultsOverPages", func(t *testing.T) {
		tab := share(t, "/extract/results.html")
		act(t, tab, map[string]any{"kind": "wait", "text": "Page 1 of 3"})
		res := act(t, tab, map[string]any{"kind": "extract", "fields": []string{"title", "price", "url"}, "pages": 3})
		var b strings.Builder
		if err := res.Records.WriteCSV(&b); err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll("title,price,url\n"+
			"Desk lamp,$19.99,ORIGIN/item/Desk%20lamp\nFloor lamp,$49.00,ORIGIN/item/Floor%20lamp\nLava lamp,$15.50,ORIGIN/item/Lava%20lamp\n"+
			"Clip lamp,$12.00,ORIGIN/item/Clip%20lamp\nTable lamp,$34.00,ORIGIN/item/Table%20lamp\nNight lamp,$9.99,ORIGIN/item/Night%20lamp\n"+
			"Wall lamp,$59.00,ORIGIN/item/Wall%20lamp\nSalt lamp,$22.00,ORIGIN/item/Salt%20lamp\n", "ORIGIN", origin)
		if b.String() != want || res.Records.Pages != 3 {
			t.Errorf("records of %d pages\n%s\nwant 3 pages of\n%s", res.Records.Pages, b.String(), want)
		}
		if res.URL != ae.site.URL("/extract/results.html?page=3") {
			t.Errorf("the tab ends on %s, want page 3", res.URL)
		}
	})

	t.Run("MCP/Cards", func(t *testing.T) {
		tab := share(t, "/extract/cards.html")
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		client := mcp.NewClient(&mcp.Implementation{Name: "e2e-extract", Version: "1"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ae.httpURL() + "/mcp?tools=extract",
			HTTPClient: &http.Client{Transport: mcpBearer{ae.token()}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "switch_tab", Arguments: map[string]any{"tab": tab}}); err != nil || res.IsError {
			t.Fatalf("switch_tab: %v %+v", err, res)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "extract", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("extract: %v %+v", err, res)
		}
		text := mcpText(res)
		want := strings.ReplaceAll(`extracted 6 records with fields title, url, price, text
Records (one JSON object a line):
{"title":"Blue mug","url":"ORIGIN/p/1","price":"$12.00","text":"4.5 stars"}
{"title":"Red kettle","url":"ORIGIN/p/2","price":"$39.00","text":"4.1 stars"}
{"title":"Green teapot","url":"ORIGIN/p/3","price":"$27.50","text":"3.9 stars"}
{"title":"Steel pan","url":"ORIGIN/p/4","price":"$55.00","text":"4.8 stars"}
{"title":"Wooden spoon","url":"ORIGIN/p/5","price":"$4.25","text":""}
{"title":"Glass jar","url":"ORIGIN/p/6","price":"$8.00","text":"4.0 stars"}`, "ORIGIN", origin)
		if !strings.HasPrefix(text, want) {
			t.Errorf("extract over MCP:\n%s\nwant it to begin with\n%s", text, want)
		}
	})

	t.Run("Model/Cards", func(t *testing.T) {
		tab := share(t, "/extract/cards.html")
		model.Push(
			llmtest.ToolCall("extract", `{"fields":["title","price"],"maxItems":2}`),
			llmtest.ToolCall("finish", `{"answer":"Blue mug $12.00, Red kettle $39.00"}`))
		r := ae.call(t, http.MethodPost, "/api/tasks", map[string]any{"goal": "list the first two products with their prices", "tab": tab})
		id, _ := r.JSON(t)["id"].(string)
		if r.Status != http.StatusAccepted || id == "" {
			t.Fatalf("POST /api/tasks: HTTP %d %s", r.Status, r.Body)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		collect(t, ae.follow(t, ctx, id), 45*time.Second)
		if tk := ae.getTask(t, id); tk.Status != task.StatusSucceeded || len(tk.Steps) != 2 || tk.Steps[0].Tool != "extract" || tk.Steps[0].Status != task.StepOK {
			t.Fatalf("task %s: %+v", tk.Status, tk.Steps)
		}
		reqs := model.Requests()
		res := reqs[len(reqs)-1].ToolResults()
		want := "Records (one JSON object a line):\n" + `{"title":"Blue mug","price":"$12.00"}` + "\n" + `{"title":"Red kettle","price":"$39.00"}` + "\n</page_content>"
		if len(res) != 1 || !strings.Contains(res[0].Text, want) {
			t.Errorf("the model read %+v, want the records %s", res, want)
		}
	})

	t.Run("CLI/CSV", func(t *testing.T) {
		tab := share(t, "/extract/table.html")
		tr := cliRunner(t, ae, buildCLI(t))
		out, errOut, code := tr("act", "--tab", tab, "--format", "csv", "extract", "name=Product", "price", "stock=#4")
		want := "name,price,stock\nKettle,$24.00,12\nToaster,$31.50,0\nBlender,$89.99,\nMixer,$120.00,3\nGrill,$45.25,7\n"
		if code != 0 || out != want {
			t.Errorf("tabrelay act extract --format csv: exit %d\n%s\nwant\n%s\nstderr: %s", code, out, want, errOut)
		}
		if !strings.Contains(errOut, "extracted 5 records with fields name, price, stock") {
			t.Errorf("stderr %q", errOut)
		}
	})
}

// TestSnapshotSummary reads the summary of a sign-in page through real Chromium and the real
// extension: typed (GET /api/snapshot?format=json) and in the header of the text.
func TestSnapshotSummary(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	tab := ae.share(t, ae.site.URL("/extract/form.html"))
	t.Cleanup(func() { _ = ae.b.CloseTab(context.Background(), tab) })
	q := "/api/snapshot?tab=" + url.QueryEscape(tab.TargetID)
	r := ae.call(t, http.MethodGet, q+"&format=json", nil)
	var s snapshot.Snapshot
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &s) != nil || s.Summary == nil {
		t.Fatalf("GET /api/snapshot format=json: HTTP %d %.400s", r.Status, r.Body)
	}
	sum := s.Summary
	ref := func(role, name string) string {
		for _, n := range s.Nodes() {
			if n.Role == role && n.Name == name && n.Ref != "" {
				return n.Ref
			}
		}
		t.Fatalf("no %q with a ref", name)
		return ""
	}
	if sum.Account != "signed out" || sum.AccountBy == nil || sum.AccountBy.Name != "Log in" || sum.AccountBy.Role != "link" {
		t.Errorf("account %q by %+v, want signed out by the Log in link", sum.Account, sum.AccountBy)
	}
	if len(sum.Forms) != 2 || sum.Forms[0].Name != "Sign in" || len(sum.Forms[0].Fields) != 3 ||
		sum.Forms[0].Fields[1] != (snapshot.Control{Role: "textbox", Name: "Password", Ref: ref("textbox", "Password")}) ||
		len(sum.Forms[0].Submit) != 1 || sum.Forms[0].Submit[0].Ref != ref("button", "Log in") || sum.Forms[0].Submit[0].Role != "button" ||
		sum.Forms[1].Name != "Newsletter" || sum.Forms[1].Submit[0].Name != "Subscribe" {
		t.Errorf("forms %+v", sum.Forms)
	}
	if len(sum.Collections) != 1 || sum.Collections[0].Count != 5 || sum.Collections[0].Role != "listitem" || sum.Collections[0].Example != ref("link", "Billing") {
		t.Errorf("collections %+v", sum.Collections)
	}
	r = ae.call(t, http.MethodGet, q, nil)
	head, _, _ := strings.Cut(string(r.Body), "\n- ")
	for _, want := range []string{
		`# looks signed out (link "Log in" ` + sum.AccountBy.Ref + `)`,
		`# forms: form "Sign in" (textbox "Email" ` + ref("textbox", "Email") + `, textbox "Password" ` + ref("textbox", "Password") + `, checkbox "Keep me signed in" ` +
			ref("checkbox", "Keep me signed in") + `; submit button "Log in" ` + sum.Forms[0].Submit[0].Ref + `); form "Newsletter" (textbox "Your email" ` +
			ref("textbox", "Your email") + `; submit button "Subscribe" ` + ref("button", "Subscribe") + `)`,
		`# repeats: 5 listitems in list (first ` + ref("link", "Billing") + `) — extract reads them as records`,
	} {
		if !strings.Contains(head+"\n", want+"\n") {
			t.Errorf("the header has no line %q:\n%s", want, head)
		}
	}
}
