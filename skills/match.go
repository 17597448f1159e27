package skills

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Match is a skill ranked for a request.
type Match struct {
	Skill *Skill `json:"skill"`
	// Score orders matches: site fit (1 for a specific site, 0.25 for any site) plus text
	// relevance (0-1, the share of the request's words the skill's name and description cover).
	Score float64 `json:"score"`
	// Named is true when the request names the skill outright ("run site-search for shoes").
	Named bool `json:"named,omitempty"`
}

// SiteMatches reports whether the skill applies to pageURL: no sites or "*" apply everywhere;
// a pattern with "://" is a glob over the whole URL ("https://shop.example.com/cart*"); any other
// pattern is a host ("example.com" also covers its subdomains, "*.example.com" only them), with
// an optional path glob ("example.com/orders/*").
func (s *Skill) SiteMatches(pageURL string) bool {
	_, ok := siteScore(s.Sites, pageURL)
	return ok
}

// siteScore is 1 for a specific site match, 0.25 for a skill for any site; ok is false when the
// skill does not apply to the URL.
func siteScore(sites []string, pageURL string) (float64, bool) {
	if len(sites) == 0 {
		return 0.25, true
	}
	u, _ := url.Parse(pageURL)
	for _, p := range sites {
		p = strings.TrimSpace(p)
		switch {
		case p == "*" || p == "":
			return 0.25, true
		case pageURL == "" || u == nil:
			continue
		case strings.Contains(p, "://"):
			if glob(p, pageURL) {
				return 1, true
			}
		default:
			host, pathPat, _ := strings.Cut(p, "/")
			h := strings.ToLower(u.Hostname())
			host = strings.ToLower(host)
			okHost := false
			if strings.HasPrefix(host, "*.") {
				okHost = strings.HasSuffix(h, host[1:])
			} else {
				okHost = h == host || strings.HasSuffix(h, "."+host) || (strings.Contains(host, "*") && glob(host, h))
			}
			if okHost && (pathPat == "" || glob("/"+pathPat, u.Path)) {
				return 1, true
			}
		}
	}
	return 0, false
}

