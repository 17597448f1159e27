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

// Awaiting is what the task the user is talking to waits for (its status, as the task API
// spells it): the words that answer it join the grammar (see AnswerPhrases). Any other status
// (a task that runs, or none) adds nothing: "stop" is always a command.
type Awaiting string

// The waits whose answers can be spoken.
const (
	// AwaitingConfirmation: a step waits for approval ("yes", "approve", "no", "cancel", …).
	AwaitingConfirmation Awaiting = "waiting_confirmation"
	// AwaitingInput: the agent asked a question (one of its choices, or a free answer).
	AwaitingInput Awaiting = "waiting_input"
	// AwaitingUser: the person must do something in the tab, then says "continue" or "done".
	AwaitingUser Awaiting = "waiting_user"
)

// The spoken answers per wait that the offline grammar listens for. The side panel's router
// (chrome-extension/converse.js) must route each of them (it accepts more, for engines that hear
// any words); a test there keeps the lists in step (AnswerWords).
var (
	approveWords  = []string{"yes", "yeah", "yep", "ok", "okay", "sure", "approve", "approved", "confirm", "go ahead", "do it"}
	declineWords  = []string{"no", "nope", "cancel", "reject", "decline", "don't"}
	continueWords = []string{"continue", "done", "i'm done", "i am done", "finished", "ready", "go on"}
	ordinalWords  = []string{"first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"}
)

// AnswerWords returns copies of the spoken answers the offline grammar listens for, by what
// they do: "approve", "decline" and "continue".
func AnswerWords() map[string][]string {
	return map[string][]string{
		"approve":  append([]string(nil), approveWords...),
		"decline":  append([]string(nil), declineWords...),
		"continue": append([]string(nil), continueWords...),
	}
}

// Wait is what the task the user talks to waits for, with the waiting question's choices.
type Wait struct {
	Awaiting Awaiting
	Choices  []string
}

// AnswerPhrases returns the phrases that answer the wait: for a question, its choices (and
// "the first one" … by position) besides the words to cancel; "stop" is always a command.
func (w Wait) AnswerPhrases() []string {
	a, choices := w.Awaiting, w.Choices
	switch a {
	case AwaitingConfirmation:
		return append(append([]string(nil), approveWords...), declineWords...)
	case AwaitingInput:
		out := append([]string(nil), choices...)
		for i := range min(len(choices), len(ordinalWords)) {
			out = append(out, ordinalWords[i], "the "+ordinalWords[i]+" one")
		}
		return append(out, "cancel")
	case AwaitingUser:
		return append(append([]string(nil), continueWords...), "cancel")
	}
	return nil
}

// maxShortAnswer is the most words the general model may read into a short answer (a choice's
// name, "done") that the grammar heard: such words alone are often misread ("done" as "john").
const maxShortAnswer = 3

// trustsShortAnswer reports whether the grammar's answer phrase may stand although the general
// model read the short utterance differently: yes for a question's choices and for "continue"
// / "done", never for a confirmation (a misheard "yes" must never run a risky step: there the
// two readings must agree, and the panel asks again otherwise).
func (a Awaiting) trustsShortAnswer() bool { return a == AwaitingInput || a == AwaitingUser }

// Grammar is a JSGF grammar of short commands and the control names it covers.
type Grammar struct {
	// JSGF is the grammar text for pocketsphinx's -jsgf.
	JSGF string
	// Names are the control names included (normalised); names with words the dictionary lacks
	// are left out (the general model still hears them).
	Names []string
	// Answers are the answer phrases included (normalised, the same way).
	Answers []string
}

// BuildGrammar makes a JSGF grammar of the fast-path commands: a verb, an optional article,
// one of names and an optional role word ("click the submit button"), or a fixed command
// ("scroll down", "go back"), or one of answers alone (what a waiting task's question or
// confirmation takes: AnswerPhrases). Only words in dict are used (nil dict: all words).
func BuildGrammar(names, answers []string, dict Dictionary) Grammar {
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
	var said []string
	seenAnswer := map[string]bool{}
	for _, a := range answers {
		a = normalizeWords(a)
		if len(strings.Fields(a)) > maxNameWords || seenAnswer[a] || !inDict(a) {
			continue
		}
		seenAnswer[a] = true
		said = append(said, a)
	}
	if len(said) > 0 {
		alts = append(alts, "<answer>")
		b.WriteString("<answer> = " + strings.Join(said, " | ") + ";\n")
	}
	b.WriteString("public <command> = [please] (" + strings.Join(alts, " | ") + ") [please];\n")
	if len(keep) > 0 {
		b.WriteString("<verb> = " + strings.Join(filter(Verbs), " | ") + ";\n")
		b.WriteString("<role> = " + strings.Join(filter(roleWords), " | ") + ";\n")
		sorted := append([]string(nil), keep...)
		sort.Strings(sorted)
		b.WriteString("<name> = " + strings.Join(sorted, " | ") + ";\n")
	}
	return Grammar{JSGF: b.String(), Names: keep, Answers: said}
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
