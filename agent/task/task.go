// Package task runs the agent's tasks: a tool-calling loop over a langchaingo model
// (llms.Model.GenerateContent with JSON-schema tools) that reads pages as role snapshots and acts
// on them through a narrow [Browser] interface, keeps a plan, records every step, pauses for the
// user's confirmation before irreversible or sensitive steps, asks the user what the request
// leaves open ([Runner.Answer]) and hands the tab over for what only the person may do
// ([Runner.Continue]), keeps a conversation per tab ([Runner.NewConversation]), publishes live
// [Event]s and persists tasks through a [Store].
//
// The loop heeds langchaingo's quirks: one ToolCallResponse per tool message, one tool call per
// AI message in the history (the anthropic provider only sends back an AI message's first
// part), tool calls collected from every choice (anthropic returns each content block as its own
// choice), and generated ids when a provider returns none (googleai).
package task

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Status is a task's lifecycle state.
type Status string

// Task statuses.
const (
	StatusPlanning            Status = "planning"
	StatusRunning             Status = "running"
	StatusWaitingConfirmation Status = "waiting_confirmation"
	// StatusWaitingInput: the agent asked the user a question (Task.Question) and waits for
	// Runner.Answer.
	StatusWaitingInput Status = "waiting_input"
	// StatusWaitingUser: the agent handed the tab over to the person (Task.Handover), who
	// does something in it (signs in, solves a CAPTCHA…) and then calls Runner.Continue.
	StatusWaitingUser Status = "waiting_user"
	StatusSucceeded   Status = "succeeded"
	StatusFailed      Status = "failed"
	StatusCancelled   Status = "cancelled"
)

// Done reports whether the status is final.
func (s Status) Done() bool {
	return s == StatusSucceeded || s == StatusFailed || s == StatusCancelled
}

// PlanStatus is the state of one plan item.
type PlanStatus string

// Plan item states.
const (
	PlanPending PlanStatus = "pending"
	PlanActive  PlanStatus = "active"
	PlanDone    PlanStatus = "done"
	PlanFailed  PlanStatus = "failed"
)

// PlanItem is one step of the plan the agent keeps up to date.
type PlanItem struct {
	Text   string     `json:"text"`
	Status PlanStatus `json:"status"`
}

// StepStatus is the outcome of one recorded step.
type StepStatus string

// Step outcomes.
const (
	StepRunning  StepStatus = "running"
	StepOK       StepStatus = "ok"
	StepError    StepStatus = "error"
	StepDeclined StepStatus = "declined"
	StepBlocked  StepStatus = "blocked"
)

// Confirmation is the user's decision on a step that needed one.
type Confirmation struct {
	// Reason is why the step needs confirmation ("purchase", "password field", …).
	Reason string `json:"reason"`
	// Prompt describes the step for the user, e.g. `click button "Place order"`.
	Prompt string `json:"prompt"`
	// Approved is nil while waiting.
	Approved *bool `json:"approved,omitempty"`
	// DecidedAt is when the user answered.
	DecidedAt time.Time `json:"decidedAt,omitzero"`
}

// Question is what the agent asked the user (the ask_user tool), present on the task while it
// waits for the answer (status waiting_input).
type Question struct {
	// ID names the question within the task ("q1", "q2", …); an answer names it.
	ID string `json:"id"`
	// Text is the question.
	Text string `json:"text"`
	// Choices are the answers offered (empty: a free-text answer).
	Choices []string `json:"choices"`
	// AskedAt is when it was asked; Deadline when the agent stops waiting.
	AskedAt  time.Time `json:"askedAt"`
	Deadline time.Time `json:"deadline"`
}

// Handover is what the agent asked the person to do in the tab themselves (the hand_over
// tool), present on the task while it waits for them (status waiting_user).
type Handover struct {
	// ID names the hand-over within the task ("h1", "h2", …); Continue names it.
	ID string `json:"id"`
	// Instruction says what the person must do, e.g. "Sign in to your bank in this tab, then
	// press Continue."
	Instruction string `json:"instruction"`
	// AskedAt is when the tab was handed over; Deadline when the agent stops waiting.
	AskedAt  time.Time `json:"askedAt"`
	Deadline time.Time `json:"deadline"`
}

// Target names the element a step acted on, by role and accessible name (Nth counts from 1
// among elements of the same role and name, 0 when it is the only one), as the page showed it
// when the step ran. Saving a task as a skill finds the elements again by it.
type Target struct {
	Role string `json:"role"`
	Name string `json:"name"`
	Nth  int    `json:"nth,omitempty"`
}

