package relay

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWithCommandLineAPI(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		wrapped      bool
	}{
		{"asked", `{"expression":"typeof $x","includeCommandLineAPI":true,"returnByValue":true}`, true},
		{"not asked", `{"expression":"typeof $x","returnByValue":true}`, false},
		{"asked off", `{"expression":"typeof $x","includeCommandLineAPI":false}`, false},
		{"repl mode", `{"expression":"await 1","includeCommandLineAPI":true,"replMode":true}`, false},
		{"repl mode off", `{"expression":"1","includeCommandLineAPI":true,"replMode":false}`, true},
		{"named in the expression only", `{"expression":"'includeCommandLineAPI'"}`, false},
		{"not an object", `[1]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := withCommandLineAPI([]byte(tc.params))
			if !tc.wrapped {
				if string(out) != tc.params {
					t.Fatalf("params changed: %s", out)
				}
				return
			}
			var in, got map[string]any
			if err := json.Unmarshal([]byte(tc.params), &in); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("rewritten params are not JSON: %v: %s", err, out)
			}
			expr, _ := got["expression"].(string)
			if want := cliScope + in["expression"].(string) + "\n}"; expr != want {
				t.Fatalf("expression = %q, want %q", expr, want)
			}
			if strings.Contains(cliScope, "\n") {
				t.Fatal("the scope spans lines: exception line numbers would shift")
			}
			delete(got, "expression")
			delete(in, "expression")
			if len(got) != len(in) {
				t.Fatalf("other params changed: %v, want %v", got, in)
			}
		})
	}
}

// FuzzWithCommandLineAPI: whatever the params, the rewrite returns them unchanged or as valid
// JSON with the same keys.
func FuzzWithCommandLineAPI(f *testing.F) {
	f.Add(`{"expression":"typeof $x","includeCommandLineAPI":true}`)
	f.Add(`{"expression":"1\n// c","includeCommandLineAPI":true,"replMode":false,"contextId":3}`)
	f.Add(`{"includeCommandLineAPI":true}`)
	f.Fuzz(func(t *testing.T, params string) {
		out := withCommandLineAPI([]byte(params))
		if string(out) == params {
			return
		}
		var in, got map[string]json.RawMessage
		if err := json.Unmarshal([]byte(params), &in); err != nil {
			t.Fatalf("rewrote params that are not a JSON object: %q", params)
		}
		if err := json.Unmarshal(out, &got); err != nil || len(got) != len(in) {
			t.Fatalf("rewrite of %q gave %q (%v)", params, out, err)
		}
	})
}
