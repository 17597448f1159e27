package actions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/snapshot"
)

// hardPages are the fixture pages of the accuracy test; covered lists the testids a modal
// covers (acting on them must fail with the covered error and hit nothing).
// (acted on first); last are acted on last (they close the modal); before is evaluated before
// each action.
var hardPages = []struct {
	name    string
	covered []string
	last    string
	before  string
}{
	{name: "shadow"}, {name: "frames"}, {name: "dupes"}, {name: "rerender"}, {name: "editor"},
	{name: "combobox"}, {name: "modal", covered: []string{"buy", "terms"}, last: "accept"},
	// scrolling back to the top re-renders rows 1-13 as new nodes: refs must follow them
	{name: "virtual", before: "document.getElementById('vp').scrollTop = 0"},
	{name: "form"}, {name: "upload"}, {name: "alert"}, {name: "menu"},
}

// TestAccuracy checks on every hard fixture page that every interactive element (ground truth:
// rendered elements with a data-testid) has exactly one ref, and that acting on each ref
// reaches exactly that element (ground truth: the page's __hits).
func TestAccuracy(t *testing.T) { accuracy(t) }

// TestAccuracyAXTree runs the accuracy check with snapshots built from the accessibility tree
// (the reference builder) instead of in the page.
func TestAccuracyAXTree(t *testing.T) { withAXTree(t, func() { accuracy(t) }) }

// withAXTree runs fn with the shared environment's service building snapshots from the
// accessibility tree.
func withAXTree(t *testing.T, fn func()) {
	t.Helper()
	prev := shared
	if shared.svc == nil {
		fn() // need() reports why there is no service
		return
	}
	svc := New(shared.svc.c, Options{Timeout: 20 * time.Second, AccessibilityTree: true})
	defer svc.Close(context.Background())
	shared.svc = svc
	defer func() { shared = prev }()
	fn()
}

// accuracy runs the accuracy check on the current environment.
func accuracy(t *testing.T) {
	svc, _, _ := need(t)
	upload := filepath.Join(t.TempDir(), "a.txt")
	os.WriteFile(upload, []byte("hello"), 0o600)
	totalExp, totalCovered, totalActs, totalExact := 0, 0, 0, 0
	for _, pg := range hardPages {
		t.Run(pg.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(callerCtx(), 90*time.Second)
			defer cancel()
			id := open(t, ctx, "/hard/"+pg.name+".html")
			s := snap(t, ctx, id, snapshot.Options{})
			tab := must(svc.Tab(ctx, id))(t)
			var expected []string
			eval(t, ctx, id, "window.__expected()", &expected)
			refsOf := map[string][]string{}
			kindOf := map[string]string{}
			var extra []string
			for _, r := range tab.Refs() {
				el, err := tab.Resolve(ctx, r.Ref)
				if err != nil {
					t.Fatalf("resolve %s right after the snapshot: %v", r.Ref, err)
				}
				raw, err := svc.callFn(ctx, el.Frame.Session, el.ObjectID, `function(){ return [this.getAttribute('data-testid') || '', this.tagName, this.type || '', this.closest('[data-passive]') ? 'passive' : ''] }`)
				tab.Release(ctx, el)
				if err != nil {
					t.Fatal(err)
				}
				var info []string
				json.Unmarshal(raw, &info)
				if info[0] == "" {
					if info[3] == "passive" || info[1] == "OPTION" {
						continue // inside a passive element or a native select: not ground truth
					}
					if r.Role != "heading" && r.Role != "iframe" && r.Role != "dialog" && r.Role != "list" {
						extra = append(extra, r.Ref+" "+r.Role+" "+r.Name)
					}
					continue
				}
				refsOf[info[0]] = append(refsOf[info[0]], r.Ref)
				kindOf[info[0]] = info[1] + ":" + info[2]
			}
			covered := map[string]bool{}
			for _, c := range pg.covered {
				covered[c] = true
			}
			rank := func(tid string) int {
				switch {
				case covered[tid]:
					return 0
				case tid == pg.last:
					return 2
				}
				return 1
			}
			sort.SliceStable(expected, func(i, j int) bool { return rank(expected[i]) < rank(expected[j]) })
			withRef, exact := 0, 0
			var problems []string
			for _, tid := range expected {
				refs := refsOf[tid]
				if len(refs) != 1 {
					problems = append(problems, tid+": "+itoa(len(refs))+" refs "+strings.Join(refs, ","))
					continue
				}
				withRef++
				if pg.before != "" {
					eval(t, ctx, id, pg.before, nil)
					time.Sleep(50 * time.Millisecond)
				}
				eval(t, ctx, id, "window.__hits = []", nil)
				a := Do(Click{Ref: refs[0]})
				switch kind := kindOf[tid]; {
				case kind == "INPUT:file":
					a = Do(Upload{Ref: refs[0], Files: []string{upload}})
				case kind == "SELECT:select-one":
					a = Do(Select{Ref: refs[0], Values: []string{"Japan"}})
				case kind == "INPUT:color":
					a = Do(Type{Ref: refs[0], Text: "#ff0000"})
				}
				res, err := svc.Act(ctx, id, a)
				if covered[tid] {
					if err == nil || !strings.Contains(err.Error(), `is covered by dialog "Cookies"; dismiss it first`) {
						problems = append(problems, tid+": want covered error, got "+errString(err))
					} else {
						exact++
					}
					continue
				}
				if err != nil {
					problems = append(problems, tid+": "+a.Kind+" "+refs[0]+": "+err.Error())
					continue
				}
				if res.Dialog != nil {
					if _, err := svc.Act(ctx, id, Do(Dialog{})); err != nil {
						t.Fatal(err)
					}
				}
				var hits []string
				deadline := time.Now().Add(time.Second)
				for len(hits) == 0 && time.Now().Before(deadline) {
					time.Sleep(60 * time.Millisecond)
					eval(t, ctx, id, "[...new Set(window.__hits)]", &hits)
				}
				if len(hits) == 1 && hits[0] == tid {
					exact++
				} else {
					problems = append(problems, tid+": "+a.Kind+" "+refs[0]+" hit "+strings.Join(hits, ","))
				}
			}
			t.Logf("%-9s %5d bytes (~%d tokens) %3d refs, built in %v; coverage %d/%d, precision %d/%d",
				pg.name, len(s.Text), len(s.Text)/4, s.Refs, s.Took.Round(time.Millisecond), withRef, len(expected), exact, withRef)
			for _, p := range problems {
				t.Errorf("%s", p)
			}
			if len(extra) > 0 {
				t.Errorf("interactive refs without a ground-truth element: %s", strings.Join(extra, "; "))
			}
			if len(expected) == 0 {
				t.Errorf("no ground truth on the page")
			}
			totalExp += len(expected)
			totalCovered += withRef
			totalActs += withRef
			totalExact += exact
		})
	}
	t.Logf("TOTAL coverage %d/%d, precision %d/%d", totalCovered, totalExp, totalExact, totalActs)
}

func errString(err error) string {
	if err == nil {
		return "no error"
	}
	return err.Error()
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

var _ = errors.Is
