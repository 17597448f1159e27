package e2e

import (
	"slices"
	"strings"
	"testing"
)

// testCLICompound runs compound commands through `tabrelay run` (the built binary, posting to
// /api/command) with no model, on real Chromium with the real extension: "Enter "Jerald" into the
// text field and press Submit." types into the one text field, then clicks Submit, each step
// matched on the page as the step before left it; the page's own log (hits.js) must show exactly
// those elements, in order (--yes approves the Submit click, which asks for confirmation like
// any submit). A compound whose first step is not understood runs nothing.
func testCLICompound(t *testing.T, ae *agentEnv) {
	page := ae.share(t, ae.site.URL("/fastpath/simple.html"))
	tr := cliRunner(t, ae, buildCLI(t))
	hits := func() []string {
		var h []string
		ae.pageEval(t, page, "[...new Set(window.__hits)]", &h)
		return h
	}
	out, errOut, code := tr("run", "--tab", page.TargetID, "--yes", `Enter "Jerald" into the text field and press Submit.`)
	var value string
	ae.pageEval(t, page, "document.querySelector('[data-testid=text]').value", &value)
	if got := hits(); code != 0 || !slices.Equal(got, []string{"text", "submit"}) || value != "Jerald" {
		t.Errorf("compound command: exit %d, page hits %v, field %q; want hits [text submit] and \"Jerald\"\nstdout: %s\nstderr: %s", code, got, value, out, errOut)
	}
	ae.pageEval(t, page, "window.__hits = []", nil)
	out, errOut, code = tr("run", "--tab", page.TargetID, "--yes", "Select QkBa and click Submit.")
	var chosen string
	ae.pageEval(t, page, "document.querySelector('[data-testid=pick]').value", &chosen)
	if got := hits(); code != 0 || !slices.Equal(got, []string{"pick", "submit"}) || chosen != "QkBa" {
		t.Errorf("select and submit: exit %d, page hits %v, selected %q\nstdout: %s\nstderr: %s", code, got, chosen, out, errOut)
	}
	ae.pageEval(t, page, "window.__hits = []", nil)
	out, errOut, code = tr("run", "--tab", page.TargetID, "click cancel and click submit")
	if got := hits(); code == 0 || len(got) != 0 || !strings.Contains(errOut, `step 1 of 2, "click cancel"`) {
		t.Errorf("refused compound: exit %d, page hits %v; want a failure naming step 1 and no action\nstdout: %s\nstderr: %s", code, got, out, errOut)
	}
}
