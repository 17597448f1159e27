package taskstore

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFilesArePrivate checks that the database and its -wal and -shm companions are 0600 with
// the usual umask 022 (SQLite makes the companions with the database file's mode), for a new
// database and for one an older version left 0644.
func TestFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, tc := range []struct {
		name string
		// before prepares the directory; it returns the database path.
		before func(t *testing.T, dir string) string
	}{
		{"new database", func(t *testing.T, dir string) string { return filepath.Join(dir, FileName) }},
		{"older database left 0644", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, FileName)
			s, err := Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			// as a crash would leave them: companions next to the database, all 0644
			for _, p := range []string{path + "-wal", path + "-shm"} {
				if err := os.WriteFile(p, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Chmod(p, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			return path
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := tc.before(t, t.TempDir())
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.SaveTask(ctx, sampleTask(1)); err != nil { // writes through the WAL
				t.Fatal(err)
			}
			for _, p := range []string{path, path + "-wal", path + "-shm"} {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatalf("%s: %v (WAL mode should keep it while the database is open)", filepath.Base(p), err)
				}
				if m := st.Mode().Perm(); m != 0o600 {
					t.Errorf("%s has mode %#o, want 0600", filepath.Base(p), m)
				}
			}
		})
	}
}
