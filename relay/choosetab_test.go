package relay_test

import (
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/relay"
)

// TestChooseTabWhenNothingShared: a CDP client connecting to the browser endpoint while no tab
// is shared makes the relay tell the extension (chooseTab, client "cdp"), once per client; with
// a tab shared, or for a page endpoint, nothing is sent; OfferTab (the agent's door) does the
// same and says whether it asked.
func TestChooseTabWhenNothingShared(t *testing.T) {
	e := newEnv(t, relay.HubOptions{})
	e.client("/cdp")
	e.waitFor("a chooseTab notice", func() bool { return len(e.ext.ChooseTabs()) == 1 })
	if got := e.ext.ChooseTabs(); got[0] != "cdp" {
		t.Fatalf("chooseTab notices: %q, want [cdp]", got)
	}
	if !e.srv.Hub().OfferTab("agent") {
		t.Fatal("OfferTab with nothing shared did not ask")
	}
	e.waitFor("the agent's chooseTab notice", func() bool { return len(e.ext.ChooseTabs()) == 2 })

	e.share("AAAA1111BBBB2222CCCC3333DDDD4444", "https://example.com/")
	e.client("/cdp")
	e.client("/devtools/page/AAAA1111BBBB2222CCCC3333DDDD4444")
	if e.srv.Hub().OfferTab("agent") {
		t.Fatal("OfferTab with a tab shared asked")
	}
	// the notice is queued while the client registers, and logged then: the log is exact
	if n := strings.Count(e.logs.String(), "asked the extension to offer a choice of tab"); n != 2 {
		t.Fatalf("the relay asked for a tab %d times, want 2 (none with a tab shared)", n)
	}
}
