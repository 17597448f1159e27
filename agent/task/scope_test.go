package task_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// scopedPage is a page whose browser answers a snapshot action with a scope as the action
// service does: the outline of that element's subtree alone.
type scopedPage struct {
	page
	scopes []string
}

func (p *scopedPage) Act(ctx context.Context, tabID string, a actions.Action) (*actions.Result, error) {
	s, ok := a.Params.(*actions.Snapshot)
	if !ok {
		return p.page.Act(ctx, tabID, a)
	}
	p.scopes = append(p.scopes, s.Scope)
	full, _ := p.Snapshot(ctx, tabID)
	n := full.Find(s.Scope)
	if n == nil {
		return nil, fmt.Errorf("snapshot: scope %s is not on the page (any more); take a snapshot without scope", s.Scope)
	}
	sub := pagetest.Page(full.URL, full.Title, n)
	return &actions.Result{Kind: "snapshot", Snapshot: sub, URL: sub.URL, Title: sub.Title}, nil
}

// TestSnapshotScope: snapshot with a scope ref reads that element's subtree and shows it as
// page data; the model's whole-page outline stays; an unknown ref is an error the model can act on.
func TestSnapshotScope(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("snapshot", `{"scope":"e2"}`),
		llmtest.ToolCall("snapshot", `{"scope":"e99"}`),
		llmtest.ToolCall("finish", `{"answer":"ok"}`),
	)
	p := &scopedPage{page: page{nodes: []*snapshot.Node{
		E("navigation", "Site", ref("e1"), E("link", "Home", ref("e5"))),
		E("article", "Story", ref("e2"), E("heading", "Moon landing", "level=1", ref("e3")), pagetest.Text("By Ada, 3 May")),
	}}}
	tk, err := newRunner(t, srv, p, nil).Run(context.Background(), "who wrote the story?", "tab1")
	if err != nil || tk.Status != task.StatusSucceeded {
		t.Fatalf("%v %+v", err, tk)
	}
	if strings.Join(p.scopes, ",") != "e2,e99" {
		t.Errorf("scopes asked of the browser: %v", p.scopes)
	}
	res := srv.Requests()[1].Last().Text
	if !strings.HasPrefix(res, "part of the page (e2):\n<page_content>\n") || !strings.Contains(res, "By Ada, 3 May") || strings.Contains(res, `link "Home"`) {
		t.Errorf("scoped snapshot result:\n%s", res)
	}
	if bad := srv.Requests()[2].Last().Text; !strings.Contains(bad, "scope e99 is not on the page") {
		t.Errorf("unknown scope: %s", bad)
	}
	if tk.Steps[0].Status != task.StepOK || tk.Steps[1].Status != task.StepError {
		t.Errorf("steps %+v", tk.Steps)
	}
}
