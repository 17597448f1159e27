package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tabrelay/tabrelay/agent/api"
	"github.com/tabrelay/tabrelay/agent/llmtest"
	"github.com/tabrelay/tabrelay/agent/voice"
)

// TestPanelVoiceConversation drives the real side panel (opened as a tab) with the real
// extension, server and offline voice engine on headless Chromium, a model played by a scripted
// OpenAI-protocol server, and a fake microphone whose WAV (spoken by flite) is changed between
// presses: pressing the microphone silences the panel; the live transcript shows while the
// browser recognises; a spoken "yes" approves the waiting step and starts no task; a spoken
// "stop" stops the running task; a CSV answer is described, not read.
func TestPanelVoiceConversation(t *testing.T) {
	began := time.Now()
	oa := llmtest.NewOpenAI(t)
	pe := startPanelEnv(t, api.Options{Model: oa.Model(t), ModelName: "openai/test"})
	pe.waitText(t, "tabstate", "This tab is not shared", 15*time.Second)
	pe.click(t, "share")
	pe.waitText(t, "tabstate", "This tab is shared", 15*time.Second)
	pe.waitListed(t, pe.page)
	var mode string
	eventually(t, 10*time.Second, "the panel listens through the server", func() (bool, string) {
		pe.js(t, `tabrelayPanel.loadVoice().then(() => tabrelayPanel.listenMode)`, &mode)
		return mode == "server", mode
	})
	t.Logf("environment ready in %v", time.Since(began).Round(time.Millisecond))

	t.Run("MicInterruptsSpeech", func(t *testing.T) { testMicInterruptsSpeech(t, pe) })
	t.Run("LiveTranscript", func(t *testing.T) { testLiveTranscript(t, pe) })
	t.Run("SpokenYesApproves", func(t *testing.T) { testSpokenYes(t, pe, oa) })
	t.Run("SpokenStopStops", func(t *testing.T) { testSpokenStop(t, pe, oa) })
	t.Run("TableAnswerDescribed", func(t *testing.T) { testTableAnswerSpoken(t, pe, oa) })
	t.Run("SpokenChoiceHeard", func(t *testing.T) { testSpokenChoiceHeard(t, pe) })
	t.Logf("TestPanelVoiceConversation took %v", time.Since(began).Round(time.Millisecond))
}

// micSays makes the fake microphone say text from its next opening on (Chromium reads the
// file each time a capture starts); "" is silence.
func (pe *panelEnv) micSays(t *testing.T, text string) {
	t.Helper()
	if text == "" {
		silence := voice.PCM{Rate: 16000, Samples: make([]int16, 16000*3)}
		if err := os.WriteFile(filepath.Join(pe.tmp, "mic.wav"), voice.EncodeWAV(silence), 0o644); err != nil {
			t.Fatal(err)
		}
		pe.speechMS = 0
		return
	}
	_, speech := makeSpeechWAV(t, pe.tmp, text)
	pe.speechMS = int(speech.Milliseconds())
}

// talk holds the microphone while the fake microphone speaks, releases it as a person does, and
// returns the panel's "heard" log entry and when the speech ended (panel clock).
func (pe *panelEnv) talk(t *testing.T) (map[string]any, int64) {
	t.Helper()
	var started map[string]any
	pe.js(t, `tabrelayPanel.micDown().then(() => tabrelayPanel.state.voiceLog.at(-1))`, &started)
	if started == nil || started["event"] != "listening" || started["captureStartAt"] == nil {
		t.Fatalf("the panel did not start listening: %v (notice %q)", started, pe.text(t, "notice"))
	}
	captureStart := int64(started["captureStartAt"].(float64))
	time.Sleep(time.Duration(pe.leadMS+pe.speechMS+400) * time.Millisecond) // holding the button
	pe.js(t, `void tabrelayPanel.micUp(), true`, nil)
	var heard map[string]any
	eventually(t, 30*time.Second, "the panel hears the speech", func() (bool, string) {
		heard = nil
		for _, e := range pe.voiceLog(t) {
			if e["event"] == "heard" && e["pressAt"] != nil && int64(e["captureStartAt"].(float64)) == captureStart {
				heard = e
			}
		}
		return heard != nil, pe.text(t, "voice-state")
	})
	return heard, captureStart + int64(pe.leadMS+pe.speechMS)
}

