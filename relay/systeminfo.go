package relay

import "fmt"

// systemInfo answers the SystemInfo domain, which chrome.debugger does not offer, on the
// browser session, with the shape Chrome gives and only what tabrelay honestly knows: it
// cannot see the GPU, the machine's model or the browser's command line, so the lists and
// maps are empty and the strings too (Chrome itself answers "" for the model on Linux). On
// other sessions it refuses as Chrome does. Call with h.mu held.
func (h *Hub) systemInfo(r *req) {
	if r.s.kind != kindBrowser {
		r.s.afterEarlier(func() {
			r.fail(codeServerError, fmt.Sprintf("%s is only supported on the browser target", r.method))
		})
		return
	}
	switch r.method {
	case "SystemInfo.getInfo":
		r.ok(mustJSON(map[string]any{
			"gpu": map[string]any{
				"devices":              []any{},
				"auxAttributes":        map[string]any{},
				"featureStatus":        map[string]any{},
				"driverBugWorkarounds": []string{},
				"videoDecoding":        []any{},
				"videoEncoding":        []any{},
			},
			"modelName":    "",
			"modelVersion": "",
			"commandLine":  "",
		}))
	case "SystemInfo.getProcessInfo":
		// the browser's processes are not visible to an extension
		r.ok(mustJSON(map[string]any{"processInfo": []any{}}))
	default:
		r.fail(codeMethodNotFound, fmt.Sprintf("'%s' wasn't found (tabrelay answers SystemInfo.getInfo and SystemInfo.getProcessInfo itself; chrome.debugger offers no SystemInfo domain)", r.method))
	}
}
