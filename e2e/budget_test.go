package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/snapshot"
)

// TestSnapshotBudget reads the 5k-element generated page through the real extension (the 20k
// page's figures are the benchmark's: each full read of it takes tens of seconds here): with
// maxTokens=4000 the snapshot is at most 4,000 tokens (cl100k_base, snapshot.Tokens) and
// says what it left out, and every element with a ref of the full snapshot is found by the
// search action (by its role, and by its name for a spread of them).
func TestSnapshotBudget(t *testing.T) {
	// a large page's full tree takes long through the extension on a busy machine
	ae := startAgentEnv(t, api.Options{ActionTimeout: 3 * time.Minute})
	tab := ae.share(t, ae.site.URL("/gen.html?n=5000"))
	q := "/api/snapshot?tab=" + url.QueryEscape(tab.TargetID)

	r := ae.call(t, http.MethodGet, q+"&maxTokens=4000", nil)
	text := string(r.Body)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /api/snapshot maxTokens=4000: HTTP %d %s", r.Status, text)
	}
	tokens := snapshot.Tokens(text)
	t.Logf("maxTokens=4000: %d tokens, header:\n%s", tokens, strings.Join(strings.SplitN(text, "\n", 4)[:3], "\n"))
	if tokens > 4000 {
		t.Errorf("maxTokens=4000 gave %d tokens", tokens)
	}
	if tokens < 3000 {
		t.Errorf("maxTokens=4000 used only %d tokens", tokens)
	}
	for _, want := range []string{`searchbox "Search products"`, "lines left out", "find searches them", "more regions like e"} {
		if !strings.Contains(text, want) {
			t.Errorf("the budgeted snapshot has no %q:\n%s", want, text)
		}
	}

	r = ae.call(t, http.MethodGet, q+"&format=json", nil)
	var full snapshot.Snapshot
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &full) != nil || full.Root == nil {
		t.Fatalf("GET /api/snapshot format=json: HTTP %d %.300s", r.Status, r.Body)
	}
	var els []*snapshot.Node
	roles := map[string]bool{}
	for _, n := range full.Nodes() {
		if n.Ref != "" {
			els = append(els, n)
			roles[n.Role] = true
		}
	}
	if len(els) < 2000 {
		t.Fatalf("the full snapshot has %d refs, want ≥ 2000", len(els))
	}
	search := func(p map[string]any) []actions.SearchMatch {
		t.Helper()
		p["kind"] = "search"
		r := ae.call(t, http.MethodPost, "/api/act", map[string]any{"tab": tab.TargetID, "action": p})
		var res actions.Result
		if r.Status != http.StatusOK || json.Unmarshal(r.Body, &res) != nil {
			t.Fatalf("search %v: HTTP %d %.300s", p, r.Status, r.Body)
		}
		return res.Matches
	}
	// by role, through the door: every ref answered
	answered := map[string]bool{}
	for role := range roles {
		for _, m := range search(map[string]any{"role": role, "limit": 1 << 20}) {
			answered[m.Ref] = true
		}
	}
	found := 0
	for _, n := range els {
		if answered[n.Ref] {
			found++
		} else if found+1 < len(els) {
			t.Errorf("search role=%s does not answer %s (%s)", n.Role, n.Ref, full.Line(n))
		}
	}
	t.Logf("search by role finds %d of %d interactive elements (%.1f%%)", found, len(els), 100*float64(found)/float64(len(els)))
	// by name: a spread through the door, and one in ten on the page model with the action's
	// own matching
	byName := func(n *snapshot.Node, ms []actions.SearchMatch) bool {
		for _, m := range ms {
			if m.Ref == n.Ref {
				return true
			}
		}
		return false
	}
	for i := 0; i < len(els); i += len(els)/6 + 1 {
		n := els[i]
		// a name many elements share ("Qty") answers them all when the limit allows
		if ms := search(map[string]any{"text": n.Name, "limit": 1 << 20}); !byName(n, ms) {
			t.Errorf("search text=%q does not answer %s: %+v", n.Name, n.Ref, ms)
		}
	}
	for i, n := range els {
		if i%10 != 0 {
			continue
		}
		p := &actions.Search{Text: n.Name, Limit: 1 << 20}
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: %v", full.Line(n), err)
		}
		if ms, _ := actions.SearchPage(&full, p); !byName(n, ms) {
			t.Errorf("search text=%q on the page model does not answer %s: %+v", n.Name, n.Ref, ms)
		}
	}
}
