package relay_test

import (
	"strings"
	"testing"
	"time"

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

// TestChooseTabWhenExtensionComesLater: a CDP client connects while no extension is connected
// (the server started first, the browser comes up later); when the extension connects and
// announces no tab, the relay offers the choice then. An extension that comes back still
// sharing a tab is not asked.
func TestChooseTabWhenExtensionComesLater(t *testing.T) {
	tests := []struct {
		name   string
		shares bool
		want   int
	}{
		{"nothing shared", false, 1},
		{"a tab shared again", true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnvNoExt(t, relay.HubOptions{Grace: time.Second})
			e.client("/cdp")
			e.ext = e.dialExt()
			if tt.shares {
				e.share("AAAA1111BBBB2222CCCC3333DDDD4444", "https://example.com/")
			}
			// the offer comes once the extension has had time to announce its tabs (the settle
			// after its hello): the hub logs that moment
			e.waitWithin(30*time.Second, "the extension's tabs announced", func() bool {
				return strings.Contains(e.logs.String(), "the extension has announced its tabs")
			})
			if tt.want > 0 {
				e.waitFor("a chooseTab notice", func() bool { return len(e.ext.ChooseTabs()) >= tt.want })
			}
			if got := len(e.ext.ChooseTabs()); got != tt.want {
				t.Fatalf("chooseTab notices: %d, want %d", got, tt.want)
			}
		})
	}
}
