package e2e

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/testlimit"
)

// TestAgentReadsBeyondTheOutline drives the agent's loop on real Chromium with the real
// extension, the model scripted over the OpenAI protocol, on a long generated page:
//   - a reply whose first call fails (a ref not on the page) runs nothing after it; the scroll
//     beside it comes back as not run, and the model's text is in the next request;
//   - a scroll answers with the outline lines of what came into view, refs included;
//   - snapshot with a scope ref answers that element's subtree alone;
//   - a find text match answers the sentence that holds it and the element around it.
//
// Each scripted turn checks what the agent sent and fails the task, saying why, when it is
// not there.
func TestAgentReadsBeyondTheOutline(t *testing.T) {
	model := llmtest.NewOpenAI(t)
	ae := startAgentEnv(t, api.Options{Model: model.Model(t), ModelName: "scripted"})
	tab := ae.share(t, ae.site.URL("/gen.html?n=600"))

	fail := func(format string, args ...any) llmtest.Reply {
		return llmtest.ToolCall("fail", fmt.Sprintf(`{"reason":%q}`, fmt.Sprintf(format, args...)))
	}
	intoView := regexp.MustCompile(`(?s)came into view:\n<page_content>\n(.*?)</page_content>`)
	productRef := regexp.MustCompile(`button "Add product (\d+) to cart" \[ref=(e\d+)\]`)
	var product, scope string
	model.Push(
		llmtest.ToolCalls(llmtest.Tool("click", `{"ref":"e99999"}`), llmtest.Tool("scroll", `{"direction":"down"}`)).
			WithText("I'll open the item, then look further down."),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			res := r.ToolResults()
			if len(res) < 2 || !strings.HasPrefix(res[len(res)-1].Text, "not run: the call before it (click) failed: ") {
				return fail("the scroll after the failed click was not answered as not run: %+v", res)
			}
			said := false
			for _, m := range r.Messages {
				said = said || m.Role == "assistant" && strings.Contains(m.Text, "then look further down")
			}
			if !said {
				return fail("the model's text is not in the next request")
			}
			return llmtest.ToolCall("scroll", `{"direction":"down"}`)
		}),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			m := intoView.FindStringSubmatch(r.Last().Text)
			if m == nil {
				return fail("the scroll's result names nothing that came into view: %.600s", r.Last().Text)
			}
			p := productRef.FindStringSubmatch(m[1])
			if p == nil {
				return fail("no product's button came into view: %.600s", m[1])
			}
			product, scope = p[1], p[2]
			return llmtest.ToolCall("snapshot", fmt.Sprintf(`{"scope":%q}`, scope))
		}),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			got := r.Last().Text
			if !strings.HasPrefix(got, "part of the page ("+scope+"):\n<page_content>\n") || !strings.Contains(got, `button "Add product `+product+` to cart"`) ||
				strings.Contains(got, "Search products") {
				return fail("the scoped snapshot of %s: %.600s", scope, got)
			}
			return llmtest.ToolCall("find", `{"text":"fine item with many useful properties"}`)
		}),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			got := r.Last().Text
			if !strings.Contains(got, "text: Description of product 0, a fine item with many useful properties") || !strings.Contains(got, `— in region "Product 0"`) {
				return fail("the find result: %.600s", got)
			}
			return llmtest.ToolCall("finish", `{"answer":"read"}`)
		}),
	)
	r := ae.call(t, http.MethodPost, "/api/tasks", map[string]any{"goal": "read the products", "tab": tab.TargetID})
	id, _ := r.JSON(t)["id"].(string)
	if r.Status != http.StatusAccepted || id == "" {
		t.Fatalf("POST /api/tasks: HTTP %d %s", r.Status, r.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testlimit.Scale(2*time.Minute))
	defer cancel()
	var tk *task.Task
	for tk = ae.getTask(t, id); !tk.Status.Done(); tk = ae.getTask(t, id) {
		select {
		case <-ctx.Done():
			t.Fatalf("the task did not end: %s, %d steps", tk.Status, len(tk.Steps))
		case <-time.After(100 * time.Millisecond):
		}
	}
	if tk.Status != task.StatusSucceeded || tk.Answer != "read" {
		t.Fatalf("task %s: %s", tk.Status, tk.Error)
	}
	if len(tk.Steps) != 5 || tk.Steps[0].Status != task.StepError || tk.Steps[1].Tool != "scroll" {
		t.Errorf("steps: want the failed click, then scroll, snapshot, find and finish (the not-run scroll is no step): %+v", tk.Steps)
	}
	t.Logf("the scroll's result:\n%s", tk.Steps[1].Result)
}
