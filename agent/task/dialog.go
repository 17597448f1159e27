package task

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// dialogHeaderRe finds the snapshot header line of an open JavaScript dialog, as package
// snapshot writes it: # confirm dialog open: "Delete 3 files?" (accept or dismiss it)
var dialogHeaderRe = regexp.MustCompile(`(?m)^# (\w+) dialog open: ("(?:[^"\\]|\\.)*") \(accept or dismiss it\)\s*$`)

// openDialog reports the JavaScript dialog a snapshot shows open: its type (alert, confirm,
// prompt, beforeunload) and message (page text).
func openDialog(snap string) (typ, message string, ok bool) {
	m := dialogHeaderRe.FindStringSubmatch(snap)
	if m == nil {
		return "", "", false
	}
	msg, err := strconv.Unquote(m[2])
	if err != nil {
		msg = strings.Trim(m[2], `"`)
	}
	return m[1], msg, true
}

// dialogNote tells the model about a JavaScript dialog open in snap ("" if none) and how to
// answer it: until then every other action on the tab fails.
func dialogNote(snap string) string {
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
