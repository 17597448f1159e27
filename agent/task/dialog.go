package task

import (
	"fmt"

	"github.com/tabrelay/tabrelay/snapshot"
)

// openDialog reports the JavaScript dialog a snapshot shows open: its type (alert, confirm,
// prompt, beforeunload) and message (page text).
func openDialog(snap *snapshot.Snapshot) (typ, message string, ok bool) {
	if snap == nil || snap.Dialog == nil {
		return "", "", false
	}
	return snap.Dialog.Type, snap.Dialog.Message, true
}

// dialogNote tells the model about a JavaScript dialog open in snap ("" if none) and how to
// answer it: until then every other action on the tab fails.
func dialogNote(snap *snapshot.Snapshot) string {
	typ, msg, ok := openDialog(snap)
	if !ok {
		return ""
	}
	how := "accept=true for OK, accept=false for Cancel"
	switch typ {
	case "alert":
		how = "accept=true to close it"
	case "prompt":
		how = "accept=true with promptText to answer, accept=false to cancel"
	case "beforeunload":
		how = "accept=true to leave the page, accept=false to stay"
	}
	return fmt.Sprintf("\nA JavaScript %s dialog is open and blocks the page until answered; its message (page content):\n%s\nCall the dialog tool (%s); no other action works on this tab until then.",
		typ, pageBlock(msg), how)
}
