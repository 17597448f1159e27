package e2e

import (
	"errors"
	"testing"

	"github.com/tabrelay/tabrelay/internal/browser"
)

// TestEnvFailsWithoutPanic: when the environment cannot start (here: the browser is a program
// that exits at once, as a broken or missing install would), startEnv returns an error that says
// so and stops what it had started, instead of panicking on the way out; with no browser at all,
// the error is browser.Find's, the one message every test package prints.
func TestEnvFailsWithoutPanic(t *testing.T) {
	t.Setenv(browser.EnvChrome, "false") // /bin/false: starts, exits at once
	e, err := startEnv()
	if err == nil {
		e.close()
		t.Fatal("startEnv with a browser that exits at once: no error")
	}
	if e != nil {
		t.Errorf("startEnv failed (%v) but returned an environment", err)
	}
	t.Logf("startEnv: %v", err)

	t.Setenv(browser.EnvChrome, "/nonexistent/chromium")
	if _, err := startEnv(); !errors.Is(err, browser.ErrNotFound) {
		t.Fatalf("startEnv without a browser: %v, want browser.ErrNotFound", err)
	}
}