// routed returns the panel's last "routed" log entry (what was done with an utterance).
func (pe *panelEnv) routed(t *testing.T) map[string]any {
	t.Helper()
	var last map[string]any
	eventually(t, 15*time.Second, "the utterance is applied", func() (bool, string) {
		last = nil
		for _, e := range pe.voiceLog(t) {
			if e["event"] == "routed" {
				last = e
			}
		}
		return last != nil && (last["appliedAt"].(float64) > 0 || last["error"] != ""), fmt.Sprint(last)
	})
	return last
}

// taskCount is the number of tasks the server has.
func (pe *panelEnv) taskCount(t *testing.T) int {
	t.Helper()
	r := pe.call(t, "GET", "/api/tasks?limit=200", nil)
	var list api.TaskList
	if r.Status != 200 || json.Unmarshal(r.Body, &list) != nil {
		t.Fatalf("GET /api/tasks: HTTP %d %s", r.Status, r.Body)
	}
	if list.NextOffset != 0 {
		t.Fatalf("more than 200 tasks: cannot count them")
	}
	return len(list.Tasks)
}

// testMicInterruptsSpeech: while the panel says something long with the server's voice,
// pressing the microphone stops it at once (in the same turn as the press: nothing awaits
// first); the voice still on its way is dropped too.
func testMicInterruptsSpeech(t *testing.T, pe *panelEnv) {
	pe.micSays(t, "")
	long := strings.Repeat("This is a long answer that the person does not want to hear to the end. ", 6)
	pe.js(t, fmt.Sprintf(`void tabrelayPanel.speaker.speak(%q), true`, long), nil)
	eventually(t, 20*time.Second, "the panel speaks", func() (bool, string) {
		var st struct {
			Playing bool   `json:"playing"`
			Error   string `json:"error"`
		}
		pe.js(t, `({playing: !!tabrelayPanel.speaker.audio && !tabrelayPanel.speaker.audio.paused && tabrelayPanel.speaker.audio.currentTime > 0, error: tabrelayPanel.speaker.last?.error || ''})`, &st)
		if st.Error != "" {
			t.Fatalf("the server's voice does not play: %s", st.Error)
		}
		return st.Playing, fmt.Sprint(st)
	})
	// press: the speech must have stopped by the time micDown's synchronous part is over
	var after struct {
		Speaking    bool           `json:"speaking"`
		Interrupted map[string]any `json:"interrupted"`
	}
	pe.js(t, `(() => { const p = tabrelayPanel.micDown(); const r = {speaking: tabrelayPanel.speaker.speaking,
		interrupted: tabrelayPanel.state.voiceLog.findLast(e => e.event === 'interrupted') || null}; return p.then(() => r); })()`, &after)
	if after.Speaking {
		t.Error("the panel still speaks after the microphone was pressed")
	}
	if after.Interrupted == nil || !strings.HasPrefix(fmt.Sprint(after.Interrupted["text"]), "This is a long answer") {
		t.Errorf("the interruption is not logged: %v", after.Interrupted)
	}
	// a voice on its way when the microphone is pressed never plays
	pe.js(t, `(tabrelayPanel.state.pressStarted = 0, tabrelayPanel.micUp().then(() => true))`, nil)
	var dropped bool
	pe.js(t, `(() => { const s = tabrelayPanel.speaker; const p = s.speak('Something said late.'); const t0 = s.turn;
		return tabrelayPanel.micDown().then(() => p).then(() => s.turn !== t0 && !s.audio && !s.speaking); })()`, &dropped)
	if !dropped {
		t.Error("a voice that arrived after the microphone was pressed was played")
	}
	pe.js(t, `(tabrelayPanel.state.pressStarted = 0, tabrelayPanel.micUp().then(() => true))`, nil)
	pe.waitText(t, "voice-state", "Heard nothing", 15*time.Second)
}

