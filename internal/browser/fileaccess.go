package browser

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// noFileAccess turns the extension's "Allow access to file URLs" off in the profile's
// preferences before the browser starts: Chrome keeps that switch per extension as
// extensions.settings.<id>.newAllowFileAccess, and an unpacked extension gets it on only when
// the profile has no value for it yet.
func noFileAccess(profile, extensionID string) error {
	path := filepath.Join(profile, "Default", "Preferences")
	prefs := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(data, &prefs); err != nil {
			return fmt.Errorf("file access off: read %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("file access off: %w", err)
	}
	ext := child(child(child(prefs, "extensions"), "settings"), extensionID)
	ext["newAllowFileAccess"] = false
	out, err := json.Marshal(prefs)
	if err != nil {
		return fmt.Errorf("file access off: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("file access off: %w", err)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		return fmt.Errorf("file access off: %w", err)
	}
	return nil
}

// child returns m[key] as an object, making it (replacing a non-object) if needed.
func child(m map[string]any, key string) map[string]any {
	c, ok := m[key].(map[string]any)
	if !ok {
		c = map[string]any{}
		m[key] = c
	}
	return c
}
