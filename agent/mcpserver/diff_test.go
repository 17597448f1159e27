package mcpserver

import (
	"strings"
	"testing"
)

func TestChanges(t *testing.T) {
	page := "- heading \"Sign up\"\n- textbox \"Name\" [ref=e1]\n- button \"Send\" [ref=e2]\n- status\n- link \"Other page\" [ref=e3]"
	for _, tc := range []struct {
		name, before, after string
		want                []string
		not                 []string
	}{
		{name: "same", before: page, after: page, want: []string{"No change"}},
		{name: "added line", before: page, after: strings.Replace(page, "- status", "- status: Hello, Ada", 1),
			want: []string{"- - status\n+ - status: Hello, Ada"}, not: []string{"Sign up", "Other page"}},
		{name: "new page", before: page, after: "- heading \"Other\"", want: []string{"The page now:\n- heading \"Other\""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := changes(tc.before, tc.after)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("changes lack %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("changes show the unchanged %q:\n%s", n, got)
				}
			}
		})
	}
}
