package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/task"
)

// corpusCase is one phrasing of the fast path's corpus (agent/fastpath/testdata/corpus.yaml):
// the page it is said on and the data-testids it must activate, in order (nil: it must be
// refused).
type corpusCase struct {
	page, say string
	want      []string
}

// loadCorpus reads the corpus in a stable order (page, then phrasing).
func loadCorpus(root string) ([]corpusCase, error) {
	b, err := os.ReadFile(filepath.Join(root, "agent", "fastpath", "testdata", "corpus.yaml"))
	if err != nil {
		return nil, fmt.Errorf("read the fast path's corpus: %w", err)
	}
	var c map[string]map[string][]string
	if err := yaml.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("the fast path's corpus: %w", err)
	}
	var out []corpusCase
	for page, byHit := range c {
		for hit, says := range byHit {
			var want []string
			if hit != "refuse" {
				want = strings.Split(hit, ",")
			}
			for _, s := range says {
				out = append(out, corpusCase{page: page, say: s, want: want})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].page != out[j].page {
			return out[i].page < out[j].page
		}
		return out[i].say < out[j].say
	})
	return out, nil
}

// runCorpus says every phrasing of the corpus (every fourth with -short) to POST /api/command
// on the shared tab, with no model configured, through the real extension, approving the steps
// that need confirmation (the corpus measures understanding, not the safety rules): the page is
// opened fresh for each, and the page's own record of what was activated (hits.js,
// window.__hits, each testid once, read on the browser's own endpoint) must be exactly the
// phrasing's testids; a phrasing that
// must be refused must get the "needs a model" answer (or, for a compound command whose first
// part is understood, a fast-path task that failed at the part that is not) and leave the page
// untouched. It reports
// the share solved with no model and the median time from command to done.
func (fb *fastPathBench) runCorpus(short bool, r *Results) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	cases, err := loadCorpus(root)
	if err != nil {
		return err
	}
	var hits, solvedHits, refusals, solvedRefusals int
	var times []time.Duration
	var wrong []string
	for i, c := range cases {
		if short && i%4 != 0 {
			continue
		}
		if err := fb.act(map[string]any{"kind": "navigate", "url": fb.s.site.URL(c.page)}); err != nil {
			return fmt.Errorf("open %s: %w", c.page, err)
		}
		t0 := time.Now()
		status, body, err := fb.s.rp.apiStatus(fb.ctx, "POST", "/api/command", map[string]any{"text": c.say, "tab": fb.s.tab.TargetID, "approve": true})
		took := time.Since(t0)
		if err != nil {
			return err
		}
		var got []string
		if err := fb.s.b.PageEval(fb.ctx, fb.s.tab, `[...new Set(window.__hits || [])]`, &got); err != nil {
			return fmt.Errorf("%s: read the page's hits after %q: %w", c.page, c.say, err)
		}
		if c.want == nil {
			refusals++
			// refused: the "needs a model" answer, or (a compound command whose first part is
			// understood) the fast path's task ended failed at the part it does not understand,
			// as TestCorpus counts it; either way nothing on the page was activated
			var e api.ErrorBody
			var res api.CommandResponse
			needsModel := status == http.StatusServiceUnavailable && json.Unmarshal(body, &e) == nil && e.NeedsModel
			stopped := status == http.StatusOK && json.Unmarshal(body, &res) == nil && res.Task != nil && res.FastPath && res.Status == task.StatusFailed
			if (needsModel || stopped) && len(got) == 0 {
				solvedRefusals++
			} else {
				wrong = append(wrong, fmt.Sprintf("%s %q: HTTP %d, hits %v; want it refused", c.page, c.say, status, got))
			}
			continue
		}
		hits++
		var res api.CommandResponse
		if status == http.StatusOK && json.Unmarshal(body, &res) == nil && res.Task != nil && res.FastPath && slices.Equal(got, c.want) {
			solvedHits++
			times = append(times, took)
		} else {
			wrong = append(wrong, fmt.Sprintf("%s %q: HTTP %d, hits %v; want %v", c.page, c.say, status, got, c.want))
		}
	}
	if hits == 0 || refusals == 0 {
		return fmt.Errorf("the corpus sample has %d phrasings to do and %d to refuse; it needs both", hits, refusals)
	}
	for _, w := range wrong {
		fmt.Fprintln(os.Stderr, "  corpus:", w)
	}
	share := 100 * float64(solvedHits) / float64(hits)
	r.add(Figure{Group: "fastpath", Name: fmt.Sprintf("corpus: phrasings done with no model (%d of %d)", solvedHits, hits), Unit: "%", Value: share, Target: "100%", Met: met(solvedHits == hits)})
	r.add(Figure{Group: "fastpath", Name: fmt.Sprintf("corpus: phrasings refused as they must be (%d of %d)", solvedRefusals, refusals), Unit: "%", Value: 100 * float64(solvedRefusals) / float64(refusals), Target: "100%", Met: met(solvedRefusals == refusals)})
	if len(times) > 0 {
		med, _ := stats(times)
		r.add(Figure{Group: "fastpath", Name: "corpus: command to done, median", Unit: "ms", Value: med / 1000})
	}
	return nil
}
