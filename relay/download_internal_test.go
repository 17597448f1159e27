package relay

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCopyDownloadNames: behavior allow copies under the suggested name, reduced to one path
// element (a page cannot make the relay write outside downloadPath), and picks "name (1).ext"
// when the name is taken, as Chrome does; the bytes are the browser's file's.
func TestCopyDownloadNames(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"invoice.pdf", "invoice.pdf"},
		{"../../etc/passwd", "passwd"},
		{`..\..\boot.ini`, "boot.ini"},
		{"..", "download"},
		{"", "download"},
	} {
		if got := safeName(tc.in); got != tc.want {
			t.Errorf("safeName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	src := filepath.Join(t.TempDir(), "saved")
	if err := os.WriteFile(src, []byte("bytes"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "made", "by", "copy")
	for _, want := range []string{"invoice.pdf", "invoice (1).pdf", "invoice (2).pdf"} {
		got, err := copyDownload(src, filepath.Join(dir, "invoice.pdf"))
		if err != nil || got != filepath.Join(dir, want) {
			t.Fatalf("copyDownload = %q, %v; want %s", got, err, want)
		}
		if b, err := os.ReadFile(got); err != nil || string(b) != "bytes" {
			t.Errorf("%s holds %q (%v)", got, b, err)
		}
	}
	if _, err := copyDownload(filepath.Join(t.TempDir(), "gone"), filepath.Join(dir, "x")); err == nil {
		t.Error("copying a file that is not there: no error")
	}
}