// glob matches s against pattern where * is any run of characters (including /).
func glob(pattern, s string) bool {
	var b strings.Builder
	b.WriteString("(?i)^")
	for i, part := range strings.Split(pattern, "*") {
		if i > 0 {
			b.WriteString(".*")
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(s)
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

var stopWords = map[string]bool{"the": true, "a": true, "an": true, "to": true, "of": true, "on": true,
	"in": true, "for": true, "and": true, "or": true, "this": true, "that": true, "it": true, "is": true,
	"with": true, "me": true, "my": true, "please": true, "can": true, "you": true, "page": true,
	"run": true, "use": true, "skill": true, "from": true, "as": true, "at": true, "i": true, "want": true}

func stem(w string) string {
	for _, suf := range []string{"ing", "es", "s", "ed"} {
		if len(w) > len(suf)+2 && strings.HasSuffix(w, suf) {
			return strings.TrimSuffix(w, suf)
		}
	}
	return w
}

func words(s string) []string {
	var out []string
	for _, w := range wordRE.FindAllString(strings.ToLower(s), -1) {
		if !stopWords[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// relevance is the share of the request's words found in the skill's name (counting double),
// description and parameter names, in [0,1].
func relevance(s *Skill, request string) float64 {
	req := words(request)
	if len(req) == 0 {
		return 0
	}
	name := map[string]bool{}
	for _, w := range words(strings.ReplaceAll(s.Name, "-", " ")) {
		name[w] = true
	}
	desc := map[string]bool{}
	for _, w := range words(s.Description) {
		desc[w] = true
	}
	for _, p := range s.Parameters {
		for _, w := range words(p.Name + " " + p.Description) {
			desc[w] = true
		}
	}
	score := 0.0
	for _, w := range req {
		switch {
		case name[w]:
			score += 1
		case desc[w]:
			score += 0.5
		}
	}
	return min(score/float64(len(req)), 1)
}

// namedIn reports whether the request names the skill outright: its exact name as a word
// ("site-search"), or "run/use <name in words>".
func namedIn(s *Skill, request string) bool {
	r := strings.ToLower(request)
	re := regexp.MustCompile(`(^|[^a-z0-9-])` + regexp.QuoteMeta(s.Name) + `($|[^a-z0-9-])`)
	if re.MatchString(r) {
		return true
	}
	spaced := strings.ReplaceAll(s.Name, "-", " ")
	if !strings.Contains(s.Name, "-") {
		return strings.TrimSpace(r) == s.Name
	}
	for _, verb := range []string{"run ", "use ", "do ", "start "} {
		if strings.HasPrefix(strings.TrimSpace(r), verb+spaced) || strings.HasPrefix(strings.TrimSpace(r), verb+"the "+spaced) {
			return true
		}
	}
	return false
}

// plainlyNamed reports whether the request names the skill so plainly that it may run at once
// instead of going to the agent: namedIn holds and the request starts with the name, as
// written or in words, alone or after please, run, use, do or start, and "the"
// ("run site-search for mugs", "site-search query=mugs", "please use the fill form with …").
// A skill named in passing ("what does site-search do?", "click login") is not plainly named.
func plainlyNamed(s *Skill, request string) bool {
	if !namedIn(s, request) {
		return false
	}
	r := strings.ToLower(strings.Join(strings.Fields(request), " "))
	r = strings.TrimPrefix(r, "please ")
	for _, verb := range []string{"", "run ", "use ", "do ", "start "} {
		for _, the := range []string{"", "the "} {
			for _, name := range []string{s.Name, strings.ReplaceAll(s.Name, "-", " ")} {
				rest, ok := strings.CutPrefix(r, verb+the+name)
				if ok && (rest == "" || !isNameChar(rest[0])) {
					return true
				}
			}
		}
	}
	return false
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// Rank orders the skills that apply to pageURL by relevance to request (most relevant first).
// A skill the request names outright comes first with Named set. Skills for other sites are
// left out; with an empty request, every applicable skill is listed, site-specific ones first.
// An empty pageURL (the page is not known) filters nothing: every skill may fit, ranked by
// text relevance alone.
func (l *Library) Rank(request, pageURL string) []Match {
	var out []Match
	anyPage := strings.TrimSpace(pageURL) == ""
	for _, s := range l.List() {
		site, ok := siteScore(s.Sites, pageURL)
		if anyPage {
			site, ok = 0.25, true
		}
		if !ok {
			continue
		}
		m := Match{Skill: s, Named: namedIn(s, request)}
		rel := relevance(s, request)
		if strings.TrimSpace(request) != "" && rel == 0 && !m.Named {
			continue
		}
		m.Score = site + rel
		if m.Named {
			m.Score += 10
		}
		out = append(out, m)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Skill.Name < out[j].Skill.Name
	})
	return out
}

// Named returns the skill the request names outright (the longest name wins), if any.
func (l *Library) Named(request string) (*Skill, bool) {
	var best *Skill
	for _, s := range l.List() {
		if namedIn(s, request) && (best == nil || len(s.Name) > len(best.Name)) {
			best = s
		}
	}
	return best, best != nil
}

// paramsInText takes parameters from a request without a model: "name=value" or
// "name: value" pairs for declared names, and, when exactly one required parameter is still
// missing, the text after the skill's name (minus a leading "for", "with" or "about", and quotes).
func paramsInText(s *Skill, request string, missing []Param) map[string]string {
	out := map[string]string{}
	for _, p := range s.Parameters {
		re := regexp.MustCompile(`(?i)(?:^|\s)` + regexp.QuoteMeta(p.Name) + `\s*[=:]\s*("([^"]*)"|'([^']*)'|(\S+))`)
		if m := re.FindStringSubmatch(request); m != nil {
			out[p.Name] = m[2] + m[3] + m[4]
			request = strings.Replace(request, m[0], " ", 1)
		}
	}
	var still []Param
	for _, p := range missing {
		if _, ok := out[p.Name]; !ok {
			still = append(still, p)
		}
	}
	if len(still) != 1 {
		return out
	}
	rest := request
	lower := strings.ToLower(rest)
	if i := strings.Index(lower, s.Name); i >= 0 {
		rest = rest[i+len(s.Name):]
	} else if i := strings.Index(lower, strings.ReplaceAll(s.Name, "-", " ")); i >= 0 {
		rest = rest[i+len(s.Name):]
	} else {
		return out
	}
	rest = strings.TrimSpace(rest)
	for _, w := range []string{"skill ", "for ", "with ", "about ", "on "} {
		rest = strings.TrimSpace(strings.TrimPrefix(rest, w))
	}
	rest = strings.Trim(rest, `"'“”`)
	if rest != "" {
		out[still[0].Name] = rest
	}
	return out
}
