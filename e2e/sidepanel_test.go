package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/voice"
	"github.com/tabrelay/tabrelay/e2e/fixtures"
	"github.com/tabrelay/tabrelay/internal/browser"
	"github.com/tabrelay/tabrelay/internal/secret"
)

// panelEnv is an agent environment whose server also serves skills and voice, and whose
// browser's microphone plays a WAV file; the side panel is open as a tab in its own window.
type panelEnv struct {
	*agentEnv
	page  browser.Tab // the fixture page the panel is about
	panel browser.Tab // chrome-extension://<id>/sidepanel.html?tabId=<page>
	// leadMS and speechMS place the speech in the fake microphone's WAV.
	leadMS, speechMS int
}

// The spoken command and where it sits in the fake microphone's file.
const (
	spokenCommand = "click the submit button"
	leadSilence   = 300 * time.Millisecond
	tailSilence   = 4 * time.Second
)

// makeSpeechWAV speaks text with flite (voice slt), pads it with silence and writes it as
// 16 kHz mono WAV; it returns the file and where the speech ends in flite's output.
func makeSpeechWAV(t *testing.T, dir, text string) (string, time.Duration) {
	t.Helper()
	raw := filepath.Join(dir, "raw.wav")
	if out, err := exec.Command("flite", "-voice", "slt", "-t", text, "-o", raw).CombinedOutput(); err != nil {
		t.Fatalf("flite (Debian: apt-get install flite): %v %s", err, out)
	}
	data, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	pcm, err := voice.ParseWAV(data)
	if err != nil {
		t.Fatal(err)
	}
	pcm = voice.Resample(pcm, 16000)
	// the speech ends at the last sample above about -40 dBFS (flite pads its output a little)
	last := len(pcm.Samples) - 1
	for last > 0 && pcm.Samples[last] < 330 && pcm.Samples[last] > -330 {
		last--
	}
	lead := make([]int16, int(leadSilence.Seconds()*16000))
	tail := make([]int16, int(tailSilence.Seconds()*16000))
	padded := voice.PCM{Rate: 16000, Samples: append(append(lead, pcm.Samples...), tail...)}
	out := filepath.Join(dir, "mic.wav")
	if err := os.WriteFile(out, voice.EncodeWAV(padded), 0o644); err != nil {
		t.Fatal(err)
	}
	return out, time.Duration(float64(last+1) / 16000 * float64(time.Second))
}

