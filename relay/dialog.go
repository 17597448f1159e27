package relay

import "encoding/json"

// A JavaScript dialog (alert, confirm, prompt, a "leave site?" prompt) blocks its page until it
// is answered, and only the debugger session that saw it open can answer it:
// Page.handleJavaScriptDialog from a session attached later says "No dialog is showing", and
// Page.enable there waits for the dialog to close. So the hub keeps a tab's debugger (and the
// releasing clients' sessions, which know of the dialog) while a dialog is open in it, rather
// than detaching it DetachAfter after the last command (see idleFired): the dialog stays
// answerable by the client that saw it, by the agent's dialog action included.

// noteDialog records dialogs opening and closing in the extension session sid of t, from its
// events. Call with h.mu held.
func (t *target) noteDialog(sid, method string, params []byte) {
	switch method {
	case "Page.javascriptDialogOpening":
		if t.dialogs == nil {
			t.dialogs = map[string]bool{}
		}
		t.dialogs[sid] = true
	case "Page.javascriptDialogClosed":
		delete(t.dialogs, sid)
	case "Page.frameNavigated":
		// a navigation of the session's main frame closes its dialog
		var p struct {
			Frame struct {
				ParentID string `json:"parentId"`
			} `json:"frame"`
		}
		if t.dialogs[sid] && json.Unmarshal(params, &p) == nil && p.Frame.ParentID == "" {
			delete(t.dialogs, sid)
		}
	}
}

// dialogOpen reports whether a JavaScript dialog is open in t (in its page or a child target).
func (t *target) dialogOpen() bool { return len(t.dialogs) > 0 }
