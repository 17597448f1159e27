package skills

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/internal/reqbody"
)

// Summary is a skill as listed by GET /api/skills.
type Summary struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Kind        string   `json:"kind"`
	Sites       []string `json:"sites,omitempty"`
	Parameters  []Param  `json:"parameters,omitempty"`
	Steps       int      `json:"steps"`
	Bundled     bool     `json:"bundled"`
	Source      string   `json:"source,omitempty"`
	// Score and Named are set when the list was ranked for a request (?q=…&url=…).
	Score float64 `json:"score,omitempty"`
	Named bool    `json:"named,omitempty"`
}

func summarize(s *Skill) Summary {
	return Summary{Name: s.Name, Description: s.Description, Kind: s.Kind, Sites: s.Sites, Parameters: s.Parameters,
		Steps: len(s.Steps), Bundled: s.Bundled, Source: s.Source}
}

// List is the answer of GET /api/skills.
type List struct {
	Skills []Summary `json:"skills"`
	// Problems are skill files that could not be loaded (file:line: reason).
	Problems []*ParseError `json:"problems"`
}

// Detail is the answer of GET /api/skills/{name} and PUT /api/skills/{name}.
type Detail struct {
	Skill    *Skill `json:"skill"`
	Markdown string `json:"markdown"`
}

// SaveRequest is the JSON body of PUT /api/skills/{name} (a text/markdown body works too).
type SaveRequest struct {
	Markdown string `json:"markdown"`
}

// RecordRequest is the body of POST /api/skills/record/start and /stop.
type RecordRequest struct {
	Tab string `json:"tab,omitempty"`
	// Narration is what the user said or typed while showing (stop only).
	Narration string `json:"narration,omitempty"`
}

// Register mounts the skills API on g (the server's /api group):
//
//	GET    /skills                   list (?q=request&url=page ranks them) and problem files
//	GET    /skills/{name}            one skill (JSON; Accept: text/markdown gives the file)
//	PUT    /skills/{name}            save {"markdown": "..."} or a text/markdown body
//	DELETE /skills/{name}            delete a user skill
//	POST   /skills/{name}/run        run {"params": {...}, "tab": "...", "request": "..."}
//	POST   /skills/record/start      start recording {"tab": "..."}
//	POST   /skills/record/stop       stop {"tab": "...", "narration": "..."} → draft
//	GET    /skills/drafts/{taskId}   the updated SKILL.md a run offered after the model did a
//	                                 step differently (404 when it offered none)
//
// PUT saves under {name}: a file whose name: differs is renamed to it. Errors are
// {"error": "..."}: 400 bad input or a missing parameter (with "missing", the names, and
// "parameters", their declarations), 404
// unknown skill, 403 bundled skill, 409 recording state or steps needing confirmation (with
// "confirm", the steps: run again with "approve": true), 422 an invalid skill file (with file,
// line and reason).
func Register(g *echo.Group, svc *Service) {
	g.GET("/skills", svc.handleList)
	g.POST("/skills/record/start", svc.handleRecordStart)
	g.POST("/skills/record/stop", svc.handleRecordStop)
	g.GET("/skills/drafts/:task", svc.handleDraft)
	g.GET("/skills/:name", svc.handleGet)
	g.PUT("/skills/:name", svc.handleSave)
	g.DELETE("/skills/:name", svc.handleDelete)
	g.POST("/skills/:name/run", svc.handleRun)
}

func jsonError(c echo.Context, status int, err error, extra map[string]any) error {
	body := map[string]any{"error": err.Error()}
	for k, v := range extra {
		body[k] = v
	}
	return c.JSON(status, body)
}

// errorStatus maps the package's errors to HTTP answers.
func errorStatus(c echo.Context, err error) error {
	var pe *ParseError
	var mp *MissingParamsError
	var ce *ConfirmationError
	switch {
	case errors.As(err, &mp):
		names := make([]string, len(mp.Missing))
		for i, p := range mp.Missing {
			names[i] = p.Name
		}
		return jsonError(c, http.StatusBadRequest, err, map[string]any{"missing": names, "parameters": mp.Missing})
	case errors.As(err, &pe):
		return jsonError(c, http.StatusUnprocessableEntity, err, map[string]any{"file": pe.File, "line": pe.Line, "reason": pe.Reason})
	case errors.Is(err, ErrNotFound):
		return jsonError(c, http.StatusNotFound, err, nil)
	case errors.Is(err, ErrBundled), errors.Is(err, ErrSymlink):
		return jsonError(c, http.StatusForbidden, err, nil)
	case errors.As(err, &ce):
		return jsonError(c, http.StatusConflict, err, map[string]any{"confirm": ce.Steps})
	case errors.Is(err, ErrRecording):
		return jsonError(c, http.StatusConflict, err, nil)
	default:
		return jsonError(c, http.StatusBadRequest, err, nil)
	}
}

