package voice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/snapshot"
)

// Environment variables that configure the engines.
const (
	// EnvSTTBaseURL is the OpenAI-compatible API base for transcription, e.g.
	// https://api.openai.com/v1, https://api.groq.com/openai/v1 or http://127.0.0.1:8000/v1.
	EnvSTTBaseURL = "TABRELAY_STT_BASE_URL"
	// EnvSTTModel is the transcription model (default whisper-1).
	EnvSTTModel = "TABRELAY_STT_MODEL"
	// EnvSTTAPIKey is the transcription endpoint's key (falls back to OPENAI_API_KEY).
	EnvSTTAPIKey = "TABRELAY_STT_API_KEY"
	// EnvSTTLanguage is an optional ISO-639-1 language hint for the endpoint.
	EnvSTTLanguage = "TABRELAY_STT_LANGUAGE"
	// EnvSTTEngine forces an engine: "cloud", "pocketsphinx" or "off" (default: cloud when
	// configured, else pocketsphinx when installed).
	EnvSTTEngine = "TABRELAY_STT_ENGINE"
	// EnvTTSBaseURL, EnvTTSModel (default tts-1), EnvTTSVoice (default alloy) and EnvTTSAPIKey
	// (falls back to OPENAI_API_KEY) configure an OpenAI-compatible speech endpoint.
	EnvTTSBaseURL = "TABRELAY_TTS_BASE_URL"
	EnvTTSModel   = "TABRELAY_TTS_MODEL"
	EnvTTSVoice   = "TABRELAY_TTS_VOICE"
	EnvTTSAPIKey  = "TABRELAY_TTS_API_KEY"
)

// MaxAudio bounds the audio of one transcription (about ten minutes of Opus, or a minute of
// 48 kHz WAV): the body limit the HTTP API gives POST /api/transcribe.
const MaxAudio = 16 << 20

// MaxSpeak bounds the text Speak says, in characters: longer text is cut.
const MaxSpeak = 4000

// SnapshotFunc reads the role snapshot of a shared tab ("" names the current tab); the grammar
// reads its page model.
type SnapshotFunc func(ctx context.Context, tab string) (*snapshot.Snapshot, error)

// Options configure the voice service.
type Options struct {
	// Snapshot reads a tab's role snapshot, for the control names of the command grammar (nil:
	// only the request's hints are used).
	Snapshot SnapshotFunc
	// Getenv reads the configuration: the TABRELAY_STT_*, TABRELAY_TTS_* and OPENAI_API_KEY
	// variables (cmd/tabrelay passes os.Getenv; nil: nothing is configured, so only the
	// engines found installed are used). The package never reads the environment itself.
	Getenv func(string) string
	// Client is the HTTP client for cloud endpoints (default: 60 s timeout).
	Client *http.Client
	// Log receives the service's logs (transcripts only at debug level).
	Log zerolog.Logger
}

// Service transcribes and speaks with the engines found or configured at New.
type Service struct {
	opts   Options
	log    zerolog.Logger
	cloud  *CloudSTT
	sphinx *Pocketsphinx
	// sphinxErr says why the offline engine is not available.
	sphinxErr error
	forced    string
	ctts      *CloudTTS
	ltts      *LocalTTS
	lttsErr   error
}

// New reads the configuration and finds the installed engines.
func New(opts Options) *Service {
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	env := opts.Getenv
	s := &Service{opts: opts, log: opts.Log, forced: strings.ToLower(strings.TrimSpace(env(EnvSTTEngine)))}
	if base := strings.TrimSpace(env(EnvSTTBaseURL)); base != "" {
		key := env(EnvSTTAPIKey)
		if key == "" {
			key = env("OPENAI_API_KEY")
		}
		s.cloud = &CloudSTT{BaseURL: base, Model: orDefault(env(EnvSTTModel), "whisper-1"), APIKey: key, Language: env(EnvSTTLanguage), Client: opts.Client}
	}
	s.sphinx, s.sphinxErr = FindPocketsphinx()
	if base := strings.TrimSpace(env(EnvTTSBaseURL)); base != "" {
		key := env(EnvTTSAPIKey)
		if key == "" {
			key = env("OPENAI_API_KEY")
		}
		s.ctts = &CloudTTS{BaseURL: base, Model: orDefault(env(EnvTTSModel), "tts-1"), Voice: orDefault(env(EnvTTSVoice), "alloy"), APIKey: key, Client: opts.Client}
	}
	s.ltts, s.lttsErr = FindLocalTTS()
	st := s.Status()
	s.log.Info().Str("stt", st.STT.Engine).Str("tts", st.TTS.Engine).Msg("voice engines")
	return s
}

func orDefault(v, def string) string {
	if strings.TrimSpace(v) == "" {
		return def
	}
	return strings.TrimSpace(v)
}

