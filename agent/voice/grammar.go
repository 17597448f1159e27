package voice

import (
	"bufio"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/tabrelay/tabrelay/snapshot"
)

// Verbs are the fast-path command words the grammar accepts before a control's name.
var Verbs = []string{
	"click", "click on", "tap", "tap on", "press", "push", "select", "choose", "open", "follow",
	"hover over", "check", "uncheck", "activate",
}

// fixedCommands are whole fast-path commands that need no control name.
var fixedCommands = []string{
	"scroll up", "scroll down", "scroll to the top", "scroll to the bottom", "page up", "page down",
	"go back", "go forward", "back", "forward", "reload", "reload the page", "refresh the page",
	"press enter", "press escape", "press tab", "press space",
	"what is on this page", "describe this page", "summarize this page", "read this page", "where am i",
	"close this tab", "open a new tab", "stop",
}

// roleWords may follow a control's name ("click the submit button").
var roleWords = []string{"button", "link", "tab", "checkbox", "box", "field", "menu", "option", "item", "icon"}

// controlRoles are the snapshot roles whose names go into the grammar.
var controlRoles = map[string]bool{
	"button": true, "link": true, "checkbox": true, "radio": true, "tab": true, "menuitem": true,
	"menuitemcheckbox": true, "menuitemradio": true, "option": true, "switch": true, "combobox": true,
	"textbox": true, "searchbox": true, "listbox": true, "treeitem": true, "slider": true, "spinbutton": true,
}

const (
	maxNames     = 150
	maxNameWords = 6
)

var nonWord = regexp.MustCompile(`[^a-z' ]+`)

// normalizeWords lowercases s and keeps letters, apostrophes and single spaces.
func normalizeWords(s string) string {
	s = strings.ToLower(s)
	s = strings.ReplaceAll(s, "&", " and ")
	s = nonWord.ReplaceAllString(s, " ")
	return strings.Join(strings.Fields(s), " ")
}

// ControlNames returns the names of the interactive elements in a snapshot's page model, in
// document order without duplicates.
func ControlNames(page *snapshot.Snapshot) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range page.Nodes() {
		if !controlRoles[n.Role] || n.Name == "" {
			continue
		}
		if !seen[n.Name] {
			seen[n.Name] = true
			out = append(out, n.Name)
		}
	}
	return out
}

// Dictionary is the set of words the offline engine can recognise.
type Dictionary map[string]bool

var (
	dictMu    sync.Mutex
	dictCache = map[string]Dictionary{}
)

// LoadDictionary reads a pocketsphinx pronunciation dictionary (one "word PHONES…" a line;
// alternatives are written word(2)). It is cached per path.
func LoadDictionary(path string) (Dictionary, error) {
	dictMu.Lock()
	defer dictMu.Unlock()
	if d, ok := dictCache[path]; ok {
		return d, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := Dictionary{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		i := strings.IndexAny(line, " \t")
		if i <= 0 {
			continue
		}
		w := line[:i]
		if j := strings.IndexByte(w, '('); j > 0 {
			w = w[:j]
		}
		d[w] = true
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	dictCache[path] = d
	return d, nil
}

// Grammar is a JSGF grammar of short commands and the control names it covers.
type Grammar struct {
	// JSGF is the grammar text for pocketsphinx's -jsgf.
	JSGF string
	// Names are the control names included (normalised); names with words the dictionary lacks
	// are left out (the general model still hears them).
	Names []string
}

// BuildGrammar makes a JSGF grammar of the fast-path commands: a verb, an optional article,
// one of names and an optional role word ("click the submit button"), or a fixed command
// ("scroll down", "go back"). Only words in dict are used (nil dict: all words).
func BuildGrammar(names []string, dict Dictionary) Grammar {
	inDict := func(phrase string) bool {
		if phrase == "" {
			return false
		}
		for _, w := range strings.Fields(phrase) {
			if dict != nil && !dict[w] {
				return false
			}
		}
		return true
	}
	seen := map[string]bool{}
	var keep []string
	for _, n := range names {
		n = normalizeWords(n)
		if len(strings.Fields(n)) > maxNameWords || seen[n] || !inDict(n) {
			continue
		}
		seen[n] = true
		keep = append(keep, n)
		if len(keep) == maxNames {
			break
		}
	}
	filter := func(list []string) []string {
		var out []string
		for _, p := range list {
			if inDict(p) {
				out = append(out, p)
			}
		}
		return out
	}
	var b strings.Builder
	b.WriteString("#JSGF V1.0;\ngrammar tabrelay;\n")
	alts := []string{}
	if len(keep) > 0 {
		alts = append(alts, "<verb> [the] <name> [<role>]")
	}
	if fixed := filter(fixedCommands); len(fixed) > 0 {
		alts = append(alts, "<fixed>")
		b.WriteString("<fixed> = " + strings.Join(fixed, " | ") + ";\n")
	}
	b.WriteString("public <command> = [please] (" + strings.Join(alts, " | ") + ") [please];\n")
	if len(keep) > 0 {
		b.WriteString("<verb> = " + strings.Join(filter(Verbs), " | ") + ";\n")
		b.WriteString("<role> = " + strings.Join(filter(roleWords), " | ") + ";\n")
		sorted := append([]string(nil), keep...)
		sort.Strings(sorted)
		b.WriteString("<name> = " + strings.Join(sorted, " | ") + ";\n")
	}
	return Grammar{JSGF: b.String(), Names: keep}
}

// similarity compares two transcripts by their letters only (so "sign in" and "signing" are
// alike): 1 for equal, 0 for nothing in common (normalised Levenshtein distance).
func similarity(a, b string) float64 {
	a = strings.ReplaceAll(normalizeWords(a), " ", "")
	b = strings.ReplaceAll(normalizeWords(b), " ", "")
	if a == "" && b == "" {
		return 1
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	d := prev[len(rb)]
	return 1 - float64(d)/float64(max(len(ra), len(rb)))
}
