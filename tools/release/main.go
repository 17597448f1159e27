// Command release builds tabrelay's release artifacts (`go tool task release` runs it): the
// binary for every desktop (linux, darwin and windows on amd64 and arm64) as
// dist/tabrelay-<os>-<arch> (.exe on Windows), a Debian package per Linux binary
// (dist/tabrelay-linux-<arch>.deb, `apt install ./tabrelay-linux-amd64.deb`), a Homebrew formula
// (dist/tabrelay.rb, for the project's tap) and a Scoop manifest (dist/tabrelay.json,
// `scoop install URL`) that name the binaries by their checksums, the extension's store package
// dist/tabrelay-extension.zip (what `tabrelay extension --zip` writes) and dist/SHA256SUMS
// (`sha256sum -c SHA256SUMS` checks them). Each binary has the version, commit and date stamped
// in (`tabrelay version` prints them) and must stay within -max-mb.
//
// -targets linux/amd64 builds only the platforms named. Binaries are built -jobs at a time
// (default GOMAXPROCS); each platform gets a line when its build starts and one when it is done,
// both in the order of the targets.
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

// Targets are the desktops released, in the order they are built and reported.
var Targets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// String is the target as GOOS/GOARCH ("linux/amd64"), the spelling -targets takes.
func (t Target) String() string { return t.OS + "/" + t.Arch }

// BinaryName is the file name of the binary for t: tabrelay-<os>-<arch>, .exe on Windows.
func (t Target) BinaryName() string {
	name := "tabrelay-" + t.OS + "-" + t.Arch
	if t.OS == "windows" {
		name += ".exe"
	}
	return name
}

// ParseTargets reads a comma-separated list of GOOS/GOARCH pairs, each one of Targets, and
// returns them in the order of Targets; "" or "all" is every target.
func ParseTargets(s string) ([]Target, error) {
	if s == "" || s == "all" {
		return slices.Clone(Targets), nil
	}
	want := map[Target]bool{}
	for f := range strings.SplitSeq(s, ",") {
		os, arch, ok := strings.Cut(strings.TrimSpace(f), "/")
		t := Target{os, arch}
		if !ok || !slices.Contains(Targets, t) {
			known := make([]string, len(Targets))
			for i, t := range Targets {
				known[i] = t.String()
			}
			return nil, fmt.Errorf("unknown target %q: -targets takes a comma-separated list of %s, or all", f, strings.Join(known, ", "))
		}
		want[t] = true
	}
	var out []Target
	for _, t := range Targets {
		if want[t] {
			out = append(out, t)
		}
	}
	return out, nil
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

// options are the release build's flags.
type options struct {
	out      string
	version  string
	maxBytes int64
	jobs     int
	targets  []Target
	// download is the URL the published files are downloaded from (the formula and the
	// manifest name them by it), ending in "/".
	download string
}

func main() {
	out := flag.String("out", "dist", "folder to write the artifacts into")
	version := flag.String("version", "", "version to stamp (default: $TABRELAY_VERSION, else the exact git tag of HEAD, else "+buildinfo.Base+")")
	maxMB := flag.Int("max-mb", 35, "fail when a binary is larger than this many MiB")
	jobs := flag.Int("jobs", runtime.GOMAXPROCS(0), "binaries built at once")
	targets := flag.String("targets", "all", "platforms to build, comma-separated GOOS/GOARCH (e.g. linux/amd64), or all")
	download := flag.String("download", "https://github.com/tabrelay/tabrelay/releases/download/{version}/", "where the published files are, for the Homebrew formula and the Scoop manifest ({version} is replaced)")
	flag.Parse()
	ts, err := ParseTargets(*targets)
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	o := options{out: *out, version: *version, maxBytes: int64(*maxMB) << 20, jobs: max(*jobs, 1), targets: ts, download: *download}
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, log io.Writer) error {
	st, err := stampOf(ctx, o.version)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", o.out, err)
	}
	jobs := min(o.jobs, len(o.targets))
	fmt.Fprintf(log, "building tabrelay %s (commit %s, %s) for %d platforms, %d at a time\n", st.version, st.commit, st.date, len(o.targets), jobs)
	start := time.Now()
	built := buildAll(ctx, o.targets, jobs, func(t Target) (int64, error) {
		path := filepath.Join(o.out, t.BinaryName())
		if err := build(ctx, t, path, st); err != nil {
			return 0, err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return 0, err
		}
		if fi.Size() > o.maxBytes {
			return fi.Size(), fmt.Errorf("%s is %.1f MiB, larger than %d MiB (look for what links it: go version -m, go list -deps ./cmd/tabrelay)", t.BinaryName(), mib(fi.Size()), o.maxBytes>>20)
		}
		return fi.Size(), nil
	}, log)
	if err := errors.Join(built...); err != nil {
		return err
	}

	names := []string{ExtensionZip}
	var zipBuf bytes.Buffer
	if err := chromeextension.WriteZip(&zipBuf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, ExtensionZip), zipBuf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the extension zip: %w", err)
	}
	for _, t := range o.targets {
		names = append(names, t.BinaryName())
	}
	pkgs, err := writePackages(o.out, o.targets, st, strings.ReplaceAll(o.download, "{version}", st.version))
	if err != nil {
		return err
	}
	names = append(names, pkgs...)
	sums, err := Sums(o.out, names)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, SumsFile), sums, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", SumsFile, err)
	}
	fmt.Fprintf(log, "wrote %d binaries, %s, %s and %s to %s in %v\n", len(o.targets), strings.Join(pkgs, ", "), ExtensionZip, SumsFile, o.out, time.Since(start).Round(time.Second))
	return nil
}