// startPanelEnv starts the fixture site, the server (relay, agent, skills with one user skill,
// voice) and headless Chromium with a fake microphone playing the spoken command.
func startPanelEnv(t *testing.T, opts api.Options) *panelEnv {
	t.Helper()
	requireChromium(t)
	for _, tool := range []string{"flite", "pocketsphinx_continuous", "ffmpeg"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the side panel voice test needs %s (Debian: apt-get install flite pocketsphinx pocketsphinx-en-us ffmpeg): %v", tool, err)
		}
	}
	pe := &panelEnv{agentEnv: &agentEnv{env: &env{}}}
	t.Cleanup(func() {
		if pe.app != nil {
			_ = pe.app.Close()
		}
		pe.env.close()
	})
	e := pe.env
	var err error
	if e.tmp, err = os.MkdirTemp("", "tabrelay-e2e-panel-"); err != nil {
		t.Fatal(err)
	}
	e.home = filepath.Join(e.tmp, "home")
	skillDir := filepath.Join(e.home, "skills", "save-draft")
	if err := os.MkdirAll(skillDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(skillDir, "SKILL.md"), []byte(saveDraftSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	orderDir := filepath.Join(e.home, "skills", "place-order")
	if err := os.MkdirAll(orderDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orderDir, "SKILL.md"), []byte(placeOrderSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	stashDir := filepath.Join(e.home, "skills", "stash-order")
	if err := os.MkdirAll(stashDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stashDir, "SKILL.md"), []byte(stashOrderSkill), 0o644); err != nil {
		t.Fatal(err)
	}
	wav, speech := makeSpeechWAV(t, e.tmp, spokenCommand)
	pe.leadMS, pe.speechMS = int(leadSilence.Milliseconds()), int(speech.Milliseconds())
	if e.site, err = fixtures.Start(); err != nil {
		t.Fatal(err)
	}
	if e.store, err = secret.NewStore(e.home); err != nil {
		t.Fatal(err)
	}
	if err := pe.startServer("127.0.0.1:0", opts); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := zerolog.Nop()
	if e.b, err = browser.Launch(ctx, browser.Options{Headless: true, Logger: &log, ExtensionDebugging: true, Args: []string{
		"--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
		"--use-file-for-fake-audio-capture=" + wav,
		"--autoplay-policy=no-user-gesture-required",
	}}); err != nil {
		t.Fatal(err)
	}
	if err := e.b.Pair(ctx, e.addr, e.store.Token()); err != nil {
		t.Fatal(err)
	}
	if err := e.b.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if pe.page, err = e.b.NewTab(ctx, e.site.URL("/voice/order.html")); err != nil {
		t.Fatal(err)
	}
	panelURL := fmt.Sprintf("chrome-extension://%s/sidepanel.html?tabId=%d", e.b.ExtensionID, pe.page.TabID)
	if pe.panel, err = e.b.NewWindowTab(ctx, panelURL); err != nil {
		t.Fatal(err)
	}
	return pe
}

// saveDraftSkill is the user skill the panel runs from its list.
const saveDraftSkill = `---
name: save-draft
description: Fill in the name on the order page and save a draft.
kind: workflow
parameters:
  - name: name
    description: Name on the order
    required: true
    example: Ada Lovelace
---
# Save a draft order

` + "```steps" + `
- do: type
  target: textbox "Name"
  text: "{{name}}"
- do: click
  target: button "Save draft"
  expect: {text: "Draft saved for {{name}}"}
` + "```\n"

// placeOrderSkill clicks a button the safety rules flag: the run asks for approval first.
const placeOrderSkill = `---
name: place-order
description: Place the order on the order page.
kind: workflow
---
# Place the order

` + "```steps" + `
- do: click
  target: button "Place order"
  expect: {text: "Order placed"}
` + "```\n"

// stashOrderSkill was written for an older page whose button read "Keep draft": with a model
// the step is healed (the model clicks "Save draft") and the run offers the updated skill.
const stashOrderSkill = `---
name: stash-order
description: Keep the order as a draft for later.
kind: workflow
---
# Stash the order

` + "```steps" + `
- do: click
  target: button "Keep draft"
  expect: {text: "Draft saved"}
` + "```" + `

## Notes

The button that keeps a draft may be labelled differently.
`

// startServer starts the server (relay, agent, skills, voice) on addr as `tabrelay serve` does.
func (pe *panelEnv) startServer(addr string, opts api.Options) error {
	return pe.startAgentRelay(addr, opts)
}

// stopServer closes the agent and the relay (the address stays for restartServer).
func (pe *panelEnv) stopServer(t *testing.T) {
	t.Helper()
	if err := pe.app.Close(); err != nil {
		t.Errorf("close the server: %v", err)
	}
}

// js evaluates expression in the panel and decodes its value into out (may be nil).
func (pe *panelEnv) js(t *testing.T, expression string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := pe.b.PageEval(ctx, pe.panel, expression, out); err != nil {
		t.Fatalf("panel: %v", err)
	}
}

// text returns the text of the panel element with the id ("" when hidden).
func (pe *panelEnv) text(t *testing.T, id string) string {
	var s string
	pe.js(t, fmt.Sprintf(`(() => { const e = document.getElementById(%q); return e && !e.hidden && !e.closest('[hidden]') ? e.innerText : ''; })()`, id), &s)
	return s
}

// waitText waits until the panel element's visible text contains want.
func (pe *panelEnv) waitText(t *testing.T, id, want string, timeout time.Duration) string {
	t.Helper()
	var got string
	eventually(t, timeout, fmt.Sprintf("panel #%s shows %q", id, want), func() (bool, string) {
		got = pe.text(t, id)
		return strings.Contains(got, want), got
	})
	return got
}

// click clicks the panel element with the id, as a person would (a real element click).
func (pe *panelEnv) click(t *testing.T, id string) {
	t.Helper()
	pe.js(t, fmt.Sprintf(`document.getElementById(%q).click(), true`, id), nil)
}

// ask types a request into the panel and sends it with Enter.
func (pe *panelEnv) ask(t *testing.T, text string) {
	t.Helper()
	pe.js(t, fmt.Sprintf(`(() => { const r = document.getElementById('request'); r.value = %q;
		r.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true})); return true; })()`, text), nil)
}

// artifactsDir is e2e/artifacts (gitignored), where the panel's screenshots go.
func artifactsDir(t *testing.T) string {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(self), "artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// shot writes a PNG of the panel at a side panel's size to e2e/artifacts/sidepanel-<name>.png.
func (pe *panelEnv) shot(t *testing.T, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := pe.b.CDP
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": pe.panel.TargetID, "flatten": true}, &att); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	defer c.Call(context.WithoutCancel(ctx), "", "Target.detachFromTarget", map[string]any{"sessionId": att.SessionID}, nil) //nolint:errcheck // best effort
	_ = c.Call(ctx, att.SessionID, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 400, "height": 860, "deviceScaleFactor": 1, "mobile": false}, nil)
	var shot struct {
		Data string `json:"data"`
	}
	if err := c.Call(ctx, att.SessionID, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot); err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(artifactsDir(t), "sidepanel-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// TestSidePanel drives the real side panel (opened as a tab) against the real server and
// extension on headless Chromium: sharing from the panel, the plain-words failure messages,
// a spoken command through the fake microphone and the offline engine, browser speech
// recognition (stubbed: it cannot run headless), skills, reports, then with a model played by
// a real OpenAI-protocol server: the live plan, a confirmation approved, the answer, and Stop.
func TestSidePanel(t *testing.T) {
	began := time.Now()
	pe := startPanelEnv(t, api.Options{})
	t.Logf("environment ready in %v", time.Since(began).Round(time.Millisecond))

	t.Run("NotSharedThenShare", func(t *testing.T) {
		pe.waitText(t, "tabstate", "This tab is not shared", 15*time.Second)
		pe.waitText(t, "notice", "This tab is not shared with tabrelay", 5*time.Second)
		pe.shot(t, "not-shared")
		pe.click(t, "share")
		pe.waitText(t, "tabstate", "This tab is shared", 15*time.Second)
		if got := pe.text(t, "notice"); got != "" {
			t.Errorf("a notice stays after sharing: %q", got)
		}
		var badge string
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := pe.b.WaitBadge(ctx, pe.page, "ON"); err != nil {
			t.Errorf("the page's badge after sharing from the panel: %v (%s)", err, badge)
		}
		pe.waitText(t, "srv", "Server running", time.Second)
		pe.waitText(t, "pair", "Paired", time.Second)
	})
	if t.Failed() {
		return
	}

	t.Run("NoModel", func(t *testing.T) {
		pe.ask(t, "find the cheapest kettle and buy it")
		got := pe.waitText(t, "answer", "needs a language model", 15*time.Second)
		if !strings.Contains(got, "choose a model in Settings") {
			t.Errorf("the no-model message does not say where to choose a model: %q", got)
		}
		t.Logf("no-model message: %q", got)
		pe.shot(t, "no-model")
	})

	t.Run("SpokenCommand", func(t *testing.T) { testSpokenCommand(t, pe) })
	t.Run("BrowserRecognition", func(t *testing.T) { testBrowserRecognition(t, pe) })
	t.Run("MicrophoneNotAllowed", func(t *testing.T) { testMicNotAllowed(t, pe) })
	t.Run("Skill", func(t *testing.T) { testPanelSkill(t, pe) })
	t.Run("RecordSkill", func(t *testing.T) { testRecordSkill(t, pe) })
	t.Run("RecentReports", func(t *testing.T) { testRecentReports(t, pe) })

	t.Run("WrongToken", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := pe.b.Pair(ctx, pe.addr, "not-the-token"); err != nil {
			t.Fatal(err)
		}
		pe.waitText(t, "notice", "Pairing token rejected", 15*time.Second)
		pe.waitText(t, "pair", "Token rejected", time.Second)
		pe.shot(t, "wrong-token")
		if err := pe.b.Pair(ctx, pe.addr, pe.token()); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("ServerStopped", func(t *testing.T) {
		pe.stopServer(t)
		got := pe.waitText(t, "notice", "tabrelay server not running at "+pe.addr, 15*time.Second)
		pe.waitText(t, "srv", "Server not running", 5*time.Second) // the panel re-reads its state every 3 s
		t.Logf("server-down message: %q", got)
		pe.shot(t, "server-down")
	})
	if t.Failed() {
		return
	}

	// the same address with a model: the extension and the panel come back by themselves
	oa := llmtest.NewOpenAI(t)
	if err := pe.startServer(pe.addr, api.Options{Model: oa.Model(t), ModelName: "openai/test"}); err != nil {
		t.Fatalf("restart the server on %s: %v", pe.addr, err)
	}
	pe.waitText(t, "srv", "Server running", 20*time.Second)
	pe.waitText(t, "tabstate", "This tab is shared", 20*time.Second)
	// the panel reads "shared" from the extension's own list, which it keeps while the server is
	// down: the relay must have the tab again before the panel's commands can name it
	pe.waitListed(t, pe.page)
	t.Run("TaskConfirmAnswer", func(t *testing.T) { testPanelTask(t, pe, oa) })
	t.Run("HealedSkillDraft", func(t *testing.T) { testPanelHealedDraft(t, pe, oa) })
	t.Run("Stop", func(t *testing.T) { testPanelStop(t, pe, oa) })
	t.Logf("TestSidePanel took %v", time.Since(began).Round(time.Millisecond))
}

// panelVoiceLog reads the panel's voice log entries (timings are Date.now() milliseconds).
func (pe *panelEnv) voiceLog(t *testing.T) []map[string]any {
	var log []map[string]any
	pe.js(t, `tabrelayPanel.state.voiceLog`, &log)
	return log
}

// testSpokenCommand: the fake microphone says "click the submit button"; the panel records it
// (WebM/Opus), the server's offline engine transcribes it with the page's control names, the
// fast path clicks Submit after the confirmation that submitting needs, and the page shows it.
func testSpokenCommand(t *testing.T, pe *panelEnv) {
	var mode string
	eventually(t, 10*time.Second, "the panel listens through the server", func() (bool, string) {
		pe.js(t, `tabrelayPanel.loadVoice().then(() => tabrelayPanel.listenMode)`, &mode)
		return mode == "server", mode
	})
	if got := pe.text(t, "voice-engine"); !strings.Contains(got, "server: pocketsphinx") || !strings.Contains(got, "server: flite") {
		t.Errorf("voice engines shown: %q", got)
	}
	var started map[string]any
	pe.js(t, `tabrelayPanel.micDown().then(() => tabrelayPanel.state.voiceLog.at(-1))`, &started)
	if started == nil || started["captureStartAt"] == nil {
		t.Fatalf("the panel did not start listening: %v (notice %q)", started, pe.text(t, "notice"))
	}
	pe.waitText(t, "mic", "Listening", time.Second)
	captureStart := int64(started["captureStartAt"].(float64))
	speechEnd := captureStart + int64(pe.leadMS+pe.speechMS)
	// hold the button until shortly after the speech, as a person releases it
	time.Sleep(time.Duration(pe.leadMS+pe.speechMS+400) * time.Millisecond)
	pe.js(t, `void tabrelayPanel.micUp(), true`, nil)

	// submitting needs the user's confirmation: it appears in the panel with what will be done
	conf := pe.waitText(t, "confirm", `click button "Submit"`, 20*time.Second)
	var confirmShown int64
	pe.js(t, `tabrelayPanel.state.marks.confirmShown`, &confirmShown)
	pe.shot(t, "voice-confirm")
	var approveAt int64
	pe.js(t, `(document.getElementById('approve').click(), Date.now())`, &approveAt)
	var st struct {
		SubmittedAt int64    `json:"submittedAt"`
		Submits     []string `json:"submits"`
	}
	eventually(t, 10*time.Second, "the page shows the click", func() (bool, string) {
		var out string
		pe.pageEval(t, pe.page, `document.getElementById('out').textContent`, &out)
		return out == "Submitted.", out
	})
	pe.pageEval(t, pe.page, `window.state`, &st)
	var heard map[string]any
	for _, e := range pe.voiceLog(t) {
		if e["event"] == "heard" {
			heard = e
		}
	}
	if heard == nil || heard["text"] != spokenCommand || heard["engine"] != "pocketsphinx" || heard["grammar"] != true {
		t.Fatalf("transcript: %v (want %q from the offline engine's grammar)", heard, spokenCommand)
	}
	// the click went through the fast path (no model is configured here: it could not have
	// gone any other way, but the panel must say so)
	var cmdStarted map[string]any
	for _, e := range pe.voiceLog(t) {
		if e["event"] == "command-started" {
			cmdStarted = e
		}
	}
	if cmdStarted == nil || cmdStarted["fastPath"] != true {
		t.Errorf("the spoken command did not start through the fast path: %v", cmdStarted)
	}
	// the fixture is an order form: the gate names the order ("purchase or payment") from the
	// page's words around the button the user named
	if !strings.Contains(conf, "purchase or payment") && !strings.Contains(conf, "submitting") {
		t.Errorf("the confirmation does not say why: %q", conf)
	}
	pe.waitText(t, "answer", "", 10*time.Second)
	release := int64(heard["releaseAt"].(float64))
	transcribed := int64(heard["transcribedAt"].(float64))
	toConfirm := confirmShown - speechEnd
	toClick := st.SubmittedAt - approveAt
	t.Logf("spoken command %q: end of speech → transcript %d ms (server decode %v ms, warmed up: %v, release → transcript %d ms), → confirmation shown %d ms; approve → click %d ms; end of speech → click without the confirmation wait: %d ms",
		heard["text"], transcribed-speechEnd, heard["elapsedMs"], heard["warm"] == true, transcribed-release, toConfirm, toClick, toConfirm+toClick)
	if toConfirm <= 0 || toConfirm > 30000 { // (the speed is the benchmark's: this catches only a hang)
		t.Errorf("end of speech → confirmation %d ms: out of range", toConfirm)
	}
}

// stubRecognition stands in for Chrome's on-device SpeechRecognition (headless Chromium has
// none) with one that "hears" transcript when listening stops; it is removed when the test ends.
func (pe *panelEnv) stubRecognition(t *testing.T, transcript string) {
	t.Helper()
	var mode string
	pe.js(t, fmt.Sprintf(`(() => {
		class FakeRecognition {
			static async available(o) { return o && o.processLocally ? 'available' : 'unavailable'; }
			start() { window.__recognitionLocal = this.processLocally === true; }
			stop() { setTimeout(() => {
				const r = [{ transcript: %q }]; r.isFinal = true;
				this.onresult({ resultIndex: 0, results: [r] }); this.onend(); }, 20); }
			abort() { this.onend && this.onend(); }
		}
		window.SpeechRecognition = FakeRecognition;
		return tabrelayPanel.loadVoice().then(() => tabrelayPanel.listenMode);
	})()`, transcript), &mode)
	t.Cleanup(func() { pe.js(t, `(delete window.SpeechRecognition, tabrelayPanel.loadVoice().then(() => true))`, nil) })
	if mode != "browser" {
		t.Fatalf("with on-device recognition stubbed the panel listens with %q", mode)
	}
}

// testBrowserRecognition: where Chrome recognises speech on the device, the panel uses it and
// sends the text. Headless Chromium has no recognition, so SpeechRecognition is a stub here
// that "hears" scroll down; the command runs through the real server.
func testBrowserRecognition(t *testing.T, pe *panelEnv) {
	pe.stubRecognition(t, "scroll down")
	pe.waitText(t, "voice-engine", "Chrome (on device)", time.Second)
	pe.js(t, `tabrelayPanel.micDown().then(() => new Promise(r => setTimeout(r, 400))).then(() => { void tabrelayPanel.micUp(); return true; })`, nil)
	pe.waitText(t, "task-goal", "scroll down", 10*time.Second)
	pe.waitText(t, "task-status", "succeeded", 10*time.Second)
	var local bool
	pe.js(t, `window.__recognitionLocal`, &local)
	if !local {
		t.Error("the panel did not ask for on-device recognition (processLocally)")
	}
	var heard map[string]any
	for _, e := range pe.voiceLog(t) {
		if e["event"] == "heard" {
			heard = e
		}
	}
	if heard["via"] != "browser" || heard["text"] != "scroll down" {
		t.Errorf("browser recognition: %v", heard)
	}
}

// testMicNotAllowed: a refused microphone (stubbed: the fake-UI flag always allows) shows the
// message with the link to the grant page; the grant page itself asks and reports in words.
func testMicNotAllowed(t *testing.T, pe *panelEnv) {
	pe.js(t, `(() => {
		window.__gum = navigator.mediaDevices.getUserMedia;
		navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException('Permission denied', 'NotAllowedError'));
		return tabrelayPanel.micDown().then(() => true);
	})()`, nil)
	t.Cleanup(func() { pe.js(t, `(navigator.mediaDevices.getUserMedia = window.__gum, true)`, nil) })
	got := pe.waitText(t, "notice", "Microphone not allowed", 5*time.Second)
	var href string
	pe.js(t, `document.getElementById('mic-grant')?.href || ''`, &href)
	if href != "chrome-extension://"+pe.b.ExtensionID+"/mic.html" {
		t.Errorf("grant link %q (notice %q)", href, got)
	}
	pe.shot(t, "mic-not-allowed")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mic, err := pe.b.NewTab(ctx, href)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = pe.b.CloseTab(context.Background(), mic) }()
	var r struct {
		OK   bool   `json:"ok"`
		Text string `json:"text"`
	}
	if err := pe.b.PageEval(ctx, mic, `tabrelayMic.run()`, &r); err != nil {
		t.Fatal(err)
	}
	if !r.OK || !strings.HasPrefix(r.Text, "Microphone allowed.") {
		t.Errorf("grant page: %+v", r)
	}
	pe.js(t, `(document.getElementById('notice').hidden = true, true)`, nil)
}

// testPanelSkill: the skill is listed and found by search; clicking it opens its parameter
// form; running it acts on the page.
func testPanelSkill(t *testing.T, pe *panelEnv) {
	pe.js(t, `tabrelayPanel.loadSkills().then(() => true)`, nil)
	pe.waitText(t, "skills-list", "save-draft", 5*time.Second)
	pe.js(t, `(() => { const q = document.getElementById('skills-q'); q.value = 'draft order'; q.dispatchEvent(new Event('input')); return true; })()`, nil)
	pe.waitText(t, "skills-list", "Fill in the name on the order page", 5*time.Second)
	pe.js(t, `(document.querySelector('#skills-list li[data-skill="save-draft"]').click(), true)`, nil)
	pe.waitText(t, "skill-form", "name *", 5*time.Second)
	pe.js(t, `(document.querySelector('#skill-params input[name=name]').value = 'Grace Hopper', true)`, nil)
	pe.shot(t, "skill-form")
	pe.js(t, `(document.getElementById('skill-run').click(), true)`, nil)
	res := pe.waitText(t, "skill-result", "save-draft: succeeded", 30*time.Second)
	var out string
	pe.pageEval(t, pe.page, `document.getElementById('out').textContent`, &out)
	if out != "Draft saved for Grace Hopper." {
		t.Errorf("the page after the skill: %q (panel: %q)", out, res)
	}
	pe.shot(t, "skill-done")

	// a skill whose step needs confirmation: the panel lists it, nothing runs until approved
	pe.js(t, `(() => { const q = document.getElementById('skills-q'); q.value = ''; return tabrelayPanel.loadSkills().then(() => {
		document.querySelector('#skills-list li[data-skill="place-order"]').click(); document.getElementById('skill-run').click(); return true; }); })()`, nil)
	conf := pe.waitText(t, "skill-result", "need your confirmation", 15*time.Second)
	if !strings.Contains(conf, "Place order") {
		t.Errorf("the skill's confirmation does not name the step: %q", conf)
	}
	var orders int
	pe.pageEval(t, pe.page, `window.state.orders`, &orders)
	if orders != 0 {
		t.Fatal("the flagged skill ran before approval")
	}
	pe.shot(t, "skill-confirm")
	pe.click(t, "skill-approve")
	pe.waitText(t, "skill-result", "place-order: succeeded", 30*time.Second)
	pe.pageEval(t, pe.page, `window.state.orders`, &orders)
	if orders != 1 {
		t.Errorf("orders after approving the skill: %d", orders)
	}

	// the same skill named in a typed request runs as a task: the safety gate holds the risky
	// step when it comes, the task view asks (not a failure), and approving runs it
	pe.ask(t, "run place-order")
	conf = pe.waitText(t, "confirm", "Place order", 20*time.Second)
	if got := pe.text(t, "task-status"); strings.Contains(got, "failed") {
		t.Errorf("the typed skill needing approval shows as %q (%q)", got, conf)
	}
	pe.pageEval(t, pe.page, `window.state.orders`, &orders)
	if orders != 1 {
		t.Fatal("the typed flagged skill ran before approval")
	}
	pe.shot(t, "command-skill-confirm")
	pe.click(t, "approve")
	pe.waitText(t, "task-status", "succeeded", 30*time.Second)
	pe.pageEval(t, pe.page, `window.state.orders`, &orders)
	if orders != 2 {
		t.Errorf("orders after approving the typed skill: %d", orders)
	}
}

// testRecordSkill: Record, the user types a name and clicks Save draft in the tab while typing
// and saying what they do in the narration field (Enter there and speech are narration, not
// commands); Stop shows the draft, described by the narration, for review; saving it adds the
// skill to the list.
func testRecordSkill(t *testing.T, pe *panelEnv) {
	var goalBefore string
	pe.js(t, `(tabrelayPanel.state.task && tabrelayPanel.state.task.goal) || ''`, &goalBefore)
	pe.click(t, "record")
	pe.waitText(t, "record-state", "Recording", 10*time.Second)
	pe.waitText(t, "record-stop", "Stop recording", time.Second)
	if got := pe.text(t, "record-narration-box"); !strings.Contains(got, "What you are doing") {
		t.Errorf("the narration field is not shown while recording: %q", got)
	}
	// typed narration, with Enter as a real key would send it
	pe.js(t, `(() => { const n = document.getElementById('record-narration'); n.value = 'save a draft order';
		n.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter', bubbles: true, cancelable: true})); return true; })()`, nil)
	// spoken narration (browser recognition stubbed as in testBrowserRecognition) is appended
	pe.stubRecognition(t, "for a name")
	pe.js(t, `tabrelayPanel.micDown().then(() => new Promise(r => setTimeout(r, 400))).then(() => tabrelayPanel.micUp()).then(() => true)`, nil)
	var narration string
	eventually(t, 10*time.Second, "the speech is added to the narration", func() (bool, string) {
		pe.js(t, `document.getElementById('record-narration').value`, &narration)
		return narration == "save a draft order for a name", narration
	})
	var ok bool
	pe.pageEval(t, pe.page, `(() => { const n = document.getElementById('name'); n.focus(); n.value = 'Lin';
		n.dispatchEvent(new InputEvent('input', {bubbles: true})); n.dispatchEvent(new Event('change', {bubbles: true}));
		return true; })()`, &ok)
	time.Sleep(800 * time.Millisecond) // the recorder takes a field's value once typing pauses
	pe.pageEval(t, pe.page, `(document.getElementById('draft').click(), true)`, &ok)
	time.Sleep(300 * time.Millisecond)
	pe.click(t, "record-stop")
	md := pe.waitText(t, "draft", "Review the recorded skill", 15*time.Second)
	var draft string
	pe.js(t, `document.getElementById('draft-md').value`, &draft)
	if !strings.Contains(draft, "Save draft") || !strings.Contains(draft, "```steps") {
		t.Fatalf("the draft does not hold the demonstrated steps:\n%s\n(panel: %q)", draft, md)
	}
	// no model here: the narration is the draft's description, as the stop request carried it
	if !strings.Contains(draft, "description: save a draft order for a name") {
		t.Errorf("the draft is not described by the narration:\n%s", draft)
	}
	if got := pe.text(t, "record-narration-box"); got != "" {
		t.Errorf("the narration field stays after stopping: %q", got)
	}
	// neither Enter in the narration nor the speech started a command
	var goal string
	pe.js(t, `(tabrelayPanel.state.task && tabrelayPanel.state.task.goal) || ''`, &goal)
	if goal != goalBefore {
		t.Errorf("a command ran while recording: the panel follows %q (before: %q)", goal, goalBefore)
	}
	var recent string
	pe.js(t, `tabrelayPanel.loadRecent().then(() => document.getElementById('recent').innerText)`, &recent)
	if strings.Contains(recent, "save a draft order") || strings.Contains(recent, "for a name") {
		t.Errorf("the narration was sent as a command: recent tasks\n%s", recent)
	}
	pe.js(t, `(document.getElementById('draft-name').value = 'recorded-draft', true)`, nil)
	pe.shot(t, "record-draft")
	pe.click(t, "draft-save")
	var saved string
	eventually(t, 10*time.Second, "the draft is saved", func() (bool, string) {
		pe.js(t, `document.getElementById('draft-result').textContent`, &saved)
		return strings.HasPrefix(saved, "Saved"), saved
	})
	eventually(t, 10*time.Second, "the saved skill is listed", func() (bool, string) {
		pe.js(t, `(() => { const q = document.getElementById('skills-q'); q.value = ''; return tabrelayPanel.loadSkills().then(() => document.getElementById('skills-list').innerText); })()`, &md)
		return strings.Contains(md, "recorded-draft"), md
	})
	// a search finds it: recorded skills are for the recorded site, and the panel ranks for its
	// tab's page (before, it sent no URL and every site-specific skill was left out)
	eventually(t, 10*time.Second, "a search finds the recorded skill", func() (bool, string) {
		pe.js(t, `(() => { const q = document.getElementById('skills-q'); q.value = 'recorded draft'; return tabrelayPanel.loadSkills().then(() => document.getElementById('skills-list').innerText); })()`, &md)
		return strings.Contains(md, "recorded-draft"), md
	})
	pe.js(t, `(document.getElementById('skills-q').value = '', true)`, nil)
}

// testRecentReports: recent tasks are listed with JSON, CSV and Markdown report downloads.
func testRecentReports(t *testing.T, pe *panelEnv) {
	pe.js(t, `tabrelayPanel.loadRecent().then(() => true)`, nil)
	pe.waitText(t, "recent", "scroll down", 5*time.Second)
	pe.js(t, `(tabrelayPanel.state.downloads.length = 0, document.querySelectorAll('#recent li:first-child a[data-format]').forEach(a => a.click()), true)`, nil)
	var dl []struct {
		Format string `json:"format"`
		Size   int    `json:"size"`
		Type   string `json:"type"`
		Name   string `json:"name"`
	}
	eventually(t, 10*time.Second, "three reports downloaded", func() (bool, string) {
		pe.js(t, `tabrelayPanel.state.downloads`, &dl)
		return len(dl) == 3, fmt.Sprint(dl)
	})
	want := map[string]string{"json": "application/json", "csv": "text/csv", "markdown": "text/markdown"}
	for _, d := range dl {
		if d.Size < 20 || !strings.HasPrefix(d.Type, want[d.Format]) || !strings.HasPrefix(d.Name, "tabrelay-task-") {
			t.Errorf("report %s: %+v", d.Format, d)
		}
	}
}

// testPanelTask: a typed request becomes a model task; the panel shows the plan as a stepper,
// each step, the confirmation for placing the order with what exactly will be clicked; approving
// continues; the answer shows and is spoken with the server's voice.
func testPanelTask(t *testing.T, pe *panelEnv, oa *llmtest.Server) {
	plan := func(a, b string) llmtest.Reply {
		return llmtest.ToolCall("update_plan", fmt.Sprintf(`{"steps":[{"text":"Fill in the name","status":%q},{"text":"Place the order","status":%q}]}`, a, b))
	}
	oa.Push(
		plan("active", "pending"),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			return llmtest.ToolCall("type", fmt.Sprintf(`{"ref":%q,"text":"Ada"}`, refOf(r, "textbox", "Name")))
		}),
		plan("done", "active").After(700*time.Millisecond),
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, refOf(r, "button", "Place order")))
		}),
		llmtest.ToolCall("finish", `{"answer":"Order placed for Ada."}`),
	)
	var ordersBefore int
	pe.pageEval(t, pe.page, `window.state.orders`, &ordersBefore)
	pe.ask(t, "order for Ada")
	pe.waitText(t, "plan", "Fill in the name", 10*time.Second)
	var classes []string
	eventually(t, 10*time.Second, "the stepper shows done then active", func() (bool, string) {
		pe.js(t, `[...document.querySelectorAll('#plan li')].map(li => li.className)`, &classes)
		return strings.Join(classes, ",") == "done,active", strings.Join(classes, ",")
	})
	conf := pe.waitText(t, "confirm", `click button "Place order"`, 15*time.Second)
	pe.waitText(t, "task-status", "waiting confirmation", 2*time.Second)
	if steps := pe.text(t, "steps"); !strings.Contains(steps, `type`) || !strings.Contains(steps, `"Ada"`) {
		t.Errorf("steps shown: %q", steps)
	}
	var orders int
	pe.pageEval(t, pe.page, `window.state.orders`, &orders)
	if orders != ordersBefore {
		t.Fatal("the order was placed before the confirmation")
	}
	t.Logf("confirmation: %q", conf)
	pe.shot(t, "task-confirm")
	pe.click(t, "approve")
	pe.waitText(t, "answer", "Order placed for Ada.", 15*time.Second)
	pe.waitText(t, "task-status", "succeeded", 2*time.Second)
	pe.pageEval(t, pe.page, `window.state.orders`, &orders)
	if orders != ordersBefore+1 {
		t.Errorf("orders placed after approving: %d (before: %d)", orders, ordersBefore)
	}
	var spoken struct {
		Text string `json:"text"`
		Via  string `json:"via"`
	}
	eventually(t, 10*time.Second, "the answer is spoken with the server's voice", func() (bool, string) {
		pe.js(t, `tabrelayPanel.speaker.last || {}`, &spoken)
		return spoken.Text == "Order placed for Ada.", fmt.Sprint(spoken)
	})
	if spoken.Via != "server:flite" {
		t.Errorf("the answer was spoken via %q (no browser voices here: want server:flite)", spoken.Via)
	}
	pe.shot(t, "task-answer")
}

