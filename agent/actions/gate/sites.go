package gate

import (
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/net/publicsuffix"
)

// A task's boundary. Each task (a run of the agent, a skill's run, an MCP client's session)
// has a set of sites it may reach without asking: the site of the shared tab when it starts,
// the sites the person's own words name, and the standing list (Options.AllowedSites).
// Opening a page of another site, typing into one or uploading to one asks the person first;
// their yes adds the site to the set. The task also remembers the distinctive values it read
// from pages (flow.go) so that none leaves for another site unasked.

// Site is a site as the boundary counts it: the registrable domain (example.co.uk for
// shop.example.co.uk), or the host itself for an IP address or a single-label host such as
// localhost, with the port when it is not the scheme's default. http and https of one domain
// are one site.
type Site string

// SiteOf returns the site of raw, an absolute URL ("" for a URL without a host: about:blank,
// data:, a malformed one).
func SiteOf(raw string) Site {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return siteOfURL(u)
}

func siteOfURL(u *url.URL) Site {
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" || !validHost(host) {
		return ""
	}
	port := u.Port()
	switch {
	case port == "80" && u.Scheme == "http", port == "443" && u.Scheme == "https":
		port = ""
	}
	domain := host
	if net.ParseIP(host) == nil && strings.Contains(host, ".") {
		if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
			domain = d
		}
	}
	if port != "" {
		domain = net.JoinHostPort(domain, port)
	}
	return Site(domain)
}

// Task is what the gate keeps for one task: the sites it may reach without asking and the
// values it has read from pages. Its zero value is not usable: see NewTask. Safe for
// concurrent use; it lives in memory for the task's lifetime and is bounded.
type Task struct {
	words string // the person's own words ("" when none: a model's task)

	mu      sync.Mutex
	started bool
	sites   map[Site]bool
	reads   reads
}

// maxSites bounds a task's set of sites.
const maxSites = 256

// NewTask returns the boundary of a task whose person said words ("" when the task is a
// model's: an MCP client's goal names nothing) and whose standing list of sites is standing
// (hosts or URLs, "*.example.com" meaning example.com). The site of the shared tab joins at
// the task's first action or read ([Task.Begin]).
func NewTask(words string, standing []string) *Task {
	t := &Task{words: words, sites: map[Site]bool{}, reads: newReads()}
	for _, s := range standing {
		s = strings.TrimPrefix(strings.TrimSpace(s), "*.")
		if s == "" {
			continue
		}
		if !strings.Contains(s, "://") {
			s = "https://" + s
		}
		if site := SiteOf(s); site != "" {
			t.sites[site] = true
		}
	}
	for _, site := range SitesIn(words) {
		t.sites[site] = true
	}
	return t
}

// Begin records pageURL, the page the task is on when it first acts or reads, as one of its
// sites. Only the first call counts: the task started there.
func (t *Task) Begin(pageURL string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.started {
		return
	}
	site := SiteOf(pageURL)
	if site == "" {
		return // a blank tab: the task has not started anywhere yet
	}
	t.started = true
	t.addLocked(site)
}

// Allow adds the site of rawURL to the task's set: the person approved going there.
func (t *Task) Allow(rawURL string) {
	if t == nil {
		return
	}
	site := SiteOf(rawURL)
	if site == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(site)
}

func (t *Task) addLocked(site Site) {
	if len(t.sites) < maxSites {
		t.sites[site] = true
	}
}

// Has reports whether rawURL is on one of the task's sites. A URL without a site
// (about:blank) is on every task's.
func (t *Task) Has(rawURL string) bool {
	site := SiteOf(rawURL)
	if site == "" {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sites[site]
}

// Sites lists the task's sites, sorted.
func (t *Task) Sites() []Site {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Site, 0, len(t.sites))
	for s := range t.sites {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Words are the person's own words the task was started with ("" for a model's task).
func (t *Task) Words() string {
	if t == nil {
		return ""
	}
	return t.words
}

var (
	// urlInWords is a URL written in full.
	urlInWords = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>()\[\]{}]+`)
	// hostInWords is a host name or IPv4 address, with an optional port, standing as a word
	// (not the domain of an e-mail address: the character before it is checked apart).
	hostInWords = regexp.MustCompile(`(?i)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9][a-z0-9-]{0,61}(?::[0-9]{1,5})?|\blocalhost:[0-9]{1,5}`)
)

// SitesIn returns the sites named in words: URLs written in full, host names whose top-level
// domain is a real one ("example.com", "shop.example.co.uk:8443"), IPv4 addresses and
// localhost with a port. A file name ("report.pdf") and an e-mail address's domain are not
// sites.
func SitesIn(words string) []Site {
	var out []Site
	seen := map[Site]bool{}
	add := func(s Site) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, m := range urlInWords.FindAllString(words, -1) {
		m = strings.TrimRight(m, ".,;:!?")
		if u, err := url.Parse(m); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			add(siteOfURL(u))
		}
	}
	rest := urlInWords.ReplaceAllString(words, " ")
	for _, loc := range hostInWords.FindAllStringIndex(rest, -1) {
		if loc[0] > 0 {
			switch rest[loc[0]-1] {
			case '@', '.', '-', '_', '/', '\\':
				continue // an e-mail address, or part of a longer word or a path
			}
		}
		if loc[1] < len(rest) {
			if c := rest[loc[1]]; c == '@' || c == '_' {
				continue // part of an e-mail address or a longer word
			}
		}
		h := strings.TrimRight(rest[loc[0]:loc[1]], ".-")
		host := h
		if i := strings.LastIndexByte(h, ':'); i >= 0 {
			host = h[:i]
		}
		if !realHost(host) {
			continue
		}
		add(SiteOf("https://" + h))
	}
	return out
}

// validHost reports whether host is made of what host names and addresses are: letters,
// digits, '-', '.' (and ':' inside an IPv6 address).
func validHost(host string) bool {
	if net.ParseIP(host) != nil {
		return true
	}
	for _, r := range host {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// realHost reports whether host is an IPv4 address, localhost, or a name under a public
// suffix (a real top-level domain, not a file's extension such as .pdf).
func realHost(host string) bool {
	host = strings.ToLower(host)
	if host == "localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.To4() != nil
	}
	if !strings.Contains(host, ".") {
		return false
	}
	suffix, icann := publicsuffix.PublicSuffix(host)
	return (icann || strings.Contains(suffix, ".")) && suffix != host
}
