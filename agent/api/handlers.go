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
	"github.com/tabrelay/tabrelay/agent/llm"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/reqbody"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/snapshot"
)

// ErrorBody is the JSON body of every error answer.
type ErrorBody struct {
	// Error says what went wrong and what to do.
	Error string `json:"error"`
	// Tab is the tab id the error is about, if any.
	Tab string `json:"tab,omitempty"`
	// Task is the task id the error is about, if any.
	Task string `json:"task,omitempty"`
	// Kinds lists the valid action kinds (for a bad or missing kind).
	Kinds []string `json:"kinds,omitempty"`
	// NeedsModel is true when the request needs a language model and none is configured.
	NeedsModel bool `json:"needsModel,omitempty"`
	// Missing names the required parameters a skill the request named still needs.
	Missing []string `json:"missing,omitempty"`
	// Confirm lists the steps of a named skill that need approval ("approve": true runs them).
	Confirm []string `json:"confirm,omitempty"`
	// Skill names the skill the request named, with Confirm.
	Skill string `json:"skill,omitempty"`
}

// httpError is an error with its HTTP status and JSON body.
type httpError struct {
	code int
	body ErrorBody
}

func (e *httpError) Error() string { return e.body.Error }

func errorf(code int, format string, args ...any) *httpError {
	return &httpError{code: code, body: ErrorBody{Error: fmt.Sprintf(format, args...)}}
}

// handle adapts a handler returning *httpError to echo, writing errors as JSON.
func handle(fn func(c echo.Context) *httpError) echo.HandlerFunc {
	return func(c echo.Context) error {
		if he := fn(c); he != nil {
			if c.Response().Committed {
				return nil
			}
			return c.JSON(he.code, he.body)
		}
		return nil
	}
}

// Register adds the agent's routes to g (the relay's authenticated /api group):
//
//	GET  /tabs                  the shared tabs
//	GET  /snapshot              role outline of a tab (?tab=&interactive=&full=&maxChars=&maxDepth=&scope=&frame=&format=text|json)
//	POST /act                   one action {"tab": "...", "action": {"kind": "click", "ref": "e3"}}
//	GET  /screenshot            PNG or JPEG (?tab=&ref=&fullPage=&labels=&format=)
//	POST /command               {"text": "click sign in", "tab": "...", "wait": true, "approve": false}
//	POST /tasks                 {"goal": "find the cheapest kettle", "tab": "...", "approve": false} → 202 {"id", ...}
//	GET  /tasks                 recent tasks (?limit=&offset=)
//	GET  /tasks/{id}            one task with its plan and steps
//	GET  /tasks/{id}/events     Server-Sent Events: the task, then live events until its answer
//	POST /tasks/{id}/cancel     stop a task
//	POST /tasks/{id}/confirm    answer a step waiting for confirmation {"stepId": "s3", "approve": true}
//	GET  /tasks/{id}/report     the task as ?format=json, csv or markdown
//
// POST /command runs the text as a task: a skill it plainly names first ("run site-search for
// mugs", when skills are hooked in with UseSkills and the skill applies to the tab's page), a
// simple command through the fast path next, else a task of the model. It waits up to
// Options.CommandWait for the task to end and answers 200 with the ended task, or 202 with the
// task so far. With ?wait=0 (or "wait": false in the body) it answers 202 with the new task
// (its "id", and Location: /api/tasks/{id}) at once, without waiting: follow
// /api/tasks/{id}/events. POST /tasks runs a named skill the same way, else starts a task of
// the model. A named skill missing a required parameter answers 400 with "missing" (the names,
// to give in the request as name=value); one with steps that need approval answers 409 with
// "confirm" (send "approve": true to run them).
func (a *Agent) Register(g *echo.Group) {
	g.GET("/tabs", handle(a.getTabs))
	g.GET("/snapshot", handle(a.getSnapshot))
	g.POST("/act", handle(a.postAct))
	g.GET("/screenshot", handle(a.getScreenshot))
	g.POST("/command", handle(a.postCommand))
	g.POST("/tasks", handle(a.postTask))
	g.GET("/tasks", handle(a.listTasks))
	g.GET("/tasks/:id", handle(a.getTask))
	g.GET("/tasks/:id/events", handle(a.taskEvents))
	g.POST("/tasks/:id/cancel", handle(a.cancelTask))
	g.POST("/tasks/:id/confirm", handle(a.confirmTask))
	g.GET("/tasks/:id/report", handle(a.taskReport))
}

