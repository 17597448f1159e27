package relay

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/relay/wire"
)

// Downloads, as Chrome's own endpoint does them for Browser.setDownloadBehavior.
//
// chrome.debugger refuses the Browser domain, so the hub builds the Browser events from what a
// tab's debugger session tells (Page.downloadWillBegin and Page.downloadProgress: frame, guid,
// url, suggested name, bytes; Chrome sends them while Page is on, so the hub keeps Page on in
// every shared tab while some client wants downloads, see watchDownloads) and from what the
// extension learns from chrome.downloads (where the browser saved the file: a wire.Download
// message). With allowAndName the finished file is copied into the client's downloadPath under
// the download's guid, with allow under its suggested name; deny cancels the download. The
// browser saves every download where the user's settings say: the relay runs on the same
// machine and copies it from there.

// dlBehavior is what one client asked with Browser.setDownloadBehavior.
type dlBehavior struct {
	behavior string   // allow, allowAndName, deny or default
	path     string   // downloadPath (absolute), for allow and allowAndName
	events   bool     // eventsEnabled: Browser.downloadWillBegin / downloadProgress go to s
	s        *session // the session the behavior was set on
}

// download is one download started in a shared tab.
type download struct {
	guid     string
	t        *target
	url      string
	name     string // suggestedFilename
	total    float64
	received float64
	file     string // where the browser saved it, once the extension said it completed
	finished bool   // the final progress event went out (or is being prepared)
	denied   bool   // a client asked deny: it ends canceled, whatever the browser did
	timer    *time.Timer
}

// dlGraceForFile is how long the hub waits, after Chrome said a download completed, for the
// extension to say where the file is, before it reports the download without a copy.
const dlGraceForFile = 10 * time.Second

// setDownloadBehavior answers Browser.setDownloadBehavior. Call with h.mu held.
func (h *Hub) setDownloadBehavior(r *req) {
	var p struct {
		Behavior         string `json:"behavior"`
		BrowserContextID string `json:"browserContextId"`
		DownloadPath     string `json:"downloadPath"`
		EventsEnabled    bool   `json:"eventsEnabled"`
	}
	if !r.decode(&p) {
		return
	}
	switch p.Behavior {
	case "":
		r.fail(codeInvalidParams, "Invalid parameters: behavior: mandatory field missing (allow, allowAndName, deny or default)")
		return
	case "deny", "default":
	case "allow", "allowAndName":
		if p.DownloadPath == "" {
			r.fail(codeInvalidParams, "downloadPath not provided")
			return
		}
		if !filepath.IsAbs(p.DownloadPath) {
			r.fail(codeInvalidParams, fmt.Sprintf("tabrelay: downloadPath %q must be an absolute path (the relay copies finished downloads there)", p.DownloadPath))
			return
		}
	default:
		r.fail(codeInvalidParams, fmt.Sprintf("Invalid parameters: behavior: unknown value %q (allow, allowAndName, deny or default)", p.Behavior))
		return
	}
	if p.BrowserContextID != "" && p.BrowserContextID != h.contextID {
		r.fail(codeServerError, "Failed to find browser context for id "+p.BrowserContextID)
		return
	}
	if p.Behavior == "default" && !p.EventsEnabled {
		if r.c.dl != nil {
			r.c.dl = nil
			h.unwatchDownloads()
		}
		r.ok(nil)
		return
	}
	r.c.dl = &dlBehavior{behavior: p.Behavior, path: p.DownloadPath, events: p.EventsEnabled, s: r.s}
	for _, t := range h.liveTargets() {
		h.watchDownloads(t)
	}
	r.ok(nil)
}

// downloadsWanted reports whether some client set a download behavior or asked for events.
func (h *Hub) downloadsWanted() bool {
	for c := range h.clients {
		if c.dl != nil {
			return true
		}
	}
	return false
}

// watchDownloads switches Page on in t's debugger session, once, so that Chrome reports the
// tab's downloads there. Page stays on for the tab's lifetime: a client's Page.disable, or its
// leaving, does not switch it off (see keepsDomain). Call with h.mu held.
func (h *Hub) watchDownloads(t *target) {
	if t.dlWatch || !t.live || h.ext == nil || !h.debuggerOn(t) {
		return // a tab without the debugger (see ondemand.go) is watched once it is attached
	}
	t.dlWatch = true
	h.internal(t, "", "Page.enable", nil)
}

// unwatchDownloads switches Page off again in the tabs where the hub switched it on, once no
// client wants downloads any more (unless a client uses Page there). Call with h.mu held.
func (h *Hub) unwatchDownloads() {
	if h.downloadsWanted() {
		return
	}
	for _, d := range h.downloads {
		if d.timer != nil {
			d.timer.Stop()
		}
		d.finished = true
	}
	h.downloads = nil
	for _, t := range h.targets {
		if !t.dlWatch {
			continue
		}
		t.dlWatch = false
		if len(t.enabled[""]["Page"]) == 0 && h.debuggerOn(t) {
			h.internal(t, "", "Page.disable", nil)
		}
	}
}