// testLiveTranscript: with the browser's recognition (stubbed: headless Chromium has none), the
// words show while the person still speaks; the final text runs as a command.
func testLiveTranscript(t *testing.T, pe *panelEnv) {
	pe.js(t, `(() => {
		class LiveRecognition {
			static async available(o) { return o && o.processLocally ? 'available' : 'unavailable'; }
			start() { setTimeout(() => { const r = [{ transcript: 'scroll' }]; r.isFinal = false; this.onresult({ resultIndex: 0, results: [r] }); }, 30); }
			stop() { setTimeout(() => { const r = [{ transcript: 'scroll down' }]; r.isFinal = true; this.onresult({ resultIndex: 0, results: [r] }); this.onend(); }, 20); }
			abort() { this.onend && this.onend(); }
		}
		window.SpeechRecognition = LiveRecognition;
		return tabrelayPanel.loadVoice().then(() => tabrelayPanel.micDown()).then(() => true);
	})()`, nil)
	defer pe.js(t, `(delete window.SpeechRecognition, tabrelayPanel.loadVoice().then(() => true))`, nil)
	pe.waitText(t, "voice-state", `Hearing: "scroll"`, 5*time.Second)
	var listening bool
	pe.js(t, `!!tabrelayPanel.state.capture`, &listening)
	if !listening {
		t.Fatal("the interim text showed only after listening ended")
	}
	pe.js(t, `(tabrelayPanel.state.pressStarted = 0, void tabrelayPanel.micUp(), true)`, nil)
	pe.waitText(t, "voice-state", `Heard: "scroll down"`, 5*time.Second)
	pe.waitText(t, "task-goal", "scroll down", 10*time.Second)
	pe.waitText(t, "task-status", "succeeded", 10*time.Second)
}

// testSpokenYes: a task waits for the approval of placing the order; the panel says the
// prompt; the microphone says "yes": the offline engine hears it through the grammar built for
// the waiting confirmation, the step is approved, the order placed — and no new task starts.
func testSpokenYes(t *testing.T, pe *panelEnv, oa *llmtest.Server) {
	oa.Push(
		llmtest.Dynamic(func(r llmtest.Request) llmtest.Reply {
			return llmtest.ToolCall("click", fmt.Sprintf(`{"ref":%q}`, refOf(r, "button", "Place order")))
		}),
		llmtest.ToolCall("finish", `{"answer":"Order placed."}`),
	)
	var ordersBefore int
	pe.pageEval(t, pe.page, `window.state.orders`, &ordersBefore)
	pe.ask(t, "place my order")
	pe.waitText(t, "confirm", `click button "Place order"`, 15*time.Second)
	var prompt struct {
		Text string `json:"text"`
		Via  string `json:"via"`
	}
	eventually(t, 15*time.Second, "the confirmation is said", func() (bool, string) {
		pe.js(t, `tabrelayPanel.speaker.last || {}`, &prompt)
		return strings.Contains(prompt.Text, "Place order") && strings.Contains(prompt.Text, "yes or no"), fmt.Sprint(prompt)
	})
	tasks := pe.taskCount(t)
	pe.micSays(t, "yes")
	heard, speechEnd := pe.talk(t)
	if heard["text"] != "yes" || heard["grammar"] != true {
		t.Fatalf("heard %v, want \"yes\" from the grammar built for the waiting confirmation", heard)
	}
	r := pe.routed(t)
	if r["kind"] != "confirm" || r["error"] != "" {
		t.Fatalf("the spoken yes was %v, want a confirmation", r)
	}
	pe.waitText(t, "voice-state", "Approved.", 5*time.Second)
	pe.waitText(t, "answer", "Order placed.", 15*time.Second)
	var orders int
	pe.pageEval(t, pe.page, `window.state.orders`, &orders)
	if orders != ordersBefore+1 {
		t.Errorf("orders after the spoken yes: %d (before: %d)", orders, ordersBefore)
	}
	if n := pe.taskCount(t); n != tasks {
		t.Errorf("the spoken yes started %d tasks", n-tasks)
	}
	if got := pe.text(t, "task-goal"); got != "place my order" {
		t.Errorf("the panel shows the task %q", got)
	}
	t.Logf("spoken yes: end of speech → transcript %d ms (server decode %v ms), → approval applied %d ms",
		int64(heard["transcribedAt"].(float64))-speechEnd, heard["elapsedMs"], int64(r["appliedAt"].(float64))-speechEnd)
}

