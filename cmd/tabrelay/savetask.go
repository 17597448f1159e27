package main

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/tabrelay/tabrelay/skills"
)

// skillsSaveTask implements `tabrelay skills save-task <taskId>`: it drafts a skill from a task
// that succeeded (POST /api/tasks/{id}/skill) and prints, writes or saves the draft like a
// recording's.
func skillsSaveTask(ctx context.Context, c *apiClient, io stdio, taskID string, save bool, out string, asJSON bool) error {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var d skills.Draft
	if err := c.postJSON(ctx, "/tasks/"+url.PathEscape(taskID)+"/skill", struct{}{}, &d); err != nil {
		return err
	}
	return printDraft(ctx, c, io, &d, save, out, asJSON)
}

// printDraft shows a skill draft (a recording's, or a task's): to a file with out, saved with
// save, as JSON with asJSON, else its SKILL.md on stdout; stderr says what to do next.
func printDraft(ctx context.Context, c *apiClient, io stdio, d *skills.Draft, save bool, out string, asJSON bool) error {
	if out != "" {
		if err := os.WriteFile(out, []byte(d.Markdown), 0o644); err != nil {
			return fmt.Errorf("write the draft: %w", err)
		}
	}
	if save {
		if err := saveSkill(ctx, c, d.Skill.Name, d.Markdown); err != nil {
			return err
		}
	}
	switch {
	case asJSON:
		if err := writeJSON(io.out, d); err != nil {
			return err
		}
	case out == "":
		fmt.Fprint(io.out, d.Markdown)
	}
	switch {
	case save:
		fmt.Fprintf(io.err, "saved as %s: run it with `tabrelay skills run %s`\n", d.Skill.Name, d.Skill.Name)
	case out != "":
		fmt.Fprintf(io.err, "draft written to %s: review it, then `tabrelay skills save %s`\n", out, out)
	default:
		fmt.Fprintln(io.err, "this is a draft: save it with --save next time, or write it to a file with -o and `tabrelay skills save FILE`")
	}
	return nil
}
