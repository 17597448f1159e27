package browser

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ExtensionIDFromKey computes a Chrome extension id from the manifest's "key" (base64 of the
// DER public key): the first 16 bytes of its SHA-256, each hex digit mapped to 'a'..'p'.
func ExtensionIDFromKey(key string) (string, error) {
	der, err := base64.StdEncoding.DecodeString(strings.TrimSpace(key))
	if err != nil {
		return "", fmt.Errorf("extension key: %w", err)
	}
	sum := sha256.Sum256(der)
	h := hex.EncodeToString(sum[:16])
	id := make([]byte, len(h))
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c >= 'a' {
			c = c - 'a' + 10
		} else {
			c -= '0'
		}
		id[i] = 'a' + c
	}
	return string(id), nil
}

// ExtensionIDFromDir reads dir/manifest.json and returns the id its "key" pins.
func ExtensionIDFromDir(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return "", fmt.Errorf("read extension manifest: %w", err)
	}
	var m struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("parse %s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	if m.Key == "" {
		return "", fmt.Errorf("%s has no \"key\": the extension id would not be stable", filepath.Join(dir, "manifest.json"))
	}
	return ExtensionIDFromKey(m.Key)
}
