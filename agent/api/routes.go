package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/skills"
)

// Services are the parts of a running tabrelay the API serves. A part left nil keeps its
// routes, which answer 503 saying the part is not running (a test can mount one part alone).
type Services struct {
	// Agent serves tabs, snapshots, actions, screenshots, commands and tasks.
	Agent *Agent
	// Skills serves /api/skills.
	Skills *skills.Service
	// Voice serves /api/transcribe, /api/voice/status and /api/speak.
	Voice *voice.Service
	// Log receives the API's own logs (never page contents or secrets at info).
	Log zerolog.Logger
}

// Register adds every /api route to g, the relay's authenticated /api group (relay.Server.API):
// API.md beside this file lists them with their request and answer shapes, and a test keeps
// the two in step. It returns the routes that take bodies larger than the server's default
// limit (the full path as registered, e.g. /api/transcribe) with their limits, for
// relay.Server.AllowBody.
func Register(g *echo.Group, s Services) (largeBodies map[string]int64) {
	a, sk, vc := s.Agent, skillsAPI{svc: s.Skills, log: s.Log}, voiceAPI{svc: s.Voice, log: s.Log}
	agent := func(h handler) echo.HandlerFunc { return handle(running("the agent", a != nil, h)) }
	g.GET("/tabs", agent(a.getTabs))
	g.GET("/snapshot", agent(a.getSnapshot))
	g.POST("/act", agent(a.postAct))
	g.GET("/screenshot", agent(a.getScreenshot))
	g.POST("/command", agent(a.postCommand))
	g.POST("/tasks", agent(a.postTask))
	g.GET("/tasks", agent(a.listTasks))
	g.GET("/tasks/:id", agent(a.getTask))
	g.GET("/tasks/:id/events", agent(a.taskEvents))
	g.POST("/tasks/:id/cancel", agent(a.cancelTask))
	g.POST("/tasks/:id/confirm", agent(a.confirmTask))
	g.POST("/tasks/:id/answer", agent(a.answerTask))
	g.POST("/tasks/:id/continue", agent(a.continueTask))
	g.POST("/tasks/:id/skill", agent(a.taskSkill))
	g.POST("/conversation/new", agent(a.newConversation))
	g.GET("/tasks/:id/report", agent(a.taskReport))
	g.GET("/model", agent(a.getModel))
	g.PUT("/model", agent(a.putModel))
	g.POST("/model/test", agent(a.testModel))

	skill := func(h handler) echo.HandlerFunc { return handle(running("the skills service", s.Skills != nil, h)) }
	g.GET("/skills", skill(sk.list))
	g.POST("/skills/record/start", skill(sk.recordStart))
	g.POST("/skills/record/stop", skill(sk.recordStop))
	g.GET("/skills/drafts/:taskId", skill(sk.draft))
	g.GET("/skills/:name", skill(sk.get))
	g.PUT("/skills/:name", skill(sk.save))
	g.DELETE("/skills/:name", skill(sk.remove))
	g.POST("/skills/:name/run", skill(sk.run))

	speech := func(h handler) echo.HandlerFunc { return handle(running("voice", s.Voice != nil, h)) }
	rt := g.POST("/transcribe", speech(vc.transcribe))
	g.POST("/transcribe/warm", speech(vc.warm))
	g.GET("/voice/status", speech(vc.status))
	g.POST("/speak", speech(vc.speak))
	return map[string]int64{rt.Path: voice.MaxAudio}
}

// running guards the routes of a part: 503 when it is not running.
func running(part string, ok bool, h handler) handler {
	if ok {
		return h
	}
	return func(echo.Context) *httpError {
		return errorf(http.StatusServiceUnavailable, "%s is not running in this server", part)
	}
}
