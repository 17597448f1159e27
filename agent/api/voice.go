package api

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/internal/reqbody"
)

// maxSpeakBody bounds the body of POST /api/speak.
const maxSpeakBody = 64 << 10

// SpeakRequest is the body of POST /api/speak.
type SpeakRequest struct {
	// Text is what to say (its first voice.MaxSpeak characters).
	Text string `json:"text"`
}

// voiceAPI serves the voice service: /api/transcribe, /api/transcribe/warm, /api/voice/status
// and /api/speak.
type voiceAPI struct {
	svc *voice.Service
	log zerolog.Logger
}

func (v voiceAPI) status(c echo.Context) *httpError {
	return jsonOK(c, http.StatusOK, v.svc.Status())
}

// warm is POST /api/transcribe/warm: 204 once the offline engine is warming up (or when
// there is nothing to warm up).
func (v voiceAPI) warm(c echo.Context) *httpError {
	if err := v.svc.Warm(); err != nil {
		v.log.Debug().Err(err).Msg("cannot warm up the offline engine")
	}
	if err := c.NoContent(http.StatusNoContent); err != nil {
		return errorf(http.StatusInternalServerError, "writing the answer: %v", err)
	}
	return nil
}

// transcribe accepts the audio as the raw body (Content-Type audio/webm, audio/wav, …) or as
// multipart form data with a "file" (or "audio") part; hints come as repeated "hints" form
// fields or query parameters, each a comma-separated list or a JSON array, and the tab as
// "tab" (?page=false: no snapshot of the tab for the grammar). "state" (the status of the task
// the user talks to) and "choices" (its question's choices, given like hints) put the words
// that answer it into the grammar.
func (v voiceAPI) transcribe(c echo.Context) *httpError {
	r := c.Request()
	req := voice.Request{Tab: c.QueryParam("tab"), NoPage: c.QueryParam("page") == "false"}
	req.Wait.Awaiting = voice.Awaiting(c.QueryParam("state"))
	hints, choices := c.QueryParams()["hints"], c.QueryParams()["choices"]
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "multipart/form-data" {
		if r.ContentLength > voice.MaxAudio {
			return errorf(http.StatusRequestEntityTooLarge, "%v (send the audio as a \"file\" part)", &reqbody.TooLargeError{Limit: voice.MaxAudio})
		}
		r.Body = http.MaxBytesReader(c.Response().Writer, r.Body, voice.MaxAudio)
		if err := r.ParseMultipartForm(voice.MaxAudio); err != nil {
			code := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				code = http.StatusRequestEntityTooLarge
			}
			return errorf(code, "reading the form: %v (send the audio as a \"file\" part, at most %s)", err, reqbody.Size(voice.MaxAudio))
		}
		var fh []*multipart.FileHeader
		for _, name := range []string{"file", "audio"} {
			fh = append(fh, r.MultipartForm.File[name]...)
		}
		if len(fh) == 0 {
			return errorf(http.StatusBadRequest, "no audio: send a \"file\" part with the recording (audio/webm;codecs=opus or audio/wav)")
		}
		f, err := fh[0].Open()
		if err != nil {
			return errorf(http.StatusBadRequest, "reading the audio part: %v", err)
		}
		req.Audio, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return errorf(http.StatusBadRequest, "reading the audio part: %v", err)
		}
		req.MIME = fh[0].Header.Get("Content-Type")
		hints = append(hints, r.MultipartForm.Value["hints"]...)
		if t := r.MultipartForm.Value["tab"]; len(t) > 0 {
			req.Tab = t[0]
		}
		if st := r.MultipartForm.Value["state"]; len(st) > 0 {
			req.Wait.Awaiting = voice.Awaiting(st[0])
		}
		choices = append(choices, r.MultipartForm.Value["choices"]...)
	} else {
		var err error
		if req.Audio, err = reqbody.Read(r, voice.MaxAudio); err != nil {
			return errorf(reqbody.Status(err), "reading the audio: %v", err)
		}
		req.MIME = r.Header.Get("Content-Type")
	}
	req.Hints, req.Wait.Choices = splitHints(hints), splitHints(choices)
	if len(req.Audio) == 0 {
		return errorf(http.StatusBadRequest, "no audio: POST the recording as the body (Content-Type audio/webm;codecs=opus or audio/wav) or as a multipart \"file\" part")
	}
	res, err := v.svc.Transcribe(r.Context(), req)
	if err != nil {
		he := voiceError(err, http.StatusUnprocessableEntity)
		if errors.Is(err, voice.ErrNoEngine) {
			he.body.Advice = v.svc.Status().STT.Advice
		}
		return he
	}
	return jsonOK(c, http.StatusOK, res)
}

// splitHints reads hint values: each a JSON array of phrases or a comma-separated list.
func splitHints(values []string) []string {
	var out []string
	for _, h := range values {
		if strings.HasPrefix(strings.TrimSpace(h), "[") {
			var list []string
			if json.Unmarshal([]byte(h), &list) == nil {
				out = append(out, list...)
				continue
			}
		}
		for _, p := range strings.Split(h, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func (v voiceAPI) speak(c echo.Context) *httpError {
	const example = `{"text":"what to say"}`
	var req SpeakRequest
	if he := decode(c, maxSpeakBody, &req, "speech request", example, false); he != nil {
		return he
	}
	text := strings.TrimSpace(req.Text)
	if text == "" {
		return errorf(http.StatusBadRequest, "nothing to say: send %s", example)
	}
	data, mt, engine, err := v.svc.Speak(c.Request().Context(), text)
	if err != nil {
		he := voiceError(err, http.StatusBadGateway)
		if errors.Is(err, voice.ErrNoVoice) {
			he.body.Advice = v.svc.Status().TTS.Advice
		}
		return he
	}
	c.Response().Header().Set("X-Tabrelay-Voice", engine)
	return blobOK(c, mt, data)
}
