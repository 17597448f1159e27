package relay

import (
	"fmt"
	"sort"
)

// Every method of the Browser and Target domains that Chrome answers at browser level is either
// served by emulate (as Chrome serves it, through the extension where it needs the browser) or
// refused with the reason below. README.md lists the refused ones with the same reasons;
// TestBrowserLevelMethods walks the protocol description /json/protocol serves, and e2e's
// TestBrowserLevelMethodsLikeChrome walks Chromium's own list on Chrome's endpoint and tabrelay
// side by side. The list holds the methods of the embedded description and of recent Chromium.
var refusedMethods = map[string]string{
	"Browser.crash":                                 "tabrelay never crashes the user's browser",
	"Browser.crashGpuProcess":                       "tabrelay never crashes the user's browser",
	"Browser.getBrowserCommandLine":                 "the user's browser's command line is not shared",
	"Browser.addMockCamera":                         "tabrelay does not change the user's devices",
	"Browser.getHistograms":                         "the user's browser's histograms are not shared",
	"Browser.getHistogram":                          "the user's browser's histograms are not shared",
	"Browser.getWindowBounds":                       "tabrelay does not report the user's windows (Browser.getWindowForTarget answers for a shared tab)",
	"Browser.setWindowBounds":                       "tabrelay does not move or resize the user's windows; use Emulation.setDeviceMetricsOverride on the page",
	"Browser.setContentsSize":                       "tabrelay does not resize the user's windows; use Emulation.setDeviceMetricsOverride on the page",
	"Browser.setDockTile":                           "tabrelay does not change the user's browser's dock tile",
	"Browser.executeBrowserCommand":                 "tabrelay does not run browser commands in the user's browser",
	"Browser.addPrivacySandboxEnrollmentOverride":   "tabrelay does not change the user's privacy settings",
	"Browser.addPrivacySandboxCoordinatorKeyConfig": "tabrelay does not change the user's privacy settings",
	"Browser.getGlobalPrivacyControl":               "tabrelay does not read or change the user's privacy settings",
	"Browser.setGlobalPrivacyControl":               "tabrelay does not read or change the user's privacy settings",
	"Target.createBrowserContext":                   "tabrelay shares tabs of the user's own browser profile: separate browser contexts are not available; use the default context",
	"Target.disposeBrowserContext":                  "tabrelay shares tabs of the user's own browser profile: separate browser contexts are not available; use the default context",
	"Target.exposeDevToolsProtocol":                 "tabrelay does not expose the DevTools protocol to pages",
	"Target.autoAttachRelated":                      "not available through the browser extension; use Target.setAutoAttach",
	"Target.setRemoteLocations":                     "tabrelay does not discover remote targets",
	"Target.getDevToolsTarget":                      "tabrelay does not open DevTools windows in the user's browser",
	"Target.openDevTools":                           "tabrelay does not open DevTools windows in the user's browser",
}

// refuse answers a method tabrelay refuses on purpose (see refusedMethods) and reports whether
// it was one.
func refuse(r *req) bool {
	why, ok := refusedMethods[r.method]
	if ok {
		r.fail(codeServerError, fmt.Sprintf("tabrelay: %s is not available: %s", r.method, why))
	}
	return ok
}

// RefusedMethods lists the Browser and Target methods tabrelay refuses on purpose, sorted, each
// with its reason (for the README's list and its test).
func RefusedMethods() [][2]string {
	out := make([][2]string, 0, len(refusedMethods))
	for m, why := range refusedMethods {
		out = append(out, [2]string{m, why})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

// cancelDownload handles Browser.cancelDownload: a download of a shared tab, by its guid.
func (h *Hub) cancelDownloadCmd(r *req) {
	var p struct {
		GUID string `json:"guid"`
	}
	if !r.decode(&p) {
		return
	}
	d := h.downloads[p.GUID]
	if d == nil || d.finished {
		r.fail(codeInvalidParams, "No download item found for the given GUID")
		return
	}
	h.cancelDownload(d)
	r.ok(nil)
}
