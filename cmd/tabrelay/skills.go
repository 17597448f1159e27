package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
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

func (p paramList) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("--param takes name=value, got %q", s)
	}
	p[strings.TrimSpace(k)] = v
	return nil
}

const skillsUsage = `usage: tabrelay skills [flags] <command>

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

// cmdSkills implements `tabrelay skills list|show|run|record start|record stop|save|delete` as
// a client of the running server's /api/skills.
func cmdSkills(ctx context.Context, args []string) error { return runSkills(ctx, args, osStdio()) }

func runSkills(ctx context.Context, args []string, io stdio) error {
	fs := flag.NewFlagSet("skills", flag.ContinueOnError)
	fs.SetOutput(io.err)
	var f clientFlags
	f.register(fs)
	params := paramList{}
	var asJSON, save, yes bool
	var query, pageURL, request, narration, out string
	fs.Var(params, "param", "a parameter for run, name=value (repeatable)")
	fs.BoolVar(&asJSON, "json", false, "print the JSON answer")
	fs.StringVar(&query, "q", "", "list: rank the skills for this request (skills for every site unless --url)")
	fs.StringVar(&pageURL, "url", "", "list: only skills for this page URL")
	fs.StringVar(&request, "request", "", "run: take missing parameters from these words")
	fs.StringVar(&narration, "narration", "", "record stop: what you did, in a sentence (names and describes the skill)")
	fs.BoolVar(&save, "save", false, "record stop, save-task: save the draft at once")
	fs.BoolVar(&yes, "yes", false, "run: approve the steps that need confirmation (purchases, sending, deleting, subscribing…)")
	fs.StringVar(&out, "o", "", "record stop, save-task: write the draft to this file")
	fs.Usage = func() { fmt.Fprintln(io.err, skillsUsage); fs.PrintDefaults() }
	// Flags may follow positional arguments: parse in rounds.
	var pos []string
	rest := args
	for {
		if err := fs.Parse(rest); err != nil {
			return err
		}
		rest = fs.Args()
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		rest = rest[1:]
	}
	if len(pos) == 0 {
		fs.Usage()
		return errors.New("name a command: list, show, run, record, save-task, save or delete")
	}
	c := f.client()
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
		req := skills.RunRequest{Params: params, Tab: f.tab, Request: request, Approve: yes}
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
			if err := c.postJSON(ctx, "/skills/record/start", api.RecordRequest{Tab: f.tab}, &rec); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(io.out, rec)
			}
			fmt.Fprintf(io.out, "recording tab %s (%s): do the task in the browser, then run `tabrelay skills record stop --narration \"what you did\"`\n", rec.Tab, rec.URL)
			return nil
		}
		var d skills.Draft
		if err := c.postJSON(ctx, "/skills/record/stop", api.RecordRequest{Tab: f.tab, Narration: narration}, &d); err != nil {
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
	fs.Usage()
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
