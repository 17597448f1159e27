package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"
)

// What the packages say about tabrelay.
const (
	homepage    = "https://github.com/tabrelay/tabrelay"
	summary     = "Share your own browser tabs with CDP clients and an agent"
	maintainer  = "tabrelay maintainers <tabrelay@users.noreply.github.com>"
	FormulaFile = "tabrelay.rb"   // the Homebrew formula, for the project's tap
	ScoopFile   = "tabrelay.json" // the Scoop manifest: `scoop install URL`
)

// DebName is the file name of the Debian package of t's binary: tabrelay-linux-<arch>.deb (no
// version in it, so that …/releases/latest/download/ names it).
func (t Target) DebName() string { return "tabrelay-" + t.OS + "-" + t.Arch + ".deb" }

// writePackages writes, for the targets built into dir, the Debian packages (Linux), the
// Homebrew formula (macOS and Linux) and the Scoop manifest (Windows), and returns their file
// names. The formula and the manifest name each binary by download+name and its checksum.
func writePackages(dir string, targets []Target, st stamp, download string) ([]string, error) {
	var names []string
	mtime, _ := time.Parse(time.RFC3339, st.date)
	sums := map[Target]string{}
	for _, t := range targets {
		sum, err := fileSum(filepath.Join(dir, t.BinaryName()))
		if err != nil {
			return nil, err
		}
		sums[t] = sum
		if t.OS != "linux" {
			continue
		}
		bin, err := os.ReadFile(filepath.Join(dir, t.BinaryName()))
		if err != nil {
			return nil, err
		}
		var deb bytes.Buffer
		if err := WriteDeb(&deb, bin, debVersion(st.version), t.Arch, mtime); err != nil {
			return nil, fmt.Errorf("%s: %w", t.DebName(), err)
		}
		if err := os.WriteFile(filepath.Join(dir, t.DebName()), deb.Bytes(), 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", t.DebName(), err)
		}
		names = append(names, t.DebName())
	}
	if f, ok, err := Formula(st.version, download, sums); err != nil {
		return nil, err
	} else if ok {
		if err := os.WriteFile(filepath.Join(dir, FormulaFile), f, 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", FormulaFile, err)
		}
		names = append(names, FormulaFile)
	}
	if m, ok, err := ScoopManifest(st.version, download, sums); err != nil {
		return nil, err
	} else if ok {
		if err := os.WriteFile(filepath.Join(dir, ScoopFile), m, 0o644); err != nil {
			return nil, fmt.Errorf("write %s: %w", ScoopFile, err)
		}
		names = append(names, ScoopFile)
	}
	return names, nil
}

// debVersion is version as Debian spells it: no leading "v" (tags are v0.2.0).
func debVersion(v string) string { return strings.TrimPrefix(v, "v") }

// WriteDeb writes a Debian binary package that installs bin as /usr/bin/tabrelay for the Debian
// architecture arch (Go's amd64 and arm64 are Debian's names too). Every file in it has mtime,
// so the same binary gives the same package. A .deb is an ar archive of debian-binary,
// control.tar.gz and data.tar.gz, in that order.
func WriteDeb(w io.Writer, bin []byte, version, arch string, mtime time.Time) error {
	control := fmt.Sprintf(`Package: tabrelay
Version: %s
Architecture: %s
Maintainer: %s
Installed-Size: %d
Section: web
Priority: optional
Homepage: %s
Description: %s
 tabrelay makes the tabs you share in your own Chrome look like a Chrome started
 with --remote-debugging-port, for Playwright, Puppeteer, chromedp and other
 DevTools Protocol clients, and runs an agent on them. Run "tabrelay" and
 follow what it prints; "tabrelay extension --out DIR" writes the extension.
`, version, arch, maintainer, (len(bin)+1023)/1024, homepage, summary)
	controlTar, err := tarGz(mtime, []tarEntry{{name: "./", dir: true}, {name: "./control", mode: 0o644, body: []byte(control)}})
	if err != nil {
		return err
	}
	dataTar, err := tarGz(mtime, []tarEntry{
		{name: "./", dir: true}, {name: "./usr/", dir: true}, {name: "./usr/bin/", dir: true},
		{name: "./usr/bin/tabrelay", mode: 0o755, body: bin},
	})
	if err != nil {
		return err
	}
	var b bytes.Buffer
	b.WriteString("!<arch>\n")
	for _, m := range []struct {
		name string
		body []byte
	}{{"debian-binary", []byte("2.0\n")}, {"control.tar.gz", controlTar}, {"data.tar.gz", dataTar}} {
		// the ar member header: name, mtime, owner, group, mode, size, then "`\n"
		fmt.Fprintf(&b, "%-16s%-12d%-6d%-6d%-8o%-10d`\n", m.name, mtime.Unix(), 0, 0, 0o100644, len(m.body))
		b.Write(m.body)
		if len(m.body)%2 == 1 {
			b.WriteByte('\n')
		}
	}
	_, err = w.Write(b.Bytes())
	return err
}