func (s *Service) handleList(c echo.Context) error {
	out := List{Skills: []Summary{}, Problems: s.lib.Problems()}
	q, u := c.QueryParam("q"), c.QueryParam("url")
	if q != "" || u != "" {
		for _, m := range s.lib.Rank(q, u) {
			sum := summarize(m.Skill)
			sum.Score, sum.Named = m.Score, m.Named
			out.Skills = append(out.Skills, sum)
		}
	} else {
		for _, sk := range s.lib.List() {
			out.Skills = append(out.Skills, summarize(sk))
		}
	}
	if out.Problems == nil {
		out.Problems = []*ParseError{}
	}
	return c.JSON(http.StatusOK, out)
}

func (s *Service) handleDraft(c echo.Context) error {
	d, ok := s.Draft(c.Param("task"))
	if !ok {
		return jsonError(c, http.StatusNotFound, errors.New("this run offered no updated skill (or it is no longer kept)"), nil)
	}
	return c.JSON(http.StatusOK, d)
}

func (s *Service) handleGet(c echo.Context) error {
	sk, err := s.lib.Get(c.Param("name"))
	if err != nil {
		return errorStatus(c, err)
	}
	if strings.Contains(c.Request().Header.Get("Accept"), "text/markdown") {
		return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", []byte(sk.Raw))
	}
	return c.JSON(http.StatusOK, Detail{Skill: sk, Markdown: sk.Raw})
}

func (s *Service) handleSave(c echo.Context) error {
	body, err := reqbody.Read(c.Request(), reqbody.Default)
	if err != nil {
		return jsonError(c, reqbody.Status(err), err, nil)
	}
	md := body
	if strings.HasPrefix(c.Request().Header.Get("Content-Type"), "application/json") {
		var req SaveRequest
		if err := json.Unmarshal(body, &req); err != nil {
			return jsonError(c, http.StatusBadRequest, errors.New(`the body must be {"markdown": "<the SKILL.md>"} or a text/markdown SKILL.md: `+err.Error()), nil)
		}
		md = []byte(req.Markdown)
	}
	sk, err := s.lib.Save(c.Param("name"), md)
	if err != nil {
		return errorStatus(c, err)
	}
	s.log.Info().Str("skill", sk.Name).Msg("skill saved")
	return c.JSON(http.StatusOK, Detail{Skill: sk, Markdown: sk.Raw})
}

func (s *Service) handleDelete(c echo.Context) error {
	if err := s.lib.Delete(c.Param("name")); err != nil {
		return errorStatus(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Service) handleRun(c echo.Context) error {
	var req RunRequest
	if err := reqbody.JSON(c.Request(), reqbody.Default, &req); err != nil && !errors.Is(err, reqbody.ErrEmpty) {
		return jsonError(c, reqbody.Status(err), fmt.Errorf(`the body must be {"params": {"name": "value"}, "tab": "<targetId>"}: %w`, err), nil)
	}
	res, err := s.Run(c.Request().Context(), c.Param("name"), req)
	if err != nil {
		return errorStatus(c, err)
	}
	return c.JSON(http.StatusOK, res)
}

func decodeRecord(c echo.Context) (RecordRequest, error) {
	var req RecordRequest
	if err := reqbody.JSON(c.Request(), reqbody.Default, &req); err != nil && !errors.Is(err, reqbody.ErrEmpty) {
		return req, fmt.Errorf(`the body must be {"tab": "<targetId>"} (optional): %w`, err)
	}
	return req, nil
}

func (s *Service) handleRecordStart(c echo.Context) error {
	req, err := decodeRecord(c)
	if err != nil {
		return jsonError(c, reqbody.Status(err), err, nil)
	}
	rec, err := s.StartRecording(c.Request().Context(), req.Tab)
	if err != nil {
		return errorStatus(c, err)
	}
	return c.JSON(http.StatusOK, rec)
}

func (s *Service) handleRecordStop(c echo.Context) error {
	req, err := decodeRecord(c)
	if err != nil {
		return jsonError(c, reqbody.Status(err), err, nil)
	}
	d, err := s.StopRecording(c.Request().Context(), req.Tab, req.Narration)
	if err != nil {
		return errorStatus(c, err)
	}
	return c.JSON(http.StatusOK, d)
}
