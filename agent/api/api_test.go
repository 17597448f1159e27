package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tabrelay/tabrelay/agent/actions"
	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/task"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/app"
	"github.com/tabrelay/tabrelay/internal/secret"
	"github.com/tabrelay/tabrelay/relay"
	"github.com/tabrelay/tabrelay/relay/relaytest"
	"github.com/tabrelay/tabrelay/skills"
	"github.com/tabrelay/tabrelay/snapshot"
)

// documentedRoutes reads the routes API.md lists: its "### METHOD /api/path" headings.
func documentedRoutes(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile("API.md")
	if err != nil {
		t.Fatal(err)
	}
	heading := regexp.MustCompile(`^### (GET|POST|PUT|DELETE|PATCH) (/api/\S*)\s*$`)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		if m := heading.FindStringSubmatch(sc.Text()); m != nil {
			out = append(out, m[1]+" "+m[2])
		}
	}
	return out
}

// servedRoutes lists routes under /api as "METHOD /api/path/{param}".
func servedRoutes(routes []*echo.Route) []string {
	param := regexp.MustCompile(`:(\w+)`)
	var out []string
	for _, r := range routes {
		if strings.HasPrefix(r.Path, "/api/") && r.Method != echo.RouteNotFound {
			out = append(out, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
		}
	}
	return out
}

// diff reports what is in a but not in b.
func missing(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// TestAPIDocumentsEveryRoute walks the routes Register adds, and those a running server
// serves under /api, and fails when API.md misses one or lists one that does not exist.
func TestAPIDocumentsEveryRoute(t *testing.T) {
	documented := documentedRoutes(t)
	if len(documented) < 20 {
		t.Fatalf("API.md lists only %d routes: %q", len(documented), documented)
	}
	e := echo.New()
	api.Register(e.Group("/api"), api.Services{})
	registered := servedRoutes(e.Routes())
	srv, _, _ := start(t, nil)
	running := servedRoutes(srv.Routes())
	for name, routes := range map[string][]string{"Register": registered, "the running server": running} {
		if m := missing(routes, documented); len(m) > 0 {
			t.Errorf("%s serves routes API.md does not document: %q", name, m)
		}
		if m := missing(documented, routes); len(m) > 0 {
			t.Errorf("API.md documents routes %s does not serve: %q", name, m)
		}
	}
}

// start runs a whole server (relay, agent, skills, voice with env as its configuration) with a
// simulated extension connected, and returns it, its token and the extension.
func start(t *testing.T, env map[string]string) (*app.App, string, *relaytest.Extension) {
	t.Helper()
	t.Setenv("TABRELAY_LLM_PROVIDER", "")
	home := t.TempDir()
	store, err := secret.NewStore(home)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := app.Start(ctx, app.Config{
		Relay: relay.Options{Addr: "127.0.0.1:0", Secret: store},
		Agent: api.Options{Home: home},
		Voice: voice.Options{Getenv: func(k string) string { return env[k] }},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ext, err := relaytest.Dial(ctx, srv.Addr(), srv.Token(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ext.Close)
	return srv, srv.Token(), ext
}

// answer is one HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) errorBody(t *testing.T) api.ErrorBody {
	t.Helper()
	var e api.ErrorBody
	if err := json.Unmarshal(a.body, &e); err != nil || e.Error == "" {
		t.Fatalf("HTTP %d %q is not an error answer {\"error\": …}: %v", a.status, a.body, err)
	}
	return e
}

// call sends a request to the server with the token; body is sent as is with ctype.
func call(t *testing.T, base, token, method, path, ctype string, body []byte) answer {
	t.Helper()
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// TestTabsThroughTheAgentsConnection: GET /api/tabs lists the shared tabs as the agent's own
// CDP connection sees them, the most recently shared first, and requests that name no tab
// use that first tab; a tab that is not shared is a 404 naming it.
func TestTabsThroughTheAgentsConnection(t *testing.T) {
	srv, tok, ext := start(t, nil)
	base := srv.HTTPURL()
	var list api.TabList
	if a := call(t, base, tok, "GET", "/api/tabs", "", nil); a.status != 200 || json.Unmarshal(a.body, &list) != nil || list.Tabs == nil || len(list.Tabs) != 0 {
		t.Fatalf("no shared tab: HTTP %d %s, want 200 {\"tabs\":[]}", a.status, a.body)
	}
	if e := call(t, base, tok, "GET", "/api/snapshot", "", nil); e.status != 404 || !strings.Contains(e.errorBody(t).Error, "no shared tab") {
		t.Errorf("snapshot with nothing shared: HTTP %d %s", e.status, e.body)
	}
	const first, second = "AAAA1111BBBB2222CCCC3333DDDD4444", "EEEE5555FFFF6666AAAA7777BBBB8888"
	if err := ext.Share(first, "https://one.test/", "One"); err != nil {
		t.Fatal(err)
	}
	if err := ext.Share(second, "https://two.test/", "Two"); err != nil {
		t.Fatal(err)
	}
	want := []actions.TabInfo{{TargetID: second, URL: "https://two.test/", Title: "Two"}, {TargetID: first, URL: "https://one.test/", Title: "One"}}
	deadline := time.Now().Add(5 * time.Second)
	for {
		a := call(t, base, tok, "GET", "/api/tabs", "", nil)
		list = api.TabList{}
		if a.status == 200 && json.Unmarshal(a.body, &list) == nil && reflect.DeepEqual(list.Tabs, want) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /api/tabs: HTTP %d %s, want %+v", a.status, a.body, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
	a := call(t, base, tok, "GET", "/api/screenshot?tab=NOSUCHTAB", "", nil)
	if e := a.errorBody(t); a.status != 404 || e.Tab != "NOSUCHTAB" || !strings.Contains(e.Error, `"NOSUCHTAB"`) {
		t.Errorf("unknown tab: HTTP %d %s", a.status, a.body)
	}
}

// TestErrorsHaveOneShape: bad requests on every part (agent, tasks, skills, voice) answer
// {"error": …} with the status and details API.md gives, and unknown fields are refused
// everywhere.
func TestErrorsHaveOneShape(t *testing.T) {
	srv, tok, _ := start(t, nil)
	base := srv.HTTPURL()
	const js = "application/json"
	cases := []struct {
		name, method, path, ctype, body string
		status                          int
		has                             string
		check                           func(t *testing.T, e api.ErrorBody)
	}{
		{name: "act unknown field", method: "POST", path: "/api/act", ctype: js, body: `{"action":{"kind":"click","ref":"e1"},"extra":1}`, status: 400, has: `unknown field "extra"`},
		{name: "act unknown action field", method: "POST", path: "/api/act", ctype: js, body: `{"kind":"click","ref":"e1","rfe":"x"}`, status: 400, has: `unknown field "rfe"`},
		{name: "act bad kind", method: "POST", path: "/api/act", ctype: js, body: `{"kind":"fly"}`, status: 400, has: "fly",
			check: func(t *testing.T, e api.ErrorBody) {
				if !slices.Contains(e.Kinds, "click") {
					t.Errorf("kinds %q", e.Kinds)
				}
			}},
		{name: "act malformed", method: "POST", path: "/api/act", ctype: js, body: `{"kind":`, status: 400, has: "not a JSON object"},
		{name: "act csv of a click", method: "POST", path: "/api/act?format=csv", ctype: js, body: `{"kind":"click","ref":"e1"}`, status: 400, has: "format=csv answers the records of the extract action, not of click"},
		{name: "act bad format", method: "POST", path: "/api/act?format=xml", ctype: js, body: `{"kind":"extract"}`, status: 400, has: `format="xml": use json (the default) or, for extract, csv`},
		{name: "act extract bad pages", method: "POST", path: "/api/act", ctype: js, body: `{"kind":"extract","pages":-1}`, status: 400, has: "extract: pages must be between 1 and 50"},
		{name: "act empty", method: "POST", path: "/api/act", ctype: js, status: 400, has: "send a JSON object"},
		{name: "command unknown field", method: "POST", path: "/api/command", ctype: js, body: `{"txt":"click"}`, status: 400, has: `bad command: json: unknown field "txt"`},
		{name: "command wrong type", method: "POST", path: "/api/command", ctype: js, body: `{"text":"scroll down","wait":"no"}`, status: 400, has: "bad command"},
		{name: "command two values", method: "POST", path: "/api/command", ctype: js, body: `{"text":"a"} {"text":"b"}`, status: 400, has: "one JSON object"},
		{name: "task unknown field", method: "POST", path: "/api/tasks", ctype: js, body: `{"goal":"x","tabId":"t"}`, status: 400, has: `unknown field "tabId"`},
		{name: "task without model", method: "POST", path: "/api/tasks", ctype: js, body: `{"goal":"buy a kettle"}`, status: 404, has: "no shared tab"},
		{name: "unknown task", method: "GET", path: "/api/tasks/nosuchtask", status: 404, has: `"nosuchtask"`,
			check: func(t *testing.T, e api.ErrorBody) {
				if e.Task != "nosuchtask" {
					t.Errorf("task %q", e.Task)
				}
			}},
		{name: "confirm unknown task", method: "POST", path: "/api/tasks/nosuchtask/confirm", ctype: js, body: `{"stepId":"s1","approve":true}`, status: 404, has: "nosuchtask"},
		{name: "bad paging", method: "GET", path: "/api/tasks?limit=0", status: 400, has: "limit"},
		{name: "skill unknown", method: "GET", path: "/api/skills/nope", status: 404, has: "skill not found"},
		{name: "skill run unknown field", method: "POST", path: "/api/skills/site-search/run", ctype: js, body: `{"parms":{}}`, status: 400, has: `unknown field "parms"`},
		{name: "skill run missing parameter", method: "POST", path: "/api/skills/site-search/run", ctype: js, body: `{"params":{}}`, status: 400, has: "query",
			check: func(t *testing.T, e api.ErrorBody) {
				if !slices.Contains(e.Missing, "query") || len(e.Parameters) == 0 || e.Skill != "site-search" {
					t.Errorf("missing %q, parameters %+v, skill %q", e.Missing, e.Parameters, e.Skill)
				}
			}},
		{name: "skill run wrong type", method: "POST", path: "/api/skills/site-search/run", ctype: js, body: `{"params":[1]}`, status: 400, has: "bad skill run"},
		{name: "skill save wrong type", method: "PUT", path: "/api/skills/x", ctype: js, body: `{"markdown":5}`, status: 400, has: "bad skill"},
		{name: "skill save invalid", method: "PUT", path: "/api/skills/x", ctype: "text/markdown", body: "---\nname: x\n---\n", status: 422, has: "description",
			check: func(t *testing.T, e api.ErrorBody) {
				if e.Line != 2 || e.Reason == "" || e.File == "" {
					t.Errorf("file %q line %d reason %q", e.File, e.Line, e.Reason)
				}
			}},
		{name: "skill delete bundled", method: "DELETE", path: "/api/skills/site-search", status: 403, has: "bundled"},
		{name: "record start unknown field", method: "POST", path: "/api/skills/record/start", ctype: js, body: `{"tabs":"x"}`, status: 400, has: `unknown field "tabs"`},
		{name: "record stop nothing recording", method: "POST", path: "/api/skills/record/stop", ctype: js, body: `{"tab":"t9"}`, status: 409, has: "no recording"},
		{name: "draft unknown", method: "GET", path: "/api/skills/drafts/nosuchtask", status: 404, has: "nosuchtask"},
		{name: "speak unknown field", method: "POST", path: "/api/speak", ctype: js, body: `{"txt":"hi"}`, status: 400, has: `unknown field "txt"`},
		{name: "speak nothing", method: "POST", path: "/api/speak", ctype: js, body: `{"text":"  "}`, status: 400, has: "nothing to say"},
		{name: "transcribe no audio", method: "POST", path: "/api/transcribe", ctype: "audio/wav", status: 400, has: "no audio"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, base, tok, c.method, c.path, c.ctype, []byte(c.body))
			e := a.errorBody(t)
			if a.status != c.status || !strings.Contains(e.Error, c.has) {
				t.Fatalf("HTTP %d %s; want %d with %q", a.status, a.body, c.status, c.has)
			}
			if ct := a.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if c.check != nil {
				c.check(t, e)
			}
		})
	}
}

// TestSkillsRoutes: a skill saved over HTTP is listed, read (JSON and markdown), ranked and
// deleted; an unrunnable route answers with the skills service's errors.
func TestSkillsRoutes(t *testing.T) {
	srv, tok, _ := start(t, nil)
	base := srv.HTTPURL()
	md := "---\nname: say-hi\ndescription: Say hi in the greeting field.\nsites: [\"greet.test\"]\n---\n```steps\n- do: type\n  target: textbox \"Greeting\"\n  text: hi\n```\n"
	body, _ := json.Marshal(api.SkillSave{Markdown: md})
	a := call(t, base, tok, "PUT", "/api/skills/say-hi", "application/json", body)
	var d api.SkillDetail
	if a.status != 200 || json.Unmarshal(a.body, &d) != nil || d.Skill.Name != "say-hi" || d.Markdown != md {
		t.Fatalf("save: HTTP %d %s", a.status, a.body)
	}
	var list api.SkillList
	a = call(t, base, tok, "GET", "/api/skills?q=say+hi&url=https://greet.test/", "", nil)
	if a.status != 200 || json.Unmarshal(a.body, &list) != nil || len(list.Skills) == 0 || list.Skills[0].Name != "say-hi" || list.Skills[0].Steps != 1 || list.Problems == nil {
		t.Fatalf("ranked list: HTTP %d %s", a.status, a.body)
	}
	a = call(t, base, tok, "GET", "/api/skills/say-hi", "", nil)
	if a.status != 200 || !bytes.Contains(a.body, []byte(`"markdown"`)) {
		t.Fatalf("get: HTTP %d %s", a.status, a.body)
	}
	req, _ := http.NewRequest("GET", base+"/api/skills/say-hi", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", "text/markdown")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(raw) != md || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/markdown") {
		t.Fatalf("get as markdown: HTTP %d %s", resp.StatusCode, raw)
	}
	if a = call(t, base, tok, "DELETE", "/api/skills/say-hi", "", nil); a.status != 204 {
		t.Fatalf("delete: HTTP %d %s", a.status, a.body)
	}
	if a = call(t, base, tok, "GET", "/api/skills/say-hi", "", nil); a.status != 404 {
		t.Fatalf("deleted skill: HTTP %d %s", a.status, a.body)
	}
}

// fakeSpeech speaks the OpenAI audio protocol (/audio/transcriptions, /audio/speech) and
// records what it was sent; fail makes every answer an error.
func fakeSpeech(t *testing.T, text string, fail bool) (*httptest.Server, *[]string) {
	t.Helper()
	var seen []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail {
			w.WriteHeader(500)
			_, _ = io.WriteString(w, `{"error":{"message":"the model is overloaded"}}`)
			return
		}
		switch r.URL.Path {
		case "/v1/audio/transcriptions":
			if err := r.ParseMultipartForm(1 << 20); err != nil {
				w.WriteHeader(400)
				return
			}
			f, h, err := r.FormFile("file")
			if err != nil {
				w.WriteHeader(400)
				return
			}
			data, _ := io.ReadAll(f)
			seen = append(seen, "type="+h.Header.Get("Content-Type"), "prompt="+r.FormValue("prompt"), "bytes="+strings.Repeat("x", min(len(data), 1)))
			_ = json.NewEncoder(w).Encode(map[string]string{"text": text})
		case "/v1/audio/speech":
			var req map[string]any
			_ = json.NewDecoder(r.Body).Decode(&req)
			seen = append(seen, "input="+req["input"].(string))
			w.Header().Set("Content-Type", "audio/wav")
			_, _ = w.Write(voice.EncodeWAV(voice.PCM{Rate: 24000, Samples: make([]int16, 240)}))
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(hs.Close)
	return hs, &seen
}

// TestVoiceRoutes: transcription from a raw body and from a multipart form (hints from the
// query and the form), speech, status and warm-up, through the cloud engines; a failing
// endpoint is a 502, no engine at all a 503 with advice.
func TestVoiceRoutes(t *testing.T) {
	speech, seen := fakeSpeech(t, " Click sign in. ", false)
	env := map[string]string{voice.EnvSTTBaseURL: speech.URL + "/v1", voice.EnvSTTEngine: "cloud", voice.EnvTTSBaseURL: speech.URL + "/v1"}
	srv, tok, _ := start(t, env)
	base := srv.HTTPURL()
	audio := voice.EncodeWAV(voice.PCM{Rate: 16000, Samples: make([]int16, 8000)})

	a := call(t, base, tok, "POST", "/api/transcribe?hints=Sign+in,Register&page=false", "audio/wav", audio)
	var r voice.Result
	if a.status != 200 || json.Unmarshal(a.body, &r) != nil || r.Text != "Click sign in." || r.Engine != "openai-compatible" {
		t.Fatalf("raw body: HTTP %d %s", a.status, a.body)
	}
	if got := strings.Join(*seen, " "); got != "type=audio/wav prompt=Sign in, Register bytes=x" {
		t.Errorf("the endpoint got %q", got)
	}
	*seen = nil
	var mb bytes.Buffer
	mw := multipart.NewWriter(&mb)
	fw, _ := mw.CreateFormFile("file", "speech.wav")
	_, _ = fw.Write(audio)
	_ = mw.WriteField("hints", `["Kettle","Cart"]`)
	_ = mw.Close()
	a = call(t, base, tok, "POST", "/api/transcribe?hints=Basket&page=false", mw.FormDataContentType(), mb.Bytes())
	if a.status != 200 || json.Unmarshal(a.body, &r) != nil || r.Text != "Click sign in." {
		t.Fatalf("multipart: HTTP %d %s", a.status, a.body)
	}
	if got := strings.Join(*seen, " "); got != "type=audio/wav prompt=Basket, Kettle, Cart bytes=x" {
		t.Errorf("the endpoint got %q", got)
	}

	// a waiting question's choices (the panel sends the task's state with them) come first
	*seen = nil
	a = call(t, base, tok, "POST", "/api/transcribe?state=waiting_input&choices=Home,Work&hints=Basket&page=false", "audio/wav", audio)
	if a.status != 200 {
		t.Fatalf("with a question's choices: HTTP %d %s", a.status, a.body)
	}
	if got := strings.Join(*seen, " "); got != "type=audio/wav prompt=Home, Work, Basket bytes=x" {
		t.Errorf("the endpoint got %q", got)
	}

	a = call(t, base, tok, "POST", "/api/speak", "application/json", []byte(`{"text":"Your order is placed."}`))
	if a.status != 200 || a.header.Get("X-Tabrelay-Voice") != "openai-compatible" || !voice.IsWAV(a.body) {
		t.Fatalf("speak: HTTP %d %s", a.status, a.header)
	}
	var st voice.Status
	if a = call(t, base, tok, "GET", "/api/voice/status", "", nil); a.status != 200 || json.Unmarshal(a.body, &st) != nil || st.STT.Engine != "openai-compatible" {
		t.Fatalf("status: HTTP %d %s", a.status, a.body)
	}
	if a = call(t, base, tok, "POST", "/api/transcribe/warm", "", nil); a.status != 204 {
		t.Fatalf("warm: HTTP %d %s", a.status, a.body)
	}

	// without the offline engines on PATH, nothing hides a failing endpoint
	t.Setenv("PATH", t.TempDir())
	broken, _ := fakeSpeech(t, "", true)
	bsrv, btok, _ := start(t, map[string]string{voice.EnvSTTBaseURL: broken.URL + "/v1", voice.EnvSTTEngine: "cloud"})
	a = call(t, bsrv.HTTPURL(), btok, "POST", "/api/transcribe?page=false", "audio/wav", audio)
	if e := a.errorBody(t); a.status != 502 || !strings.Contains(e.Error, "overloaded") {
		t.Fatalf("failing endpoint: HTTP %d %s, want 502", a.status, a.body)
	}
	off, otok, _ := start(t, map[string]string{voice.EnvSTTEngine: "off"})
	a = call(t, off.HTTPURL(), otok, "POST", "/api/transcribe", "audio/wav", audio)
	if e := a.errorBody(t); a.status != 503 || e.Advice == "" {
		t.Fatalf("no engine: HTTP %d %s, want 503 with advice", a.status, a.body)
	}
}

// TestAnswersAreCamelCase walks the JSON shapes of every answer and fails on a key that is
// not camelCase (or an exported field without a json name).
func TestAnswersAreCamelCase(t *testing.T) {
	camel := regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	seen := map[reflect.Type]bool{}
	var walk func(path string, ty reflect.Type)
	walk = func(path string, ty reflect.Type) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Array || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] || ty.PkgPath() == "time" {
			return
		}
		seen[ty] = true
		for i := range ty.NumField() {
			f := ty.Field(i)
			tag := f.Tag.Get("json")
			if !f.IsExported() || tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				walk(path, f.Type)
				continue
			}
			if !camel.MatchString(name) {
				t.Errorf("%s.%s answers as %q, not camelCase", path, f.Name, name)
			}
			walk(path+"."+name, f.Type)
		}
	}
	for _, v := range []any{
		api.ErrorBody{}, api.TabList{}, api.CommandResponse{}, api.TaskStarted{}, api.TaskList{}, api.Confirmed{},
		api.SkillList{}, api.SkillDetail{}, task.Task{}, task.Event{}, actions.Result{}, snapshot.Snapshot{},
		skills.RunResult{}, skills.Recording{}, skills.Draft{}, skills.RunDraft{}, voice.Result{}, voice.Status{}, task.RecordTable{},
	} {
		ty := reflect.TypeOf(v)
		walk(ty.String(), ty)
	}
}

// TestTaskEventsWireFormat: the event stream of a task that has already ended is one
// `id: 1`, `event: task` message whose data is the whole task, and then the stream ends — the
// format API.md documents, read back byte for byte.
func TestTaskEventsWireFormat(t *testing.T) {
	srv, tok, _ := start(t, nil)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	done := &task.Task{ID: "t-done", Goal: "read the kettle's price", Status: task.StatusSucceeded, Answer: "£20\nand free delivery", CreatedAt: now, UpdatedAt: now}
	if err := srv.Agent.Store().SaveTask(ctx, done); err != nil {
		t.Fatal(err)
	}
	a := call(t, srv.HTTPURL(), tok, http.MethodGet, "/api/tasks/t-done/events", "", nil)
	if a.status != http.StatusOK || a.header.Get("Content-Type") != "text/event-stream" || a.header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("HTTP %d %v: %s", a.status, a.header, a.body)
	}
	got, err := srv.Agent.Store().GetTask(ctx, "t-done")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if want := "id: 1\nevent: task\ndata: " + string(data) + "\n\n"; string(a.body) != want {
		t.Fatalf("stream\n%q\nwant\n%q", a.body, want)
	}
}
