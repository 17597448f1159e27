package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/reqbody"
	"github.com/tabrelay/tabrelay/snapshot"
)

// noSharedTab says how to share a tab, with or without the icon pinned.
const noSharedTab = "no shared tab: share one with Alt+Shift+S on it, or the tabrelay icon (in the browser's extensions menu until pinned)"

// resolveTab returns the shared tab named (after checking it is shared) or, when none is
// named, the first shared tab: the one the user most recently shared or focused. It lists the
// tabs through the agent's own connection to the relay (Target.getTargets), as any CDP client
// sees them.
func (a *Agent) resolveTab(ctx context.Context, name string) (string, *httpError) {
	tabs, err := a.svc.Tabs(ctx)
	if err != nil {
		return "", actionError(err, name)
	}
	name = strings.TrimSpace(name)
	if name == "" {
		if len(tabs) == 0 {
			if a.offerTab != nil && a.offerTab("agent") {
				return "", errorf(http.StatusNotFound, "no shared tab: the browser now asks which tab to share; pick one, then try again")
			}
			return "", errorf(http.StatusNotFound, "%s", noSharedTab)
		}
		return tabs[0].TargetID, nil
	}
	for _, t := range tabs {
		if t.TargetID == name {
			return name, nil
		}
	}
	// While the tabs are away for a moment (the server or the extension restarting, see
	// relay.Hub.WaitTarget), a named tab is waited for.
	if a.waitTarget != nil && a.waitTarget(ctx, name) {
		if tabs, err = a.svc.Tabs(ctx); err == nil {
			for _, t := range tabs {
				if t.TargetID == name {
					return name, nil
				}
			}
		}
	}
	he := errorf(http.StatusNotFound, "tab %q is not a shared tab (GET /api/tabs or `tabrelay tabs` lists them)", name)
	he.body.Tab = name
	return "", he
}

func queryBool(c echo.Context, name string) (bool, *httpError) {
	v := c.QueryParam(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errorf(http.StatusBadRequest, "%s=%q is not a boolean: use true or false", name, v)
	}
	return b, nil
}

