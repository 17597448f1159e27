package fastpath

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/snapshot"
)

// TestMiniwobDev plays tasks of a MiniWoB++ development set (MINIWOB_DIR; MINIWOB_TASKS, a
// comma-separated list; MINIWOB_EPISODES) on the action service with the fast path, as the
// bench's miniwob group does through the extension, and logs each episode with the page
// outline when it was not solved: a quick loop for writing rules. It fails on a wrong action
// (negative reward). The bench (go tool task bench -- -groups miniwob) is the judge.
func TestMiniwobDev(t *testing.T) {
	dir := os.Getenv("MINIWOB_DIR")
	if testing.Short() || dir == "" {
		t.Skip("set MINIWOB_DIR to a MiniWoB++ development set to play it")
	}
	if shared.err != nil {
		t.Fatalf("browser: %v", shared.err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	defer srv.Close()
	episodes := 3
	if n, err := strconv.Atoi(os.Getenv("MINIWOB_EPISODES")); err == nil {
		episodes = n
	}
	var tasks []string
	if v := os.Getenv("MINIWOB_TASKS"); v != "" {
		tasks = strings.Split(v, ",")
	} else {
		files, _ := filepath.Glob(filepath.Join(dir, "miniwob", "*.html"))
		for _, f := range files {
			tasks = append(tasks, strings.TrimSuffix(filepath.Base(f), ".html"))
		}
	}
	ctx, cancel := context.WithTimeout(callerContext(), 10*time.Minute)
	defer cancel()
	id, err := shared.b.NewTab(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	defer shared.b.CloseTab(context.Background(), id)
	eval := func(expr string, out any) {
		t.Helper()
		r, err := shared.svc.Act(ctx, id, actions.Do(actions.Evaluate{Expression: expr}))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(r.Value, out); err != nil {
			t.Fatalf("%s: %v (%s)", expr, err, r.Value)
		}
	}
	for _, name := range tasks {
		solved := 0
		for i := 0; i < episodes; i++ {
			u := "http://" + ln.Addr().String() + "/miniwob/" + name + ".html"
			if _, err := shared.svc.Act(ctx, id, actions.Do(actions.Navigate{URL: u})); err != nil {
				t.Fatal(err)
			}
			var q string
			eval(`(() => { core.startEpisodeReal(); return document.getElementById('query').innerText; })()`, &q)
			before, _ := shared.svc.Snapshot(ctx, id, snapshot.Options{})
			ran, why := runCommand(ctx, id, q)
			var reward float64
			eval(`WOB_RAW_REWARD_GLOBAL`, &reward)
			switch {
			case reward > 0:
				solved++
			case reward < 0:
				t.Errorf("%s: WRONG %q ran %v\n%s", name, q, ran, before.Text)
			default:
				t.Logf("%s: %q ran %v, stopped: %s\n%s", name, q, ran, why, before.Text)
			}
		}
		t.Logf("%s: %d/%d solved", name, solved, episodes)
	}
}
