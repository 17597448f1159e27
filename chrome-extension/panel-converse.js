// @ts-check
// Voice in a conversation with the task: what was said answers what the task waits for (a
// confirmation, a question, a hand-over), stops it, or becomes a new request (converse.js
// decides, this module acts); and what the task waits for is said aloud once.

import { api, ApiError } from './panel-api.js';
import { promptFor, route } from './converse.js';
import { showNotice } from './panel-dom.js';
import { speaker, state } from './panel-state.js';
import { confirm, stop, submit } from './panel-task.js';

/** @typedef {import('./converse.js').Decision} Decision */

/**
 * What the offline grammar should expect: the shown task's status and its question's choices
 * (sent with the recording to POST /api/transcribe as state and choices).
 * @returns {{state: string, choices: string[]}}
 */
export function listeningFor() {
  const t = /** @type {import('./converse.js').ConverseTask|null} */ (state.task);
  if (!t?.id) return { state: '', choices: [] };
  return { state: t.status || '', choices: t.status === 'waiting_input' ? (t.question?.choices || []) : [] };
}

/**
 * Acts on an utterance: answers what the task waits for, stops it, or sends it as a new
 * request. Returns the decision (the voice log records it with when it was applied).
 * @param {string} text
 * @returns {Promise<Decision>}
 */
export async function handleUtterance(text) {
  const t = /** @type {import('./converse.js').ConverseTask|null} */ (state.task);
  const d = route(t, text);
  const entry = { event: 'routed', text, kind: d.kind, at: Date.now(), appliedAt: 0, error: '' };
  state.voiceLog.push(entry);
  try {
    switch (d.kind) {
      case 'command':
        /** @type {HTMLTextAreaElement} */ (document.getElementById('request')).value = d.text;
        await submit(d.text, { spoken: true });
        break;
      case 'confirm':
        setVoiceState(d.approve ? 'Approving…' : 'Refusing…');
        await confirm(d.approve, d.stepId);
        setVoiceState(d.approve ? 'Approved.' : 'Refused.');
        break;
      case 'answer':
        setVoiceState(`Answering "${d.answer}"…`);
        await api('POST', `/api/tasks/${encodeURIComponent(d.taskId)}/answer`, { body: { questionId: d.questionId, answer: d.answer } });
        setVoiceState(`Answered "${d.answer}".`);
        break;
      case 'continue':
        setVoiceState('Continuing…');
        await api('POST', `/api/tasks/${encodeURIComponent(d.taskId)}/continue`, { body: { handoverId: d.handoverId } });
        setVoiceState('Continued.');
        break;
      case 'stop':
        setVoiceState('Stopping…');
        await stop();
        break;
      case 'again':
        setVoiceState(d.say);
        void speaker.speak(d.say);
        break;
      case 'quiet':
        speaker.stop();
        setVoiceState('Nothing is running.');
        break;
    }
    entry.appliedAt = Date.now();
  } catch (e) {
    entry.error = e instanceof Error ? e.message : String(e);
    const gone = e instanceof ApiError && e.status === 409;
    showNotice(gone ? `Too late: the task no longer waits for that (${entry.error}).` : `Could not apply "${text}": ${entry.error}`);
  }
  return d;
}

/**
 * Says what the shown task waits for (its confirmation, question or hand-over), once each.
 * panel-task.js calls it whenever it draws the task.
 * @param {import('./converse.js').ConverseTask|null} t
 */
export function announce(t) {
  const p = promptFor(t);
  if (!p || state.announced === p.key) return;
  state.announced = p.key;
  state.voiceLog.push({ event: 'prompt', key: p.key, text: p.text, at: Date.now() });
  // the microphone is open: the prompt would be recorded with the answer (it is on screen)
  if (state.capture) return;
  void speaker.speak(p.text);
}

/** @param {string} text */
function setVoiceState(text) {
  const e = document.getElementById('voice-state');
  if (e) e.textContent = text;
}