// debuggerOn reports whether t's debugger is attached, or being attached: always, unless the
// extension attaches it on demand (ondemand.go), then while client sessions use the tab and
// until its idle countdown ends. A command to a detached tab would attach it. Call with h.mu
// held.
func (h *Hub) debuggerOn(t *target) bool {
	return !h.onDemand() || t.boundSessions() > 0 || t.idle != nil
}

// attachedForDownloads is called when the hub asks the extension to attach t's debugger (debugger
// on demand). Call with h.mu held.
func (h *Hub) attachedForDownloads(t *target) {
	t.dlWatch = false // a new debugger session: Page is off
	if h.downloadsWanted() {
		h.watchDownloads(t)
	}
}

// detachedForDownloads is called when the hub asks the extension to detach t's debugger: Page
// goes with it. Call with h.mu held.
func (h *Hub) detachedForDownloads(t *target) { t.dlWatch = false }

// sharedForDownloads is called for a tab newly shared or attached anew. Call with h.mu held.
func (h *Hub) sharedForDownloads(t *target, reattached bool) {
	if reattached {
		t.dlWatch = false // a new debugger session: Page is off again
	}
	if h.downloadsWanted() {
		h.watchDownloads(t)
	}
}

// keepsDomain reports whether the hub itself needs domain on in t's session ext, so that it
// must not be switched off when the last client using it stops. Call with h.mu held.
func (h *Hub) keepsDomain(t *target, ext, domain string) bool {
	return domain == "Page" && ext == "" && t.dlWatch
}

// downloadEvent handles Page.downloadWillBegin and Page.downloadProgress from a tab (any of
// its sessions: a download may start in an out-of-process iframe). Call with h.mu held.
func (h *Hub) downloadEvent(t *target, method string, params []byte) {
	var p struct {
		FrameID           string  `json:"frameId"`
		GUID              string  `json:"guid"`
		URL               string  `json:"url"`
		SuggestedFilename string  `json:"suggestedFilename"`
		TotalBytes        float64 `json:"totalBytes"`
		ReceivedBytes     float64 `json:"receivedBytes"`
		State             string  `json:"state"`
	}
	if json.Unmarshal(params, &p) != nil || p.GUID == "" {
		return
	}
	if h.downloads == nil {
		h.downloads = map[string]*download{}
	}
	d := h.downloads[p.GUID]
	if method == "Page.downloadWillBegin" {
		if d != nil {
			return
		}
		d = &download{guid: p.GUID, t: t, url: p.URL, name: p.SuggestedFilename}
		h.downloads[p.GUID] = d
		h.log.Info().Str("target", t.id).Str("guid", p.GUID).Msg("download started in a shared tab")
		h.emitDownload("Browser.downloadWillBegin", params)
		if h.denyDownloads() {
			d.denied = true
			h.cancelDownload(d)
		}
		return
	}
	if d == nil || d.finished {
		return
	}
	d.total, d.received = p.TotalBytes, p.ReceivedBytes
	if d.denied && p.State == "completed" {
		p.State = "canceled" // it finished before the cancel arrived: the extension removes the file
		params = mustJSON(map[string]any{"guid": d.guid, "totalBytes": d.total, "receivedBytes": d.received, "state": "canceled"})
	}
	switch p.State {
	case "inProgress":
		h.emitDownload("Browser.downloadProgress", params)
	case "canceled":
		d.finished = true
		delete(h.downloads, d.guid)
		h.emitDownload("Browser.downloadProgress", params)
	case "completed":
		// the file may not be where clients want it yet: the extension says where the browser
		// saved it (wire.Download), and the copies are made before the event goes out
		if d.file != "" {
			h.finishDownload(d)
		} else if d.timer == nil {
			d.timer = time.AfterFunc(dlGraceForFile, func() {
				h.mu.Lock()
				defer h.mu.Unlock()
				if !d.finished {
					h.log.Warn().Str("guid", d.guid).Msg("download completed but the extension did not say where the file is (no downloads permission?): reported without a copy in downloadPath")
					h.finishDownload(d)
				}
			})
		}
	}
}

// downloadReport handles the extension's wire.Download message. Call with h.mu held.
func (h *Hub) downloadReport(m wire.Download) {
	d := h.downloads[m.GUID]
	if d == nil || d.finished {
		return
	}
	if m.TotalBytes > 0 {
		d.total = m.TotalBytes
	}
	if m.ReceivedBytes > 0 {
		d.received = m.ReceivedBytes
	}
	switch {
	case d.denied:
		d.finished = true
		delete(h.downloads, d.guid)
		h.emitDownload("Browser.downloadProgress", mustJSON(map[string]any{"guid": d.guid, "totalBytes": d.total, "receivedBytes": d.received, "state": "canceled"}))
	case m.State == wire.DownloadStateComplete:
		d.file = m.Path
		h.finishDownload(d)
	case m.State == wire.DownloadStateInterrupted:
		d.finished = true
		delete(h.downloads, d.guid)
		h.emitDownload("Browser.downloadProgress", mustJSON(map[string]any{"guid": d.guid, "totalBytes": d.total, "receivedBytes": d.received, "state": "canceled"}))
	}
}

