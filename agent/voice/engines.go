package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Result is a transcript and how it was made.
type Result struct {
	// Text is what was said ("" when nothing was recognised).
	Text string `json:"text"`
	// Engine is the engine that produced Text: "openai-compatible" or "pocketsphinx".
	Engine string `json:"engine"`
	// Grammar is true when the offline engine's command grammar (page control names and
	// fast-path verbs) gave the text; General is the general model's reading then.
	Grammar bool   `json:"grammar,omitempty"`
	General string `json:"general,omitempty"`
	// Warm is true when the offline engine's general model was loaded ahead of the speech
	// (POST /api/transcribe/warm when the microphone opened).
	Warm bool `json:"warm,omitempty"`
	// AudioSeconds is the length of the audio received; SpeechSeconds the part with sound.
	AudioSeconds  float64 `json:"audioSeconds"`
	SpeechSeconds float64 `json:"speechSeconds,omitempty"`
	// ElapsedMS is how long the transcription took on the server.
	ElapsedMS int64 `json:"elapsedMs"`
	// Fallback says why the configured cloud engine was not used for this request, if it failed
	// and the offline engine answered instead.
	Fallback string `json:"fallback,omitempty"`
}

// CloudSTT is an OpenAI-compatible transcription endpoint (POST {BaseURL}/audio/transcriptions,
// multipart with "file" and "model").
type CloudSTT struct {
	BaseURL, Model, APIKey, Language string
	Client                           *http.Client
}

// EndpointError is a failure of a configured OpenAI-compatible endpoint (transcription or
// speech): it could not be reached, answered an error, or answered something unreadable. The
// HTTP API answers 502 for it.
type EndpointError struct {
	// Err says what happened, naming the endpoint.
	Err error
}

func (e *EndpointError) Error() string { return e.Err.Error() }
func (e *EndpointError) Unwrap() error { return e.Err }

// Transcribe sends the audio as it was recorded (WebM, WAV, …) and returns the text. Its
// errors are *EndpointError.
func (c *CloudSTT) Transcribe(ctx context.Context, audio []byte, mime string, prompt string) (string, error) {
	text, err := c.transcribe(ctx, audio, mime, prompt)
	if err != nil {
		return "", &EndpointError{Err: err}
	}
	return text, nil
}

