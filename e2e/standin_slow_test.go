package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/e2e/standin"
	"github.com/tabrelay/tabrelay/internal/testlimit"
	"github.com/tabrelay/tabrelay/relay"
)

// TestStandinSlowModel: a model that takes longer to answer than the relay waits before it
// releases an unused tab's debugger still acts on the refs of the page it was shown (a
// reasoning model, or a person standing in for one, can think for minutes).
func TestStandinSlowModel(t *testing.T) {
	const detachAfter = 2 * time.Second
	site := httptest.NewServer(http.StripPrefix("/standin/", http.FileServer(http.Dir(filepath.Join(conversationsDir, "pages")))))
	t.Cleanup(site.Close)
	sw := &llm.Switch{}
	ae := startAgentEnvWith(t, api.Options{Model: sw, ModelName: "stand-in"}, relay.HubOptions{DetachAfter: detachAfter})
	tab := ae.share(t, site.URL+"/standin/mail.html")

	var released atomic.Bool
	srv := standin.Start(standin.Func(func(ctx context.Context, n int, req llmtest.Request) (standin.Answer, error) {
		if n > 1 {
			return standin.Answer{Calls: []standin.Call{{Name: "finish", Args: json.RawMessage(`{"answer":"Starred Ana's email."}`)}}}, nil
		}
		// the first button of the page: Ana's star (named or not, by what the outline can tell)
		ref := ""
		for _, e := range standin.Elements(req.Last().Text) {
			if strings.HasPrefix(e.Elem, "button") {
				ref = e.Ref
				break
			}
		}
		if ref == "" {
			return standin.Answer{}, errors.New("the first request shows no button")
		}
		// think: until the relay has released the tab's debugger, or long past when it would
		deadline := time.Now().Add(testlimit.Scale(3 * detachAfter))
		for time.Now().Before(deadline) && !released.Load() {
			var attached bool
			expr := fmt.Sprintf(`chrome.debugger.getTargets().then(ts => !!(ts.find(x => x.id === %q) || {}).attached)`, tab.TargetID)
			if err := ae.b.ServiceWorkerEval(ctx, expr, &attached); err != nil {
				return standin.Answer{}, err
			}
			released.Store(!attached)
			select {
			case <-ctx.Done():
				return standin.Answer{}, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		return standin.Answer{Text: "Starring Ana's email.", Calls: []standin.Call{{Name: "click", Args: json.RawMessage(fmt.Sprintf(`{"ref":%q}`, ref))}}}, nil
	}))
	t.Cleanup(srv.Close)
	cfg, err := llm.FromLookup(srv.Lookup)
	if err != nil {
		t.Fatal(err)
	}
	m, err := llm.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sw.Set(m, cfg, nil)

	r := ae.call(t, http.MethodPost, "/api/tasks", map[string]any{"goal": "Star Ana's email.", "tab": tab.TargetID})
	id, _ := r.JSON(t)["id"].(string)
	if r.Status != http.StatusAccepted || id == "" {
		t.Fatalf("POST /api/tasks: HTTP %d %s", r.Status, r.Body)
	}
	var tk *task.Task
	eventually(t, 20*time.Second+3*detachAfter, "the task ends", func() (bool, string) {
		tk = ae.getTask(t, id)
		return tk.Status.Done(), string(tk.Status)
	})
	if p := srv.Problems(); len(p) > 0 {
		t.Fatalf("the stand-in model: %v", errors.Join(p...))
	}
	t.Logf("the relay released the tab's debugger while the model thought: %v", released.Load())
	exs := srv.Exchanges()
	if len(exs) < 2 {
		ae.call(t, http.MethodPost, "/api/tasks/"+url.PathEscape(id)+"/cancel", nil)
		t.Fatalf("%d model calls; task %s %s", len(exs), tk.Status, tk.Error)
	}
	if res := exs[1].Request.ToolResults(); len(res) != 1 || strings.HasPrefix(res[0].Text, "error") {
		t.Errorf("the click on a ref of the page the model was shown, after it thought for a while: %+v", res)
	}
	var starred []string
	ae.pageEval(t, tab, "state.starred", &starred)
	if !slices.Equal(starred, []string{"m1"}) {
		t.Errorf("starred %q, want [m1]", starred)
	}
}