// testSpokenStop: a task runs (the model takes long); the microphone says "stop": the task is
// cancelled, and "stop" did not become a task of its own.
func testSpokenStop(t *testing.T, pe *panelEnv, oa *llmtest.Server) {
	oa.Push(
		llmtest.ToolCall("update_plan", `{"steps":[{"text":"Look for kettles","status":"active"},{"text":"Compare prices","status":"pending"}]}`),
		llmtest.Text("thinking…").After(2*time.Minute),
	)
	pe.ask(t, "compare all the kettles")
	pe.waitText(t, "plan", "Look for kettles", 10*time.Second)
	tasks := pe.taskCount(t)
	pe.micSays(t, "stop")
	heard, speechEnd := pe.talk(t)
	if heard["text"] != "stop" {
		t.Fatalf("heard %v, want \"stop\"", heard)
	}
	r := pe.routed(t)
	if r["kind"] != "stop" || r["error"] != "" {
		t.Fatalf("the spoken stop was %v, want stop", r)
	}
	pe.waitText(t, "task-status", "cancelled", 10*time.Second)
	pe.waitText(t, "answer", "Stopped.", time.Second)
	if n := pe.taskCount(t); n != tasks {
		t.Errorf("the spoken stop started %d tasks", n-tasks)
	}
	r2 := pe.call(t, "GET", "/api/tasks?limit=1", nil)
	var list api.TaskList
	if json.Unmarshal(r2.Body, &list) != nil || len(list.Tasks) == 0 || list.Tasks[0].Goal != "compare all the kettles" || list.Tasks[0].Status != "cancelled" {
		t.Errorf("the task on the server after the spoken stop: %s", r2.Body)
	}
	t.Logf("spoken stop: end of speech → stop applied %d ms", int64(r["appliedAt"].(float64))-speechEnd)
}

// testTableAnswerSpoken: an answer that is a CSV table is shown in full and described aloud.
func testTableAnswerSpoken(t *testing.T, pe *panelEnv, oa *llmtest.Server) {
	csv := "Here are the kettles:\nname,price\nAcme,19.99\nBrio,24.00\nCosy,31.50"
	answer, _ := json.Marshal(map[string]string{"answer": csv})
	oa.Push(llmtest.ToolCall("finish", string(answer)))
	pe.ask(t, "list the kettles as a table")
	pe.waitText(t, "answer", "Cosy,31.50", 15*time.Second)
	want := "Here are the kettles: a table of 3 rows with columns name, price, shown in the panel."
	eventually(t, 15*time.Second, "the table is described aloud", func() (bool, string) {
		var last struct {
			Text string `json:"text"`
		}
		pe.js(t, `tabrelayPanel.speaker.last || {}`, &last)
		return last.Text == want, last.Text
	})
}

// testSpokenChoiceHeard: while a question with choices waits, the panel sends its state and
// choices with the recording, and the offline engine hears a choice's name said alone ("work",
// which the general model reads as other words); the panel routes it as the answer. The task
// here is the panel's own view of one (the question routes come with the converse work; the
// full spoken question-and-answer test goes with them): only the way to the transcript and the
// decision are checked, not the answer's delivery.
func testSpokenChoiceHeard(t *testing.T, pe *panelEnv) {
	pe.js(t, `(tabrelayPanel.state.task = {id: 'voice-q', goal: 'ship it', status: 'waiting_input', plan: [], steps: [],
		question: {id: 'q1', text: 'Which address?', choices: ['Home', 'Work']}}, true)`, nil)
	defer pe.js(t, `(tabrelayPanel.state.task = null, true)`, nil)
	pe.micSays(t, "work")
	heard, _ := pe.talk(t)
	if heard["text"] != "work" || heard["grammar"] != true {
		t.Fatalf("heard %v, want \"work\" from the grammar built for the question's choices", heard)
	}
	var r map[string]any
	pe.js(t, `tabrelayPanel.state.voiceLog.findLast(e => e.event === 'routed')`, &r)
	if r["kind"] != "answer" || r["text"] != "work" {
		t.Errorf("the spoken choice was %v, want an answer", r)
	}
}
