package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/cdpclient"
	"github.com/tabrelay/tabrelay/internal/reqbody"
	"github.com/tabrelay/tabrelay/skills"
	"github.com/tabrelay/tabrelay/snapshot"
)

// ErrorBody is the JSON body of every error answer of every /api route: {"error": "…"} and,
// when they apply, the details below (API.md lists which route sets which).
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
	// Skill names the skill the error is about, with Missing or Confirm.
	Skill string `json:"skill,omitempty"`
	// Missing names the required parameters a skill still needs.
	Missing []string `json:"missing,omitempty"`
	// Parameters declares the missing parameters (description, example), with Missing.
	Parameters []skills.Param `json:"parameters,omitempty"`
	// Confirm lists the steps of a skill that need approval ("approve": true runs them).
	Confirm []string `json:"confirm,omitempty"`
	// File, Line and Reason locate the problem of an invalid SKILL.md.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Advice says what to install or configure (voice).
	Advice string `json:"advice,omitempty"`
	// DialogOpen is true when a JavaScript dialog blocks the tab: answer it first (the dialog
	// action) and try again.
	DialogOpen bool `json:"dialogOpen,omitempty"`
}

// httpError is an error answer: its HTTP status and JSON body.
type httpError struct {
	code int
	body ErrorBody
}

func (e *httpError) Error() string { return e.body.Error }

// errorf is the error answer code with the formatted text.
func errorf(code int, format string, args ...any) *httpError {
	return &httpError{code: code, body: ErrorBody{Error: fmt.Sprintf(format, args...)}}
}

// handler is what every route implements: it writes its answer and returns nil, or returns
// the error answer for handle to write.
type handler func(c echo.Context) *httpError

// handle adapts a handler to echo, writing its error answer as JSON (unless the answer had
// already begun, as an event stream's has).
func handle(fn handler) echo.HandlerFunc {
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

// jsonOK writes v as the JSON answer with status code.
func jsonOK(c echo.Context, code int, v any) *httpError {
	if err := c.JSON(code, v); err != nil {
		return errorf(http.StatusInternalServerError, "writing the answer: %v", err)
	}
	return nil
}

// blobOK writes data as the answer with its MIME type.
func blobOK(c echo.Context, mime string, data []byte) *httpError {
	if err := c.Blob(http.StatusOK, mime, data); err != nil {
		return errorf(http.StatusInternalServerError, "writing the answer: %v", err)
	}
	return nil
}

// decode reads the request's JSON body into v with reqbody (within limit, unknown fields
// refused). An empty body is an error unless optional, when v keeps its zero value. what names
// the request in errors ("command"); example is a body that works, shown in every error.
func decode(c echo.Context, limit int64, v any, what, example string, optional bool) *httpError {
	err := reqbody.JSON(c.Request(), limit, v)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, reqbody.ErrEmpty):
		if optional {
			return nil
		}
		return errorf(http.StatusBadRequest, "send a JSON object, e.g. %s", example)
	case reqbody.Status(err) == http.StatusRequestEntityTooLarge:
		return errorf(http.StatusRequestEntityTooLarge, "%v; send e.g. %s", err, example)
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &te) && te.Field == "":
		return errorf(http.StatusBadRequest, "the body is not a JSON object (%v); send e.g. %s", err, example)
	}
	return errorf(http.StatusBadRequest, "bad %s: %v; send e.g. %s", what, err, example)
}

// actionError turns an error of the action service into an error answer: 404 for an unknown
// tab, 400 for an unknown ref, 409 for a stale one or with "dialogOpen" when a JavaScript
// dialog blocks the page, 504 when the page took too long, 503 when the relay connection is
// gone, else 422 (the page refused).
func actionError(err error, tab string) *httpError {
	code := http.StatusUnprocessableEntity
	switch {
	case errors.Is(err, actions.ErrNoTab):
		code = http.StatusNotFound
	case errors.Is(err, snapshot.ErrUnknownRef):
		code = http.StatusBadRequest
	case errors.Is(err, snapshot.ErrGone), errors.Is(err, snapshot.ErrDialogOpen):
		code = http.StatusConflict
	case errors.Is(err, context.DeadlineExceeded):
		code = http.StatusGatewayTimeout
	case errors.Is(err, cdpclient.ErrClosed):
		code = http.StatusServiceUnavailable
	}
	he := errorf(code, "%v", err)
	he.body.Tab = tab
	he.body.DialogOpen = errors.Is(err, snapshot.ErrDialogOpen)
	return he
}

// skillError turns an error of the skills service into an error answer: 400 with "missing"
// and "parameters" for missing parameters, 409 for recordings in the wrong state, 422 with file, line and reason for an invalid SKILL.md,
// 404 for an unknown skill, 403 for a bundled one or a symbolic link, else fallback.
func skillError(err error, tab string, fallback int) *httpError {
	he := errorf(fallback, "%v", err)
	he.body.Tab = tab
	var mp *skills.MissingParamsError
	var pe *skills.ParseError
	switch {
	case errors.As(err, &mp):
		he.code, he.body.Skill, he.body.Missing, he.body.Parameters = http.StatusBadRequest, mp.Skill, mp.MissingParams(), mp.Missing
	case errors.As(err, &pe):
		he.code, he.body.File, he.body.Line, he.body.Reason = http.StatusUnprocessableEntity, pe.File, pe.Line, pe.Reason
	case errors.Is(err, skills.ErrNotFound):
		he.code = http.StatusNotFound
	case errors.Is(err, skills.ErrBundled), errors.Is(err, skills.ErrSymlink):
		he.code = http.StatusForbidden
	case errors.Is(err, skills.ErrRecording):
		he.code = http.StatusConflict
	}
	return he
}

// voiceError turns an error of the voice service into an error answer: 503 with "advice"
// when no engine can serve the request, 502 when the configured endpoint failed, else
// fallback.
func voiceError(err error, fallback int) *httpError {
	he := errorf(fallback, "%v", err)
	var ee *voice.EndpointError
	switch {
	case errors.Is(err, voice.ErrNoEngine), errors.Is(err, voice.ErrNoVoice), errors.Is(err, voice.ErrNeedsFFmpeg):
		he.code = http.StatusServiceUnavailable
	case errors.As(err, &ee):
		he.code = http.StatusBadGateway
	}
	return he
}
