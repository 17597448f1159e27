// Command release builds tabrelay's release artifacts (`go tool task release` runs it): the
// binary for every desktop (linux, darwin and windows on amd64 and arm64) as
// dist/tabrelay-<os>-<arch> (.exe on Windows), the extension's store package
// dist/tabrelay-extension.zip (what `tabrelay extension --zip` writes) and dist/SHA256SUMS
// (`sha256sum -c SHA256SUMS` checks them). Each binary has the version, commit and date stamped
// in (`tabrelay version` prints them) and must stay within -max-mb.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	chromeextension "github.com/tabrelay/tabrelay/chrome-extension"
	"github.com/tabrelay/tabrelay/internal/buildinfo"
)

// Target is one platform a binary is built for.
type Target struct{ OS, Arch string }

// Targets are the desktops released.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// BinaryName is the file name of the binary for t: tabrelay-<os>-<arch>, .exe on Windows.
func (t Target) BinaryName() string {
	name := "tabrelay-" + t.OS + "-" + t.Arch
	if t.OS == "windows" {
		name += ".exe"
	}
	return name
}

// ExtensionZip is the file name of the extension's store package.
const ExtensionZip = "tabrelay-extension.zip"

// SumsFile is the file name of the checksums.
const SumsFile = "SHA256SUMS"

// stamp is what the linker writes into internal/buildinfo.
type stamp struct{ version, commit, date string }

func (s stamp) ldflags() string {
	const pkg = "github.com/tabrelay/tabrelay/internal/buildinfo"
	// -s -w: no symbol table or DWARF (a release is not debugged with delve; panics keep their traces)
	return fmt.Sprintf("-s -w -X %s.version=%s -X %s.commit=%s -X %s.date=%s", pkg, s.version, pkg, s.commit, pkg, s.date)
}

func main() {
	out := flag.String("out", "dist", "folder to write the artifacts into")
	version := flag.String("version", "", "version to stamp (default: $TABRELAY_VERSION, else the exact git tag of HEAD, else "+buildinfo.Base+")")
	maxMB := flag.Int("max-mb", 35, "fail when a binary is larger than this many MiB")
	jobs := flag.Int("jobs", min(runtime.NumCPU(), len(Targets)), "binaries built at once")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *out, *version, int64(*maxMB)<<20, max(*jobs, 1), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out, version string, maxBytes int64, jobs int, log io.Writer) error {
	st, err := stampOf(ctx, version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	fmt.Fprintf(log, "building tabrelay %s (commit %s, %s) for %d platforms, %d at a time\n", st.version, st.commit, st.date, len(Targets), jobs)
	start := time.Now()
	errs := make([]error, len(Targets))
	sem := make(chan struct{}, jobs)
	var wg sync.WaitGroup
	for i, t := range Targets {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			errs[i] = build(ctx, t, filepath.Join(out, t.BinaryName()), st)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var zipBuf bytes.Buffer
	if err := chromeextension.WriteZip(&zipBuf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, ExtensionZip), zipBuf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the extension zip: %w", err)
	}
	names := []string{ExtensionZip}
	for _, t := range Targets {
		names = append(names, t.BinaryName())
	}
	sums, err := Sums(out, names)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, SumsFile), sums, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SumsFile, err)
	}
	var tooBig []string
	for _, t := range Targets {
		fi, err := os.Stat(filepath.Join(out, t.BinaryName()))
		if err != nil {
			return err
		}
		fmt.Fprintf(log, "  %-32s %5.1f MiB\n", t.BinaryName(), float64(fi.Size())/(1<<20))
		if fi.Size() > maxBytes {
			tooBig = append(tooBig, fmt.Sprintf("%s (%.1f MiB)", t.BinaryName(), float64(fi.Size())/(1<<20)))
		}
	}
	fmt.Fprintf(log, "wrote %d binaries, %s and %s to %s in %v\n", len(Targets), ExtensionZip, SumsFile, out, time.Since(start).Round(time.Second))
	if len(tooBig) > 0 {
		return fmt.Errorf("larger than %d MiB: %s (look for what links them: go version -m, go list -deps ./cmd/tabrelay)", maxBytes>>20, strings.Join(tooBig, ", "))
	}
	return nil
}

// build cross-compiles the tabrelay command for t into path (pure Go: no cgo anywhere).
func build(ctx context.Context, t Target, path string, st stamp) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", st.ldflags(), "-o", path, "./cmd/tabrelay")
	cmd.Env = append(os.Environ(), "GOOS="+t.OS, "GOARCH="+t.Arch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s/%s: %w\n%s", t.OS, t.Arch, err, out)
	}
	return nil
}

// stampOf finds the version (flag, $TABRELAY_VERSION, the exact tag of HEAD, else
// buildinfo.Base), the commit (HEAD, with "-dirty" when the checkout has changes) and the date
// (the commit's, so that building the same commit twice gives the same binaries).
func stampOf(ctx context.Context, version string) (stamp, error) {
	git := func(args ...string) string {
		out, err := exec.CommandContext(ctx, "git", args...).Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	st := stamp{version: version, commit: git("rev-parse", "HEAD"), date: git("show", "-s", "--format=%cI", "HEAD")}
	if st.version == "" {
		st.version = os.Getenv("TABRELAY_VERSION")
	}
	if st.version == "" {
		st.version = git("describe", "--tags", "--exact-match", "HEAD")
	}
	if st.version == "" {
		st.version = buildinfo.Base
	}
	if st.commit == "" {
		return st, errors.New("no git commit to stamp: run the release build in a git checkout")
	}
	if git("status", "--porcelain", "--untracked-files=no") != "" {
		st.commit += "-dirty"
	}
	if d, err := time.Parse(time.RFC3339, st.date); err == nil {
		st.date = d.UTC().Format(time.RFC3339)
	} else {
		st.date = time.Now().UTC().Format(time.RFC3339)
	}
	for _, v := range []string{st.version, st.commit, st.date} {
		if strings.ContainsAny(v, " '\"\t\n") {
			return st, fmt.Errorf("cannot stamp %q: no spaces or quotes", v)
		}
	}
	return st, nil
}

// Sums is the SHA256SUMS text for the files names in dir, in the format `sha256sum -c` reads
// ("<hex>  <name>" a line), sorted by name.
func Sums(dir string, names []string) ([]byte, error) {
	names = slices.Sorted(slices.Values(names))
	var b bytes.Buffer
	for _, name := range names {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("checksum of %s: %w", name, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("checksum of %s: %w", name, err)
		}
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(h.Sum(nil)), name)
	}
	return b.Bytes(), nil
}