func (c *CloudSTT) transcribe(ctx context.Context, audio []byte, mime string, prompt string) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	ext := extFor(mime, audio)
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="speech.%s"`, ext))
	ct := mime
	if ct == "" || IsWAV(audio) {
		ct = map[bool]string{true: "audio/wav", false: "audio/webm"}[IsWAV(audio)]
	}
	h.Set("Content-Type", ct)
	fw, err := mw.CreatePart(h)
	if err != nil {
		return "", err
	}
	_, _ = fw.Write(audio)
	_ = mw.WriteField("model", c.Model)
	_ = mw.WriteField("response_format", "json")
	if c.Language != "" {
		_ = mw.WriteField("language", c.Language)
	}
	if prompt != "" {
		_ = mw.WriteField("prompt", prompt)
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	url := strings.TrimRight(c.BaseURL, "/") + "/audio/transcriptions"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, &body)
	if err != nil {
		return "", fmt.Errorf("transcription endpoint %s: %w", EnvSTTBaseURL, err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return "", fmt.Errorf("transcription endpoint %s unreachable: %w", url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("transcription endpoint %s answered HTTP %d: %s", url, resp.StatusCode, apiMessage(data))
	}
	var out struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		// response_format=text servers answer plain text
		if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/plain") {
			return strings.TrimSpace(string(data)), nil
		}
		return "", fmt.Errorf("transcription endpoint %s answered something that is not {\"text\":…}: %v", url, err)
	}
	return strings.TrimSpace(out.Text), nil
}

func (c *CloudSTT) client() *http.Client {
	if c.Client != nil {
		return c.Client
	}
	return &http.Client{Timeout: 60 * time.Second}
}

// apiMessage extracts {"error":{"message":…}} or {"error":"…"} from an API error body.
func apiMessage(data []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var s string
		if json.Unmarshal(e.Error, &s) == nil {
			return s
		}
		var m struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &m) == nil && m.Message != "" {
			return m.Message
		}
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// Pocketsphinx runs pocketsphinx_continuous (Debian packages pocketsphinx and
// pocketsphinx-en-us) on 16 kHz WAV files.
type Pocketsphinx struct {
	// Bin is the pocketsphinx_continuous executable.
	Bin string
	// Dict is the pronunciation dictionary (restricts grammar words).
	Dict string
	// Threshold is the similarity above which the grammar's reading wins (default 0.6).
	Threshold float64

	dictOnce sync.Once
	dict     Dictionary

	warmMu sync.Mutex
	warm   *warmDecoder // a general decoder started ahead of speech (see Warm)
}

// dictionary loads Dict once (about 30 ms for Debian's 135k-word dictionary); nil when it is
// unreadable (every word is then tried and pocketsphinx warns).
func (p *Pocketsphinx) dictionary() Dictionary {
	p.dictOnce.Do(func() {
		if p.Dict != "" {
			p.dict, _ = LoadDictionary(p.Dict)
		}
	})
	return p.dict
}

// Default pocketsphinx model files from Debian's pocketsphinx-en-us.
var pocketsphinxDicts = []string{
	"/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
	"/usr/local/share/pocketsphinx/model/en-us/cmudict-en-us.dict",
}

// FindPocketsphinx returns the offline engine if pocketsphinx_continuous and its en-us model
// are installed.
func FindPocketsphinx() (*Pocketsphinx, error) {
	bin, err := exec.LookPath("pocketsphinx_continuous")
	if err != nil {
		return nil, errors.New("pocketsphinx_continuous not found (Debian: apt-get install pocketsphinx pocketsphinx-en-us)")
	}
	for _, d := range pocketsphinxDicts {
		if _, err := os.Stat(d); err == nil {
			return &Pocketsphinx{Bin: bin, Dict: d}, nil
		}
	}
	return nil, errors.New("pocketsphinx's English model is missing (Debian: apt-get install pocketsphinx-en-us)")
}

// decode runs one decoding pass; grammar "" uses the general language model.
func (p *Pocketsphinx) decode(ctx context.Context, wav, grammar string) (string, error) {
	args := []string{"-infile", wav, "-logfn", os.DevNull}
	if grammar != "" {
		args = append(args, "-jsgf", grammar)
	}
	cmd := exec.CommandContext(ctx, p.Bin, args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("pocketsphinx failed (%v): %s", err, lastLine(stderr.String()))
	}
	return strings.Join(strings.Fields(out.String()), " "), nil
}

// Transcribe decodes 16 kHz audio with the command grammar and, in parallel, with the general
// model; the grammar's reading is chosen when it sounds like the general one (a short command
// naming the page's controls), else the general reading stands (a free-form request). A quick
// general pass (no flat search) was tried as the check and misread Opus-compressed commands.
//
// names gives the page's control names for the grammar; it is called once the general pass
// has started, so reading the page overlaps the decoding. wait is what the task the user talks
// to waits for: its answer phrases (Wait.AnswerPhrases) join the grammar, said alone; for a
// question or a hand-over the grammar's answer stands when the general model heard as few
// words (a choice's name alone is often misread), for a confirmation only when both agree. A decoder started by Warm (model
// loaded while the user spoke) does the general pass when one is waiting.
func (p *Pocketsphinx) Transcribe(ctx context.Context, pcm PCM, names func() []string, wait Wait) (Result, error) {
	dir, err := os.MkdirTemp("", "tabrelay-voice-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	wav := filepath.Join(dir, "speech.wav")
	wavData := EncodeWAV(Resample(pcm, SampleRate))
	if err := os.WriteFile(wav, wavData, 0o600); err != nil {
		return Result{}, err
	}
	var (
		wg           sync.WaitGroup
		gText, lText string
		gErr, lErr   error
		warm         bool
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		// a decoder warmed up while the user spoke has its model loaded already
		if w := p.takeWarm(); w != nil {
			if lText, lErr = w.decode(ctx, wavData); lErr == nil || ctx.Err() != nil {
				warm = lErr == nil
				return
			}
		}
		lText, lErr = p.decode(ctx, wav, "")
	}()
	g := BuildGrammar(names(), wait.AnswerPhrases(), p.dictionary())
	gram := filepath.Join(dir, "commands.gram")
	if err := os.WriteFile(gram, []byte(g.JSGF), 0o600); err != nil {
		wg.Wait()
		return Result{}, err
	}
	wg.Add(1)
	go func() { defer wg.Done(); gText, gErr = p.decode(ctx, wav, gram) }()
	wg.Wait()
	if lErr != nil {
		return Result{}, lErr
	}
	res := Result{Engine: "pocketsphinx", Text: lText, Warm: warm}
	thr := p.Threshold
	if thr == 0 {
		thr = 0.6
	}
	if gErr == nil && gText != "" && lText != "" && similarity(gText, lText) >= thr {
		res.Text, res.Grammar, res.General = gText, true, lText
	} else if gErr == nil && slices.Contains(g.Answers, gText) && wait.Awaiting.trustsShortAnswer() && len(strings.Fields(lText)) <= maxShortAnswer {
		res.Text, res.Grammar, res.General = gText, true, lText
	}
	return res, nil
}

// CloudTTS is an OpenAI-compatible speech endpoint (POST {BaseURL}/audio/speech).
type CloudTTS struct {
	BaseURL, Model, Voice, APIKey string
	Client                        *http.Client
}

// Speak returns the spoken text as WAV (or what the endpoint returns) and its MIME type. Its
// errors are *EndpointError.
func (c *CloudTTS) Speak(ctx context.Context, text string) ([]byte, string, error) {
	data, mt, err := c.speak(ctx, text)
	if err != nil {
		return nil, "", &EndpointError{Err: err}
	}
	return data, mt, nil
}

func (c *CloudTTS) speak(ctx context.Context, text string) ([]byte, string, error) {
	body, _ := json.Marshal(map[string]any{"model": c.Model, "input": text, "voice": c.Voice, "response_format": "wav"})
	url := strings.TrimRight(c.BaseURL, "/") + "/audio/speech"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, "", fmt.Errorf("speech endpoint %s: %w", EnvTTSBaseURL, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	client := c.Client
	if client == nil {
		client = &http.Client{Timeout: 60 * time.Second}
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("speech endpoint %s unreachable: %w", url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, "", fmt.Errorf("speech endpoint %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("speech endpoint %s answered HTTP %d: %s", url, resp.StatusCode, apiMessage(data))
	}
	ct := resp.Header.Get("Content-Type")
	if IsWAV(data) || ct == "" {
		ct = "audio/wav"
	}
	return data, ct, nil
}

// LocalTTS speaks with flite or espeak-ng.
type LocalTTS struct {
	// Name is "flite" or "espeak-ng"; Bin its executable.
	Name, Bin string
	// Voice is the flite voice (default slt) or espeak-ng voice (default en-us).
	Voice string
}

// FindLocalTTS returns flite if installed, else espeak-ng, else an error naming both.
func FindLocalTTS() (*LocalTTS, error) {
	if bin, err := exec.LookPath("flite"); err == nil {
		return &LocalTTS{Name: "flite", Bin: bin, Voice: "slt"}, nil
	}
	if bin, err := exec.LookPath("espeak-ng"); err == nil {
		return &LocalTTS{Name: "espeak-ng", Bin: bin, Voice: "en-us"}, nil
	}
	return nil, errors.New("no local voice: install flite (Debian: apt-get install flite) or espeak-ng")
}

// Speak returns the text spoken as a WAV file.
func (l *LocalTTS) Speak(ctx context.Context, text string) ([]byte, string, error) {
	dir, err := os.MkdirTemp("", "tabrelay-tts-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "text.txt"), filepath.Join(dir, "speech.wav")
	if err := os.WriteFile(in, []byte(text), 0o600); err != nil {
		return nil, "", err
	}
	var cmd *exec.Cmd
	if l.Name == "flite" {
		cmd = exec.CommandContext(ctx, l.Bin, "-voice", l.Voice, "-f", in, "-o", out)
	} else {
		cmd = exec.CommandContext(ctx, l.Bin, "-v", l.Voice, "-f", in, "-w", out)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, "", fmt.Errorf("%s failed (%v): %s", l.Name, err, lastLine(stderr.String()))
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return nil, "", fmt.Errorf("%s wrote no audio: %w", l.Name, err)
	}
	return data, "audio/wav", nil
}
