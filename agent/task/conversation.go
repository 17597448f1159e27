package task

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// A conversation per tab: the requests started on a tab (Runner.Start, Runner.Command) are
// turns of its conversation; each task's first message holds the earlier turns' requests, the
// answers to its questions, its results and where the tab was left, within a token budget.

// argOf is the string argument key of a step's JSON arguments ("" when absent).
func argOf(raw []byte, key string) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	return argStr(m, key)
}

// DefaultConversationTokens is the default budget of a conversation's earlier turns in a
// task's first message (Options.ConversationTokens).
const DefaultConversationTokens = 2000

// NewConversation starts a new conversation in tab: the next task there does not see the
// earlier requests and answers (nor, after a restart, one read back from the store). It returns
// the number of the conversation's tasks this runner ran.
func (r *Runner) NewConversation(tab string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	conv := r.convs[tab]
	r.convs[tab] = "" // known and empty: the next task starts one, none is read back
	if conv == "" {
		return 0
	}
	n := 0
	for _, rn := range r.runs {
		rn.mu.Lock()
		if rn.task.Conversation == conv {
			n++
		}
		rn.mu.Unlock()
	}
	return n
}

// storedConversation is a tab's conversation read back from the store after a restart.
type storedConversation struct {
	id    string
	turns []*Task // oldest first
}

// conversationScan is how many recent stored tasks restoreConversation reads.
const conversationScan = 50

// restoreConversation reads back from the store, when this runner does not know the tab's
// conversation yet (the server restarted), the conversation of the tab's latest stored task
// and its ended tasks; nil when there is none (or no store).
func (r *Runner) restoreConversation(ctx context.Context, tab string) *storedConversation {
	r.mu.Lock()
	_, known := r.convs[tab]
	r.mu.Unlock()
	if known || r.opts.Store == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ts, err := r.opts.Store.ListTasks(ctx, conversationScan, 0)
	if err != nil {
		r.opts.Log.Warn().Err(err).Msg("reading the tab's earlier conversation")
		return nil
	}
	sortTasks(ts)
	var c *storedConversation
	for _, t := range ts { // most recent first
		if c == nil && t.TabID == tab && t.Conversation != "" {
			c = &storedConversation{id: t.Conversation}
		}
		if c != nil && t.Conversation == c.id && t.Status.Done() {
			c.turns = append([]*Task{t}, c.turns...)
		}
	}
	return c
}

// conversation returns the tab's conversation id (a new one when it has none) and its earlier
// tasks that ended, oldest first. Call with r.mu held.
func (r *Runner) conversation(tab, newID string) (string, []*Task) {
	conv := r.convs[tab]
	if conv == "" {
		r.convs[tab] = newID
		return newID, nil
	}
	var turns []*Task
	for _, rn := range r.runs {
		rn.mu.Lock()
		if rn.task.Conversation == conv && rn.task.Status.Done() {
			turns = append(turns, rn.task.Clone())
		}
		rn.mu.Unlock()
	}
	sortTasks(turns)
	for i, j := 0, len(turns)-1; i < j; i, j = i+1, j-1 {
		turns[i], turns[j] = turns[j], turns[i]
	}
	return conv, turns
}

// conversationText renders a conversation's earlier turns, oldest first, for the task's first
// message within about budget tokens (four characters a token): the oldest turns are dropped
// first. "" when there are none.
func conversationText(turns []*Task, budget int) string {
	if len(turns) == 0 || budget <= 0 {
		return ""
	}
	parts := make([]string, 0, len(turns))
	for _, t := range turns {
		var b strings.Builder
		fmt.Fprintf(&b, "- the user asked: %s\n", truncate(oneLine(t.Shown()), 300))
		for _, s := range t.Steps {
			if a, ok := strings.CutPrefix(s.Result, answeredPrefix); ok && s.Tool == toolAskUser && s.Status == StepOK {
				fmt.Fprintf(&b, "  you asked: %s; the user answered: %s\n", truncate(oneLine(argOf(s.Args, "question")), 200), truncate(oneLine(a), 200))
			}
		}
		switch {
		case t.Answer != "":
			fmt.Fprintf(&b, "  %s; your answer: %s\n", t.Status, truncate(oneLine(t.Answer), 600))
		case t.Error != "":
			fmt.Fprintf(&b, "  %s: %s\n", t.Status, truncate(oneLine(t.Error), 300))
		default:
			fmt.Fprintf(&b, "  %s\n", t.Status)
		}
		if u := lastURL(t); u != "" {
			fmt.Fprintf(&b, "  the tab was then at %s\n", truncate(u, 200))
		}
		parts = append(parts, b.String())
	}
	maxChars, used, first := budget*4, 0, len(parts)
	for i := len(parts) - 1; i >= 0; i-- {
		if used+len(parts[i]) > maxChars {
			break
		}
		used += len(parts[i])
		first = i
	}
	if first == len(parts) {
		return ""
	}
	var b strings.Builder
	if first > 0 {
		fmt.Fprintf(&b, "(%d older turns left out)\n", first)
	}
	for _, p := range parts[first:] {
		b.WriteString(p)
	}
	return strings.TrimSpace(b.String())
}

// lastURL is the tab's URL after the task's last step ("" when unknown).
func lastURL(t *Task) string {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		if u := t.Steps[i].URLAfter; u != "" {
			return u
		}
	}
	return ""
}
