// @ts-check
// Push-to-talk in the panel: choosing how to listen (panel-voice.js does the capture and
// speaking), the mic button's states and the live transcript, and what is done with what was
// heard: narration while recording a skill, else an answer to the waiting task, "stop", or a
// new request (panel-converse.js). Pressing the microphone silences the panel at once.

import { api } from './panel-api.js';
import { Capture, MicNotAllowed, Speaker, chooseListener } from './panel-voice.js';
import { $, el, showNotice } from './panel-dom.js';
import { handleUtterance, listeningFor } from './panel-converse.js';
import { addNarration } from './panel-record.js';
import { speaker, state } from './panel-state.js';

export async function loadVoice() {
  try { state.voice = await api('GET', '/api/voice/status', { timeout: 5000 }); } catch { state.voice = null; }
  state.listenMode = await chooseListener(state.voice, navigator.language || 'en-US');
  const stt = state.listenMode === 'browser' ? 'Chrome (on device)' : state.listenMode === 'server' ? `server: ${state.voice?.stt.engine}` : state.listenMode === 'browser-cloud' ? 'Chrome' : 'none';
  const tts = Speaker.browserVoices() ? 'browser voices' : state.voice?.tts?.available ? `server: ${state.voice.tts.engine}` : 'none';
  $('voice-engine').textContent = `Voice: listening with ${stt}; speaking with ${tts}`;
  $('voice-engine').title = [state.voice?.stt.detail, state.voice?.stt.advice, state.voice?.tts.advice].filter(Boolean).join('\n');
}

export async function micDown() {
  // the user wants to talk: whatever the panel is saying stops now (before anything awaits)
  if (speaker.speaking) state.voiceLog.push({ event: 'interrupted', at: Date.now(), text: speaker.last?.text || '' });
  speaker.stop();
  if (state.capture) return;
  if (state.listenMode === 'none') await loadVoice();
  if (state.listenMode === 'none') {
    showNotice(state.server === 'up'
      ? `No speech recognition: ${state.voice?.stt.detail || 'the server has no engine'}. ${state.voice?.stt.advice || ''}`
      : 'No speech recognition: the tabrelay server is not running and this browser has no on-device recognition.');
    return;
  }
  state.pressStarted = Date.now();
  // the server's offline engine loads its model while the user speaks
  if (state.listenMode === 'server') api('POST', '/api/transcribe/warm', { timeout: 3000 }).catch(() => { /* an older server: decoded cold */ });
  const cap = new Capture({
    mode: /** @type {any} */ (state.listenMode), lang: navigator.language || 'en-US', tab: () => state.targetId, accepts: state.voice?.accepts || [],
    wait: listeningFor,
    onText: (text) => { if (state.capture === cap) setMic(true, text ? `Hearing: "${text}"` : 'Listening…'); },
  });
  state.capture = cap;
  setMic(true, state.listenMode === 'server' ? 'Listening… (the text shows when you release)' : 'Listening…');
  try {
    await cap.start();
    state.voiceLog.push({ event: 'listening', mode: state.listenMode, ...cap.timings });
  } catch (e) {
    state.capture = null;
    setMic(false, '');
    if (e instanceof MicNotAllowed) micNotAllowed();
    else showNotice(`Microphone: ${e instanceof Error ? e.message : e}`);
  }
}

function micNotAllowed() {
  const a = /** @type {HTMLAnchorElement} */ (el('a', '', 'Allow the microphone'));
  a.href = chrome.runtime.getURL('mic.html');
  a.target = '_blank';
  a.id = 'mic-grant';
  showNotice('Microphone not allowed. Chrome does not ask for it inside the side panel: ', 'error', [a, document.createTextNode(' (opens a page that asks once), then come back and try again.')]);
}

export async function micUp() {
  const cap = state.capture;
  if (!cap) return;
  if (!state.toggleMode && Date.now() - state.pressStarted < 300) { state.toggleMode = true; return; } // a click: keep listening until the next
  state.toggleMode = false;
  state.capture = null;
  setMic(false, state.listenMode === 'server' ? 'Recognising (offline engine on the server)…' : 'Recognising…');
  try {
    const heard = await cap.stop();
    state.voiceLog.push({ event: 'heard', text: heard.text, via: heard.via, engine: heard.engine, grammar: heard.grammar, warm: heard.warm, elapsedMs: heard.elapsedMs, ...heard.timings });
    setMic(false, heard.text ? `Heard: "${heard.text}"` : 'Heard nothing.');
    if (!heard.text) return;
    if (state.recording) {
      // while showing a skill, speech narrates the demonstration: it is not run as a command
      addNarration(heard.text);
      state.voiceLog.push({ event: 'narration', text: heard.text });
      return;
    }
    await handleUtterance(heard.text);
  } catch (e) {
    cap.cancel();
    setMic(false, '');
    if (e instanceof MicNotAllowed) micNotAllowed();
    else showNotice(`Could not transcribe: ${e instanceof Error ? e.message : e}`);
  }
}

/**
 * @param {boolean} on
 * @param {string} text
 */
function setMic(on, text) {
  $('mic').setAttribute('aria-pressed', String(on));
  $('mic').textContent = on ? (state.recording ? '● Listening (release to add to the narration)' : '● Listening (release to send)') : 'Hold to talk';
  $('voice-state').textContent = text;
}
