package e2e

import (
	"slices"
	"strings"
	"testing"
)

// testCLIOrdinals runs `tabrelay run` (the built binary, which posts to /api/command like the
// side panel) with no model configured: "click the second delete button" on a page with three
// Delete buttons deletes the second row (--yes approves beforehand the confirmation deleting
// asks for), "the last" and "the 1st" work the same way; the ambiguous "click delete" is refused
// with the candidates instead of guessed.
func testCLIOrdinals(t *testing.T, ae *agentEnv) {
	drafts := ae.share(t, ae.site.URL("/agent/deletes.html"))
	tr := cliRunner(t, ae, buildCLI(t))
	out, errOut, code := tr("run", "--tab", drafts.TargetID, "--yes", "click delete")
	var log []string
	ae.pageEval(t, drafts, "window.log", &log)
	if code != 1 || len(log) != 0 || !strings.Contains(errOut, "3 elements match") {
		t.Errorf("tabrelay run \"click delete\": exit %d, the page logged %v; want exit 1 naming the 3 candidates\nstdout: %s\nstderr: %s", code, log, out, errOut)
	}
	cases := []struct {
		command string
		want    []string // window.log afterwards
	}{
		{"click the second delete button", []string{"delete:draft2"}},
		{"click the last delete button", []string{"delete:draft2", "delete:draft3"}},
		{"click the 1st delete", []string{"delete:draft2", "delete:draft3", "delete:draft1"}},
	}
	for _, c := range cases {
		out, errOut, code := tr("run", "--tab", drafts.TargetID, "--yes", c.command)
		var log []string
		ae.pageEval(t, drafts, "window.log", &log)
		if code != 0 || !slices.Equal(log, c.want) {
			t.Errorf("tabrelay run %q: exit %d, the page logged %v (want %v)\nstdout: %s\nstderr: %s", c.command, code, log, c.want, out, errOut)
		}
	}
}
