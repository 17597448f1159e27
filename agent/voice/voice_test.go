package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/pagetest"
)

// requireTools fails (skips under -short) when an external program is missing.
func requireTools(t *testing.T, names ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs " + strings.Join(names, ", ") + " (skipped with -short)")
	}
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Fatalf("this test needs %s: `go tool task setup` installs it (Debian: apt-get install flite pocketsphinx pocketsphinx-en-us ffmpeg) (%v)", n, err)
		}
	}
}

// say makes a WAV of text with flite's slt voice.
func say(t *testing.T, text string) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "say.wav")
	if b, err := exec.Command("flite", "-voice", "slt", "-t", text, "-o", out).CombinedOutput(); err != nil {
		t.Fatalf("flite: %v %s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestWAVRoundTripAndResample(t *testing.T) {
	in := PCM{Rate: 48000, Samples: make([]int16, 48000)}
	for i := range in.Samples {
		in.Samples[i] = int16((i % 100) * 100)
	}
	got, err := ParseWAV(EncodeWAV(in))
	if err != nil || got.Rate != 48000 || len(got.Samples) != 48000 || got.Samples[55] != in.Samples[55] {
		t.Fatalf("round trip: rate %d, %d samples, err %v", got.Rate, len(got.Samples), err)
	}
	r := Resample(got, SampleRate)
	if r.Rate != SampleRate || len(r.Samples) != 16000 {
		t.Fatalf("resample to 16 kHz: rate %d, %d samples", r.Rate, len(r.Samples))
	}
	if _, err := ParseWAV([]byte("RIFF....WAVEdata")); err == nil {
		t.Error("a WAV without fmt chunk parsed")
	}
	if _, err := Decode(context.Background(), []byte("not audio"), "audio/x-unknown"); err == nil {
		t.Error("garbage decoded")
	}
	// stereo float32
	var b bytes.Buffer
	b.WriteString("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x03\x00\x02\x00\x80\x3e\x00\x00\x00\xfa\x00\x00\x08\x00\x20\x00data\x08\x00\x00\x00")
	b.Write([]byte{0, 0, 0, 0x3f, 0, 0, 0, 0x3f}) // 0.5, 0.5
	p, err := ParseWAV(b.Bytes())
	if err != nil || len(p.Samples) != 1 || p.Samples[0] < 16000 || p.Samples[0] > 16500 {
		t.Fatalf("float stereo WAV: %+v %v", p, err)
	}
}

func TestTrimSilence(t *testing.T) {
	p := PCM{Rate: 16000, Samples: make([]int16, 48000)}
	for i := 16000; i < 32000; i++ {
		p.Samples[i] = int16(8000 * ((i/20)%2*2 - 1))
	}
	s := TrimSilence(p)
	if d := s.Seconds(); d < 1.0 || d > 1.5 {
		t.Fatalf("speech of 1 s between silences trimmed to %.2f s", d)
	}
	if got := TrimSilence(PCM{Rate: 16000, Samples: make([]int16, 16000)}); len(got.Samples) != 0 {
		t.Fatalf("silence kept %d samples", len(got.Samples))
	}
}

func TestGrammar(t *testing.T) {
	E, ref := pagetest.El, func(r string) pagetest.Ref { return pagetest.Ref(r) }
	snap := pagetest.Page("https://shop.test/", "Order", E("heading", "Order", "level=1"), E("button", "Submit", ref("e1")),
		E("link", "Sign in", ref("e2")), E("textbox", "E-mail", ref("e3")), E("button", "Xyzzyqq", ref("e4")),
		E("button", "Submit", ref("e5")), pagetest.Text("Submit your order"))
	names := ControlNames(snap)
	if strings.Join(names, "|") != "Submit|Sign in|E-mail|Xyzzyqq" {
		t.Fatalf("control names: %q", names)
	}
	dict := Dictionary{}
	for _, w := range strings.Fields("please the submit sign in e mail click press tap push select choose open follow hover over on check uncheck activate button link tab box scroll up down go back") {
		dict[w] = true
	}
	g := BuildGrammar(names, nil, dict)
	if strings.Join(g.Names, "|") != "submit|sign in|e mail" {
		t.Errorf("grammar names (out-of-dictionary left out): %q", g.Names)
	}
	for _, want := range []string{"public <command> = [please] (<verb> [the] <name> [<role>] | <fixed>) [please];", "<name> = e mail | sign in | submit;", "scroll up | scroll down", "click on"} {
		if !strings.Contains(g.JSGF, want) {
			t.Errorf("grammar lacks %q:\n%s", want, g.JSGF)
		}
	}
	if strings.Contains(g.JSGF, "xyzzyqq") || strings.Contains(g.JSGF, "reload") {
		t.Errorf("grammar has words outside the dictionary:\n%s", g.JSGF)
	}
	if s := similarity("click sign in", "click signing"); s < 0.8 {
		t.Errorf("similar readings scored %.2f", s)
	}
	if s := similarity("open the cancel button", "find the cheapest can on this side"); s > 0.5 {
		t.Errorf("different readings scored %.2f", s)
	}
}

// TestGrammarAnswers: what a waiting task takes joins the grammar, said alone: the
// confirmation words, a question's choices (and their positions), "continue" / "done".
func TestGrammarAnswers(t *testing.T) {
	for _, c := range []struct {
		wait      Wait
		want, not []string
	}{
		{Wait{Awaiting: AwaitingConfirmation}, []string{"yes", "approve", "no", "cancel", "okay"}, []string{"continue", "first"}},
		{Wait{Awaiting: AwaitingInput, Choices: []string{"Home", "Work", "P.O. Box"}}, []string{"home", "work", "p o box", "the second one", "third", "cancel"}, []string{"yes", "fourth", "continue"}},
		{Wait{Awaiting: AwaitingInput}, []string{"cancel"}, []string{"yes", "first"}},
		{Wait{Awaiting: AwaitingUser}, []string{"continue", "done", "i'm done", "cancel"}, []string{"yes", "no"}},
		{Wait{Awaiting: "running"}, nil, []string{"yes", "continue", "cancel"}},
		{Wait{}, nil, []string{"yes"}},
	} {
		g := BuildGrammar([]string{"Submit"}, c.wait.AnswerPhrases(), nil)
		if !strings.Contains(g.JSGF, "<fixed> = ") || !strings.Contains(g.JSGF, "| stop;") {
			t.Errorf("%+v: the commands (with stop) are gone:\n%s", c.wait, g.JSGF)
		}
		for _, w := range c.want {
			if !slices.Contains(g.Answers, w) {
				t.Errorf("%+v: %q is not an answer: %q", c.wait, w, g.Answers)
			}
		}
		for _, w := range c.not {
			if slices.Contains(g.Answers, w) {
				t.Errorf("%+v: %q is an answer: %q", c.wait, w, g.Answers)
			}
		}
		if len(c.want) > 0 && !strings.Contains(g.JSGF, "| <answer>) [please];") {
			t.Errorf("%+v: answers are not said alone:\n%s", c.wait, g.JSGF)
		}
		if len(c.want) == 0 && strings.Contains(g.JSGF, "<answer>") {
			t.Errorf("%+v: answers without a wait:\n%s", c.wait, g.JSGF)
		}
	}
	// words the dictionary lacks are left out of the answers too
	g := BuildGrammar(nil, Wait{Awaiting: AwaitingInput, Choices: []string{"Home", "Xyzzyqq"}}.AnswerPhrases(), Dictionary{"home": true, "first": true, "second": true})
	if strings.Join(g.Answers, "|") != "home|first|second" {
		t.Errorf("answers within the dictionary: %q\n%s", g.Answers, g.JSGF)
	}
}

// TestOfflineAnswers: flite speaks one-word answers; with the task's wait in the request the
// offline engine hears them (a choice's name alone, "done"), a confirmation only when both
// readings agree, and a free-form request during a question keeps the general reading.
func TestOfflineAnswers(t *testing.T) {
	requireTools(t, "flite", "pocketsphinx_continuous")
	s := New(Options{Getenv: env(nil)})
	choices := []string{"Home", "Work"}
	for _, c := range []struct {
		wait    Wait
		say     string
		want    string // "" : anything but a grammar answer the general model disagrees with
		grammar bool
	}{
		{Wait{Awaiting: AwaitingConfirmation}, "yes", "yes", true},
		{Wait{Awaiting: AwaitingConfirmation}, "approve", "", false},
		{Wait{Awaiting: "running"}, "stop", "stop", true},
		{Wait{Awaiting: AwaitingUser}, "done", "done", true},
		{Wait{Awaiting: AwaitingInput, Choices: choices}, "work", "work", true},
		{Wait{Awaiting: AwaitingInput, Choices: choices}, "find me the cheapest kettle on this site", "", false},
	} {
		r, err := s.Transcribe(context.Background(), Request{Audio: say(t, c.say), MIME: "audio/wav", NoPage: true, Wait: c.wait})
		if err != nil {
			t.Fatalf("%q while %s: %v", c.say, c.wait.Awaiting, err)
		}
		t.Logf("%q while %s %v: %q (grammar %v, general %q) in %d ms", c.say, c.wait.Awaiting, c.wait.Choices, r.Text, r.Grammar, r.General, r.ElapsedMS)
		if c.want != "" && (r.Text != c.want || r.Grammar != c.grammar) {
			t.Errorf("%q while %s: heard %q (grammar %v), want %q (grammar %v)", c.say, c.wait.Awaiting, r.Text, r.Grammar, c.want, c.grammar)
		}
		if c.wait.Awaiting == AwaitingConfirmation && r.Grammar && similarity(r.Text, r.General) < 0.6 {
			t.Errorf("a confirmation answer %q stood against the general reading %q", r.Text, r.General)
		}
		if c.want == "" && !c.grammar && r.Grammar && c.wait.Awaiting == AwaitingInput {
			t.Errorf("the free-form request became the answer %q", r.Text)
		}
	}
}

// TestOfflineTranscribe: flite speaks, pocketsphinx hears; the page's control names make the
// short command exact, and a free-form request keeps the general model's reading.
func TestOfflineTranscribe(t *testing.T) {
	requireTools(t, "flite", "pocketsphinx_continuous")
	snap := pagetest.Page("https://app.test/", "App", pagetest.El("button", "Submit", pagetest.Ref("e1")),
		pagetest.El("button", "Cancel", pagetest.Ref("e2")), pagetest.El("link", "Sign in", pagetest.Ref("e3")))
	var asked string
	s := New(Options{Getenv: env(nil), Snapshot: func(_ context.Context, tab string) (*snapshot.Snapshot, error) {
		asked = tab
		return snap, nil
	}})
	ctx := context.Background()
	r, err := s.Transcribe(ctx, Request{Audio: say(t, "click the submit button"), MIME: "audio/wav", Tab: "T1"})
	if err != nil || r.Text != "click the submit button" || r.Engine != "pocketsphinx" || !r.Grammar || asked != "T1" {
		t.Fatalf("command: %+v %v (snapshot asked for %q)", r, err, asked)
	}
	t.Logf("offline command: %q in %d ms (%.2f s of audio)", r.Text, r.ElapsedMS, r.AudioSeconds)
	// warmed up when the microphone opens (the panel does): the general model loads while the
	// user speaks, the same reading comes sooner
	cold := r.ElapsedMS
	if err := s.Warm(); err != nil {
		t.Fatalf("warm: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // the user speaks
	r, err = s.Transcribe(ctx, Request{Audio: say(t, "click the submit button"), MIME: "audio/wav", Tab: "T1"})
	if err != nil || r.Text != "click the submit button" || !r.Grammar || (runtime.GOOS == "linux" && !r.Warm) {
		t.Fatalf("warm command: %+v %v", r, err)
	}
	t.Logf("offline command, warmed up: %q in %d ms (cold: %d ms)", r.Text, r.ElapsedMS, cold)
	r, err = s.Transcribe(ctx, Request{Audio: say(t, "find me the cheapest kettle on this site"), MIME: "audio/wav", NoPage: true})
	if err != nil || r.Grammar || !strings.Contains(r.Text, "cheapest") {
		t.Fatalf("free-form request: %+v %v", r, err)
	}
	// silence: nothing said, no error
	r, err = s.Transcribe(ctx, Request{Audio: EncodeWAV(PCM{Rate: 16000, Samples: make([]int16, 16000)}), MIME: "audio/wav"})
	if err != nil || r.Text != "" {
		t.Fatalf("silence: %+v %v", r, err)
	}
	// WebM/Opus as the panel records it, decoded with ffmpeg, with the panel's hints
	requireTools(t, "ffmpeg")
	dir := t.TempDir()
	wav, webm := filepath.Join(dir, "in.wav"), filepath.Join(dir, "out.webm")
	_ = os.WriteFile(wav, say(t, "click sign in"), 0o600)
	if out, err := exec.Command("ffmpeg", "-loglevel", "error", "-i", wav, "-ar", "48000", "-c:a", "libopus", webm).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg encode: %v %s", err, out)
	}
	data, _ := os.ReadFile(webm)
	r, err = s.Transcribe(ctx, Request{Audio: data, MIME: "audio/webm", Hints: []string{"Sign in", "Register"}, NoPage: true})
	if err != nil || r.Text != "click sign in" || !r.Grammar {
		t.Fatalf("webm/opus: %+v %v", r, err)
	}
}

// fakeOpenAI speaks the OpenAI audio protocol: /audio/transcriptions (multipart) and
// /audio/speech (JSON → audio).
func fakeOpenAI(t *testing.T, text string, fail bool) (*httptest.Server, *[]string) {
	var seen []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			w.WriteHeader(401)
			_, _ = io.WriteString(w, `{"error":{"message":"Incorrect API key provided"}}`)
			return
		}
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
				_, _ = io.WriteString(w, `{"error":{"message":"file is required"}}`)
				return
			}
			data, _ := io.ReadAll(f)
			seen = append(seen, "file="+h.Filename, "type="+h.Header.Get("Content-Type"), "model="+r.FormValue("model"), "prompt="+r.FormValue("prompt"), "bytes="+itoa(len(data)))
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"text": text})
		case "/v1/audio/speech":
			var req map[string]any
			_ = json.NewDecoder(r.Body).Decode(&req)
			seen = append(seen, "input="+req["input"].(string), "voice="+req["voice"].(string), "model="+req["model"].(string))
			w.Header().Set("Content-Type", "audio/wav")
			_, _ = w.Write(EncodeWAV(PCM{Rate: 24000, Samples: make([]int16, 2400)}))
		default:
			w.WriteHeader(404)
		}
	}))
	t.Cleanup(hs.Close)
	return hs, &seen
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestCloudTranscribe: the OpenAI-compatible path sends the recording as multipart with the
// model and the hints as prompt, and reads {"text"}; a failing endpoint says so.
func TestCloudTranscribe(t *testing.T) {
	api, seen := fakeOpenAI(t, " Add the kettle to my cart. ", false)
	s := New(Options{Getenv: env(map[string]string{EnvSTTBaseURL: api.URL + "/v1", EnvSTTModel: "whisper-large-v3", EnvSTTAPIKey: "sk-test", EnvSTTEngine: "cloud"})})
	st := s.Status()
	if st.STT.Engine != "openai-compatible" || !strings.Contains(st.STT.Detail, "whisper-large-v3") || strings.Contains(st.STT.Detail, "sk-test") {
		t.Fatalf("status: %+v", st.STT)
	}
	audio := EncodeWAV(PCM{Rate: 16000, Samples: make([]int16, 8000)})
	r, err := s.Transcribe(context.Background(), Request{Audio: audio, MIME: "audio/wav", Hints: []string{"Kettle", "Cart"}})
	if err != nil || r.Text != "Add the kettle to my cart." || r.Engine != "openai-compatible" || r.AudioSeconds != 0.5 {
		t.Fatalf("cloud transcription: %+v %v", r, err)
	}
	want := []string{"file=speech.wav", "type=audio/wav", "model=whisper-large-v3", "prompt=Kettle, Cart", "bytes=" + itoa(len(audio))}
	if strings.Join(*seen, " ") != strings.Join(want, " ") {
		t.Fatalf("the endpoint got %q, want %q", *seen, want)
	}

	// wrong key, no offline engine allowed to hide it: 502 with the endpoint's message
	bad := New(Options{Getenv: env(map[string]string{EnvSTTBaseURL: api.URL + "/v1", EnvSTTAPIKey: "sk-wrong"})})
	bad.sphinx = nil
	_, err = bad.Transcribe(context.Background(), Request{Audio: audio, MIME: "audio/wav"})
	var ee *EndpointError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "HTTP 401: Incorrect API key provided") {
		t.Fatalf("wrong key: %v", err)
	}
}