func queryInt(c echo.Context, name string, def, minV, maxV int) (int, *httpError) {
	v := c.QueryParam(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < minV || n > maxV {
		return 0, errorf(http.StatusBadRequest, "%s=%q must be a whole number from %d to %d", name, v, minV, maxV)
	}
	return n, nil
}

// TabList is the answer of GET /api/tabs.
type TabList struct {
	// Tabs are the shared tabs, the one the user most recently shared or focused first (the
	// tab requests use when they name none).
	Tabs []actions.TabInfo `json:"tabs"`
}

func (a *Agent) getTabs(c echo.Context) *httpError {
	tabs, err := a.svc.Tabs(c.Request().Context())
	if err != nil {
		return actionError(err, "")
	}
	if tabs == nil {
		tabs = []actions.TabInfo{}
	}
	return jsonOK(c, http.StatusOK, TabList{Tabs: tabs})
}

func (a *Agent) getSnapshot(c echo.Context) *httpError {
	var o snapshot.Options
	var he *httpError
	if o.Interactive, he = queryBool(c, "interactive"); he != nil {
		return he
	}
	if o.Full, he = queryBool(c, "full"); he != nil {
		return he
	}
	if o.MaxChars, he = queryInt(c, "maxChars", 0, 0, 1<<30); he != nil {
		return he
	}
	if o.MaxTokens, he = queryInt(c, "maxTokens", 0, 0, 1<<28); he != nil {
		return he
	}
	if o.MaxDepth, he = queryInt(c, "maxDepth", 0, 0, 1000); he != nil {
		return he
	}
	o.Scope, o.Frame = c.QueryParam("scope"), c.QueryParam("frame")
	format := c.QueryParam("format")
	if format != "" && format != "text" && format != "json" {
		return errorf(http.StatusBadRequest, "format=%q: use text (the default) or json", format)
	}
	tab, he := a.resolveTab(c.Request().Context(), c.QueryParam("tab"))
	if he != nil {
		return he
	}
	snap, err := a.svc.Snapshot(c.Request().Context(), tab, o)
	if err != nil {
		return actionError(fmt.Errorf("snapshot of tab %s: %w", tab, err), tab)
	}
	c.Response().Header().Set("X-Tabrelay-Tab", tab)
	if format == "json" {
		return jsonOK(c, http.StatusOK, snap)
	}
	if err := c.String(http.StatusOK, snap.Text); err != nil {
		return errorf(http.StatusInternalServerError, "writing the answer: %v", err)
	}
	return nil
}

// actExample is shown when an action body is missing or malformed.
const actExample = `{"tab":"<targetId>","action":{"kind":"click","ref":"e3"}} or {"kind":"click","ref":"e3"} with ?tab=`

func (a *Agent) postAct(c echo.Context) *httpError {
	var m map[string]json.RawMessage
	if he := decode(c, reqbody.Default, &m, "action", actExample, false); he != nil {
		return he
	}
	tabName := c.QueryParam("tab")
	rawAction := json.RawMessage(nil)
	if act, ok := m["action"]; ok {
		for k := range m {
			if k != "action" && k != "tab" {
				return errorf(http.StatusBadRequest, "unknown field %q next to \"action\": send {\"tab\":…, \"action\":{…}}", k)
			}
		}
		if t, ok := m["tab"]; ok {
			if err := json.Unmarshal(t, &tabName); err != nil {
				return errorf(http.StatusBadRequest, "\"tab\" must be a string target id: %v", err)
			}
		}
		rawAction = act
	} else {
		rawAction, _ = json.Marshal(m)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(rawAction, &fields); err != nil || fields == nil {
		return errorf(http.StatusBadRequest, "\"action\" must be a JSON object, e.g. %s", actExample)
	}
	// The action registry decodes and validates: kinds, required and unknown fields, values.
	reg := a.svc.Registry()
	act, err := reg.Decode(rawAction)
	if err == nil {
		err = reg.Validate(&act)
	}
	if err != nil {
		he := errorf(http.StatusBadRequest, "bad action: %v", err)
		if errors.Is(err, actions.ErrUnknownKind) {
			he.body.Kinds = reg.Kinds()
		}
		return he
	}
	if _, ok := fields["text"]; act.Kind == "type" && !ok {
		return errorf(http.StatusBadRequest, "bad action: type needs text (send \"text\":\"\" to clear the field)")
	}
	// ?format=csv answers an extract's records as a CSV file
	switch format := strings.ToLower(c.QueryParam("format")); {
	case format == "" || format == "json":
	case format == "csv" && act.Kind == "extract":
	case format == "csv":
		return errorf(http.StatusBadRequest, "format=csv answers the records of the extract action, not of %s: leave format out", act.Kind)
	default:
		return errorf(http.StatusBadRequest, "format=%q: use json (the default) or, for extract, csv", format)
	}
	tab, he := a.resolveTab(c.Request().Context(), tabName)
	if he != nil {
		return he
	}
	// The caller's own explicit action (a script or the CLI, holding the secret): the safety
	// gate records it and does not stop it, as Chrome's own endpoint would not.
	ctx := gate.With(c.Request().Context(), gate.Request{Who: gate.Caller})
	res, err := a.svc.Act(ctx, tab, act)
	if err != nil {
		return actionError(err, tab)
	}
	if strings.EqualFold(c.QueryParam("format"), "csv") && res.Records != nil {
		var buf bytes.Buffer
		if err := res.Records.WriteCSV(&buf); err != nil {
			return errorf(http.StatusInternalServerError, "extract: %v", err)
		}
		c.Response().Header().Set("Content-Disposition", `attachment; filename="tabrelay-extract.csv"`)
		return blobOK(c, "text/csv; charset=utf-8", buf.Bytes())
	}
	return jsonOK(c, http.StatusOK, res)
}

func (a *Agent) getScreenshot(c echo.Context) *httpError {
	p := actions.Screenshot{Ref: c.QueryParam("ref"), Format: c.QueryParam("format")}
	var he *httpError
	if p.FullPage, he = queryBool(c, "fullPage"); he != nil {
		return he
	}
	if p.Labels, he = queryBool(c, "labels"); he != nil {
		return he
	}
	if p.Format != "" && p.Format != "png" && p.Format != "jpeg" {
		return errorf(http.StatusBadRequest, "format=%q: use png (the default) or jpeg", p.Format)
	}
	act := actions.Do(p)
	if err := act.Validate(); err != nil {
		return errorf(http.StatusBadRequest, "bad screenshot request: %v", err)
	}
	tab, he := a.resolveTab(c.Request().Context(), c.QueryParam("tab"))
	if he != nil {
		return he
	}
	res, err := a.svc.Act(c.Request().Context(), tab, act)
	if err != nil {
		return actionError(err, tab)
	}
	mime := res.MIME
	if mime == "" {
		mime = "image/png"
	}
	c.Response().Header().Set("X-Tabrelay-Tab", tab)
	return blobOK(c, mime, res.Data)
}

// needsModel turns a "no model configured" error into a 503 that says how to configure one,
// in one sentence (with why the current configuration does not work, when err does not say).
func (a *Agent) needsModel(err error) *httpError {
	msg := err.Error()
	var nc *llm.NotConfiguredError
	if errors.As(llm.Why(a.opts.Model), &nc) && !strings.Contains(msg, nc.Reason) {
		msg += " (now: " + nc.Reason + ")"
	}
	he := errorf(http.StatusServiceUnavailable, "%s", msg)
	he.body.NeedsModel = true
	return he
}

// CommandResponse is the answer of POST /api/command: the task the command became, whether
// the fast path (no model) handled it, and the skill it ran, if any.
type CommandResponse struct {
	*task.Task
	// FastPath is true when the command ran without the model.
	FastPath bool `json:"fastPath"`
	// Skill is the skill the command named and ran (replayed with no model call unless a step
	// no longer fit the page).
	Skill string `json:"skill,omitempty"`
}

func (a *Agent) postCommand(c echo.Context) *httpError {
	const example = `{"text":"click sign in","tab":"<targetId, optional>","wait":true}`
	var req struct {
		Text    string `json:"text"`
		Tab     string `json:"tab"`
		Wait    *bool  `json:"wait"`
		Approve bool   `json:"approve"`
	}
	if he := decode(c, reqbody.Default, &req, "command", example, false); he != nil {
		return he
	}
	if strings.TrimSpace(req.Text) == "" {
		return errorf(http.StatusBadRequest, "the command has no text: send %s", example)
	}
	wait := req.Wait == nil || *req.Wait
	if v := c.QueryParam("wait"); v != "" {
		w, err := strconv.ParseBool(v)
		if err != nil {
			return errorf(http.StatusBadRequest, "wait=%q is not a boolean: use wait=0 to get the task id at once, or leave it out to wait up to %s for the result", v, a.opts.CommandWait)
		}
		wait = wait && w
	}
	tab, he := a.resolveTab(c.Request().Context(), req.Tab)
	if he != nil {
		return he
	}
	ctx := c.Request().Context()
	t, skill, he := a.startNamedSkill(ctx, req.Text, tab, req.Approve)
	if he != nil {
		return he
	}
	if t == nil {
		var err error
		if t, err = a.runner.CommandWith(ctx, task.CommandRequest{Text: req.Text, Tab: tab, Approve: req.Approve}); err != nil {
			if errors.Is(err, llm.ErrNotConfigured) {
				return a.needsModel(err)
			}
			return actionError(err, tab)
		}
	}
	done, code := t, http.StatusAccepted
	if wait {
		wctx, cancel := context.WithTimeout(ctx, a.opts.CommandWait)
		ended, err := a.runner.Wait(wctx, t.ID)
		cancel()
		if err == nil && ended != nil && ended.Status.Done() {
			done, code = ended, http.StatusOK
		} else if cur, err := a.runner.Get(ctx, t.ID); err == nil {
			done = cur
		}
	}
	if code == http.StatusAccepted {
		c.Response().Header().Set("Location", "/api/tasks/"+t.ID)
	}
	return jsonOK(c, code, CommandResponse{Task: done, FastPath: done.Model == task.ModelFastPath, Skill: skill})
}

// startNamedSkill starts the skill the request plainly names on tab, when skills are hooked in
// and one applies to the tab's page, and returns its task and the skill's name; the task is nil
// when the request names no skill.
func (a *Agent) startNamedSkill(ctx context.Context, text, tab string, approve bool) (*task.Task, string, *httpError) {
	sk := a.skillsService()
	if sk == nil {
		return nil, "", nil
	}
	t, ok, err := sk.StartNamed(ctx, text, tab, a.tabURL(ctx, tab), approve)
	if !ok {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", skillError(err, tab, http.StatusUnprocessableEntity)
	}
	return t, strings.TrimPrefix(t.Model, "skill:"), nil
}

// tabURL returns the URL of a shared tab ("" when unknown).
func (a *Agent) tabURL(ctx context.Context, tab string) string {
	tabs, err := a.svc.Tabs(ctx)
	if err != nil {
		return ""
	}
	for _, t := range tabs {
		if t.TargetID == tab {
			return t.URL
		}
	}
	return ""
}

// TaskStarted is the answer of POST /api/tasks (202): the new task, and the skill it runs when
// the goal named one.
type TaskStarted struct {
	ID     string      `json:"id"`
	Status task.Status `json:"status"`
	TabID  string      `json:"tabId,omitempty"`
	Skill  string      `json:"skill,omitempty"`
}

// Confirmed is the answer of POST /api/tasks/{id}/confirm.
type Confirmed struct {
	ID       string `json:"id"`
	StepID   string `json:"stepId"`
	Approved bool   `json:"approved"`
}

func (a *Agent) postTask(c echo.Context) *httpError {
	const example = `{"goal":"find the cheapest kettle","tab":"<targetId, optional>"}`
	var req struct {
		Goal    string `json:"goal"`
		Tab     string `json:"tab"`
		Approve bool   `json:"approve"`
	}
	if he := decode(c, reqbody.Default, &req, "task", example, false); he != nil {
		return he
	}
	if strings.TrimSpace(req.Goal) == "" {
		return errorf(http.StatusBadRequest, "the task has no goal: send %s", example)
	}
	tab, he := a.resolveTab(c.Request().Context(), req.Tab)
	if he != nil {
		return he
	}
	t, skill, he := a.startNamedSkill(c.Request().Context(), req.Goal, tab, req.Approve)
	if he != nil {
		return he
	}
	if t != nil {
		c.Response().Header().Set("Location", "/api/tasks/"+t.ID)
		return jsonOK(c, http.StatusAccepted, TaskStarted{ID: t.ID, Status: t.Status, TabID: t.TabID, Skill: skill})
	}
	t, err := a.runner.Start(c.Request().Context(), req.Goal, tab)
	if err != nil {
		if errors.Is(err, llm.ErrNotConfigured) {
			return a.needsModel(err)
		}
		return errorf(http.StatusInternalServerError, "starting the task: %v", err)
	}
	c.Response().Header().Set("Location", "/api/tasks/"+t.ID)
	return jsonOK(c, http.StatusAccepted, TaskStarted{ID: t.ID, Status: t.Status, TabID: t.TabID})
}

// TaskList is the answer of GET /api/tasks.
type TaskList struct {
	// Tasks are the page's tasks, most recent first, each with its plan and steps.
	Tasks []*task.Task `json:"tasks"`
	// Limit and Offset are the page asked for (?limit=, default 20; ?offset=).
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
	// NextOffset is the offset of the next page, 0 when this page is the last.
	NextOffset int `json:"nextOffset,omitempty"`
}

func (a *Agent) listTasks(c echo.Context) *httpError {
	limit, he := queryInt(c, "limit", 20, 1, 1000)
	if he != nil {
		return he
	}
	offset, he := queryInt(c, "offset", 0, 0, 1<<30)
	if he != nil {
		return he
	}
	tasks, err := a.runner.List(c.Request().Context(), limit+1, offset)
	if err != nil {
		return errorf(http.StatusInternalServerError, "listing tasks: %v", err)
	}
	out := TaskList{Tasks: tasks, Limit: limit, Offset: offset}
	if len(tasks) > limit {
		out.Tasks, out.NextOffset = tasks[:limit], offset+limit
	}
	if out.Tasks == nil {
		out.Tasks = []*task.Task{}
	}
	return jsonOK(c, http.StatusOK, out)
}

func (a *Agent) lookupTask(c echo.Context) (*task.Task, *httpError) {
	id := c.Param("id")
	t, err := a.runner.Get(c.Request().Context(), id)
	if err != nil {
		if errors.Is(err, task.ErrNotFound) {
			he := errorf(http.StatusNotFound, "task %q not found (GET /api/tasks lists them)", id)
			he.body.Task = id
			return nil, he
		}
		return nil, errorf(http.StatusInternalServerError, "reading task %s: %v", id, err)
	}
	return t, nil
}

func (a *Agent) getTask(c echo.Context) *httpError {
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	return jsonOK(c, http.StatusOK, t)
}

func (a *Agent) cancelTask(c echo.Context) *httpError {
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	if t.Status.Done() {
		he := errorf(http.StatusConflict, "task %s already ended (%s)", t.ID, t.Status)
		he.body.Task = t.ID
		return he
	}
	if err := a.runner.Cancel(t.ID); err != nil {
		return errorf(http.StatusConflict, "%v", err)
	}
	wctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if done, err := a.runner.Wait(wctx, t.ID); err == nil {
		t = done
	}
	return jsonOK(c, http.StatusOK, t)
}

func (a *Agent) confirmTask(c echo.Context) *httpError {
	const example = `{"stepId":"s3","approve":true}`
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	var req struct {
		StepID  string `json:"stepId"`
		Approve *bool  `json:"approve"`
	}
	if he := decode(c, reqbody.Default, &req, "confirmation", example, false); he != nil {
		return he
	}
	if req.StepID == "" || req.Approve == nil {
		return errorf(http.StatusBadRequest, "a confirmation needs stepId and approve: send %s", example)
	}
	if err := a.runner.Confirm(t.ID, req.StepID, *req.Approve); err != nil {
		he := errorf(http.StatusConflict, "%v", err)
		he.body.Task = t.ID
		return he
	}
	return jsonOK(c, http.StatusOK, Confirmed{ID: t.ID, StepID: req.StepID, Approved: *req.Approve})
}

// What a task report shows, its data= parameter (GET /api/tasks/{id}/report).
const (
	// ReportSteps is the task and its steps (the default): JSON with each extract step's
	// records typed, one CSV row per step, Markdown with the records as a table (capped).
	ReportSteps = "steps"
	// ReportRecords is the records the task's extract steps read, as one table
	// (task.Task.RecordTable): a CSV file of the records, its JSON or a Markdown table.
	ReportRecords = "records"
)

func (a *Agent) taskReport(c echo.Context) *httpError {
	format := strings.ToLower(c.QueryParam("format"))
	if format == "" {
		format = "json"
	}
	data := strings.ToLower(c.QueryParam("data"))
	if data == "" {
		data = ReportSteps
	}
	if data != ReportSteps && data != ReportRecords {
		return errorf(http.StatusBadRequest, "data=%q: use %s (the task and its steps, the default) or %s (the records its extract steps read)", data, ReportSteps, ReportRecords)
	}
	// each format renders the steps or the records
	var steps, records func(io.Writer, *task.Task) error
	var mime, ext string
	switch format {
	case "json":
		steps, records, mime, ext = one(task.ReportJSON), task.ReportRecordsJSON, "application/json", "json"
	case "csv":
		steps, records, mime, ext = one(task.ReportCSV), task.ReportRecordsCSV, "text/csv; charset=utf-8", "csv"
	case "markdown", "md":
		steps, records, mime, ext = one(task.ReportMarkdown), task.ReportRecordsMarkdown, "text/markdown; charset=utf-8", "md"
	default:
		return errorf(http.StatusBadRequest, "format=%q: use json, csv or markdown", format)
	}
	render := steps
	if data == ReportRecords {
		render = records
	}
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	var buf bytes.Buffer
	if err := render(&buf, t); err != nil {
		if errors.Is(err, task.ErrNoRecords) {
			he := errorf(http.StatusNotFound, "%v", err)
			he.body.Task = t.ID
			return he
		}
		return errorf(http.StatusInternalServerError, "rendering the report of task %s: %v", t.ID, err)
	}
	name := "tabrelay-task-" + safeName(t.ID)
	if data == ReportRecords {
		name += "-records"
	}
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.%s"`, name, ext))
	return blobOK(c, mime, buf.Bytes())
}

// one adapts a report of tasks to a report of one task.
func one(render func(io.Writer, ...*task.Task) error) func(io.Writer, *task.Task) error {
	return func(w io.Writer, t *task.Task) error { return render(w, t) }
}

// safeName keeps only characters safe in a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