// resolveTab returns the shared tab named (after checking it is shared) or, when none is
// named, the tab the user most recently shared or focused.
func (a *Agent) resolveTab(name string) (string, *httpError) {
	tabs := a.hub.Tabs()
	name = strings.TrimSpace(name)
	if name == "" {
		if len(tabs) == 0 {
			return "", errorf(http.StatusNotFound, "no shared tab: click the tabrelay icon on a tab to share it")
		}
		return tabs[0].TargetID, nil
	}
	for _, t := range tabs {
		if t.TargetID == name {
			return name, nil
		}
	}
	he := errorf(http.StatusNotFound, "tab %q is not a shared tab (GET /api/tabs or `tabrelay tabs` lists them)", name)
	he.body.Tab = name
	return "", he
}

// actionError turns an error of the action service into an HTTP error.
func actionError(err error, tab string) *httpError {
	code := http.StatusUnprocessableEntity
	switch {
	case errors.Is(err, actions.ErrNoTab):
		code = http.StatusNotFound
	case errors.Is(err, snapshot.ErrUnknownRef):
		code = http.StatusBadRequest
	case errors.Is(err, snapshot.ErrGone):
		code = http.StatusConflict
	case errors.Is(err, context.DeadlineExceeded):
		code = http.StatusGatewayTimeout
	case errors.Is(err, cdpclient.ErrClosed):
		code = http.StatusServiceUnavailable
	}
	he := errorf(code, "%v", err)
	he.body.Tab = tab
	return he
}

// readJSON decodes the request body into a map of raw fields (within reqbody.Default: actions
// and goals are small).
func readJSON(c echo.Context, example string) (map[string]json.RawMessage, *httpError) {
	var m map[string]json.RawMessage
	err := reqbody.JSON(c.Request(), reqbody.Default, &m)
	switch {
	case errors.Is(err, reqbody.ErrEmpty):
		return nil, errorf(http.StatusBadRequest, "send a JSON object, e.g. %s", example)
	case reqbody.Status(err) == http.StatusRequestEntityTooLarge:
		return nil, errorf(http.StatusRequestEntityTooLarge, "%v; send e.g. %s", err, example)
	case err != nil:
		return nil, errorf(http.StatusBadRequest, "the body is not a JSON object (%v); send e.g. %s", err, example)
	}
	return m, nil
}

