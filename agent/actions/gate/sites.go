package gate

import (
	"net"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// A task's boundary. Each task (a run of the agent, a skill's run, an MCP client's session)
// has a set of sites it may reach without asking: the site of the shared tab when it starts,
// the sites the person's own words name, and the standing list (Options.AllowedSites).
// Opening a page of another site, typing into one or uploading to one asks the person first;
// their yes admits that page (its origin and path), not the whole site. The task also
// remembers the distinctive values it read from pages (flow.go) so that none leaves for
// another site unasked.
//
// What a site is. A site is the registrable domain (example.co.uk for shop.example.co.uk),
// except where one domain holds many owners' tenants: there the tenant's host is the site.
// The public suffix list's private section (which golang.org/x/net/publicsuffix includes)
// already makes acme.github.io, acme.myshopify.com, acme.vercel.app, acme.herokuapp.com,
// acme.notion.site and their like sites of their own; tenantDomains adds the tenant hosts
// the list does not name (acme.slack.com, acme.atlassian.net, acme.zendesk.com, …). Secrets
// (flow.go) are held to the strictest unit, the origin: scheme, host and port.
//
// Where a site is its hosts. No list names every domain of strangers' tenants, so a URL
// the agent opens by itself (navigate, a new tab) is judged by its host too: a host of a
// task's site is inside only when the task has been on it (a page it acted on or read,
// reached by a link, a redirect or a step the person approved), the person's words name it,
// it is the site's own domain or that domain's www host (the owner's, never a tenant's), or
// it is under such a host other than the site's own domain (docs.acme.example under
// acme.example). A site the standing list names, or whose own domain the person's words
// name, is inside with all its hosts. Acting on the page a tab shows, following a link and
// a redirect stay judged by site: mail.example.com handing over to accounts.example.com is
// one owner's.
//
// Fail closed. A host is read as the browser reads it (IDNA mapping: case, full-width dots,
// soft hyphens and other ignorable characters fold away, so ev\u00adil.com is evil.com); a
// URL with a host the gate cannot read that way (an underscore, a disallowed character, an
// empty label) has no site and is outside every task. Only a URL that goes nowhere
// (about:blank, about:srcdoc) is inside without a site.

// Site is a site as the boundary counts it: the registrable domain, or the tenant's host on a
// tenants' domain (see above), or the host itself for an IP address or a single-label host
// such as localhost, with the port when it is not the scheme's default. http and https of one
// domain are one site.
type Site string

// SiteOf returns the site of raw, an absolute URL ("" for a URL without a host the gate can
// read: about:blank, data:, a malformed one; see Task.Has for what "" means).
func SiteOf(raw string) Site {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return siteOfURL(u)
}

func siteOfURL(u *url.URL) Site {
	if strings.EqualFold(u.Scheme, "file") && u.Opaque == "" {
		return fileSite // the local files (opened only with --agent-allow-file-urls) are one site
	}
	host, ok := canonicalHost(u)
	if !ok {
		return ""
	}
	domain := host
	if net.ParseIP(host) == nil && strings.Contains(host, ".") {
		if d, err := publicsuffix.EffectiveTLDPlusOne(host); err == nil {
			domain = tenantOf(host, d)
		}
	}
	if port := u.Port(); port != "" && port != defaultPort(u.Scheme) {
		domain = net.JoinHostPort(domain, port)
	}
	return Site(domain)
}

// fileSite is the site of every file: URL: a task begun on a local file may open and act on
// other local files; one begun on the web asks before it opens one.
const fileSite Site = "file://"

// tenantDomains are registrable domains whose subdomains are different owners' tenants, that
// the public suffix list's private section does not name: each tenant host is a site.
var tenantDomains = map[string]bool{
	"slack.com": true, "atlassian.net": true, "zendesk.com": true, "freshdesk.com": true,
	"sharepoint.com": true, "salesforce.com": true, "force.com": true, "okta.com": true,
	"auth0.com": true, "wordpress.com": true, "substack.com": true, "tumblr.com": true,
	"glitch.me": true, "zoom.us": true, "webex.com": true, "bamboohr.com": true,
	"monday.com": true, "harvestapp.com": true, "kayako.com": true, "service-now.com": true,
	"my.site.com": true, "workday.com": true, "looker.com": true, "statuspage.io": true,
	"readthedocs.io": true, "gitbook.io": true, "ghost.io": true, "wixsite.com": true,
	"squarespace.com": true, "typeform.com": true, "hubspot.com": true,
}

// tenantOf is host's site when domain, its registrable domain, is a tenants' domain: the host
// one label under the domain (acme.slack.com for x.acme.slack.com; slack.com and
// www.slack.com stay slack.com).
func tenantOf(host, domain string) string {
	if !tenantDomains[domain] || host == domain {
		return domain
	}
	rest := strings.TrimSuffix(host, "."+domain)
	label := rest[strings.LastIndexByte(rest, '.')+1:]
	if label == "www" {
		return domain
	}
	return label + "." + domain
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// canonicalHost is u's host as the browser reads it: lower case, IDNA-mapped to ASCII, without
// a trailing dot. ok is false for no host or a host the gate cannot read so.
func canonicalHost(u *url.URL) (string, bool) {
	host := u.Hostname()
	if host == "" {
		return "", false
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String(), true
	}
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", false
	}
	a = strings.TrimSuffix(strings.ToLower(a), ".")
	if a == "" || !validHost(a) {
		return "", false
	}
	if b, err := idna.Lookup.ToASCII(a); err != nil || b != a {
		return "", false // a mapping that does not read back the same (invalid UTF-8 taken in)
	}
	for _, l := range strings.Split(a, ".") {
		if l == "" || len(l) > 63 {
			return "", false
		}
	}
	return a, true
}

// OriginOf returns the origin of raw, an absolute URL: scheme, host as the browser reads it
// and port ("https://shop.example.com:443"); "" when it has no host or one the gate cannot read.
func OriginOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	if siteOfURL(u) == fileSite {
		return string(fileSite)
	}
	host, ok := canonicalHost(u)
	if !ok {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

// pageOf is raw's origin and path: the unit one approval of a page admits.
func pageOf(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	o := OriginOf(raw)
	if o == "" {
		return ""
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	return o + p
}

// nowhere reports whether raw goes nowhere a value could reach: no URL, about:blank, about:srcdoc.
func nowhere(raw string) bool {
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", "about:blank", "about:srcdoc":
		return true
	}
	return false
}

// Task is what the gate keeps for one task: the sites it may reach without asking and the
// values it has read from pages. Its zero value is not usable: see NewTask. Safe for
// concurrent use; it lives in memory for the task's lifetime and is bounded.
type Task struct {
	words     string // the person's own words ("" when none: a model's task)
	normWords string // the same in normal form (see normal)

	mu      sync.Mutex
	started bool
	sites   map[Site]bool
	wide    map[Site]bool   // sites inside with every host (the standing list, a domain the person named)
	hosts   map[string]bool // hosts the task has been on or the person named (see hostOf)
	pages   map[string]bool // pages (origin and path) the person approved
	reads   reads
	keys    map[string]string // printable keys pressed into each origin, newest last
}

// maxSites bounds a task's set of sites.
const maxSites = 256

// NewTask returns the boundary of a task whose person said words ("" when the task is a
// model's: an MCP client's goal names nothing) and whose standing list of sites is standing
// (hosts or URLs, "*.example.com" meaning example.com). The site of the shared tab joins at
// the task's first action or read ([Task.Begin]).
func NewTask(words string, standing []string) *Task {
	t := &Task{words: words, normWords: normal(words), sites: map[Site]bool{}, wide: map[Site]bool{}, hosts: map[string]bool{},
		pages: map[string]bool{}, reads: newReads(), keys: map[string]string{}}
	for _, s := range standing {
		s = strings.TrimPrefix(strings.TrimSpace(s), "*.")
		if s == "" {
			continue
		}
		if !strings.Contains(s, "://") {
			s = "https://" + s
		}
		if site := SiteOf(s); site != "" && len(t.sites) < maxSites {
			t.sites[site], t.wide[site] = true, true
		}
	}
	for _, u := range namedIn(words) {
		t.addNamedLocked(u)
	}
	return t
}

// addNamedLocked adds the site of u, a URL the person's words name, and its host: the whole
// site when the host is the site's own domain (or its www host).
func (t *Task) addNamedLocked(u *url.URL) {
	site := siteOfURL(u)
	if site == "" || len(t.sites) >= maxSites {
		return
	}
	t.sites[site] = true
	h := hostOf(u)
	if h == siteHost(site, u) {
		t.wide[site] = true
	} else if len(t.hosts) < maxSites {
		t.hosts[h] = true
	}
}

// Begin records pageURL, a page the task is on as it acts or reads: the first one's site
// joins the task (the task started there), and every one's host counts as a host the task
// has been on (see Known).
func (t *Task) Begin(pageURL string) {
	if t == nil {
		return
	}
	u, err := url.Parse(strings.TrimSpace(pageURL))
	if err != nil {
		return
	}
	site := siteOfURL(u)
	if site == "" {
		return // a blank tab: the task has not started anywhere yet
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.started {
		t.started = true
		t.addLocked(site)
	}
	if t.sites[site] && len(t.hosts) < maxSites {
		t.hosts[hostOf(u)] = true
	}
}

// Allow adds the site of rawURL to the task's set, with its host: the person's own words
// named it.
func (t *Task) Allow(rawURL string) {
	if t == nil {
		return
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addNamedLocked(u)
}

// AllowPage admits the page at rawURL (its origin and path, whatever its query) to the task:
// the person approved going to, or acting on, that one page of a site outside the task.
func (t *Task) AllowPage(rawURL string) {
	if t == nil {
		return
	}
	pg := pageOf(rawURL)
	if pg == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pages) < maxSites {
		t.pages[pg] = true
	}
}

func (t *Task) addLocked(site Site) {
	if len(t.sites) < maxSites {
		t.sites[site] = true
	}
}

// Has reports whether rawURL is inside the task: on one of its sites, or a page the person
// approved. A URL that goes nowhere (about:blank) is inside every task; any other URL without
// a site the gate can read (a malformed host, a scheme without one) is outside every task.
func (t *Task) Has(rawURL string) bool {
	if nowhere(rawURL) {
		return true
	}
	site := SiteOf(rawURL)
	if site == "" {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sites[site] || t.pages[pageOf(rawURL)]
}

// Known reports whether rawURL, a page the task would open by itself, is inside the task
// host by host (see "Where a site is its hosts" above): Has, and its host is one the task
// has been on or the person named, under one of those, or its site's own domain or www
// host, or its site is inside with every host, or the person approved that page.
func (t *Task) Known(rawURL string) bool {
	if nowhere(rawURL) {
		return true
	}
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return false
	}
	site := siteOfURL(u)
	if site == "" {
		return false
	}
	h, own := hostOf(u), siteHost(site, u)
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.sites[site] {
		return t.pages[pageOf(rawURL)]
	}
	if t.wide[site] || h == own || t.hosts[h] || site == fileSite {
		return true
	}
	for k := range t.hosts {
		if k != own && strings.HasSuffix(h, "."+k) {
			return true
		}
	}
	return t.pages[pageOf(rawURL)]
}

// hostOf is u's host as the boundary counts hosts: as the browser reads it, without a
// leading "www." (www.example.com and example.com are one owner's), with its port when that
// is not the scheme's default ("" when it cannot be read).
func hostOf(u *url.URL) string {
	host, ok := canonicalHost(u)
	if !ok {
		return ""
	}
	if net.ParseIP(host) == nil {
		host = strings.TrimPrefix(host, "www.")
	}
	if port := u.Port(); port != "" && port != defaultPort(u.Scheme) {
		host = net.JoinHostPort(host, port)
	}
	return host
}

// siteHost is the host (as hostOf counts it) of site's own domain, for a URL u of it: the
// registrable domain or the tenant's host, with u's port.
func siteHost(site Site, u *url.URL) string {
	h := string(site)
	if port := u.Port(); port != "" && port != defaultPort(u.Scheme) {
		h = strings.TrimSuffix(h, ":"+port)
		if strings.HasPrefix(h, "[") {
			h = strings.Trim(h, "[]")
		}
		return net.JoinHostPort(h, port)
	}
	return h
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
	for _, u := range namedIn(words) {
		if s := siteOfURL(u); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// namedIn returns the URLs words name (see SitesIn): a host written alone reads as https.
func namedIn(words string) []*url.URL {
	var out []*url.URL
	add := func(raw string) {
		if u, err := url.Parse(raw); err == nil && siteOfURL(u) != "" {
			out = append(out, u)
		}
	}
	for _, m := range urlInWords.FindAllString(words, -1) {
		m = strings.TrimRight(m, ".,;:!?")
		if u, err := url.Parse(m); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
			add(m)
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
		add("https://" + h)
	}
	return out
}

// validHost reports whether host, an ASCII host name or an address, is made of what they
// are: letters, digits, '-', '.' (and ':' inside an IPv6 address).
func validHost(host string) bool {
	if net.ParseIP(host) != nil {
		return true
	}
	for _, r := range host {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '-' || r == '.') {
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
