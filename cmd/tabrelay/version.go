package main

import (
	"context"
	"fmt"

	"github.com/tabrelay/tabrelay/internal/buildinfo"
)

// versionCmd is `tabrelay version`.
type versionCmd struct{}

// Run prints the version, the commit and the build date in one line.
func (versionCmd) Run(_ context.Context, io stdio) error {
	_, err := fmt.Fprintln(io.out, buildinfo.Get())
	return err
}