// decodeStrict decodes raw into v, refusing unknown fields.
func decodeStrict(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
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

func (a *Agent) getTabs(c echo.Context) *httpError {
	tabs := a.hub.Tabs()
	if tabs == nil {
		tabs = []relay.TabInfo{}
	}
	return jsonOK(c, http.StatusOK, map[string]any{"tabs": tabs})
}

func jsonOK(c echo.Context, code int, v any) *httpError {
	if err := c.JSON(code, v); err != nil {
		return errorf(http.StatusInternalServerError, "writing the answer: %v", err)
	}
	return nil
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
	if o.MaxDepth, he = queryInt(c, "maxDepth", 0, 0, 1000); he != nil {
		return he
	}
	o.Scope, o.Frame = c.QueryParam("scope"), c.QueryParam("frame")
	format := c.QueryParam("format")
	if format != "" && format != "text" && format != "json" {
		return errorf(http.StatusBadRequest, "format=%q: use text (the default) or json", format)
	}
	tab, he := a.resolveTab(c.QueryParam("tab"))
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
	m, he := readJSON(c, actExample)
	if he != nil {
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
	var act actions.Action
	if err := decodeStrict(rawAction, &act); err != nil {
		return errorf(http.StatusBadRequest, "bad action: %v (see the fields in `go doc agent/actions`)", err)
	}
	if err := act.Validate(); err != nil {
		he := errorf(http.StatusBadRequest, "bad action: %v", err)
		if _, known := kindSet()[act.Kind]; !known {
			he.body.Kinds = actions.Kinds()
		}
		return he
	}
	if _, ok := fields["text"]; act.Kind == "type" && !ok {
		return errorf(http.StatusBadRequest, "bad action: type needs text (send \"text\":\"\" to clear the field)")
	}
	tab, he := a.resolveTab(tabName)
	if he != nil {
		return he
	}
	res, err := a.svc.Act(c.Request().Context(), tab, act)
	if err != nil {
		return actionError(err, tab)
	}
	return jsonOK(c, http.StatusOK, res)
}

func kindSet() map[string]struct{} {
	m := map[string]struct{}{}
	for _, k := range actions.Kinds() {
		m[k] = struct{}{}
	}
	return m
}

func (a *Agent) getScreenshot(c echo.Context) *httpError {
	act := actions.Action{Kind: "screenshot", Ref: c.QueryParam("ref"), Format: c.QueryParam("format")}
	var he *httpError
	if act.FullPage, he = queryBool(c, "fullPage"); he != nil {
		return he
	}
	if act.Labels, he = queryBool(c, "labels"); he != nil {
		return he
	}
	if act.Format != "" && act.Format != "png" && act.Format != "jpeg" {
		return errorf(http.StatusBadRequest, "format=%q: use png (the default) or jpeg", act.Format)
	}
	if err := act.Validate(); err != nil {
		return errorf(http.StatusBadRequest, "bad screenshot request: %v", err)
	}
	tab, he := a.resolveTab(c.QueryParam("tab"))
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
	if err := c.Blob(http.StatusOK, mime, res.Data); err != nil {
		return errorf(http.StatusInternalServerError, "writing the answer: %v", err)
	}
	return nil
}

// needsModel turns a "no model configured" error into a 503 that says how to configure one.
func (a *Agent) needsModel(err error) *httpError {
	msg := err.Error()
	if a.opts.ModelError != nil && !strings.Contains(msg, a.opts.ModelError.Error()) {
		var nc *llm.NotConfiguredError
		if errors.As(a.opts.ModelError, &nc) {
			msg += "\n(current configuration: " + nc.Reason + ")"
		}
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
	FastPath bool `json:"fast_path"`
	// Skill is the skill the command named and ran (replayed with no model call unless a step
	// no longer fit the page).
	Skill string `json:"skill,omitempty"`
}

func (a *Agent) postCommand(c echo.Context) *httpError {
	const example = `{"text":"click sign in","tab":"<targetId, optional>","wait":true}`
	m, he := readJSON(c, example)
	if he != nil {
		return he
	}
	var req struct {
		Text    string `json:"text"`
		Tab     string `json:"tab"`
		Wait    *bool  `json:"wait"`
		Approve bool   `json:"approve"`
	}
	raw, _ := json.Marshal(m)
	if err := decodeStrict(raw, &req); err != nil {
		return errorf(http.StatusBadRequest, "bad command: %v; send %s", err, example)
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
	tab, he := a.resolveTab(req.Tab)
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
		if t, err = a.runner.Command(ctx, req.Text, tab); err != nil {
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
	t, ok, err := sk.StartNamed(ctx, text, tab, a.tabURL(tab), approve)
	if !ok {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", skillError(err, tab)
	}
	return t, strings.TrimPrefix(t.Model, "skill:"), nil
}

// tabURL returns the URL of a shared tab ("" when unknown).
func (a *Agent) tabURL(tab string) string {
	for _, t := range a.hub.Tabs() {
		if t.TargetID == tab {
			return t.URL
		}
	}
	return ""
}

// skillError turns the refusal of a named skill's run into an HTTP error: 400 with the missing
// parameters, 409 with the steps that need approval, 422 otherwise.
func skillError(err error, tab string) *httpError {
	var mp interface{ MissingParams() []string }
	var cs interface {
		ConfirmSteps() []string
		SkillName() string
	}
	he := errorf(http.StatusUnprocessableEntity, "%v", err)
	switch {
	case errors.As(err, &mp):
		he.code, he.body.Missing = http.StatusBadRequest, mp.MissingParams()
	case errors.As(err, &cs):
		he.code, he.body.Confirm, he.body.Skill = http.StatusConflict, cs.ConfirmSteps(), cs.SkillName()
	}
	he.body.Tab = tab
	return he
}

func (a *Agent) postTask(c echo.Context) *httpError {
	const example = `{"goal":"find the cheapest kettle","tab":"<targetId, optional>"}`
	m, he := readJSON(c, example)
	if he != nil {
		return he
	}
	var req struct {
		Goal    string `json:"goal"`
		Tab     string `json:"tab"`
		Approve bool   `json:"approve"`
	}
	raw, _ := json.Marshal(m)
	if err := decodeStrict(raw, &req); err != nil {
		return errorf(http.StatusBadRequest, "bad task: %v; send %s", err, example)
	}
	if strings.TrimSpace(req.Goal) == "" {
		return errorf(http.StatusBadRequest, "the task has no goal: send %s", example)
	}
	tab, he := a.resolveTab(req.Tab)
	if he != nil {
		return he
	}
	t, skill, he := a.startNamedSkill(c.Request().Context(), req.Goal, tab, req.Approve)
	if he != nil {
		return he
	}
	if t != nil {
		c.Response().Header().Set("Location", "/api/tasks/"+t.ID)
		return jsonOK(c, http.StatusAccepted, map[string]any{"id": t.ID, "status": t.Status, "tab_id": t.TabID, "skill": skill})
	}
	t, err := a.runner.Start(c.Request().Context(), req.Goal, tab)
	if err != nil {
		if errors.Is(err, llm.ErrNotConfigured) {
			if a.opts.ModelError != nil {
				return a.needsModel(fmt.Errorf("tasks need a language model: %w", a.opts.ModelError))
			}
			return a.needsModel(err)
		}
		return errorf(http.StatusInternalServerError, "starting the task: %v", err)
	}
	c.Response().Header().Set("Location", "/api/tasks/"+t.ID)
	return jsonOK(c, http.StatusAccepted, map[string]any{"id": t.ID, "status": t.Status, "tab_id": t.TabID})
}

// TaskList is the answer of GET /api/tasks.
type TaskList struct {
	// Tasks are the page's tasks, most recent first, each with its plan and steps.
	Tasks []*task.Task `json:"tasks"`
	// Limit and Offset are the page asked for (?limit=, default 20; ?offset=).
	Limit  int `json:"limit"`
	Offset int `json:"offset"`
	// NextOffset is the offset of the next page, 0 when this page is the last.
	NextOffset int `json:"next_offset,omitempty"`
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
	m, he := readJSON(c, example)
	if he != nil {
		return he
	}
	var req struct {
		StepID  string `json:"stepId"`
		Approve *bool  `json:"approve"`
	}
	raw, _ := json.Marshal(m)
	if err := decodeStrict(raw, &req); err != nil {
		return errorf(http.StatusBadRequest, "bad confirmation: %v; send %s", err, example)
	}
	if req.StepID == "" || req.Approve == nil {
		return errorf(http.StatusBadRequest, "a confirmation needs stepId and approve: send %s", example)
	}
	if err := a.runner.Confirm(t.ID, req.StepID, *req.Approve); err != nil {
		he := errorf(http.StatusConflict, "%v", err)
		he.body.Task = t.ID
		return he
	}
	return jsonOK(c, http.StatusOK, map[string]any{"id": t.ID, "stepId": req.StepID, "approved": *req.Approve})
}

func (a *Agent) taskReport(c echo.Context) *httpError {
	format := strings.ToLower(c.QueryParam("format"))
	if format == "" {
		format = "json"
	}
	var render func(io.Writer, ...*task.Task) error
	var mime, ext string
	switch format {
	case "json":
		render, mime, ext = task.ReportJSON, "application/json", "json"
	case "csv":
		render, mime, ext = task.ReportCSV, "text/csv; charset=utf-8", "csv"
	case "markdown", "md":
		render, mime, ext = task.ReportMarkdown, "text/markdown; charset=utf-8", "md"
	default:
		return errorf(http.StatusBadRequest, "format=%q: use json, csv or markdown", format)
	}
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	var buf bytes.Buffer
	if err := render(&buf, t); err != nil {
		return errorf(http.StatusInternalServerError, "rendering the report of task %s: %v", t.ID, err)
	}
	c.Response().Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="tabrelay-task-%s.%s"`, safeName(t.ID), ext))
	if err := c.Blob(http.StatusOK, mime, buf.Bytes()); err != nil {
		return errorf(http.StatusInternalServerError, "writing the answer: %v", err)
	}
	return nil
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
