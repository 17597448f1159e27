package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tabrelay/tabrelay/internal/cdpclient"
)

// Downloads lists the downloads started in the shared tabs, or waits for one to finish.
type Downloads struct {
	Wait bool `json:"wait,omitempty" jsonschema:"wait for one to finish"`
}

// Download is one download the agent saw start, as the browser reports it.
type Download struct {
	GUID string `json:"guid"`
	// Name is the file's suggested name; URL where it comes from.
	Name string `json:"name"`
	URL  string `json:"url"`
	// State is inProgress, completed or canceled.
	State string `json:"state"`
	// Size is the bytes received so far (all of them once completed); Total the expected
	// size (0 when unknown).
	Size  int64 `json:"size"`
	Total int64 `json:"total,omitempty"`
	// Path is where the browser saved the file, once completed (for the API's callers; what a
	// model reads names File only, so that pages learn nothing of the machine's folders).
	Path string `json:"path,omitempty"`
	// File is the saved file's name in the downloads folder.
	File string `json:"file,omitempty"`
}

// downloadHistory is how many downloads the service remembers.
const downloadHistory = 50

// downloadLog follows the browser's download events for the service (see watch).
type downloadLog struct {
	mu      sync.Mutex
	watched bool       // Browser.setDownloadBehavior with events was accepted
	list    []Download // oldest first
	begun   int        // downloads begun so far, to tell an action which ones it started
	seen    int        // begun when the downloads action last answered
	changed chan struct{}
}

func newDownloadLog() *downloadLog { return &downloadLog{changed: make(chan struct{})} }

// onEvent records Browser.downloadWillBegin and Browser.downloadProgress.
func (l *downloadLog) onEvent(ev cdpclient.Event) {
	if ev.Method != "Browser.downloadWillBegin" && ev.Method != "Browser.downloadProgress" {
		return
	}
	var p struct {
		GUID              string  `json:"guid"`
		URL               string  `json:"url"`
		SuggestedFilename string  `json:"suggestedFilename"`
		State             string  `json:"state"`
		TotalBytes        float64 `json:"totalBytes"`
		ReceivedBytes     float64 `json:"receivedBytes"`
		FilePath          string  `json:"filePath"`
	}
	if json.Unmarshal(ev.Params, &p) != nil || p.GUID == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if ev.Method == "Browser.downloadWillBegin" {
		l.list = append(l.list, Download{GUID: p.GUID, Name: p.SuggestedFilename, URL: p.URL, State: "inProgress"})
		if len(l.list) > downloadHistory {
			l.list = l.list[len(l.list)-downloadHistory:]
		}
		l.begun++
	} else {
		for i := range l.list {
			d := &l.list[i]
			if d.GUID != p.GUID {
				continue
			}
			d.State, d.Size, d.Total = p.State, int64(p.ReceivedBytes), int64(p.TotalBytes)
			if p.FilePath != "" {
				d.Path, d.File = p.FilePath, filepath.Base(p.FilePath)
			}
		}
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// watch asks the browser, once per service, for download events without changing where
// downloads go (behavior default), so that every later action sees the downloads it starts.
func (s *Service) watchDownloads(ctx context.Context) {
	l := s.dl
	if s.c == nil {
		return
	}
	l.mu.Lock()
	watched := l.watched
	l.mu.Unlock()
	if watched {
		return
	}
	if err := s.c.Call(ctx, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "default", "eventsEnabled": true}, nil); err != nil {
		return // the endpoint does not report downloads: actions work without
	}
	l.mu.Lock()
	l.watched = true
	l.mu.Unlock()
}

// begunSince names the downloads begun after the first n, for an action's message.
func (l *downloadLog) begunSince(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := l.begun - n
	if k <= 0 {
		return ""
	}
	var names []string
	for _, d := range l.list[max(0, len(l.list)-k):] {
		names = append(names, d.Name)
	}
	return fmt.Sprintf("; download started: %s (the downloads action waits for it and tells where it is)", strings.Join(names, ", "))
}

func (l *downloadLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.begun
}

// downloads lists what the service saw; with Wait, it first waits for the newest download to
// finish when it is under way or new since the last downloads answer, else for the next one to
// start and finish.
func (r *runner) downloads(ctx context.Context, p *Downloads) (*Result, error) {
	l := r.dl
	if p.Wait {
		l.mu.Lock()
		guid := ""
		if n := len(l.list); n > 0 && (l.list[n-1].State == "inProgress" || l.begun > l.seen) {
			guid = l.list[n-1].GUID
		}
		begun := l.begun
		l.mu.Unlock()
		for {
			l.mu.Lock()
			if guid == "" && l.begun > begun {
				guid = l.list[len(l.list)-1].GUID
			}
			done := false
			for _, d := range l.list {
				if d.GUID == guid && d.State != "inProgress" {
					done = true
				}
			}
			changed := l.changed
			l.mu.Unlock()
			if done {
				break
			}
			select {
			case <-changed:
			case <-ctx.Done():
				if guid == "" {
					return nil, fmt.Errorf("downloads: no download started while waiting (%w): click the link or button that downloads the file first", ctx.Err())
				}
				return nil, fmt.Errorf("downloads: the download did not finish while waiting (%w)", ctx.Err())
			}
		}
	}
	l.mu.Lock()
	list := append([]Download(nil), l.list...)
	l.seen = l.begun
	l.mu.Unlock()
	// newest first, as the model most likely wants the one it just started
	for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 {
		list[i], list[j] = list[j], list[i]
	}
	msg := fmt.Sprintf("%d downloads", len(list))
	if len(list) > 0 {
		d := list[0]
		msg = fmt.Sprintf("latest download %s: %s, %d bytes", d.Name, d.State, d.Size)
		if d.File != "" {
			msg += ", saved as " + d.File + " in the downloads folder"
		}
	}
	return &Result{Message: msg, Downloads: list}, nil
}
