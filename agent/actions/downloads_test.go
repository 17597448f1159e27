package actions

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

func downloadEvent(method string, params map[string]any) cdpclient.Event {
	b, _ := json.Marshal(params)
	return cdpclient.Event{Method: method, Params: b}
}

// TestDownloadsWait: downloads lists what the browser reported, newest first; with wait it
// returns at once for a download that finished since the last answer, waits for one under way,
// and otherwise waits for the next to start and finish (and says so when none comes).
func TestDownloadsWait(t *testing.T) {
	svc := New(nil, Options{})
	l := svc.dl
	begin := func(guid, name string) {
		l.onEvent(downloadEvent("Browser.downloadWillBegin", map[string]any{"guid": guid, "url": "https://x/" + name, "suggestedFilename": name, "frameId": "F"}))
	}
	progress := func(guid, state string, n int) {
		l.onEvent(downloadEvent("Browser.downloadProgress", map[string]any{"guid": guid, "state": state, "receivedBytes": n, "totalBytes": n, "filePath": "/dl/" + guid}))
	}
	act := func(wait bool, timeout float64) (*Result, error) {
		a := Do(Downloads{Wait: wait})
		a.Timeout = timeout
		return svc.Act(callerCtx(), "", a)
	}

	begin("g1", "a.pdf")
	progress("g1", "completed", 10)
	r, err := act(true, 5)
	if err != nil || len(r.Downloads) != 1 || r.Downloads[0].State != "completed" || r.Downloads[0].Path != "/dl/g1" || r.Downloads[0].Size != 10 ||
		r.Downloads[0].File != "g1" || strings.Contains(r.Text(), "/dl/") {
		t.Fatalf("wait for a download that finished already: %v %+v", err, r)
	}

	// under way: the wait ends when it completes
	begin("g2", "b.zip")
	go func() {
		time.Sleep(50 * time.Millisecond) // the wait must be under way first (it would also pass if not)
		progress("g2", "completed", 20)
	}()
	r, err = act(true, 5)
	if err != nil || r.Downloads[0].GUID != "g2" || r.Downloads[0].State != "completed" || len(r.Downloads) != 2 {
		t.Fatalf("wait for a download under way: %v %+v", err, r)
	}

	// nothing new: the next one
	go func() {
		time.Sleep(50 * time.Millisecond)
		begin("g3", "c.txt")
		progress("g3", "canceled", 0)
	}()
	r, err = act(true, 5)
	if err != nil || r.Downloads[0].GUID != "g3" || r.Downloads[0].State != "canceled" {
		t.Fatalf("wait for the next download: %v %+v", err, r)
	}

	if _, err := act(true, 0.2); err == nil {
		t.Error("waiting with no download coming: no error")
	}
	if r, err := act(false, 0); err != nil || len(r.Downloads) != 3 {
		t.Errorf("list: %v %+v", err, r)
	}
}
