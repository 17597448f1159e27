// Package standin is a model server for tests in which someone stands in for the language
// model: an OpenAI-compatible HTTP server (POST /v1/chat/completions, tools and tool calls as
// the OpenAI API has them, streaming included) that hands each request the agent sends to an
// [Answerer] and returns its answer, and records every exchange in a [Conversation].
//
// Two answerers come with it: [Files], which writes each request in a readable form to a folder
// and waits for an answer file beside it (a person, or another program, is the model), and
// [Replay], which answers from a recorded conversation, moving each recorded element ref onto
// the element the current request shows on the same outline line.
//
//	srv := standin.Start(standin.Files{Dir: dir})
//	defer srv.Close()
//	cfg, _ := llm.FromLookup(srv.Lookup)   // as TABRELAY_LLM_PROVIDER=openai, TABRELAY_LLM_BASE_URL=… would
//	… run the agent with llm.New(ctx, cfg) …
//	conv := srv.Conversation()
//
// The server speaks through [llmtest]'s codec, so the agent's requests are decoded and its
// answers encoded exactly as in every other model test.
package standin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/llmtest"
)

// Answer is what the model says to one request: prose, tool calls, or both.
type Answer struct {
	// Text is the model's prose (its reasoning beside tool calls, or its final words).
	Text string `json:"text,omitempty"`
	// Calls are the tool calls, in order.
	Calls []Call `json:"tool_calls,omitempty"`
}

// Call is one tool call of an [Answer].
type Call struct {
	// ID is the call's id; the server names calls without one "call_<request>_<k>".
	ID string `json:"id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Args is the JSON object of arguments. An answer file may give it as an object or as a
	// string holding one (as the OpenAI API does).
	Args json.RawMessage `json:"args"`
}

// UnmarshalJSON reads Args written either as a JSON object or as a string holding one.
func (c *Call) UnmarshalJSON(b []byte) error {
	var raw struct {
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Args      json.RawMessage `json:"args"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	args := raw.Args
	if len(args) == 0 {
		args = raw.Arguments
	}
	if s := strings.TrimSpace(string(args)); strings.HasPrefix(s, `"`) {
		var inner string
		if err := json.Unmarshal(args, &inner); err != nil {
			return fmt.Errorf("tool call %q: arguments: %w", raw.Name, err)
		}
		args = json.RawMessage(inner)
	}
	if len(strings.TrimSpace(string(args))) == 0 {
		args = json.RawMessage(`{}`)
	}
	var obj map[string]any
	if err := json.Unmarshal(args, &obj); err != nil {
		return fmt.Errorf("tool call %q: arguments are not a JSON object: %w", raw.Name, err)
	}
	if raw.Name == "" {
		return errors.New("a tool call has no name")
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, args); err != nil {
		return fmt.Errorf("tool call %q: arguments: %w", raw.Name, err)
	}
	c.ID, c.Name, c.Args = raw.ID, raw.Name, compact.Bytes()
	return nil
}

// Exchange is one request of the agent and the model's answer to it.
type Exchange struct {
	// Request is the request as the agent sent it, decoded.
	Request llmtest.Request `json:"request"`
	// Split is the request's size in cl100k tokens, by part.
	Split Split `json:"tokens"`
	// Answer is what the model answered.
	Answer Answer `json:"answer"`
}

// Conversation is a recorded task: its goal and every exchange with the model, in order.
type Conversation struct {
	// Name names the conversation (its file's base name).
	Name string `json:"name"`
	// Goal is the task's goal as the user gave it.
	Goal string `json:"goal"`
	// Page is the page the task started on (a path on the test's server).
	Page string `json:"page"`
	// Notes are the stand-in's remarks: what the requests did not say, where it guessed.
	Notes string `json:"notes,omitempty"`
	// Exchanges are the model calls in order.
	Exchanges []Exchange `json:"exchanges"`
}

