// @ts-check
// The side panel: status at a glance (server, pairing, this tab), a request box with
// push-to-talk, the live task (plan stepper, steps, confirmation, answer, Stop), skills (search,
// run with parameters, record and save) and recent tasks with their reports.
//
// Opened as a tab (chrome-extension://<id>/sidepanel.html) it works the same; ?tabId=N picks the
// browser tab it is about (otherwise the active tab of its window, or the last one used).
//
// This file wires the page's controls and starts the panel; the work is in the panel-*.js
// modules, by concern:
//   panel-state.js    the one state object (and the speaker)
//   panel-dom.js      DOM helpers, the notice and the status pills
//   panel-status.js   server, pairing and sharing state; Share / Stop sharing
//   panel-task.js     requests and the live task view
//   panel-mic.js      push-to-talk
//   panel-converse.js what an utterance does to the waiting task; saying its prompt (converse.js decides)
//   panel-skills.js   skills: search, run, approve
//   panel-record.js   recording skills, reviewing and saving drafts
//   panel-history.js  recent tasks and their reports
//   panel-model.js    the model in use, or that only simple commands run without one
//   panel-api.js      the server's HTTP API; panel-voice.js capture and speech

import { $ } from './panel-dom.js';
import { loadRecent } from './panel-history.js';
import { loadVoice, micDown, micUp } from './panel-mic.js';
import { record, saveDraft } from './panel-record.js';
import { loadModelHint } from './panel-model.js';
import { loadSkills, runSkill } from './panel-skills.js';
import { speaker, state } from './panel-state.js';
import { refresh, share } from './panel-status.js';
import { confirm, forgetOtherTabsTask, stop, submit } from './panel-task.js';
import { SESSION_KEY } from './worker-state.js';


$('ask').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void submit(/** @type {HTMLTextAreaElement} */ ($('request')).value);
});
$('request').addEventListener('keydown', (ev) => {
  if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
    ev.preventDefault();
    void submit(/** @type {HTMLTextAreaElement} */ ($('request')).value);
  }
});
$('share').addEventListener('click', () => { void share(true); });
$('unshare').addEventListener('click', () => { void share(false); });
$('stop').addEventListener('click', () => { void stop(); });
$('approve').addEventListener('click', () => { void confirm(true); });
$('refuse').addEventListener('click', () => { void confirm(false); });
$('mic').addEventListener('pointerdown', (ev) => { ev.preventDefault(); void micDown(); });
$('mic').addEventListener('pointerup', () => { void micUp(); });
$('mic').addEventListener('pointerleave', () => { if (state.capture && !state.toggleMode) void micUp(); });
$('mute').addEventListener('click', () => {
  speaker.muted = !speaker.muted;
  if (speaker.muted) speaker.stop();
  $('mute').setAttribute('aria-pressed', String(speaker.muted));
  $('mute').textContent = speaker.muted ? 'Sound off' : 'Sound on';
  void chrome.storage.local.set({ panelMuted: speaker.muted });
});
// Hold Ctrl+Space anywhere in the panel to talk.
document.addEventListener('keydown', (ev) => {
  if (ev.code === 'Space' && ev.ctrlKey && !ev.repeat) { ev.preventDefault(); state.pressStarted = 0; void micDown(); }
});
document.addEventListener('keyup', (ev) => {
  if (ev.code === 'Space' && state.capture) { ev.preventDefault(); state.toggleMode = false; state.pressStarted = 0; void micUp(); }
});
$('skills-q').addEventListener('input', () => { clearTimeout(state.skillTimer); state.skillTimer = setTimeout(() => { void loadSkills(); }, 200); });
$('skill-form').addEventListener('submit', (ev) => { ev.preventDefault(); void runSkill(); });
$('skill-cancel').addEventListener('click', () => { $('skill-form').hidden = true; });
$('record').addEventListener('click', () => { void record(true); });
$('record-stop').addEventListener('click', () => { void record(false); });
// Enter in the narration is a new line, never a command (the field sits outside the request form;
// this keeps a keydown from reaching any other handler).
$('record-narration').addEventListener('keydown', (ev) => { if (ev.key === 'Enter') ev.stopPropagation(); });
$('draft').addEventListener('submit', (ev) => { ev.preventDefault(); void saveDraft(); });
$('draft-discard').addEventListener('click', () => { $('draft').hidden = true; });

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === 'local' && ('relayAddr' in changes || 'token' in changes)) void start();
  // the service worker saved its shared tabs (a tab shared or not any more, sharing stopped):
  // the panel says so at once, not at its next periodic reading
  if (area === 'session' && SESSION_KEY in changes) {
    state.marks.sharingChanged = Date.now();
    void refresh().then(() => { state.marks.sharingShown = Date.now(); });
  }
});
// a task that ended in another tab is not this tab's: it goes when the panel follows the switch
chrome.tabs.onActivated.addListener(() => { void refresh().then(forgetOtherTabsTask); });
chrome.tabs.onUpdated.addListener((tabId, change) => { if (tabId === state.tabId && change.status === 'complete') void refresh(); });

async function start() {
  await refresh();
  if (state.server === 'up' && state.pairing === 'ok') {
    await Promise.all([loadVoice(), loadSkills(), loadRecent(), loadModelHint()]);
  }
}

// The end-to-end tests drive and read the panel through these.
Object.assign(globalThis, {
  tabrelayPanel: {
    state, refresh, submit, stop, confirm, loadSkills, loadRecent, loadVoice, loadModelHint, micDown, micUp, speaker,
    get listenMode() { return state.listenMode; },
  },
});

const { panelMuted } = await chrome.storage.local.get('panelMuted');
if (panelMuted) $('mute').click();
await start();
setInterval(() => {
  if (state.capture) return;
  void refresh().then(() => {
    if (state.server === 'up' && !state.voice) return start();
    if (state.server === 'up' && state.pairing === 'ok') return loadModelHint();
    return undefined;
  });
}, 3000);
