package e2e

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/snapshot"
)

// TestSnapshotBudgetRealTokens reads pages in English and Chinese through the real extension
// with token budgets (the model's 700, the CLI's usual 2,000, 4,000): the text, header
// included, never takes more than the budget in real tokens (cl100k_base) and uses at least
// half of it, and says what it left out.
func TestSnapshotBudgetRealTokens(t *testing.T) {
	ae := startAgentEnv(t, api.Options{ActionTimeout: 3 * time.Minute})
	for _, path := range []string{"/outline/news-zh.html?n=300", "/outline/news-zh.html?n=40", "/gen.html?n=2000", "/gen.html?n=300"} {
		tab := ae.share(t, ae.site.URL(path))
		for _, budget := range []int{700, 2000, 4000} {
			for _, interactive := range []bool{false, true} {
				q := "/api/snapshot?tab=" + url.QueryEscape(tab.TargetID) + "&maxTokens=" + strconv.Itoa(budget)
				if interactive {
					q += "&interactive=true"
				}
				r := ae.call(t, http.MethodGet, q, nil)
				if r.Status != http.StatusOK {
					t.Fatalf("GET %s: HTTP %d %s", q, r.Status, r.Body)
				}
				text := string(r.Body)
				got := snapshot.Tokens(text)
				t.Logf("%s maxTokens=%d interactive=%v: %d tokens (%d bytes)", path, budget, interactive, got, len(text))
				if got > budget {
					t.Errorf("%s maxTokens=%d interactive=%v: %d tokens, over the budget:\n%s", path, budget, interactive, got, text)
				}
				if !strings.Contains(text, "lines left out") {
					continue // the whole page fits
				}
				if got < budget/2 {
					t.Errorf("%s maxTokens=%d interactive=%v: only %d tokens while lines were left out:\n%s", path, budget, interactive, got, text)
				}
			}
		}
	}
}