// testPanelHealedDraft: a typed request names a skill written for an older page; the model does
// the step that no longer fits (the skill's notes in its goal), and the panel offers the
// updated skill for review; saved, it replays without the model.
func testPanelHealedDraft(t *testing.T, pe *panelEnv, oa *llmtest.Server) {
	var goal string
	oa.Push(
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			for _, m := range r.Messages {
				goal += m.Text + "\n"
			}
			return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, refOf(r, "button", "Save draft")))
		}),
		llmtest.ToolCall("finish", `{"answer":"Saved the draft."}`),
	)
	calls := oa.Calls()
	pe.ask(t, "run stash-order")
	pe.waitText(t, "task-goal", "run stash-order", 10*time.Second) // what the user asked
	note := pe.waitText(t, "draft", "Review the updated skill stash-order", 10*time.Second)
	var md, name string
	pe.js(t, `document.getElementById('draft-md').value`, &md)
	pe.js(t, `document.getElementById('draft-name').value`, &name)
	if name != "stash-order" || !strings.Contains(md, `target: button "Save draft"`) || strings.Contains(md, `"Keep draft"`) {
		t.Fatalf("the healed draft (%q):\n%s\n(panel: %q)", name, md, note)
	}
	if !strings.Contains(goal, "may be labelled differently") {
		t.Errorf("the model was not given the skill's notes:\n%s", goal)
	}
	// the recent tasks show the request, for the model's part too, never the prompt it got
	recent := pe.waitText(t, "recent", "run stash-order, step 1 (handed to the model)", 10*time.Second)
	if strings.Contains(recent, "You are running the skill") {
		t.Errorf("the recent tasks show the model's prompt:\n%s", recent)
	}
	pe.shot(t, "healed-draft")
	pe.click(t, "draft-save")
	var saved string
	eventually(t, 10*time.Second, "the healed draft is saved", func() (bool, string) {
		pe.js(t, `document.getElementById('draft-result').textContent`, &saved)
		return strings.HasPrefix(saved, "Saved"), saved
	})
	// the saved skill replays with no model call
	made := oa.Calls() - calls
	var ok bool
	pe.pageEval(t, pe.page, `(document.getElementById('out').textContent = '', true)`, &ok)
	pe.ask(t, "run stash-order")
	eventually(t, 30*time.Second, "the saved skill saves a draft", func() (bool, string) {
		var out string
		pe.pageEval(t, pe.page, `document.getElementById('out').textContent`, &out)
		return strings.HasPrefix(out, "Draft saved"), out
	})
	pe.waitText(t, "task-status", "succeeded", 30*time.Second)
	if n := oa.Calls() - calls - made; n != 0 {
		t.Errorf("the saved healed skill called the model %d times", n)
	}
	t.Logf("healed run: %d model calls; replay of the saved draft: 0", made)
	// the answer is spoken before the next test mutes the panel
	eventually(t, 15*time.Second, "the replay's answer is spoken", func() (bool, string) {
		var last struct {
			Text string `json:"text"`
		}
		pe.js(t, `tabrelayPanel.speaker.last || {}`, &last)
		return strings.Contains(last.Text, "0 by the model"), last.Text
	})
}

