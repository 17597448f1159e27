// Package config gathers tabrelay's settings from flags and environment variables, with the
// defaults from the design notes: 127.0.0.1:18792 and a home under the user's config directory.
package config

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultAddr is where the server listens unless told otherwise.
const DefaultAddr = "127.0.0.1:18792"

// DefaultExtensionID is the pinned id of the bundled extension (the "key" in its manifest).
const DefaultExtensionID = "ofadlohlidnjalhlaflailnbkbminbnb"

// EnvBool reads a boolean environment variable ("1", "true", "yes").
func EnvBool(name string) bool {
	v, _ := strconv.ParseBool(strings.TrimSpace(os.Getenv(name)))
	return v || strings.EqualFold(os.Getenv(name), "yes")
}

// DefaultHome is TABRELAY_HOME or <user config dir>/tabrelay.
func DefaultHome() string {
	if v := os.Getenv("TABRELAY_HOME"); v != "" {
		return v
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "tabrelay")
}

// IsLoopback reports whether addr's host is a loopback IP or "localhost". 0.0.0.0 and :: are not.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckListenAddr refuses a non-loopback address unless allowNonLoopback is set.
func CheckListenAddr(addr string, allowNonLoopback bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("listen address %q: %w (want host:port, e.g. %s)", addr, err, DefaultAddr)
	}
	if !IsLoopback(addr) && !allowNonLoopback {
		return fmt.Errorf("refusing to listen on %s: it is not a loopback address, and whoever reaches the relay controls your browser; use 127.0.0.1, or pass --dangerously-listen-non-loopback if you really mean it", addr)
	}
	return nil
}

// ExtensionIDs returns the allowed extension ids: the bundled one plus TABRELAY_EXTENSION_IDS
// (comma separated) and extra.
func ExtensionIDs(extra ...string) []string {
	ids := []string{DefaultExtensionID}
	for _, s := range append(strings.Split(os.Getenv("TABRELAY_EXTENSION_IDS"), ","), extra...) {
		if s = strings.TrimSpace(s); s != "" {
			ids = append(ids, s)
		}
	}
	return ids
}
