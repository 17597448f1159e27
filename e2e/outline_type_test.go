package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tabrelay/tabrelay/agent/api"
)

// TestTypeIntoWrappedField types through the agent's HTTP API, on refs of the outline read
// through the real extension, into text boxes whose role sits on an element that takes no
// keyboard focus (or takes it for its field): a wrapper around a contenteditable, a div around
// an input, a label around its input, a custom element with its input in a shadow root, a
// focusable wrapper around a contenteditable, a wrapper whose field appears when it is clicked.
// Each time the text replaces the field's content.
func TestTypeIntoWrappedField(t *testing.T) {
	ae := startAgentEnv(t, api.Options{})
	tab := ae.share(t, ae.site.URL("/outline/fields.html"))
	text, snap := ae.outlineOf(t, tab, "")
	refs := map[string]string{}
	for _, n := range snap.Nodes() {
		if n.Role == "textbox" && n.Ref != "" {
			refs[n.Name] = n.Ref
		}
	}
	cases := []struct {
		name string
		read string // the field's content, read in the page
	}{
		{"Wrapped editor", `document.getElementById('f1').textContent`},
		{"Wrapped input", `document.getElementById('f2').value`},
		{"Label wrapped", `document.getElementById('f3').value`},
		{"Shadow field", `document.getElementById('w4').shadowRoot.getElementById('f4').value`},
		{"Focusable wrapper", `document.getElementById('f5').textContent`},
		{"Click to edit", `document.getElementById('f6')?.value ?? 'no field: the wrapper was not clicked'`},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			ref := refs[c.name]
			if ref == "" {
				t.Fatalf("no textbox %q with a ref in the outline:\n%s", c.name, text)
			}
			want := "typed into " + strings.ToLower(c.name)
			r := ae.call(t, http.MethodPost, "/api/act", map[string]any{"tab": tab.TargetID, "action": map[string]any{"kind": "type", "ref": ref, "text": want}})
			if r.Status != http.StatusOK {
				t.Fatalf("type into %s (%s): HTTP %d %s", ref, c.name, r.Status, r.Body)
			}
			var got string
			ae.pageEval(t, tab, c.read, &got)
			if got != want {
				t.Errorf("after typing %q into %s (%s) the field holds %q", want, ref, c.name, got)
			}
		})
	}
}
