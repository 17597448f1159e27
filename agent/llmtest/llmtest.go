// Package llmtest runs real HTTP test servers that speak the OpenAI chat-completions and the
// Anthropic messages protocols from a script, so that tests drive langchaingo's real provider
// code (request encoding, response decoding, streaming) without any network.
//
//	srv := llmtest.NewOpenAI(t, llmtest.ToolCall("click", `{"ref":"e3"}`), llmtest.Text("done"))
//	model := srv.Model(t)            // a real langchaingo openai.LLM pointed at srv
//	… run the agent …
//	req := srv.Requests()[1]        // what the provider sent on the second turn
//
// Each received request answers with the next scripted [Reply]; every request is recorded,
// decoded into a provider-neutral [Request], for assertions. A request past the end of the
// script fails the test and gets an HTTP 500.
package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tmc/langchaingo/llms"
)

// Call is one tool call in a scripted reply, or one recorded from a request's history.
type Call struct {
	// ID is the tool call id; scripted calls without one get "call_<n>".
	ID string `json:"id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Args is the JSON object of arguments.
	Args string `json:"args"`
}

// Tool returns a tool call for [ToolCalls].
func Tool(name, args string) Call { return Call{Name: name, Args: args} }

// Reply is one scripted answer of the model.
type Reply struct {
	// Text is the assistant's prose (with or without tool calls).
	Text string
	// Calls are the tool calls of the turn.
	Calls []Call
	// Status, when not 0 or 200, makes the server answer with this HTTP error.
	Status int
	// ErrMessage is the error message sent with Status.
	ErrMessage string
	// Delay holds the answer back (the request's cancellation cuts it short).
	Delay time.Duration
	// Func, when set, computes the reply from the request (for replies that depend on what the
	// agent sent, e.g. a ref it saw in a snapshot).
	Func func(Request) Reply
}

// Text is a final answer with no tool calls.
func Text(s string) Reply { return Reply{Text: s} }

// ToolCall is a turn with one tool call; args is a JSON object.
func ToolCall(name, args string) Reply { return Reply{Calls: []Call{{Name: name, Args: args}}} }

// ToolCalls is a turn with several tool calls.
func ToolCalls(calls ...Call) Reply { return Reply{Calls: calls} }

// HTTPError is a turn answered with an HTTP error.
func HTTPError(status int, msg string) Reply { return Reply{Status: status, ErrMessage: msg} }

// Dynamic is a turn computed from the request.
func Dynamic(fn func(Request) Reply) Reply { return Reply{Func: fn} }

// After returns r delayed by d.
func (r Reply) After(d time.Duration) Reply { r.Delay = d; return r }

// WithText returns r with prose added (e.g. "I'll click Sign in" before a tool call).
func (r Reply) WithText(s string) Reply { r.Text = s; return r }

// Message is one message of a recorded request, provider-neutral.
type Message struct {
	// Role is system, user, assistant or tool (Anthropic tool results are reported as "tool").
	Role string `json:"role"`
	// Text is the message's text parts joined by newlines (tool results: their content).
	Text string `json:"text,omitempty"`
	// ToolCallID is set on tool results.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolCalls are the assistant's tool calls.
	ToolCalls []Call `json:"tool_calls,omitempty"`
	// Images counts image parts.
	Images int `json:"images,omitempty"`
}

// Request is one recorded request.
type Request struct {
	// Protocol is "openai" or "anthropic".
	Protocol string `json:"protocol"`
	// Path is the URL path requested.
	Path string `json:"path"`
	// Model is the model named in the request.
	Model string `json:"model"`
	// System is the system prompt (OpenAI: the system messages' text).
	System string `json:"system,omitempty"`
	// Messages are the non-system messages in order.
	Messages []Message `json:"messages"`
	// Tools are the offered tools' names, in order.
	Tools []string `json:"tools"`
	// Schemas are the tools' parameter schemas by name.
	Schemas map[string]json.RawMessage `json:"schemas,omitempty"`
	// Stream is true for a streaming request.
	Stream bool `json:"stream,omitempty"`
	// Body is the raw request body.
	Body []byte `json:"-"`
	// Header is the request's header (holds the API key: never print it).
	Header http.Header `json:"-"`
}

// Last returns the last message (zero Message if none).
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// ToolResults returns the tool-result messages in order.
func (r Request) ToolResults() []Message {
	var out []Message
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// HasTool reports whether a tool with this name was offered.
func (r Request) HasTool(name string) bool {
	for _, t := range r.Tools {
		if t == name {
			return true
		}
	}
	return false
}

// ApproxTokens estimates the request's prompt size in tokens (bytes/4).
func (r Request) ApproxTokens() int { return len(r.Body) / 4 }

// Split is a request's prompt in cl100k_base tokens (the count of [snapshot.Tokens]) by what
// it is spent on.
type Split struct {
	// System is the system prompt.
	System int `json:"system"`
	// Tools is the offered tools' definitions as sent (names, descriptions, schemas).
	Tools int `json:"tools"`
	// Page is the page text in the messages: what stands inside <page_content> blocks.
	Page int `json:"page"`
	// History is the rest of the messages: the goal, the model's calls and text, and the tool
	// results' own words.
	History int `json:"history"`
}

// Total is the split's sum: the whole prompt.
func (s Split) Total() int { return s.System + s.Tools + s.Page + s.History }

// Split counts the request's prompt by part.
func (r Request) Split() Split {
	var s Split
	s.System = snapshot.Tokens(r.System)
	var b struct {
		Tools json.RawMessage `json:"tools"`
	}
	if json.Unmarshal(r.Body, &b) == nil && len(b.Tools) > 0 {
		s.Tools = snapshot.Tokens(string(b.Tools))
	}
	for _, m := range r.Messages {
		text := m.Text
		for _, c := range m.ToolCalls {
			text += "\n" + c.Name + " " + c.Args
		}
		for {
			start := strings.Index(text, pageOpen)
			if start < 0 {
				break
			}
			end := strings.Index(text[start:], pageClose)
			if end < 0 {
				break
			}
			end += start + len(pageClose)
			s.Page += snapshot.Tokens(text[start:end])
			text = text[:start] + text[end:]
		}
		s.History += snapshot.Tokens(text)
	}
	return s
}

// pageOpen and pageClose delimit the page text in the agent's messages.
const (
	pageOpen  = "<page_content>"
	pageClose = "</page_content>"
)

// NewTokens estimates, as ApproxTokens does, the part of the request's prompt that is not in
// the longest prefix it shares with prev: what a provider that caches prompt prefixes bills
// at the full price. Prefixes are compared in the order providers cache them (the tools, the
// system prompt, then the messages), a whole part at a time.
func (r Request) NewTokens(prev Request) int {
	cur, old := cacheParts(r.Body), cacheParts(prev.Body)
	i := 0
	for i < len(cur) && i < len(old) && bytes.Equal(cur[i], old[i]) {
		i++
	}
	n := 0
	for _, p := range cur[i:] {
		n += len(p)
	}
	return n / 4
}

// cacheParts splits a request body (OpenAI's or Anthropic's) into the parts a prompt cache
// compares, in its order: the tools, the system prompt, each message.
func cacheParts(body []byte) [][]byte {
	var b struct {
		Tools    json.RawMessage   `json:"tools"`
		System   json.RawMessage   `json:"system"`
		Messages []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(body, &b) != nil {
		return [][]byte{body}
	}
	parts := [][]byte{b.Tools, b.System}
	for _, m := range b.Messages {
		parts = append(parts, m)
	}
	return parts
}

// Server is a scripted model server.
type Server struct {
	// URL is the base URL to hand to the provider (ends in /v1).
	URL string
	// Protocol is "openai" or "anthropic".
	Protocol string

	// report is told what would fail a test: t.Errorf, or keepProblem outside a test
	report   func(format string, args ...any)
	srv      *httptest.Server
	mu       sync.Mutex
	next     []Reply
	reqs     []Request
	ids      int
	problems []string
}

// NewOpenAI starts a server speaking OpenAI chat completions (POST /v1/chat/completions,
// streaming included). It is closed when the test ends.
func NewOpenAI(t testing.TB, replies ...Reply) *Server {
	return start(t, "openai", replies)
}

// NewAnthropic starts a server speaking the Anthropic messages API (POST /v1/messages,
// streaming included). It is closed when the test ends.
func NewAnthropic(t testing.TB, replies ...Reply) *Server {
	return start(t, "anthropic", replies)
}

func start(t testing.TB, protocol string, replies []Reply) *Server {
	t.Helper()
	s := newServer(protocol, t.Errorf, replies)
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a scripted server speaking protocol ("openai" or "anthropic") outside a test,
// for a benchmark: what would fail a test (an unexpected path, an undecodable request, a request
// with no scripted reply) is kept for Problems. Close it when done.
func NewServer(protocol string, replies ...Reply) *Server {
	return newServer(protocol, nil, replies)
}

func newServer(protocol string, report func(format string, args ...any), replies []Reply) *Server {
	s := &Server{report: report, Protocol: protocol, next: append([]Reply(nil), replies...)}
	if report == nil {
		s.report = s.keepProblem
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	return s
}

func (s *Server) keepProblem(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.problems = append(s.problems, fmt.Sprintf(format, args...))
}

// Problems returns what went wrong on a server started with NewServer.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

// Close stops the server (also done automatically at the end of the test).
func (s *Server) Close() { s.srv.Close() }

// Push appends replies to the script.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = append(s.next, replies...)
}

// Remaining is the number of scripted replies not yet used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.next)
}

// Calls is the number of requests received.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// Requests returns a copy of the recorded requests.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// LastRequest returns the most recent request (zero Request if none).
func (s *Server) LastRequest() Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		return Request{}
	}
	return s.reqs[len(s.reqs)-1]
}

// Config returns an llm.Config pointing the matching real langchaingo provider at the server.
func (s *Server) Config(model string) llm.Config {
	if model == "" {
		model = "test-model"
	}
	cfg := llm.Config{Provider: "openai", Protocol: llm.ProtocolOpenAI, Model: model, BaseURL: s.URL, APIKey: "test-key", KeySource: "llmtest"}
	if s.Protocol == "anthropic" {
		cfg.Provider, cfg.Protocol = "anthropic", llm.ProtocolAnthropic
	}
	return cfg
}

// Model returns a real langchaingo model (openai or anthropic provider) using the server.
func (s *Server) Model(t testing.TB) llms.Model {
	t.Helper()
	m, err := llm.New(context.Background(), s.Config(""))
	if err != nil {
		t.Fatalf("llmtest: building the model: %v", err)
	}
	return m
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	var req Request
	switch {
	case s.Protocol == "openai" && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		req, err = decodeOpenAI(body)
	case s.Protocol == "anthropic" && strings.HasSuffix(r.URL.Path, "/messages"):
		req, err = decodeAnthropic(body)
	default:
		s.report("llmtest: unexpected %s %s on the %s server", r.Method, r.URL.Path, s.Protocol)
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if err != nil {
		s.report("llmtest: undecodable %s request: %v\n%s", s.Protocol, err, body)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req.Protocol, req.Path, req.Body, req.Header = s.Protocol, r.URL.Path, body, r.Header.Clone()

	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	var reply Reply
	ok := len(s.next) > 0
	if ok {
		reply, s.next = s.next[0], s.next[1:]
	}
	s.mu.Unlock()
	if !ok {
		s.report("llmtest: request %d has no scripted reply (last message: %.200q)", n, req.Last().Text)
		s.writeError(w, http.StatusInternalServerError, "llmtest: script exhausted")
		return
	}
	if reply.Func != nil {
		reply = reply.Func(req)
	}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	if reply.Status != 0 && reply.Status != http.StatusOK {
		s.writeError(w, reply.Status, reply.ErrMessage)
		return
	}
	s.mu.Lock()
	for i := range reply.Calls {
		if reply.Calls[i].ID == "" {
			s.ids++
			reply.Calls[i].ID = fmt.Sprintf("call_%d", s.ids)
		}
		if strings.TrimSpace(reply.Calls[i].Args) == "" {
			reply.Calls[i].Args = "{}"
		}
	}
	s.mu.Unlock()
	tokens := len(body) / 4
	if s.Protocol == "openai" {
		writeOpenAI(w, req, reply, tokens)
	} else {
		writeAnthropic(w, req, reply, tokens)
	}
}

func (s *Server) writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if s.Protocol == "anthropic" {
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}})
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}})
}
