package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/proof"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/skills"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// greeter is a one-button page for the CLI tests.
type greeter struct {
	mu     sync.Mutex
	typed  string
	clicks int
}

func (g *greeter) Snapshot(ctx context.Context, tab string) (*snapshot.Snapshot, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return pagetest.Page("https://greet.test/", "Greeter",
		pagetest.El("textbox", "Who", pagetest.Ref("e1"), pagetest.Value(g.typed)),
		pagetest.El("button", "Greet", pagetest.Ref("e2"))), nil
}

func (g *greeter) Act(ctx context.Context, tab string, act actions.Action) (*actions.Result, error) {
	raw, _ := json.Marshal(act) // the action as the HTTP API shows it
	var a struct{ Kind, Ref, Text string }
	_ = json.Unmarshal(raw, &a)
	g.mu.Lock()
	defer g.mu.Unlock()
	switch a.Kind {
	case "type":
		g.typed = a.Text
	case "click":
		g.clicks++
	}
	return &actions.Result{Kind: a.Kind, Message: "ok"}, nil
}

func (g *greeter) Tabs(ctx context.Context) ([]task.Tab, error) { return nil, nil }

func TestSkillsCommand(t *testing.T) {
	home := t.TempDir()
	tok, err := secret.LoadOrCreate(home)
	if err != nil {
		t.Fatal(err)
	}
	page := &greeter{}
	svc := skills.New(skills.Options{Dir: filepath.Join(home, "skills"), Browser: page})
	e := echo.New()
	// The CLI sends nothing before the server proves the secret: this bare server proves it
	// as the relay does (relay/auth.go).
	e.POST(proof.ChallengePath, func(c echo.Context) error {
		var req proof.ChallengeRequest
		if err := c.Bind(&req); err != nil {
			return err
		}
		local, _ := c.Request().Context().Value(http.LocalAddrContextKey).(net.Addr)
		ans, err := proof.Secret(tok).Answer(req.ClientNonce, local, time.Now())
		if err != nil {
			return err
		}
		return c.JSON(http.StatusOK, ans)
	})
	api.Register(e.Group("/api"), api.Services{Skills: svc})
	ts := httptest.NewServer(e)
	defer ts.Close()
	addr := strings.TrimPrefix(ts.URL, "http://")
	run := func(args ...string) (string, string, error) {
		var out, errb bytes.Buffer
		err := runSkills(context.Background(), append([]string{"--addr", addr, "--home", home}, args...), stdio{in: strings.NewReader(""), out: &out, err: &errb})
		return out.String(), errb.String(), err
	}

	file := filepath.Join(t.TempDir(), "SKILL.md")
	_ = os.WriteFile(file, []byte("---\nname: greet\ndescription: Greet someone on the greeter page.\nparameters:\n  - {name: who, required: true, example: Ada}\n---\n```steps\n- do: type\n  target: textbox \"Who\"\n  text: \"{{who}}\"\n- do: click\n  target: button \"Greet\"\n```\n"), 0o644)
	cases := []struct {
		name    string
		args    []string
		out     string
		errHas  string
		check   func(t *testing.T)
		wantErr bool
	}{
		{name: "save", args: []string{"save", file}, out: "saved greet"},
		{name: "list", args: []string{"list"}, out: "greet"},
		{name: "list ranked", args: []string{"list", "--q", "greet ada"}, out: "greet"},
		{name: "show", args: []string{"show", "greet"}, out: "text: \"{{who}}\""},
		{name: "run", args: []string{"run", "greet", "--param", "who=Grace"}, out: "succeeded", check: func(t *testing.T) {
			if page.typed != "Grace" || page.clicks != 1 {
				t.Fatalf("page %+v", page)
			}
		}},
		{name: "run flags first", args: []string{"--param", "who=Alan", "run", "greet"}, out: "succeeded"},
		{name: "run missing", args: []string{"run", "greet"}, wantErr: true, errHas: "needs a required parameter before it can run: who (e.g. \"Ada\")"},
		{name: "run unknown", args: []string{"run", "nope"}, wantErr: true, errHas: "skill not found"},
		{name: "bad param", args: []string{"run", "greet", "--param", "who"}, wantErr: true, errHas: "name=value"},
		{name: "record without browser", args: []string{"record", "start"}, wantErr: true, errHas: "recording needs"},
		{name: "delete bundled", args: []string{"delete", "site-search"}, wantErr: true, errHas: "built in"},
		{name: "delete", args: []string{"delete", "greet"}, out: "deleted greet"},
		{name: "no command", args: nil, wantErr: true, errHas: "name a command"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := run(c.args...)
			if (err != nil) != c.wantErr || (err != nil && !strings.Contains(err.Error(), c.errHas)) {
				t.Fatalf("err %v, want error=%v containing %q", err, c.wantErr, c.errHas)
			}
			if !strings.Contains(out, c.out) {
				t.Fatalf("output %q lacks %q", out, c.out)
			}
			if c.check != nil {
				c.check(t)
			}
		})
	}
}
