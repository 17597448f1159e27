// Package voice turns speech into text and text into speech for tabrelay's side panel. It is
// a service with typed Go methods (New, Status, Transcribe, Warm, Speak); the HTTP API
// (agent/api, see its API.md) serves it as POST /api/transcribe, POST /api/transcribe/warm,
// GET /api/voice/status and POST /api/speak.
//
// Speech to text has two engines. A configurable OpenAI-compatible transcription endpoint
// (OpenAI, Groq, Mistral, a local whisper server: TABRELAY_STT_BASE_URL, TABRELAY_STT_MODEL,
// TABRELAY_STT_API_KEY) gets the recorded audio as a multipart POST to /audio/transcriptions.
// The offline engine runs pocketsphinx (Debian: pocketsphinx, pocketsphinx-en-us) on the user's
// machine. For short commands it decodes twice in parallel: once with a JSGF grammar built from
// the current page's control names (from the tab's role snapshot, or the request's hints) and
// the fast-path verbs, once with the general English language model; the grammar's reading wins
// when both sound alike, so "click the submit button" comes out exactly as the page names it,
// while a free-form request keeps the general reading. While a task waits (Request.Wait: a
// confirmation, a question with its choices, a hand-over) the words that answer it join the
// grammar, said alone ("yes", a choice's name, "done"). WAV is decoded in Go; WebM, Ogg and MP4
// need ffmpeg.
//
// Text to speech uses an OpenAI-compatible speech endpoint when TABRELAY_TTS_BASE_URL is set,
// else flite, else espeak-ng, whichever is installed. The side panel prefers the browser's own
// voices and asks the server only when the browser has none.
//
// Transcripts and spoken text are page-adjacent user content: they are logged at debug level
// only, and API keys never.
package voice