// EngineStatus describes one direction (speech to text, or text to speech).
type EngineStatus struct {
	// Engine is the engine in use: "openai-compatible", "pocketsphinx", "flite", "espeak-ng" or
	// "none".
	Engine string `json:"engine"`
	// Available is false when nothing can serve this direction.
	Available bool `json:"available"`
	// Detail says what the engine is (model, endpoint without secrets) or why there is none.
	Detail string `json:"detail"`
	// Advice says what to install or configure for a better engine.
	Advice string `json:"advice,omitempty"`
}

// Status is the answer of GET /api/voice/status.
type Status struct {
	STT EngineStatus `json:"stt"`
	TTS EngineStatus `json:"tts"`
	// Offline is true when the offline engine is installed (used as a fallback too).
	Offline bool `json:"offline"`
	// Accepts lists the audio types /api/transcribe can take now.
	Accepts []string `json:"accepts"`
	// FFmpeg is true when compressed audio (WebM/Opus) can be decoded for the offline engine.
	FFmpeg bool `json:"ffmpeg"`
}

func (s *Service) sttEngine() string {
	switch {
	case s.forced == "off":
		return "none"
	case s.forced == "pocketsphinx" && s.sphinx != nil:
		return "pocketsphinx"
	case s.cloud != nil && s.forced != "pocketsphinx":
		return "openai-compatible"
	case s.sphinx != nil:
		return "pocketsphinx"
	}
	return "none"
}

// Status reports the engines in use and what would make them better.
func (s *Service) Status() Status {
	_, ffErr := exec.LookPath("ffmpeg")
	st := Status{Offline: s.sphinx != nil, FFmpeg: ffErr == nil}
	const cloudAdvice = "for better accuracy on free-form requests set " + EnvSTTBaseURL + " (and " + EnvSTTModel + ", " + EnvSTTAPIKey + ") to an OpenAI-compatible transcription endpoint: OpenAI, Groq, Mistral or a local whisper server"
	switch e := s.sttEngine(); e {
	case "openai-compatible":
		st.STT = EngineStatus{Engine: e, Available: true, Detail: fmt.Sprintf("model %s at %s", s.cloud.Model, redactURL(s.cloud.BaseURL))}
		st.Accepts = []string{"audio/webm", "audio/ogg", "audio/mp4", "audio/wav"}
		if s.sphinx == nil {
			st.STT.Advice = "install pocketsphinx and pocketsphinx-en-us (Debian) for an offline fallback"
		}
	case "pocketsphinx":
		st.STT = EngineStatus{Engine: e, Available: true, Detail: "pocketsphinx (offline, English) with a grammar of this page's controls and the simple-command verbs: best for short commands", Advice: cloudAdvice}
		st.Accepts = []string{"audio/wav"}
		if st.FFmpeg {
			st.Accepts = append([]string{"audio/webm", "audio/ogg", "audio/mp4"}, st.Accepts...)
		} else {
			st.STT.Advice = "install ffmpeg to accept WebM/Opus recordings (WAV works without it); " + cloudAdvice
		}
	default:
		why := "speech recognition is switched off (" + EnvSTTEngine + "=off)"
		if s.forced != "off" {
			why = "no speech recognition engine: " + s.sphinxErr.Error()
		}
		st.STT = EngineStatus{Engine: "none", Detail: why, Advice: "install pocketsphinx, pocketsphinx-en-us and ffmpeg (Debian) for offline commands, or " + strings.TrimPrefix(cloudAdvice, "for better accuracy on free-form requests ")}
		st.Accepts = []string{}
	}
	switch {
	case s.ctts != nil:
		st.TTS = EngineStatus{Engine: "openai-compatible", Available: true, Detail: fmt.Sprintf("model %s, voice %s at %s", s.ctts.Model, s.ctts.Voice, redactURL(s.ctts.BaseURL))}
	case s.ltts != nil:
		st.TTS = EngineStatus{Engine: s.ltts.Name, Available: true, Detail: s.ltts.Name + " (offline) voice " + s.ltts.Voice,
			Advice: "for a more natural voice set " + EnvTTSBaseURL + " (and " + EnvTTSModel + ", " + EnvTTSVoice + ", " + EnvTTSAPIKey + ") to an OpenAI-compatible speech endpoint"}
	default:
		st.TTS = EngineStatus{Engine: "none", Detail: s.lttsErr.Error(), Advice: "install flite (Debian: apt-get install flite) or set " + EnvTTSBaseURL}
	}
	return st
}

// redactURL drops user info and query strings (which may hold keys) from a URL for display.
func redactURL(u string) string {
	if i := strings.Index(u, "?"); i >= 0 {
		u = u[:i]
	}
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.LastIndex(u[i+3:], "@"); j >= 0 {
			u = u[:i+3] + u[i+3+j+1:]
		}
	}
	return u
}

// Request is one transcription request.
type Request struct {
	// Audio is the recording; MIME its type (may be empty: sniffed).
	Audio []byte
	MIME  string
	// Hints are extra phrases (control names) for the command grammar.
	Hints []string
	// Tab is the shared tab whose controls feed the grammar ("" for the current one).
	Tab string
	// NoPage skips reading the tab's snapshot.
	NoPage bool
	// Wait is what the task the user talks to waits for: the words that answer it join the
	// offline grammar (and a question's choices the cloud engine's prompt).
	Wait Wait
}

