package actions

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/snapshot"
)

// TestBlockedError: a blocked tab's error matches what blocks it (the API answers 409 with
// "dialogOpen" for a dialog) and says the way out.
func TestBlockedError(t *testing.T) {
	for _, tc := range []struct {
		dialog           bool
		is, isNot        error
		wayOut, blocking string
	}{
		{true, snapshot.ErrDialogOpen, ErrPageBusy, "the dialog action closes it", "JavaScript dialog"},
		{false, ErrPageBusy, snapshot.ErrDialogOpen, "wait and try again", "keeps the page of tab T1 busy"},
	} {
		err := fmt.Errorf("snapshot of tab T1: %w", &BlockedError{TargetID: "T1", Dialog: tc.dialog})
		var be *BlockedError
		if !errors.Is(err, tc.is) || errors.Is(err, tc.isNot) || !errors.As(err, &be) || be.TargetID != "T1" {
			t.Errorf("dialog=%v: %v: errors.Is %v = %v, %v = %v", tc.dialog, err, tc.is, errors.Is(err, tc.is), tc.isNot, errors.Is(err, tc.isNot))
		}
		if msg := err.Error(); !strings.Contains(msg, tc.wayOut) || !strings.Contains(msg, tc.blocking) || !strings.Contains(msg, "T1") {
			t.Errorf("dialog=%v: message %q does not say what blocks tab T1 and the way out", tc.dialog, msg)
		}
	}
}
