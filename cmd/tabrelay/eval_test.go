package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalBadInput: eval's usage errors say what to type, before any server is contacted;
// --compare reads two reports and prints their difference.
func TestEvalBadInput(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "r.json")
	if err := os.WriteFile(report, []byte(`{"suite":"s","summary":{"tasks":1,"succeeded":1},"results":[{"name":"a","success":true,"steps":2}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	notJSON := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(notJSON, []byte("nope"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no suite", nil, "eval takes one suite"},
		{"missing suite", []string{filepath.Join(dir, "nosuch")}, "read the suite"},
		{"empty suite", []string{dir + "/"}, "has no task files"},
		{"compare one file", []string{"--compare", report}, "--compare takes two report files"},
		{"compare bad file", []string{"--compare", report, notJSON}, "is not an eval report"},
		{"unknown tag", []string{"--tag", "nosuchtag", "../../e2e/evalsuite"}, `has the tag "nosuchtag"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"--addr", "127.0.0.1:1", "--home", t.TempDir()}, tc.args...)
			err := runEval(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errOut})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("eval %v: %v; want an error mentioning %q", tc.args, err, tc.want)
			}
		})
	}
	var out bytes.Buffer
	if err := runEval(context.Background(), []string{"--compare", report, report}, stdio{out: &out, err: &out}); err != nil || !strings.Contains(out.String(), "| a | ✓ | ✓ | +0 | +0 | +0 | +0 | +0 |") {
		t.Errorf("--compare: %v\n%s", err, out.String())
	}
}