// TestCloudFallsBackOffline: a failing endpoint does not leave the user without voice when
// pocketsphinx is installed; the answer says why.
func TestCloudFallsBackOffline(t *testing.T) {
	requireTools(t, "flite", "pocketsphinx_continuous")
	api, _ := fakeOpenAI(t, "", true)
	s := New(Options{Getenv: env(map[string]string{EnvSTTBaseURL: api.URL + "/v1", EnvSTTAPIKey: "sk-test"})})
	r, err := s.Transcribe(context.Background(), Request{Audio: say(t, "scroll down"), MIME: "audio/wav"})
	if err != nil || r.Text != "scroll down" || r.Engine != "pocketsphinx" || !strings.Contains(r.Fallback, "overloaded") {
		t.Fatalf("fallback: %+v %v", r, err)
	}
}

func TestSpeak(t *testing.T) {
	api, seen := fakeOpenAI(t, "", false)
	ctx := context.Background()
	s := New(Options{Getenv: env(map[string]string{EnvTTSBaseURL: api.URL + "/v1", EnvTTSAPIKey: "sk-test", EnvTTSVoice: "nova"})})
	data, mt, engine, err := s.Speak(ctx, "Your order is placed.")
	if err != nil || !IsWAV(data) || mt != "audio/wav" || engine != "openai-compatible" {
		t.Fatalf("cloud speech: %s %s %v", mt, engine, err)
	}
	if strings.Join(*seen, " ") != "input=Your order is placed. voice=nova model=tts-1" {
		t.Fatalf("the endpoint got %q", *seen)
	}
	*seen = nil
	if _, _, _, err := s.Speak(ctx, strings.Repeat("a", MaxSpeak+10)); err != nil || len(*seen) == 0 || len(strings.TrimPrefix((*seen)[0], "input=")) != MaxSpeak {
		t.Fatalf("long text not cut to %d characters: %v %.40q", MaxSpeak, err, *seen)
	}
	bad, _ := fakeOpenAI(t, "", true)
	failing := New(Options{Getenv: env(map[string]string{EnvTTSBaseURL: bad.URL + "/v1", EnvTTSAPIKey: "sk-test"})})
	failing.ltts = nil
	var ee *EndpointError
	if _, _, _, err := failing.Speak(ctx, "hello"); !errors.As(err, &ee) {
		t.Fatalf("a failing endpoint: %v, want an *EndpointError", err)
	}

	requireTools(t, "flite", "pocketsphinx_continuous")
	s = New(Options{Getenv: env(nil)})
	if st := s.Status(); st.TTS.Engine != "flite" || st.STT.Engine != "pocketsphinx" || !strings.Contains(st.STT.Advice, EnvSTTBaseURL) {
		t.Fatalf("offline status: %+v", st)
	}
	start := time.Now()
	data, _, engine, err = s.Speak(ctx, "scroll down")
	if err != nil || engine != "flite" || !IsWAV(data) {
		t.Fatalf("flite speech: %s %v", engine, err)
	}
	t.Logf("flite spoke in %v", time.Since(start))
	// what flite says, pocketsphinx hears
	r, err := s.Transcribe(ctx, Request{Audio: data, NoPage: true})
	if err != nil || r.Text != "scroll down" {
		t.Fatalf("spoken answer re-heard as %+v %v", r, err)
	}
}

// TestNewReadsNoEnvironment: without Options.Getenv the service is configured by nothing, not
// by the process environment (cmd/tabrelay passes os.Getenv; other callers choose).
func TestNewReadsNoEnvironment(t *testing.T) {
	t.Setenv(EnvSTTBaseURL, "http://127.0.0.1:1/v1")
	t.Setenv(EnvTTSBaseURL, "http://127.0.0.1:1/v1")
	st := New(Options{}).Status()
	if st.STT.Engine == "openai-compatible" || st.TTS.Engine == "openai-compatible" {
		t.Fatalf("the process environment configured the service: %+v", st)
	}
	st = New(Options{Getenv: env(map[string]string{EnvSTTBaseURL: "http://127.0.0.1:1/v1"})}).Status()
	if st.STT.Engine != "openai-compatible" {
		t.Fatalf("Getenv did not configure the cloud engine: %+v", st)
	}
}
