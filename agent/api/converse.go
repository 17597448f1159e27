package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/internal/reqbody"
	"github.com/tabrelay/tabrelay/skills"
)

// Answered is the answer of POST /api/tasks/{id}/answer.
type Answered struct {
	ID         string `json:"id"`
	QuestionID string `json:"questionId"`
	Answer     string `json:"answer"`
}

// Continued is the answer of POST /api/tasks/{id}/continue.
type Continued struct {
	ID         string `json:"id"`
	HandoverID string `json:"handoverId"`
}

// NewConversation is the answer of POST /api/conversation/new.
type NewConversation struct {
	// Tab is the tab whose conversation was cleared.
	Tab string `json:"tab"`
	// Cleared is how many earlier tasks the conversation held.
	Cleared int `json:"cleared"`
}

// waitError maps the runner's errors about questions and hand-overs to answers.
func waitError(err error, taskID string) *httpError {
	code := http.StatusConflict
	switch {
	case errors.Is(err, task.ErrEmptyAnswer):
		code = http.StatusBadRequest
	case errors.Is(err, task.ErrNotFound):
		code = http.StatusNotFound
	}
	he := errorf(code, "%v", err)
	he.body.Task = taskID
	return he
}

func (a *Agent) answerTask(c echo.Context) *httpError {
	const example = `{"questionId":"q1","answer":"Work"}`
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	var req struct {
		QuestionID string `json:"questionId"`
		Answer     string `json:"answer"`
	}
	if he := decode(c, reqbody.Default, &req, "answer", example, false); he != nil {
		return he
	}
	if req.QuestionID == "" {
		if t.Question == nil {
			return errorf(http.StatusBadRequest, "an answer needs questionId: send %s", example)
		}
		req.QuestionID = t.Question.ID // the question waiting now
	}
	req.Answer = strings.TrimSpace(req.Answer)
	if err := a.runner.Answer(t.ID, req.QuestionID, req.Answer); err != nil {
		return waitError(err, t.ID)
	}
	return jsonOK(c, http.StatusOK, Answered{ID: t.ID, QuestionID: req.QuestionID, Answer: req.Answer})
}

func (a *Agent) continueTask(c echo.Context) *httpError {
	const example = `{"handoverId":"h1"}`
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	var req struct {
		HandoverID string `json:"handoverId"`
	}
	if he := decode(c, reqbody.Default, &req, "continue", example, true); he != nil {
		return he
	}
	if req.HandoverID == "" {
		if t.Handover == nil {
			he := errorf(http.StatusConflict, "task %s is not waiting for you (status %s)", t.ID, t.Status)
			he.body.Task = t.ID
			return he
		}
		req.HandoverID = t.Handover.ID // the hand-over waiting now
	}
	if err := a.runner.Continue(t.ID, req.HandoverID); err != nil {
		return waitError(err, t.ID)
	}
	return jsonOK(c, http.StatusOK, Continued{ID: t.ID, HandoverID: req.HandoverID})
}

func (a *Agent) newConversation(c echo.Context) *httpError {
	const example = `{"tab":"<targetId, optional>"}`
	var req struct {
		Tab string `json:"tab"`
	}
	if he := decode(c, reqbody.Default, &req, "new conversation", example, true); he != nil {
		return he
	}
	tab, he := a.resolveTab(c.Request().Context(), req.Tab)
	if he != nil {
		return he
	}
	n := a.runner.NewConversation(tab)
	return jsonOK(c, http.StatusOK, NewConversation{Tab: tab, Cleared: n})
}

func (a *Agent) taskSkill(c echo.Context) *httpError {
	sk := a.skillsService()
	if sk == nil {
		return errorf(http.StatusServiceUnavailable, "the skills service is not running in this server")
	}
	t, he := a.lookupTask(c)
	if he != nil {
		return he
	}
	d, err := sk.DraftFromTask(c.Request().Context(), t)
	if err != nil {
		code := http.StatusInternalServerError
		if errors.Is(err, skills.ErrNotSavable) {
			code = http.StatusConflict
		}
		he := errorf(code, "%v", err)
		he.body.Task = t.ID
		return he
	}
	return jsonOK(c, http.StatusOK, d)
}