// tarEntry is a file or folder of a package's tar archive, owned by root.
type tarEntry struct {
	name string
	dir  bool
	mode int64
	body []byte
}

func tarGz(mtime time.Time, entries []tarEntry) ([]byte, error) {
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode, Size: int64(len(e.body)), ModTime: mtime, Uname: "root", Gname: "root", Typeflag: tar.TypeReg, Format: tar.FormatGNU}
		if e.dir {
			h.Typeflag, h.Mode, h.Size = tar.TypeDir, 0o755, 0
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// formulaTmpl is the Homebrew formula: the binary of the person's OS and CPU, installed as
// `tabrelay`.
var formulaTmpl = template.Must(template.New("formula").Parse(`# Homebrew formula for tabrelay {{.Version}}, written by the release build (tools/release).
class Tabrelay < Formula
  desc "{{.Summary}}"
  homepage "{{.Homepage}}"
  version "{{.Version}}"
{{- range .OSes}}

  on_{{.Brew}} do
{{- range .Arches}}
    on_{{.Brew}} do
      url "{{.URL}}"
      sha256 "{{.Sum}}"
    end
{{- end}}
  end
{{- end}}

  def install
    bin.install Dir["tabrelay-*"].first => "tabrelay"
  end

  test do
    assert_match version.to_s, shell_output("#{bin}/tabrelay version")
  end
end
`))

// Formula is the Homebrew formula for the macOS and Linux binaries among sums (their SHA-256
// by target), downloaded from download; ok is false when there are none.
func Formula(version, download string, sums map[Target]string) (_ []byte, ok bool, _ error) {
	type arch struct{ Brew, URL, Sum string }
	type osBlock struct {
		Brew   string
		Arches []arch
	}
	var oses []osBlock
	for _, goos := range []struct{ goos, brew string }{{"darwin", "macos"}, {"linux", "linux"}} {
		ob := osBlock{Brew: goos.brew}
		for _, a := range []struct{ goarch, brew string }{{"arm64", "arm"}, {"amd64", "intel"}} {
			t := Target{goos.goos, a.goarch}
			if sum, ok := sums[t]; ok {
				ob.Arches = append(ob.Arches, arch{a.brew, download + t.BinaryName(), sum})
			}
		}
		if len(ob.Arches) > 0 {
			oses = append(oses, ob)
		}
	}
	if len(oses) == 0 {
		return nil, false, nil
	}
	var b bytes.Buffer
	err := formulaTmpl.Execute(&b, map[string]any{"Version": strings.TrimPrefix(version, "v"), "Summary": summary, "Homepage": homepage, "OSes": oses})
	if err != nil {
		return nil, false, fmt.Errorf("write the Homebrew formula: %w", err)
	}
	return b.Bytes(), true, nil
}

// ScoopManifest is the Scoop manifest for the Windows binaries among sums, downloaded from
// download and installed as tabrelay.exe (the "#/name" ending of a URL names the download);
// ok is false when there are none.
func ScoopManifest(version, download string, sums map[Target]string) (_ []byte, ok bool, _ error) {
	type arch struct {
		URL  string `json:"url"`
		Hash string `json:"hash"`
	}
	archs := map[string]arch{}
	for _, a := range []struct{ goarch, scoop string }{{"amd64", "64bit"}, {"arm64", "arm64"}} {
		t := Target{"windows", a.goarch}
		if sum, ok := sums[t]; ok {
			archs[a.scoop] = arch{download + t.BinaryName() + "#/tabrelay.exe", sum}
		}
	}
	if len(archs) == 0 {
		return nil, false, nil
	}
	m := struct {
		Version      string          `json:"version"`
		Description  string          `json:"description"`
		Homepage     string          `json:"homepage"`
		License      string          `json:"license"`
		Architecture map[string]arch `json:"architecture"`
		Bin          string          `json:"bin"`
	}{strings.TrimPrefix(version, "v"), summary, homepage, "Unknown", archs, "tabrelay.exe"}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, false, fmt.Errorf("write the Scoop manifest: %w", err)
	}
	return append(b, '\n'), true, nil
}