// testPanelStop: Stop ends a running task at once; the panel shows it stopped, and muted it
// says nothing.
func testPanelStop(t *testing.T, pe *panelEnv, oa *llmtest.Server) {
	oa.Push(
		llmtest.ToolCall("update_plan", `{"steps":[{"text":"Look for kettles","status":"active"},{"text":"Compare prices","status":"pending"}]}`),
		llmtest.Text("thinking…").After(2*time.Minute),
	)
	pe.click(t, "mute")
	defer pe.click(t, "mute")
	var before struct {
		At int64 `json:"at"`
	}
	pe.js(t, `tabrelayPanel.speaker.last || {}`, &before)
	pe.ask(t, "compare all the kettles")
	pe.waitText(t, "plan", "Look for kettles", 10*time.Second)
	pe.shot(t, "task-running")
	start := time.Now()
	pe.click(t, "stop")
	pe.waitText(t, "task-status", "cancelled", 5*time.Second)
	pe.waitText(t, "answer", "Stopped.", time.Second)
	t.Logf("Stop → cancelled shown in %v", time.Since(start).Round(time.Millisecond))
	pe.shot(t, "task-stopped")
	time.Sleep(300 * time.Millisecond)
	var after struct {
		At int64 `json:"at"`
	}
	pe.js(t, `tabrelayPanel.speaker.last || {}`, &after)
	if after.At != before.At {
		t.Error("the panel spoke while muted")
	}
	var status string
	r := pe.call(t, "GET", "/api/tasks?limit=1", nil)
	var list api.TaskList
	if json.Unmarshal(r.Body, &list) == nil && len(list.Tasks) > 0 {
		status = string(list.Tasks[0].Status)
	}
	if status != "cancelled" {
		t.Errorf("the task on the server after Stop: %q", status)
	}
}