// Step is the record of one tool call.
type Step struct {
	// ID is unique within the task ("s1", "s2", …).
	ID string `json:"id"`
	// Index is the 1-based position.
	Index int `json:"index"`
	// Tool is the tool name (click, type, snapshot, finish, …).
	Tool string `json:"tool"`
	// Args is the JSON object the model passed.
	Args json.RawMessage `json:"args,omitempty"`
	// Status is the outcome.
	Status StepStatus `json:"status"`
	// Result is the observation returned to the model (capped).
	Result string `json:"result,omitempty"`
	// Error is the tool error, if any.
	Error string `json:"error,omitempty"`
	// Thought is the model's prose accompanying the call, if any.
	Thought string `json:"thought,omitempty"`
	// TabID is the tab acted on.
	TabID string `json:"tabId,omitempty"`
	// URLBefore and URLAfter are the tab's URL around the step.
	URLBefore string `json:"urlBefore,omitempty"`
	URLAfter  string `json:"urlAfter,omitempty"`
	// TitleAfter is the tab's title after the step.
	TitleAfter string `json:"titleAfter,omitempty"`
	// StartedAt and EndedAt time the step; DurationMS is their difference.
	StartedAt  time.Time `json:"startedAt"`
	EndedAt    time.Time `json:"endedAt,omitzero"`
	DurationMS int64     `json:"durationMs"`
	// Confirmation is set when the step needed the user's approval.
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	// Target is the element the step acted on, when it acted on one.
	Target *Target `json:"target,omitempty"`
	// Records are what the step's extract read (nil for other steps), kept within the
	// task's [MaxRecordBytes]; [Task.RecordTable] joins the records of all steps. They are
	// never changed once the step has them: copies of the task share them.
	Records *StepRecords `json:"records,omitempty"`
}

// Usage counts model calls and tokens as reported by the provider.
type Usage struct {
	LLMCalls         int `json:"modelCalls"`
	PromptTokens     int `json:"promptTokens"`
	CompletionTokens int `json:"completionTokens"`
}

// String is the usage as a person reads it: "model: 3 calls, 4,210 tokens in, 312 out", or
// "no model" for a task that made no model call (the fast path, a skill that needed no help).
func (u Usage) String() string {
	if u.LLMCalls == 0 {
		return "no model"
	}
	calls := "calls"
	if u.LLMCalls == 1 {
		calls = "call"
	}
	return fmt.Sprintf("model: %s %s, %s tokens in, %s out", thousands(u.LLMCalls), calls, thousands(u.PromptTokens), thousands(u.CompletionTokens))
}

// thousands writes n with commas between groups of three digits (4210 → "4,210").
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Task is one request from the user and everything the agent did for it.
type Task struct {
	ID string `json:"id"`
	// Goal is what the model was asked to do (for a skill's step handed to the model, the
	// runner's own prompt).
	Goal string `json:"goal"`
	// Request is what the user asked, as they typed or said it: what task lists show.
	Request string `json:"request,omitempty"`
	// Conversation groups the tasks of one conversation in a tab: a task sees the earlier
	// requests and answers of its conversation (see Runner.NewConversation).
	Conversation string `json:"conversation,omitempty"`
	// Question is the question waiting for an answer (status waiting_input).
	Question *Question `json:"question,omitempty"`
	// Handover is the hand-over waiting for the person (status waiting_user).
	Handover   *Handover  `json:"handover,omitempty"`
	TabID      string     `json:"tabId,omitempty"`
	Status     Status     `json:"status"`
	Plan       []PlanItem `json:"plan"`
	Steps      []Step     `json:"steps"`
	Answer     string     `json:"answer,omitempty"`
	Error      string     `json:"error,omitempty"`
	Model      string     `json:"model,omitempty"`
	Usage      Usage      `json:"usage"`
	CreatedAt  time.Time  `json:"createdAt"`
	UpdatedAt  time.Time  `json:"updatedAt"`
	FinishedAt time.Time  `json:"finishedAt,omitzero"`
	// NotSaved says that the task's latest state is not in the history yet and why: "not saved
	// to history: database or disk is full (13)" (see NotSavedPrefix); "" once it is saved.
	// The runner keeps such a task in memory and saves it again when the store can write.
	NotSaved string `json:"notSaved,omitempty"`
}

// Clone returns a deep copy (but for the steps' records, which are never changed: shared).
func (t *Task) Clone() *Task {
	if t == nil {
		return nil
	}
	c := *t
	c.Plan = slices.Clone(t.Plan)
	if t.Question != nil {
		q := *t.Question
		q.Choices = slices.Clone(q.Choices)
		c.Question = &q
	}
	if t.Handover != nil {
		h := *t.Handover
		c.Handover = &h
	}
	c.Steps = make([]Step, len(t.Steps))
	for i, s := range t.Steps {
		c.Steps[i] = s.clone()
	}
	return &c
}

func (s Step) clone() Step {
	s.Args = slices.Clone(s.Args)
	if s.Confirmation != nil {
		cf := *s.Confirmation
		if cf.Approved != nil {
			v := *cf.Approved
			cf.Approved = &v
		}
		s.Confirmation = &cf
	}
	if s.Target != nil {
		tg := *s.Target
		s.Target = &tg
	}
	// s.Records is shared: it is never changed once set (a deep copy of megabytes of records
	// on each update of the task would buy nothing)
	return s
}

// Shown is the user's request, or the goal when the task has no separate request (tasks saved
// before requests were kept apart).
func (t *Task) Shown() string {
	if t.Request != "" {
		return t.Request
	}
	return t.Goal
}

// Step returns the step with the id.
func (t *Task) Step(id string) (Step, bool) {
	for _, s := range t.Steps {
		if s.ID == id {
			return s, true
		}
	}
	return Step{}, false
}