// Load reads a conversation file.
func Load(path string) (*Conversation, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the conversation: %w", err)
	}
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("conversation %s: %w", path, err)
	}
	return &c, nil
}

// Save writes the conversation to path, indented.
func (c *Conversation) Save(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("encode conversation %s: %w", c.Name, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("save conversation %s: %w", c.Name, err)
	}
	return nil
}

// Answerer stands in for the model: it answers request n (counted from 1).
type Answerer interface {
	Answer(ctx context.Context, n int, req llmtest.Request) (Answer, error)
}

// Server is the stand-in model server.
type Server struct {
	// URL is the base URL for the provider (ends in /v1).
	URL string

	ans    Answerer
	srv    *llmtest.Server
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	ex       []Exchange
	problems []error
}

// Start starts a server answering with a.
func Start(a Answerer) *Server {
	s := &Server{ans: a}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.srv = llmtest.NewServer("openai")
	s.srv.Push(s.turn())
	s.URL = s.srv.URL
	return s
}

// turn is the server's one scripted reply: it asks the answerer, and queues itself again for
// the next request.
func (s *Server) turn() llmtest.Reply {
	return llmtest.Dynamic(func(req llmtest.Request) llmtest.Reply {
		s.srv.Push(s.turn())
		s.mu.Lock()
		n := len(s.ex) + 1
		s.ex = append(s.ex, Exchange{Request: req, Split: SplitOf(req)})
		s.mu.Unlock()
		a, err := s.ans.Answer(s.ctx, n, req)
		if err != nil {
			err = fmt.Errorf("request %d: %w", n, err)
			s.mu.Lock()
			s.problems = append(s.problems, err)
			s.mu.Unlock()
			return llmtest.HTTPError(http.StatusInternalServerError, "stand-in model: "+err.Error())
		}
		reply := llmtest.Reply{Text: a.Text}
		for k := range a.Calls {
			if a.Calls[k].ID == "" {
				a.Calls[k].ID = fmt.Sprintf("call_%d_%d", n, k+1)
			}
			c := a.Calls[k]
			reply.Calls = append(reply.Calls, llmtest.Call{ID: c.ID, Name: c.Name, Args: string(c.Args)})
		}
		s.mu.Lock()
		s.ex[n-1].Answer = a
		s.mu.Unlock()
		return reply
	})
}

// Lookup is the environment a user would set to use this server as their model
// (TABRELAY_LLM_PROVIDER=openai, TABRELAY_LLM_BASE_URL, a dummy key), for llm.FromLookup.
func (s *Server) Lookup(name string) (string, bool) {
	switch name {
	case llm.EnvProvider:
		return "openai", true
	case llm.EnvBaseURL:
		return s.URL, true
	case llm.EnvAPIKey:
		return "stand-in-key", true
	case llm.EnvModel:
		return "stand-in", true
	}
	return "", false
}

// Exchanges returns a copy of the exchanges so far.
func (s *Server) Exchanges() []Exchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Exchange(nil), s.ex...)
}

// Problems returns what went wrong: answerers' errors and the codec's complaints.
func (s *Server) Problems() []error {
	s.mu.Lock()
	out := append([]error(nil), s.problems...)
	s.mu.Unlock()
	for _, p := range s.srv.Problems() {
		out = append(out, errors.New(p))
	}
	return out
}

// Close stops the server and cancels answers still waiting.
func (s *Server) Close() {
	s.cancel()
	s.srv.Close()
}

// wait polls cond every tick until it holds or ctx ends.
func wait(ctx context.Context, tick time.Duration, cond func() (bool, error)) error {
	for {
		ok, err := cond()
		if ok || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(tick):
		}
	}
}

// Func is an [Answerer] written as a function: another program standing in for the model.
type Func func(ctx context.Context, n int, req llmtest.Request) (Answer, error)

// Answer calls f.
func (f Func) Answer(ctx context.Context, n int, req llmtest.Request) (Answer, error) {
	return f(ctx, n, req)
}
