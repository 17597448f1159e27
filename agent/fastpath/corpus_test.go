package fastpath

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/snapshottest"
)

// browserEnv is the real Chromium and fixture site the phrasing corpus runs on.
type browserEnv struct {
	b   *snapshottest.Browser
	srv *fixtures.Server
	svc *actions.Service
	err error
}

var shared browserEnv // set once by TestMain, read-only afterwards

func TestMain(m *testing.M) {
	short := false
	for _, a := range os.Args {
		if a == "-test.short=true" || a == "-test.short" {
			short = true
		}
	}
	if !short {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		shared.srv, shared.err = fixtures.Start()
		if shared.err == nil {
			shared.b, shared.err = snapshottest.Launch(ctx)
		}
		if shared.err == nil {
			// The corpus pages change only in their own event handlers (no timer, no request
			// after load): a short quiet window is settled for them, and each phrasing's reload
			// and steps do not wait the default window out (the settle wait has tests of its
			// own, in agent/actions).
			shared.svc = actions.New(shared.b.Client, actions.Options{Timeout: 20 * time.Second, SettleQuiet: 100 * time.Millisecond})
		}
		cancel()
	}
	code := m.Run()
	if shared.svc != nil {
		shared.svc.Close(context.Background())
	}
	if shared.b != nil {
		shared.b.Close()
	}
	if shared.srv != nil {
		shared.srv.Close()
	}
	os.Exit(code)
}

// corpus is testdata/corpus.yaml: per fixture page, the testids a phrasing must hit (in order,
// comma-separated, for compound commands) mapped to its phrasings, and "refuse" for phrasings
// that must produce no action.
type corpus map[string]map[string][]string

type corpusCase struct {
	page, say string
	want      []string // nil: must refuse
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	b, err := os.ReadFile("testdata/corpus.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c corpus
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("testdata/corpus.yaml: %v", err)
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
	return out
}

// TestCorpus runs every phrasing of testdata/corpus.yaml in real Chromium: the page is loaded
// fresh, each step of the command is matched on a fresh snapshot (as the agent's runner does)
// and run through the action service, and the page's own record of activations (hits.js,
// window.__hits) must equal the expected testids exactly; a "refuse" phrasing must produce no
// action and leave the page untouched. It logs the share solved and the median time from
// command to done.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Chromium (skipped with -short)")
	}
	if shared.err != nil {
		t.Fatalf("browser: %v", shared.err)
	}
	cases := loadCorpus(t)
	if len(cases) < 300 {
		t.Errorf("corpus has %d phrasings, want at least 300", len(cases))
	}
	if page := os.Getenv("FASTPATH_CORPUS_PAGE"); page != "" {
		// one page's phrasings, while writing them
		cases = slices.DeleteFunc(cases, func(c corpusCase) bool { return c.page != page })
	}
	ctx, cancel := context.WithTimeout(callerContext(), 10*time.Minute)
	defer cancel()
	tabs := map[string]string{}
	defer func() {
		for _, id := range tabs {
			shared.b.CloseTab(context.Background(), id)
		}
	}()
	var solved, hitCases, solvedHits int
	var times []time.Duration
	for _, c := range cases {
		id, ok := tabs[c.page]
		if !ok {
			var err error
			if id, err = shared.b.NewTab(ctx, shared.srv.URL(c.page)); err != nil {
				t.Fatal(err)
			}
			tabs[c.page] = id
		} else if _, err := shared.svc.Act(ctx, id, actions.Do(actions.Reload{})); err != nil {
			t.Fatalf("%s: reload: %v", c.page, err)
		}
		waitLoaded(t, ctx, id)
		start := time.Now()
		got, why := runCommand(ctx, id, c.say)
		took := time.Since(start)
		hits := pageHits(t, ctx, id)
		if c.want == nil {
			if why == "" || len(hits) > 0 {
				t.Errorf("%s: %q must refuse, but it ran %v (page hits %v)", c.page, c.say, got, hits)
				continue
			}
			solved++
			continue
		}
		hitCases++
		if why != "" || !slices.Equal(hits, c.want) {
			t.Errorf("%s: %q must hit %v; page hits %v, ran %v, refused: %s", c.page, c.say, c.want, hits, got, why)
			continue
		}
		solved++
		solvedHits++
		times = append(times, took)
	}
	slices.Sort(times)
	var median time.Duration
	if len(times) > 0 {
		median = times[len(times)/2]
	}
	t.Logf("fast path corpus: %d/%d phrasings right (%.1f%%); %d/%d must-hit phrasings solved with no model; median time from command to done %v",
		solved, len(cases), 100*float64(solved)/float64(len(cases)), solvedHits, hitCases, median)
}

// runCommand runs a command as the runner does: each step matched on a fresh snapshot after the
// previous one ran. It returns the actions run and, when it stopped, why.
func runCommand(ctx context.Context, id, command string) ([]string, string) {
	var ran []string
	first, err := shared.svc.Snapshot(ctx, id, snapshot.Options{})
	if err != nil {
		return nil, "snapshot: " + err.Error()
	}
	for _, step := range Split(command, first) {
		s, err := shared.svc.Snapshot(ctx, id, snapshot.Options{})
		if err != nil {
			return ran, "snapshot: " + err.Error()
		}
		r := Match(step, s, nil)
		if !r.OK() || r.Action == nil {
			return ran, string(r.Outcome) + ": " + r.Reason
		}
		b, _ := json.Marshal(r.Action)
		ran = append(ran, string(b))
		if _, err := shared.svc.Act(ctx, id, *r.Action); err != nil {
			return ran, "act: " + err.Error()
		}
	}
	return ran, ""
}

func waitLoaded(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	loaded := "location.protocol !== 'about:' && document.readyState === 'complete' && Array.isArray(window.__hits)"
	if _, err := shared.svc.Act(ctx, id, actions.Do(actions.Wait{Expression: loaded})); err != nil {
		t.Fatal(err)
	}
}

// pageHits returns the distinct testids the page recorded, in order.
func pageHits(t *testing.T, ctx context.Context, id string) []string {
	t.Helper()
	r, err := shared.svc.Act(ctx, id, actions.Do(actions.Evaluate{Expression: "[...new Set(window.__hits)]"}))
	if err != nil {
		t.Fatal(err)
	}
	var h []string
	if err := json.Unmarshal(r.Value, &h); err != nil {
		t.Fatalf("window.__hits: %v (%s)", err, r.Value)
	}
	return h
}

// TestDumpFixtures prints the outline of each corpus page (run with -v when writing phrasings;
// FASTPATH_CORPUS_PAGE=/fastpath/kinds.html runs TestCorpus on one page).
func TestDumpFixtures(t *testing.T) {
	if testing.Short() || os.Getenv("FASTPATH_DUMP") == "" {
		t.Skip("set FASTPATH_DUMP=1 to print the corpus pages' outlines")
	}
	ctx := callerContext()
	for _, p := range []string{"form", "dialog", "tabs", "results", "menu", "widgets", "kinds"} {
		id, err := shared.b.NewTab(ctx, shared.srv.URL("/fastpath/"+p+".html"))
		if err != nil {
			t.Fatal(err)
		}
		waitLoaded(t, ctx, id)
		s, err := shared.svc.Snapshot(ctx, id, snapshot.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s:\n%s", p, s.Text)
	}
}

// callerContext is the context the corpus acts in: the caller's own actions (the corpus
// measures understanding, as the bench's corpus does approving the steps; the safety rules
// have their own tests).
func callerContext() context.Context {
	return gate.With(context.Background(), gate.Request{Who: gate.Caller})
}
