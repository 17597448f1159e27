// Package skills holds tabrelay's skills: reusable browser procedures written as markdown, found
// for a request and the current page, replayed step by step against fresh role snapshots with no
// model call when the page is as expected, handed to the model only for the steps that no longer
// fit, and learned by watching the user do the task once.
//
// # Format
//
// A skill is a folder with a SKILL.md, compatible with the common Agent Skills layout (name and
// description in the YAML front matter), extended with sites, parameters and kind. The body is
// markdown for people and models (intent, preconditions, steps, verification, notes); one fenced
// block tagged "steps" holds the structured steps a machine replays:
//
//	---
//	name: add-contact
//	description: Add a contact to the address book of example.com.
//	kind: workflow                # or action
//	sites: ["https://example.com/contacts*", "*.example.com"]
//	parameters:
//	  - name: name
//	    description: Full name of the contact
//	    required: true
//	    example: Ada Lovelace
//	  - name: email
//	    example: ada@example.com
//	    default: none@example.com
//	---
//	# Add a contact
//
//	Preconditions: the contacts page is open and you are signed in.
//
//	```steps
//	- do: type
//	  target: textbox "Name"
//	  text: "{{name}}"
//	  hint: Type the contact's name into the Name field
//	- do: click
//	  target: {role: button, name: Add, within: form "New contact"}
//	  expect: {text: "Added {{name}}"}
//	```
//
//	## Verification
//	The new contact appears in the list.
//
// Step fields: do (click, type, press, select, check, uncheck, fill, hover, navigate, wait,
// evaluate, back, forward, reload, scroll, hand_over: the person does what text says in the tab,
// a sign-in or a CAPTCHA, and the run goes on when they press Continue), target, text (what to
// type or wait for, or the hand-over's instruction), submit
// (Enter after typing), key, values (select), url, script (evaluate: a JavaScript expression
// whose value becomes the run's output), fields (fill: target + value each) or from (fill from a
// "Label: value" list such as {{values}}), direction (scroll), optional (skip when the target is
// absent), if (run only when the template is not empty), hint (one line for the model) and expect
// (text, gone, url, timeout: the effect that must follow).
//
// A target names an element the way a role snapshot shows it: `button "Save"`, or a mapping with
// role, name (exact ignoring case, or /regex/), nth (1-based among equal matches), within (an
// enclosing element such as a form, dialog, row or landmark) or any (alternatives, first match
// wins). {{param}} templates are filled from the run's parameters; a parameter used by a step
// must be declared.
//
// Parse errors are *ParseError values that say file:line: reason.
//
// # Loading, finding, running, recording
//
// A [Library] serves the bundled skills (embedded from skills/bundled) and the user's own under
// <home>/skills/<name>/SKILL.md (a user skill with a bundled skill's name replaces it), rescanning
// the folder on use so edits are picked up without a restart; broken files are listed as
// problems, never fatal. [Library.Rank] orders skills for a request and a URL. A [Service] runs
// skills through a task.Browser ([Service.Run]): every run is recorded as a task in the agent's
// store, a missing required parameter is refused before anything runs, and a step that cannot be
// resolved or whose effect does not appear is handed to the agent's task runner when a model is
// configured. [Service.StartRecording] and [Service.StopRecording] learn a skill by watching a
// shared tab: a click's effect is checked on replay, as the URL it led to (expect: url:) or as
// the short text a status, alert or live region showed just after it (expect: text:, with the
// typed values as their parameters). [Service.DraftFromTask] drafts a skill the same way from
// a task the agent finished well (its steps name the elements they acted on). The HTTP API (agent/api) serves all of it under
// /api/skills through these methods; [Service.Tools] and
// [Service.CallTool] offer list_skills, read_skill and run_skill to a model (the Service is the
// agent's task.Toolbox), and [Service.StartNamed] starts, in the background, the skill a
// request plainly names ("run site-search for mugs") for the agent's /api/command. With the
// agent's runner as Options.Runner, every run is also one of the runner's tasks: waited for,
// listed and cancelled like the agent's own.
//
// # Wiring
//
// The service uses the agent's own pieces, so skill runs are tasks like any other. The agent's
// task runner and the service need each other (skills run as the runner's tasks; the runner's
// tasks offer the skill tools), so the agent builds the service with its runner, once:
//
//	var sk *skills.Service
//	ag, _ := api.New(ctx, srv.Hub(), api.Options{Home: home, Model: model,
//		Skills: func(p api.SkillParts) api.Skills {
//			sk = skills.New(skills.Options{
//				Dir:     filepath.Join(home, "skills"),
//				Browser: adapter.New(p.Actions), Actions: p.Actions,
//				Runner:  p.Runner, Store: p.Store, Model: model, Log: log,
//			})
//			return sk // tasks offer the skill tools; /api/command runs a named skill directly
//		}})
//	api.Register(srv.API(), api.Services{Agent: ag, Skills: sk, Voice: vs}) // the HTTP routes
//	defer sk.Close(context.Background()) // before ag.Close: removes capture scripts from tabs
package skills
