package api

import (
	"mime"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/internal/reqbody"
	"github.com/tabrelay/tabrelay/skills"
)

// SkillSummary is a skill as listed by GET /api/skills.
type SkillSummary struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Kind        string         `json:"kind"`
	Sites       []string       `json:"sites,omitempty"`
	Parameters  []skills.Param `json:"parameters,omitempty"`
	Steps       int            `json:"steps"`
	Bundled     bool           `json:"bundled"`
	Source      string         `json:"source,omitempty"`
	// Score and Named are set when the list was ranked for a request (?q=…&url=…).
	Score float64 `json:"score,omitempty"`
	Named bool    `json:"named,omitempty"`
}

func summarize(s *skills.Skill) SkillSummary {
	return SkillSummary{Name: s.Name, Description: s.Description, Kind: s.Kind, Sites: s.Sites, Parameters: s.Parameters,
		Steps: len(s.Steps), Bundled: s.Bundled, Source: s.Source}
}

// SkillList is the answer of GET /api/skills.
type SkillList struct {
	Skills []SkillSummary `json:"skills"`
	// Problems are skill files that could not be loaded (file:line: reason).
	Problems []*skills.ParseError `json:"problems"`
}

// SkillDetail is the answer of GET /api/skills/{name} and PUT /api/skills/{name}.
type SkillDetail struct {
	Skill    *skills.Skill `json:"skill"`
	Markdown string        `json:"markdown"`
}

// SkillSave is the JSON body of PUT /api/skills/{name} (a text/markdown body works too).
type SkillSave struct {
	Markdown string `json:"markdown"`
}

// RecordRequest is the body of POST /api/skills/record/start and /stop.
type RecordRequest struct {
	Tab string `json:"tab,omitempty"`
	// Narration is what the user said or typed while showing (stop only).
	Narration string `json:"narration,omitempty"`
}

// skillsAPI serves the skills service under /api/skills.
type skillsAPI struct {
	svc *skills.Service
	log zerolog.Logger
}

func (s skillsAPI) list(c echo.Context) *httpError {
	lib := s.svc.Library()
	out := SkillList{Skills: []SkillSummary{}, Problems: lib.Problems()}
	q, u := c.QueryParam("q"), c.QueryParam("url")
	if q != "" || u != "" {
		for _, m := range s.svc.Find(q, u) {
			sum := summarize(m.Skill)
			sum.Score, sum.Named = m.Score, m.Named
			out.Skills = append(out.Skills, sum)
		}
	} else {
		for _, sk := range lib.List() {
			out.Skills = append(out.Skills, summarize(sk))
		}
	}
	if out.Problems == nil {
		out.Problems = []*skills.ParseError{}
	}
	return jsonOK(c, http.StatusOK, out)
}

func (s skillsAPI) draft(c echo.Context) *httpError {
	id := c.Param("taskId")
	d, ok := s.svc.Draft(id)
	if !ok {
		he := errorf(http.StatusNotFound, "task %q offered no updated skill (or it is no longer kept: only the latest runs' are)", id)
		he.body.Task = id
		return he
	}
	return jsonOK(c, http.StatusOK, d)
}

func (s skillsAPI) get(c echo.Context) *httpError {
	sk, err := s.svc.Library().Get(c.Param("name"))
	if err != nil {
		return skillError(err, "", http.StatusBadRequest)
	}
	if strings.Contains(c.Request().Header.Get("Accept"), "text/markdown") {
		return blobOK(c, "text/markdown; charset=utf-8", []byte(sk.Raw))
	}
	return jsonOK(c, http.StatusOK, SkillDetail{Skill: sk, Markdown: sk.Raw})
}

// saveExample is shown when a PUT /api/skills/{name} body is not usable.
const saveExample = `{"markdown": "<the SKILL.md>"} or the SKILL.md itself as text/markdown`

func (s skillsAPI) save(c echo.Context) *httpError {
	var md []byte
	if ct, _, _ := mime.ParseMediaType(c.Request().Header.Get("Content-Type")); ct == "application/json" {
		var req SkillSave
		if he := decode(c, reqbody.Default, &req, "skill", saveExample, false); he != nil {
			return he
		}
		md = []byte(req.Markdown)
	} else {
		body, err := reqbody.Read(c.Request(), reqbody.Default)
		if err != nil {
			return errorf(reqbody.Status(err), "%v; send %s", err, saveExample)
		}
		md = body
	}
	sk, err := s.svc.Library().Save(c.Param("name"), md)
	if err != nil {
		return skillError(err, "", http.StatusBadRequest)
	}
	s.log.Info().Str("skill", sk.Name).Msg("skill saved")
	return jsonOK(c, http.StatusOK, SkillDetail{Skill: sk, Markdown: sk.Raw})
}

func (s skillsAPI) remove(c echo.Context) *httpError {
	if err := s.svc.Library().Delete(c.Param("name")); err != nil {
		return skillError(err, "", http.StatusBadRequest)
	}
	if err := c.NoContent(http.StatusNoContent); err != nil {
		return errorf(http.StatusInternalServerError, "writing the answer: %v", err)
	}
	return nil
}

func (s skillsAPI) run(c echo.Context) *httpError {
	var req skills.RunRequest
	const example = `{"params": {"name": "value"}, "tab": "<targetId>", "approve": false}`
	if he := decode(c, reqbody.Default, &req, "skill run", example, true); he != nil {
		return he
	}
	// nobody answers a confirmation during this call: a held step fails the run at once with
	// the gate's "needs the user's confirmation" (approve beforehand with "approve": true)
	res, err := s.svc.Run(skills.WithoutAsking(c.Request().Context()), c.Param("name"), req)
	if err != nil {
		return skillError(err, req.Tab, http.StatusBadRequest)
	}
	return jsonOK(c, http.StatusOK, res)
}

// recordExample is shown when a recording request's body is not usable.
const recordExample = `{"tab": "<targetId>"} (optional; stop also takes "narration")`

func (s skillsAPI) recordStart(c echo.Context) *httpError {
	var req RecordRequest
	if he := decode(c, reqbody.Default, &req, "recording request", recordExample, true); he != nil {
		return he
	}
	rec, err := s.svc.StartRecording(c.Request().Context(), req.Tab)
	if err != nil {
		return skillError(err, req.Tab, http.StatusBadRequest)
	}
	return jsonOK(c, http.StatusOK, rec)
}

func (s skillsAPI) recordStop(c echo.Context) *httpError {
	var req RecordRequest
	if he := decode(c, reqbody.Default, &req, "recording request", recordExample, true); he != nil {
		return he
	}
	d, err := s.svc.StopRecording(c.Request().Context(), req.Tab, req.Narration)
	if err != nil {
		return skillError(err, req.Tab, http.StatusBadRequest)
	}
	return jsonOK(c, http.StatusOK, d)
}