// ErrNoEngine is returned (wrapped) when no speech recognition engine is available.
var ErrNoEngine = errors.New("no speech recognition engine")

// Transcribe turns recorded speech into text with the engine in use (the offline engine
// answers when the cloud endpoint fails).
func (s *Service) Transcribe(ctx context.Context, req Request) (Result, error) {
	start := time.Now()
	engine := s.sttEngine()
	var res Result
	var err error
	switch engine {
	case "openai-compatible":
		prompt := strings.Join(append(append([]string(nil), req.Wait.Choices...), req.Hints...), ", ")
		if len(prompt) > 500 {
			prompt = prompt[:500]
		}
		var text string
		text, err = s.cloud.Transcribe(ctx, req.Audio, req.MIME, prompt)
		res = Result{Text: text, Engine: engine}
		if err == nil {
			if pcm, derr := Decode(ctx, req.Audio, req.MIME); derr == nil {
				res.AudioSeconds = pcm.Seconds()
			}
		} else if s.sphinx != nil && ctx.Err() == nil {
			s.log.Warn().Err(err).Msg("cloud transcription failed; using the offline engine")
			fallback := err.Error()
			res, err = s.offline(ctx, req)
			res.Fallback = fallback
		}
	case "pocketsphinx":
		res, err = s.offline(ctx, req)
	default:
		st := s.Status()
		return Result{}, fmt.Errorf("%w: %s; %s", ErrNoEngine, st.STT.Detail, st.STT.Advice)
	}
	if err != nil {
		return Result{}, err
	}
	res.ElapsedMS = time.Since(start).Milliseconds()
	s.log.Info().Str("engine", res.Engine).Bool("grammar", res.Grammar).Float64("audio_s", res.AudioSeconds).
		Int64("ms", res.ElapsedMS).Int("chars", len(res.Text)).Msg("transcribed")
	s.log.Debug().Str("text", res.Text).Str("general", res.General).Msg("transcript")
	return res, nil
}

func (s *Service) offline(ctx context.Context, req Request) (Result, error) {
	pcm, err := Decode(ctx, req.Audio, req.MIME)
	if err != nil {
		return Result{}, err
	}
	speech := TrimSilence(pcm)
	res := Result{Engine: "pocketsphinx", AudioSeconds: pcm.Seconds(), SpeechSeconds: speech.Seconds()}
	if len(speech.Samples) == 0 {
		return res, nil // silence: nothing said
	}
	names := func() []string {
		names := append([]string(nil), req.Hints...)
		if req.NoPage || s.opts.Snapshot == nil {
			return names
		}
		sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		snap, err := s.opts.Snapshot(sctx, req.Tab)
		if err != nil {
			s.log.Debug().Err(err).Msg("no snapshot for the voice grammar; using hints only")
			return names
		}
		return append(names, ControlNames(snap)...)
	}
	r, err := s.sphinx.Transcribe(ctx, speech, names, req.Wait)
	if err != nil {
		return Result{}, err
	}
	r.AudioSeconds, r.SpeechSeconds = res.AudioSeconds, res.SpeechSeconds
	return r, nil
}

// ErrNoVoice is returned (wrapped) when no text-to-speech engine is available.
var ErrNoVoice = errors.New("no text-to-speech engine")

// Speak turns text (its first MaxSpeak characters) into audio with the speech endpoint, else
// flite or espeak-ng. It returns the audio, its MIME type and the engine that spoke.
func (s *Service) Speak(ctx context.Context, text string) ([]byte, string, string, error) {
	if r := []rune(text); len(r) > MaxSpeak {
		text = string(r[:MaxSpeak])
	}
	if s.ctts != nil {
		data, mt, err := s.ctts.Speak(ctx, text)
		if err == nil || s.ltts == nil {
			return data, mt, "openai-compatible", err
		}
		s.log.Warn().Err(err).Msg("speech endpoint failed; using the local voice")
	}
	if s.ltts != nil {
		data, mt, err := s.ltts.Speak(ctx, text)
		return data, mt, s.ltts.Name, err
	}
	st := s.Status()
	return nil, "", "none", fmt.Errorf("%w: %s; %s", ErrNoVoice, st.TTS.Detail, st.TTS.Advice)
}

// Warm gets the offline engine ready for speech about to be sent (the microphone just
// opened): its general model loads while the user speaks instead of after. It does nothing
// when another engine is in use or where decoders cannot be kept waiting (no named pipes); a
// warmed-up engine not used within WarmTTL is dropped.
func (s *Service) Warm() error {
	if s.sttEngine() != "pocketsphinx" {
		return nil
	}
	if err := s.sphinx.Warm(); err != nil && !errors.Is(err, errNoFIFO) {
		return err
	}
	return nil
}
