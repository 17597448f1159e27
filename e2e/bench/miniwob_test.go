package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMiniwobSetInRepository: the development set the miniwob group plays by default is in the
// repository, with its licence and protocol, and has a page for every task the group plays, so
// the group runs from a clone.
func TestMiniwobSetInRepository(t *testing.T) {
	dir := miniwobDefault()
	for _, name := range []string{"LICENSE", "README.md", "core/core.js"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, task := range miniwobTasks {
		if _, err := os.Stat(filepath.Join(dir, "miniwob", task.name+".html")); err != nil {
			t.Errorf("task %s: %v", task.name, err)
		}
	}
}
