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

// TestScrollShowsWhatCameIntoView: a scroll's result names the elements and text that were
// below the viewport and now are not, by their outline lines; a scroll that brings nothing
// says so rather than "page unchanged".
func TestScrollShowsWhatCameIntoView(t *testing.T) {
	srv := llmtest.NewOpenAI(t,
		llmtest.ToolCall("scroll", `{"direction":"down"}`),
		llmtest.ToolCall("scroll", `{"direction":"down"}`),
		llmtest.ToolCall("finish", `{"answer":"ok"}`),
	)
	// the page's nodes, with what lies below the fold marked; built anew for each state (the
	// snapshots must not share nodes)
	nodes := func(scrolled bool) []*snapshot.Node {
		tail := pagetest.Text("Last words of the story.")
		tail.Below = !scrolled
		more := E("heading", "Comments", "level=2")
		more.Below = !scrolled
		ns := []*snapshot.Node{E("heading", "Story", "level=1", ref("e1")), pagetest.Text("First paragraph."), tail, more}
		for i := range 50 {
			n := E("link", fmt.Sprintf("Comment %d", i), ref(fmt.Sprintf("e%d", 10+i)))
			n.Below = !scrolled
			ns = append(ns, n)
		}
		return ns
	}
	p := &page{nodes: nodes(false)}
	p.onAct = func(a actions.Action) {
		if _, ok := a.Params.(*actions.Scroll); ok {
			p.nodes = nodes(true)
		}
	}
	tk, err := newRunner(t, srv, p, nil).Run(context.Background(), "read the story", "tab1")
	if err != nil || tk.Status != task.StatusSucceeded {
		t.Fatalf("%v %+v", err, tk)
	}
	first := srv.Requests()[1].Last().Text
	for _, want := range []string{"came into view:\n<page_content>\n- text: Last words of the story.\n- heading \"Comments\" [level=2]\n- link \"Comment 0\" [ref=e10]\n", `- link "Comment 37" [ref=e47]`, "[… 12 more; snapshot shows the page]"} {
		if !strings.Contains(first, want) {
			t.Errorf("the first scroll's result lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "page unchanged") || strings.Contains(first, "First paragraph") {
		t.Errorf("the first scroll's result:\n%s", first)
	}
	if second := srv.Requests()[2].Last().Text; !strings.HasSuffix(second, "nothing more came into view from below") || strings.Contains(second, "Comment") {
		t.Errorf("the second scroll's result:\n%s", second)
	}
}