// finishDownload copies the finished file for every client that allowed downloads with a
// downloadPath, outside the hub's lock, then tells the clients with events that it completed.
// Call with h.mu held.
func (h *Hub) finishDownload(d *download) {
	d.finished = true
	if d.timer != nil {
		d.timer.Stop()
	}
	delete(h.downloads, d.guid)
	type copyJob struct {
		c   *Client
		dst string
	}
	var jobs []copyJob
	for c := range h.clients {
		if c.dl == nil || c.dl.path == "" || d.file == "" {
			continue
		}
		switch c.dl.behavior {
		case "allowAndName":
			jobs = append(jobs, copyJob{c, filepath.Join(c.dl.path, d.guid)})
		case "allow":
			jobs = append(jobs, copyJob{c, filepath.Join(c.dl.path, safeName(d.name))})
		}
	}
	src := d.file
	go func() {
		// each client is told where its copy is (Chrome's filePath); clients without a copy,
		// where the browser saved the file
		paths := map[*Client]string{}
		for _, j := range jobs {
			dst, err := copyDownload(src, j.dst)
			if err != nil {
				h.log.Warn().Err(err).Str("client", j.c.name).Str("guid", d.guid).Msg("download: could not copy the file into the client's downloadPath")
				continue
			}
			paths[j.c] = dst
			h.log.Debug().Str("client", j.c.name).Str("guid", d.guid).Msg("download copied into the client's downloadPath")
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		h.emitDownloadFor("Browser.downloadProgress", func(c *Client) []byte {
			p := map[string]any{"guid": d.guid, "totalBytes": d.total, "receivedBytes": d.received, "state": "completed"}
			if path, ok := paths[c]; ok {
				p["filePath"] = path
			} else if src != "" && c.dl.path == "" {
				p["filePath"] = src
			}
			return mustJSON(p)
		})
	}()
}

// emitDownload sends a Browser download event to every client that enabled download events.
// Call with h.mu held.
func (h *Hub) emitDownload(method string, params []byte) {
	h.emitDownloadFor(method, func(*Client) []byte { return params })
}

// emitDownloadFor sends a Browser download event, with the params made for each client, to
// every client that enabled download events, on the session it set the behavior on (while that
// session lasts). Call with h.mu held.
func (h *Hub) emitDownloadFor(method string, params func(*Client) []byte) {
	for c := range h.clients {
		if c.dl == nil || !c.dl.events || c.closed {
			continue
		}
		s := c.dl.s
		if s != c.def {
			if _, ok := c.sessions[s.id]; !ok {
				continue
			}
		}
		s.emit(method, params(c))
	}
}

// denyDownloads reports whether a client asked to deny downloads. Call with h.mu held.
func (h *Hub) denyDownloads() bool {
	for c := range h.clients {
		if c.dl != nil && c.dl.behavior == "deny" {
			return true
		}
	}
	return false
}

// cancelDownload asks the extension to cancel d. Call with h.mu held.
func (h *Hub) cancelDownload(d *download) {
	p := &pending{done: func(_, errRaw []byte) {
		if errRaw != nil {
			h.log.Warn().RawJSON("error", errRaw).Str("guid", d.guid).Msg("download: the extension could not cancel it")
		}
	}}
	if !h.request(p, func(id int64) []byte {
		return mustJSON(wire.DownloadRequest{Type: wire.TypeCancelDownload, ID: id, GUID: d.guid})
	}, h.opts.TabTimeout) {
		h.log.Warn().Str("guid", d.guid).Msg("download: cannot cancel it, the extension is not connected")
	}
}

// safeName is a suggested file name reduced to one path element.
func safeName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	if name == "." || name == "/" || name == ".." || name == "" {
		return "download"
	}
	return name
}

// copyDownload copies src to dst (through a temporary file in dst's directory, renamed when
// whole); when dst exists it picks "name (1).ext", "name (2).ext"…, as Chrome does. It returns
// the path written.
func copyDownload(src, dst string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("create downloadPath: %w", err)
	}
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("open the downloaded file: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tabrelay-download-*")
	if err != nil {
		return "", fmt.Errorf("copy download: %w", err)
	}
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("copy download to %s: %w", dst, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("copy download to %s: %w", dst, err)
	}
	ext := filepath.Ext(dst)
	base := strings.TrimSuffix(dst, ext)
	for i := 0; ; i++ {
		target := dst
		if i > 0 {
			target = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		if _, err := os.Lstat(target); err == nil && i < 100 {
			continue
		}
		if err := os.Rename(tmp.Name(), target); err != nil {
			os.Remove(tmp.Name())
			return "", fmt.Errorf("copy download to %s: %w", target, err)
		}
		return target, nil
	}
}