// buildAll runs do for every target, jobs at a time, and returns each one's error (nil when it
// was built) in the order of targets. It writes a line when a target's build starts and one when
// it ends, each kind in the order of targets: a target done before the ones ahead of it is
// reported after them.
func buildAll(ctx context.Context, targets []Target, jobs int, do func(Target) (int64, error), log io.Writer) []error {
	type result struct {
		size int64
		took time.Duration
		err  error
	}
	n := len(targets)
	results := make([]result, n)
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	var mu sync.Mutex // orders the start lines: a worker takes the next target and says so at once
	next := 0
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				if i < n {
					fmt.Fprintf(log, "[%d/%d] %-14s building\n", i+1, n, targets[i])
				}
				mu.Unlock()
				if i >= n {
					return
				}
				t0 := time.Now()
				var r result
				if err := ctx.Err(); err != nil {
					r.err = fmt.Errorf("build %s: %w", targets[i], err)
				} else {
					r.size, r.err = do(targets[i])
				}
				r.took = time.Since(t0)
				results[i] = r
				close(done[i])
			}
		})
	}
	errs := make([]error, n)
	for i, t := range targets {
		<-done[i]
		r := results[i]
		errs[i] = r.err
		mu.Lock()
		if r.err != nil {
			fmt.Fprintf(log, "[%d/%d] %-14s FAILED after %v\n", i+1, n, t, r.took.Round(100*time.Millisecond))
		} else {
			fmt.Fprintf(log, "[%d/%d] %-14s %-28s %5.1f MiB in %v\n", i+1, n, t, t.BinaryName(), mib(r.size), r.took.Round(100*time.Millisecond))
		}
		mu.Unlock()
	}
	wg.Wait()
	return errs
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// build cross-compiles the tabrelay command for t into path (pure Go: no cgo anywhere).
func build(ctx context.Context, t Target, path string, st stamp) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", st.ldflags(), "-o", path, "./cmd/tabrelay")
	cmd.Env = append(os.Environ(), "GOOS="+t.OS, "GOARCH="+t.Arch, "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %w\n%s", t, err, out)
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
		sum, err := fileSum(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return b.Bytes(), nil
}

// fileSum is the hex SHA-256 of the file at path.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("checksum of %s: %w", filepath.Base(path), err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("checksum of %s: %w", filepath.Base(path), err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
