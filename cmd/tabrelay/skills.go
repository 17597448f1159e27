package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/alecthomas/kong"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/internal/config"
	"github.com/tabrelay/tabrelay/skills"
)

// paramList collects repeated --param name=value flags.
type paramList map[string]string

func (p paramList) String() string {
	var parts []string
	for k, v := range p {
		parts = append(parts, k+"="+v)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Decode reads one --param name=value (kong.MapperValue); repeated flags add up.
func (p *paramList) Decode(ctx *kong.DecodeContext) error {
	var s string
	if err := ctx.Scan.PopValueInto("name=value", &s); err != nil {
		return err
	}
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("--param takes name=value, got %q", s)
	}
	if *p == nil {
		*p = paramList{}
	}
	(*p)[strings.TrimSpace(k)] = v
	return nil
}

const skillsUsage = `commands:

  list [--q REQUEST] [--url URL]     the skills (ranked for a request and page when given) and broken files
  show <name>                        print a skill's SKILL.md
  run <name> [--param k=v]... [--request TEXT] [--yes]
                                     run a skill on the tab (--tab); prints each step and the output
  record start                       start recording what you do on the tab (--tab)
  record stop [--narration TEXT] [--save] [-o FILE]
                                     stop and print the draft SKILL.md (--save stores it as is)
  save-task <taskId> [--save] [-o FILE]
                                     draft a skill from a task that succeeded (print, write or save it)
  save <file>                        store a SKILL.md (its name: decides the skill's name)
  delete <name>                      delete one of your skills

Flags may come before or after the command.`

// skillsCmd is `tabrelay skills list|show|run|record start|record stop|save|delete`, a client
// of the running server's /api/skills. Flags may come before or after the command.
type skillsCmd struct {
	config.Client `embed:""`
	Params        paramList `name:"param" placeholder:"name=value" help:"a parameter for run, name=value (repeatable)"`
	JSON          bool      `name:"json" help:"print the JSON answer"`
	Query         string    `name:"q" short:"q" help:"list: rank the skills for this request (skills for every site unless --url)"`
	URL           string    `name:"url" help:"list: only skills for this page URL"`
	Request       string    `help:"run: take missing parameters from these words"`
	Narration     string    `help:"record stop: what you did, in a sentence (names and describes the skill)"`
	Save          bool      `help:"record stop, save-task: save the draft at once"`
	Yes           bool      `help:"run: approve the steps that need confirmation (purchases, sending, deleting, subscribing…)"`
	Out           string    `name:"o" short:"o" placeholder:"FILE" help:"record stop, save-task: write the draft to this file"`
	// Args are the skills command and its arguments.
	Args []string `arg:"" sep:"none" optional:"" placeholder:"command"`
}

// Help lists the skills commands.
func (c *skillsCmd) Help() string { return skillsUsage }

func runSkills(ctx context.Context, args []string, io stdio) error {
	return runCommand(ctx, "skills", args, io)
}

// Run runs the skills command.
func (sc *skillsCmd) Run(ctx context.Context, io stdio) error {
	f, pos, params := &sc.Client, sc.Args, sc.Params
	if params == nil {
		params = paramList{}
	}
	asJSON, save, yes := sc.JSON, sc.Save, sc.Yes
	query, pageURL, request, narration, out := sc.Query, sc.URL, sc.Request, sc.Narration, sc.Out
	if len(pos) == 0 {
		fmt.Fprintln(io.err, skillsUsage)
		return errors.New("name a command: list, show, run, record, save-task, save or delete")
	}
	c := newClient(f)
	need := func(n int, what string) error {
		if len(pos) != n+1 {
			return fmt.Errorf("usage: tabrelay skills %s %s", pos[0], what)
		}
		return nil
	}
	switch pos[0] {
	case "list", "ls":
		if err := need(0, ""); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		q := url.Values{}
		if query != "" {
			q.Set("q", query)
		}
		if pageURL != "" {
			q.Set("url", pageURL)
		}
		var list api.SkillList
		if err := c.getJSON(ctx, "/skills", q, &list); err != nil {
			return err
		}
		if asJSON {
			return writeJSON(io.out, list)
		}
		if len(list.Skills) == 0 {
			fmt.Fprintln(io.out, "no skills match")
		}
		for _, s := range list.Skills {
			src := "yours"
			if s.Bundled {
				src = "bundled"
			}
			fmt.Fprintf(io.out, "%-28s %-8s %-7s %s\n", s.Name, s.Kind, src, oneLine(s.Description, 90))
		}
		for _, p := range list.Problems {
			fmt.Fprintf(io.err, "skipped %s\n", p.Error())
		}
		return nil
	case "show", "cat":
		if err := need(1, "<name>"); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		var d api.SkillDetail
		if err := c.getJSON(ctx, "/skills/"+url.PathEscape(pos[1]), nil, &d); err != nil {
			return err
		}
		if asJSON {
			return writeJSON(io.out, d)
		}
		fmt.Fprint(io.out, d.Markdown)
		return nil
	case "run":
		if err := need(1, "<name> [--param name=value]..."); err != nil {
			return err
		}
		// A run may hand steps to the model: allow it the agent's task time.
		ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
		defer cancel()
		var res skills.RunResult
		req := skills.RunRequest{Params: params, Tab: f.Tab, Request: request, Approve: yes}
		if err := c.postJSON(ctx, "/skills/"+url.PathEscape(pos[1])+"/run", req, &res); err != nil {
			return err
		}
		if asJSON {
			if err := writeJSON(io.out, res); err != nil {
				return err
			}
		} else {
			printSkillRun(io, &res)
		}
		if res.Status != "succeeded" {
			return fmt.Errorf("skill %s failed: %s", res.Skill, res.Error)
		}
		return nil
	case "record":
		if len(pos) != 2 || (pos[1] != "start" && pos[1] != "stop") {
			return errors.New("usage: tabrelay skills record start|stop")
		}
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		if pos[1] == "start" {
			var rec skills.Recording
			if err := c.postJSON(ctx, "/skills/record/start", api.RecordRequest{Tab: f.Tab}, &rec); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(io.out, rec)
			}
			fmt.Fprintf(io.out, "recording tab %s (%s): do the task in the browser, then run `tabrelay skills record stop --narration \"what you did\"`\n", rec.Tab, rec.URL)
			return nil
		}
		var d skills.Draft
		if err := c.postJSON(ctx, "/skills/record/stop", api.RecordRequest{Tab: f.Tab, Narration: narration}, &d); err != nil {
			return err
		}
		return printDraft(ctx, c, io, &d, save, out, asJSON)
	case "save-task":
		if err := need(1, "<task id>"); err != nil {
			return err
		}
		return skillsSaveTask(ctx, c, io, pos[1], save, out, asJSON)
	case "save":
		if err := need(1, "<SKILL.md file>"); err != nil {
			return err
		}
		data, err := os.ReadFile(pos[1])
		if err != nil {
			return fmt.Errorf("read the skill: %w", err)
		}
		sk, err := skills.Parse(pos[1], data)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		if err := saveSkill(ctx, c, sk.Name, string(data)); err != nil {
			return err
		}
		fmt.Fprintf(io.out, "saved %s\n", sk.Name)
		return nil
	case "delete", "rm":
		if err := need(1, "<name>"); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, requestTimeout)
		defer cancel()
		if _, _, err := c.do(ctx, http.MethodDelete, "/skills/"+url.PathEscape(pos[1]), nil, nil); err != nil {
			return err
		}
		fmt.Fprintf(io.out, "deleted %s\n", pos[1])
		return nil
	}
	fmt.Fprintln(io.err, skillsUsage)
	return fmt.Errorf("unknown skills command %q", pos[0])
}

func saveSkill(ctx context.Context, c *apiClient, name, markdown string) error {
	_, _, err := c.do(ctx, http.MethodPut, "/skills/"+url.PathEscape(name), nil, api.SkillSave{Markdown: markdown})
	if err != nil {
		return fmt.Errorf("save skill %s: %w", name, err)
	}
	return nil
}

func printSkillRun(io stdio, res *skills.RunResult) {
	for _, s := range res.Steps {
		line := fmt.Sprintf("%2d. %-8s %-7s %s", s.Index, s.Status, s.Do, s.Target)
		if s.Message != "" && s.Status != "ok" {
			line += " — " + oneLine(s.Message, 160)
		}
		fmt.Fprintln(io.out, line)
	}
	fmt.Fprintf(io.out, "%s in %d ms, %d model calls (task %s)\n", res.Status, res.DurationMS, res.ModelCalls, res.TaskID)
	if res.Output != "" {
		fmt.Fprint(io.out, res.Output)
		if !strings.HasSuffix(res.Output, "\n") {
			fmt.Fprintln(io.out)
		}
	}
	if res.Draft != "" {
		fmt.Fprintf(io.err, "the model did some steps differently; an updated skill was drafted (see --json .draft); save it to replay without the model\n")
	}
}
