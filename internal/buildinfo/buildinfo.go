// Package buildinfo says which tabrelay this is: its version, the commit it was built from and
// when. The release build (`go tool task release`) stamps them in with the linker
// (-ldflags "-X github.com/tabrelay/tabrelay/internal/buildinfo.version=…", commit=…,
// date=…); a plain `go build` or `go run` in a checkout leaves them empty, and they are read
// from the build information the Go toolchain records (vcs.revision, vcs.time, vcs.modified),
// and a `go install …@version` from the module's version.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Set by the linker only (see the package comment); never changed at run time.
var (
	version string
	commit  string
	date    string
)

// Base is the version of these sources, used when nothing else names one.
const Base = "0.1.0"

// Info is a build's identity.
type Info struct {
	// Version is "0.1.0", "v0.2.0" (a release or a module version), or Base with "-dev".
	Version string
	// Commit is the VCS revision ("" when unknown, as in a build outside a checkout).
	Commit string
	// Date is when the release was built, else the commit's time (RFC 3339; "" when unknown).
	Date string
	// Modified is set when the checkout had uncommitted changes (not for stamped releases).
	Modified bool
}

// Get returns this binary's identity.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	return from(version, commit, date, bi)
}

// from is Get with the stamped values and the build information given.
func from(version, commit, date string, bi *debug.BuildInfo) Info {
	in := Info{Version: version, Commit: commit, Date: date}
	if in.Version != "" { // a release build: the stamp says it all
		return in
	}
	in.Version = Base + "-dev"
	if bi == nil {
		return in
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		in.Version = v // go install …@v0.2.0
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Commit = s.Value
		case "vcs.time":
			in.Date = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// String is the one line `tabrelay version` prints: "tabrelay v0.2.0 (commit 1a2b3c4d5e6f,
// 2026-11-26T21:00:00Z)", with "modified" for a build of a checkout with uncommitted changes.
func (i Info) String() string {
	var parts []string
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, "commit "+c)
	}
	if i.Date != "" {
		parts = append(parts, i.Date)
	}
	if i.Modified {
		parts = append(parts, "modified")
	}
	if len(parts) == 0 {
		return fmt.Sprintf("tabrelay %s (commit unknown: built outside a checkout)", i.Version)
	}
	return fmt.Sprintf("tabrelay %s (%s)", i.Version, strings.Join(parts, ", "))
}
