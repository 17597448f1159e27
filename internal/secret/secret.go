// Package secret keeps tabrelay's per-install pairing secret: created once with 32 random bytes,
// stored in the tabrelay home with mode 0600, compared in constant time, and watched on disk so
// that rotating it (tabrelay token --rotate) takes effect in a running server.
package secret

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// FileName is the secret's file name inside the tabrelay home.
const FileName = "token"

// Generate returns a new secret: 32 random bytes, hex encoded.
func Generate() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// LoadOrCreate reads the secret from home, creating home and the secret if missing.
func LoadOrCreate(home string) (string, error) {
	path := filepath.Join(home, FileName)
	tok, err := read(path)
	if err == nil {
		return tok, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	tok, err = Generate()
	if err != nil {
		return "", err
	}
	if err := Write(home, tok); err != nil {
		return "", err
	}
	return tok, nil
}

// Write stores tok as the secret in home (mode 0600), replacing any earlier one atomically.
func Write(home, tok string) error {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("create tabrelay home %s: %w", home, err)
	}
	tmp, err := os.CreateTemp(home, ".token-*")
	if err != nil {
		return fmt.Errorf("write secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write secret: %w", err)
	}
	if _, err := tmp.WriteString(tok + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("write secret: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write secret: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(home, FileName)); err != nil {
		return fmt.Errorf("write secret: %w", err)
	}
	return nil
}

func read(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 {
		return "", fmt.Errorf("secret in %s is too short (%d characters); delete the file to create a new one", path, len(tok))
	}
	return tok, nil
}

// Store holds the current secret of a running server.
type Store struct {
	home string
	mu   sync.RWMutex
	tok  string
	mod  time.Time
}

// NewStore loads (or creates) the secret in home.
func NewStore(home string) (*Store, error) {
	tok, err := LoadOrCreate(home)
	if err != nil {
		return nil, err
	}
	s := &Store{home: home, tok: tok}
	if st, err := os.Stat(filepath.Join(home, FileName)); err == nil {
		s.mod = st.ModTime()
	}
	return s, nil
}

// Token returns the current secret.
func (s *Store) Token() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tok
}

// Check reports whether candidate is the current secret, in constant time.
func (s *Store) Check(candidate string) bool {
	tok := s.Token()
	return candidate != "" && subtle.ConstantTimeCompare([]byte(candidate), []byte(tok)) == 1
}

// Watch polls the secret file every interval until ctx ends and calls onRotate after the secret
// on disk changed (the new secret is in force by then).
func (s *Store) Watch(ctx context.Context, interval time.Duration, onRotate func()) {
	path := filepath.Join(s.home, FileName)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := os.Stat(path)
		if err != nil || st.ModTime().Equal(s.mod) {
			continue
		}
		tok, err := read(path)
		if err != nil {
			continue
		}
		s.mu.Lock()
		changed := tok != s.tok
		s.tok, s.mod = tok, st.ModTime()
		s.mu.Unlock()
		if changed && onRotate != nil {
			onRotate()
		}
	}
}
