package actions

import (
	"testing"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
)

// TestEveryKindHasBoundaryRule: every action kind the service defines passes the task's
// boundary under a rule of its own (see gate.BoundaryRule). A new kind fails here until the
// boundary says how it is judged: what receives it and what it carries.
func TestEveryKindHasBoundaryRule(t *testing.T) {
	kinds := Default().Kinds()
	if len(kinds) < 20 {
		t.Fatalf("only %d kinds registered: %v", len(kinds), kinds)
	}
	for _, k := range kinds {
		if !gate.BoundaryRule(k) {
			t.Errorf("action kind %q has no boundary rule: add it to the gate's boundaryRules", k)
		}
	}
}
