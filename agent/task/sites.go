package task

import (
	"net/url"
	"strings"
)

// siteAllowed reports whether pageURL's host is one of allowed (exact host or a subdomain);
// an empty allowlist allows everything.
func siteAllowed(allowed []string, pageURL string) bool {
	if len(allowed) == 0 {
		return true
	}
	host := hostOf(pageURL)
	for _, a := range allowed {
		a = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(a), "*."))
		if a == "" {
			continue
		}
		if h := hostOf(a); h != "" && strings.Contains(a, "/") {
			a = h
		}
		if host == a || strings.HasSuffix(host, "."+a) {
			return true
		}
	}
	return false
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
