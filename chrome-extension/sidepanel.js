// The side panel: status at a glance (server, pairing, this tab), a request box with
// push-to-talk, the live task (plan stepper, steps, confirmation, answer, Stop), skills (search,
// run with parameters, record and save) and recent tasks with their reports.
//
// Opened as a tab (chrome-extension://<id>/sidepanel.html) it works the same; ?tabId=N picks the
// browser tab it is about (otherwise the active tab of its window, or the last one used).

import { api, ApiError, followTask, downloadReport, settings } from './panel-api.js';
import { Capture, MicNotAllowed, Speaker, chooseListener } from './panel-voice.js';

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));
const el = (/** @type {string} */ tag, /** @type {string} */ cls = '', /** @type {string} */ text = '') => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text) e.textContent = text;
  return e;
};

/** @typedef {{text: string, status: 'pending'|'active'|'done'|'failed'}} PlanItem */
/** @typedef {{id: string, index: number, tool: string, args?: any, status: string, result?: string, error?: string, thought?: string, confirmation?: {reason: string, prompt: string, approved?: boolean}}} Step */
/** @typedef {{id: string, goal: string, status: string, plan: PlanItem[], steps: Step[], answer?: string, error?: string, model?: string, created_at?: string, prose?: string, spoken?: boolean}} Task */

const state = {
  /** @type {'unknown'|'down'|'up'} */ server: 'unknown',
  /** @type {'unknown'|'unpaired'|'rejected'|'ok'} */ pairing: 'unknown',
  /** @type {number|undefined} */ tabId: undefined,
  /** the shared tab's target id, '' when this tab is not shared */ targetId: '',
  addr: '',
  /** @type {Task|null} */ task: null,
  /** @type {AbortController|null} */ follow: null,
  /** @type {import('./panel-voice.js').VoiceStatus|null} */ voice: null,
  /** @type {Capture|null} */ capture: null,
  /** @type {any[]} */ skills: [],
  /** @type {any} */ selectedSkill: null,
  /** the task whose healed skill draft was last offered */ draftFor: '',
  recording: false,
  /** @type {any[]} */ voiceLog: [],
  /** @type {any[]} */ downloads: [],
  /** @type {string} */ notice: '',
  /** when things first showed (Date.now()), for latency measurements: confirmShown */
  /** @type {Record<string, number>} */ marks: {},
};
const speaker = new Speaker();

// ---------------------------------------------------------------------------------------------
// Status

/**
 * @param {string} text
 * @param {'error'|'info'} [kind]
 * @param {HTMLElement[]} [extra] elements appended (links, buttons)
 */
function showNotice(text, kind = 'error', extra = []) {
  const n = $('notice');
  n.replaceChildren(document.createTextNode(text), ...extra);
  n.className = kind === 'info' ? 'info' : '';
  n.hidden = !text;
  state.notice = text;
}

/**
 * @param {string} id
 * @param {string} text
 * @param {'ok'|'bad'|'warn'|''} kind
 */
function pill(id, text, kind) {
  const p = $(id);
  p.textContent = text;
  p.className = `pill ${kind}`;
}

/** The browser tab this panel is about. */
async function currentTabId() {
  const q = new URLSearchParams(location.search).get('tabId');
  if (q) return Number(q);
  const [active] = await chrome.tabs.query({ active: true, currentWindow: true });
  const self = chrome.runtime.getURL('');
  if (active && !(active.url || '').startsWith(self)) return active.id;
  // opened as a tab: the most recently used web tab
  const tabs = (await chrome.tabs.query({})).filter((t) => !(t.url || '').startsWith(self) && /^(https?|file):/.test(t.url || ''));
  tabs.sort((a, b) => (b.lastAccessed || 0) - (a.lastAccessed || 0));
  return tabs[0]?.id;
}

/** @type {Promise<void> | null} the reading under way */
let reading = null;
/** @type {Promise<void> | null} the reading that starts when it ends, shared by all who asked meanwhile */
let nextReading = null;

/**
 * Re-reads the server, pairing and sharing state and shows it. Readings never overlap (an
 * older one finishing late used to paint "Server running" over a newer "not running"), and
 * whoever asks while one is under way gets the next one, started after it: never a reading
 * older than the question, and never a growing queue.
 * @returns {Promise<void>}
 */
function refresh() {
  if (!reading) {
    reading = readState().finally(() => { reading = null; });
    return reading;
  }
  nextReading ||= reading.catch(() => {}).then(() => { nextReading = null; return refresh(); });
  return nextReading;
}

/** One reading of the server, pairing and sharing state; only refresh calls it. */
async function readState() {
  const { addr, token } = await settings();
  state.addr = addr;
  state.tabId = await currentTabId();
  let health = null;
  try {
    const r = await fetch(`http://${addr}/health`, { cache: 'no-store', signal: AbortSignal.timeout(3000) });
    health = r.ok ? await r.json() : null;
  } catch { /* not running */ }
  if (!health) {
    showServerDown(addr);
    return;
  }
  state.server = 'up';
  pill('srv', 'Server running', 'ok');
  if (!token) {
    state.pairing = 'unpaired';
    pill('pair', 'Not paired', 'bad');
    showNotice('Not paired with the server yet: open the pairing link the server printed, or paste the token in the ', 'error', [optionsLink('extension options'), document.createTextNode('.')]);
    pill('tabstate', 'Tab ?', '');
    $('share').hidden = $('unshare').hidden = true;
    return;
  }
  /** @type {{targetId: string, tabId?: number}[]} */
  let tabs = [];
  try {
    tabs = (await api('GET', '/api/tabs', { timeout: 5000 })).tabs || [];
    state.pairing = 'ok';
    pill('pair', 'Paired', 'ok');
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      state.pairing = 'rejected';
      pill('pair', 'Token rejected', 'bad');
      showNotice(`Pairing token rejected: ${e.body?.notProved ? e.message.replace(/\.$/, '') : `the server at ${addr} does not accept this token`}. Open a pairing link (\`tabrelay pair\` prints one), or paste the token from "tabrelay token" into the `, 'error', [optionsLink('extension options'), document.createTextNode('.')]);
      pill('tabstate', 'Tab ?', '');
      $('share').hidden = $('unshare').hidden = true;
      return;
    }
    if (e instanceof ApiError && e.status === 0) { // it stopped since /health answered
      showServerDown(addr);
      return;
    }
    pill('pair', 'Pairing ?', 'warn');
    showNotice(e instanceof Error ? e.message : String(e));
    return;
  }
  /** @type {any} */
  let ext = null;
  try {
    ext = await Promise.race([chrome.runtime.sendMessage({ type: 'status' }), new Promise((r) => setTimeout(r, 2000, null))]);
  } catch { /* worker asleep */ }
  const mine = ext?.sharedTabs?.find((/** @type {any} */ t) => t.tabId === state.tabId);
  const listed = mine && tabs.some((t) => t.targetId === mine.targetId);
  state.targetId = mine && (listed || !tabs.length) ? mine.targetId : (mine?.targetId || '');
  if (state.targetId) {
    pill('tabstate', 'This tab is shared', 'ok');
    $('share').hidden = true;
    $('unshare').hidden = false;
    showNotice('');
  } else {
    pill('tabstate', 'This tab is not shared', 'warn');
    $('share').hidden = state.tabId === undefined;
    $('unshare').hidden = true;
    showNotice(state.tabId === undefined
      ? 'No tab to work on: open a web page next to this panel.'
      : 'This tab is not shared with tabrelay: click "Share this tab" (or the tabrelay icon) so the agent can see and act on it.', 'info');
  }
}

/**
 * Shows that the server does not answer at addr.
 * @param {string} addr
 */
function showServerDown(addr) {
  state.server = 'down';
  state.pairing = 'unknown';
  state.targetId = '';
  pill('srv', 'Server not running', 'bad');
  pill('pair', 'Pairing ?', '');
  pill('tabstate', 'Tab ?', '');
  $('share').hidden = $('unshare').hidden = true;
  showNotice(`tabrelay server not running at ${addr}. Start it with "tabrelay" (or "go run ./cmd/tabrelay") and this panel reconnects by itself.`);
}

/** @param {string} text */
function optionsLink(text) {
  const a = /** @type {HTMLAnchorElement} */ (el('a', '', text));
  a.href = chrome.runtime.getURL('options.html');
  a.target = '_blank';
  return a;
}

async function share(on = true) {
  if (state.tabId === undefined) return;
  const btn = /** @type {HTMLButtonElement} */ ($(on ? 'share' : 'unshare'));
  btn.disabled = true;
  try {
    const r = await chrome.runtime.sendMessage({ type: on ? 'share' : 'unshare', tabId: state.tabId });
    if (r?.error) showNotice(`Could not ${on ? 'share' : 'stop sharing'} this tab: ${r.error}`);
  } catch (e) {
    showNotice(`Could not reach the extension: ${e}. Click the tabrelay icon on the tab instead.`);
  } finally {
    btn.disabled = false;
  }
  for (let i = 0; i < 20; i++) {
    await refresh();
    if (!!state.targetId === on) break;
    await new Promise((r) => setTimeout(r, 250));
  }
}

// ---------------------------------------------------------------------------------------------
// Requests and the live task

/** Makes sure the tab is shared before sending; says what to do otherwise. */
async function ready() {
  await refresh();
  if (state.server !== 'up' || state.pairing !== 'ok') return false;
  if (!state.targetId) {
    showNotice('This tab is not shared with tabrelay: share it first ("Share this tab" above), then send your request again.');
    return false;
  }
  return true;
}

/**
 * Sends a typed or spoken request: simple commands run at once through the fast path, the rest
 * becomes a model task; the live view follows either.
 * @param {string} text
 * @param {{spoken?: boolean, approve?: boolean}} [opts] approve: run a named skill's steps that need confirmation (the user approved them)
 */
async function submit(text, opts = {}) {
  text = text.trim();
  if (!text) return null;
  if (!(await ready())) return null;
  const sentAt = Date.now();
  startView({ id: '', goal: text, status: 'planning', plan: [], steps: [] });
  try {
    // wait: false answers at once with the new task; the live view follows its events
    const res = await api('POST', '/api/command', { body: { text, tab: state.targetId, wait: false, approve: !!opts.approve }, timeout: 15000 });
    if (opts.spoken) state.voiceLog.push({ event: 'command-started', at: Date.now(), fastPath: !!res.fast_path, skill: res.skill || '', sentAt });
    attach(res);
    return res;
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    if (e instanceof ApiError && e.status === 409 && Array.isArray(e.body?.confirm)) {
      // a named skill with risky steps: nothing ran; the user approves them (or not) first
      if (state.task) {
        state.task.status = 'waiting_confirmation';
        state.task.plan = e.body.confirm.map((/** @type {any} */ x) => ({ text: `${String(x)} (approve below)`, status: 'pending' }));
        render();
      }
      const shown = state.task;
      askSkillApproval(e.body.skill || '', e.body.confirm, () => { void submit(text, { ...opts, approve: true }); }, () => {
        if (state.task !== shown || !shown) return;
        shown.status = 'cancelled';
        shown.error = 'not approved: nothing was done';
        render();
      });
    } else if (e instanceof ApiError && e.body?.needsModel) {
      finishView('failed', `No language model configured, so only simple commands work (like "click sign in" or "scroll down").\n${msg}`);
    } else {
      finishView('failed', msg);
      if (e instanceof ApiError && (e.status === 0 || e.status === 401)) void refresh();
    }
    return null;
  }
}

/** @param {number} n */
async function listTasks(n) {
  try { return (await api('GET', `/api/tasks?limit=${n}`, { timeout: 5000 })).tasks || []; } catch { return []; }
}

/** @param {string} s */
function isDone(s) { return s === 'succeeded' || s === 'failed' || s === 'cancelled'; }

/** @param {Task} t */
function startView(t) {
  state.follow?.abort();
  state.follow = null;
  state.task = t;
  $('task').hidden = false;
  $('answer').hidden = true;
  $('confirm').hidden = true;
  render();
}

/**
 * Shows a task and follows its events until it ends.
 * @param {Task} t
 */
function attach(t) {
  state.follow?.abort();
  state.task = structuredClone(t);
  state.task.plan ||= [];
  state.task.steps ||= [];
  $('task').hidden = false;
  render();
  if (isDone(t.status)) { done(); return; }
  const ac = new AbortController();
  state.follow = ac;
  followTask(t.id, onEvent, ac.signal).catch((e) => {
    if (ac.signal.aborted) return;
    console.warn('task events', e);
  }).finally(async () => {
    if (ac.signal.aborted || !state.task || state.task.id !== t.id || isDone(state.task.status)) return;
    try { applyTask(await api('GET', `/api/tasks/${t.id}`)); } catch { /* keep what we have */ }
  });
}

/**
 * @param {string} type
 * @param {any} ev
 */
function onEvent(type, ev) {
  const t = state.task;
  if (!t) return;
  switch (type) {
    case 'task':
      applyTask(ev);
      return;
    case 'status':
      t.status = ev.status || t.status;
      break;
    case 'plan':
      t.plan = ev.plan || [];
      break;
    case 'step_started':
    case 'step_finished':
    case 'confirmation_needed':
      if (ev.step) upsertStep(ev.step);
      if (type === 'step_started') t.prose = '';
      if (type === 'confirmation_needed') t.status = 'waiting_confirmation';
      else if (t.status === 'waiting_confirmation') t.status = 'running';
      break;
    case 'text':
      // streamed model prose: the latest thought, shown while the task runs
      t.prose = ((t.prose || '') + (ev.text || '')).slice(-600);
      break;
    case 'answer':
      t.answer = ev.answer || t.answer;
      t.error = ev.error || t.error;
      if (ev.status) t.status = ev.status;
      else if (!isDone(t.status)) t.status = ev.error ? 'failed' : 'succeeded';
      break;
    default:
      return;
  }
  render();
  // the answer (or the final state) follows a final status: speak once it is there
  if (type === 'answer' && isDone(t.status)) done();
}

/** @param {Task} full */
function applyTask(full) {
  if (!state.task || (state.task.id && full.id !== state.task.id)) return;
  const wasDone = isDone(state.task.status);
  state.task = { ...full, plan: full.plan || [], steps: full.steps || [] };
  render();
  if (isDone(full.status) && !wasDone) done();
}

/** @param {Step} s */
function upsertStep(s) {
  const t = /** @type {Task} */ (state.task);
  const i = t.steps.findIndex((x) => x.id === s.id);
  if (i >= 0) t.steps[i] = s;
  else t.steps.push(s);
}

/** The task ended: show the answer, speak it, refresh the recent list. */
function done() {
  const t = state.task;
  if (!t || t.spoken) return;
  t.spoken = true;
  render();
  const say = t.status === 'succeeded' ? (t.answer || 'Done.') : t.status === 'cancelled' ? 'Stopped.' : `That did not work: ${t.error || 'the task failed'}`;
  void speaker.speak(say);
  void loadRecent();
  void checkRunDraft(t);
}

/**
 * @param {'failed'|'succeeded'} status
 * @param {string} message
 */
function finishView(status, message) {
  state.task = { ...(state.task || { id: '', goal: '', plan: [], steps: [] }), status, error: status === 'failed' ? message : '', answer: status === 'succeeded' ? message : '' };
  render();
}

/** @param {any} args */
function describeArgs(args) {
  if (!args || typeof args !== 'object') return '';
  return Object.entries(args).filter(([k, v]) => v !== '' && v != null && k !== 'kind').map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v) : JSON.stringify(v)}`).join(' ');
}

/**
 * A step's result in words: the "message" of an action's JSON result, else the text.
 * @param {string} result
 */
function readable(result) {
  const line = result.split('\n')[0].replace(/^result:\s*/, '');
  if (!line.startsWith('{')) return result;
  try {
    const r = JSON.parse(line);
    return typeof r.message === 'string' ? r.message : result;
  } catch {
    return result;
  }
}

function render() {
  const t = state.task;
  if (!t) return;
  $('task-goal').textContent = t.goal;
  const st = $('task-status');
  st.textContent = (t.status || '').replace('_', ' ');
  st.className = `badge ${t.status}`;
  $('stop').hidden = !t.id || isDone(t.status);
  // plan stepper (the fast path has no plan: its steps stand in)
  const plan = $('plan');
  const items = t.plan.length ? t.plan : [];
  plan.replaceChildren(...items.map((p) => {
    // an item still active when the task ended: done if it succeeded, failed otherwise
    let status = p.status;
    if (status === 'active' && isDone(t.status)) status = t.status === 'succeeded' ? 'done' : 'failed';
    const li = el('li', status, p.text);
    li.dataset.status = status;
    return li;
  }));
  plan.hidden = !items.length;
  // steps
  const steps = $('steps');
  steps.replaceChildren(...t.steps.filter((s) => !['update_plan', 'finish', 'fail'].includes(s.tool)).map((s) => {
    const li = el('li', s.status);
    li.dataset.step = s.id;
    const act = el('div', 'act', s.confirmation?.prompt || `${s.tool} ${describeArgs(s.args)}`.trim());
    li.append(act);
    if (s.thought && !s.thought.startsWith('fast path')) li.append(el('div', 'res', s.thought));
    const res = s.error || readable(s.result || '');
    if (res) li.append(el('div', 'res', res.length > 400 ? `${res.slice(0, 400)}…` : res));
    return li;
  }));
  // confirmation
  const waiting = t.status === 'waiting_confirmation' && [...t.steps].reverse().find((s) => s.confirmation && s.confirmation.approved == null);
  const box = $('confirm');
  if (waiting) {
    const fresh = box.hidden || box.dataset.step !== waiting.id;
    if (fresh) state.marks.confirmShown = Date.now();
    box.hidden = false;
    if (fresh) box.scrollIntoView({ block: 'nearest' });
    box.dataset.step = waiting.id;
    $('confirm-reason').textContent = waiting.confirmation?.reason ? `(${waiting.confirmation.reason})` : '';
    $('confirm-text').textContent = waiting.confirmation?.prompt || `${waiting.tool} ${describeArgs(waiting.args)}`;
  } else {
    box.hidden = true;
  }
  // streamed prose of the model while it thinks
  const prose = $('prose');
  prose.textContent = t.prose || '';
  prose.hidden = !t.prose || isDone(t.status);
  // answer
  const ans = $('answer');
  if (isDone(t.status) || t.error) {
    ans.hidden = false;
    ans.className = t.status === 'succeeded' ? '' : 'failed';
    ans.textContent = t.status === 'succeeded' ? (t.answer || 'Done.') : t.status === 'cancelled' ? `Stopped.${t.error ? ` ${t.error}` : ''}` : (t.error || 'The task failed.');
  } else {
    ans.hidden = true;
  }
}

/** @param {boolean} approve */
async function confirm(approve) {
  const t = state.task;
  const stepId = $('confirm').dataset.step;
  if (!t?.id || !stepId) return;
  for (const b of ['approve', 'refuse']) /** @type {HTMLButtonElement} */ ($(b)).disabled = true;
  try {
    await api('POST', `/api/tasks/${t.id}/confirm`, { body: { stepId, approve } });
    const s = t.steps.find((x) => x.id === stepId);
    if (s?.confirmation) s.confirmation.approved = approve;
    if (t.status === 'waiting_confirmation') t.status = 'running';
    render();
  } catch (e) {
    showNotice(`Could not send your answer: ${e instanceof Error ? e.message : e}`);
  } finally {
    for (const b of ['approve', 'refuse']) /** @type {HTMLButtonElement} */ ($(b)).disabled = false;
  }
}

async function stop() {
  const t = state.task;
  if (!t?.id) return;
  /** @type {HTMLButtonElement} */ ($('stop')).disabled = true;
  try {
    const res = await api('POST', `/api/tasks/${t.id}/cancel`);
    applyTask(res);
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 409)) showNotice(`Could not stop the task: ${e instanceof Error ? e.message : e}`);
  } finally {
    /** @type {HTMLButtonElement} */ ($('stop')).disabled = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Voice

/** @type {'browser'|'server'|'browser-cloud'|'none'} */
let listenMode = 'none';

async function loadVoice() {
  try { state.voice = await api('GET', '/api/voice/status', { timeout: 5000 }); } catch { state.voice = null; }
  listenMode = await chooseListener(state.voice, navigator.language || 'en-US');
  const stt = listenMode === 'browser' ? 'Chrome (on device)' : listenMode === 'server' ? `server: ${state.voice?.stt.engine}` : listenMode === 'browser-cloud' ? 'Chrome' : 'none';
  const tts = Speaker.browserVoices() ? 'browser voices' : state.voice?.tts?.available ? `server: ${state.voice.tts.engine}` : 'none';
  $('voice-engine').textContent = `Voice: listening with ${stt}; speaking with ${tts}`;
  $('voice-engine').title = [state.voice?.stt.detail, state.voice?.stt.advice, state.voice?.tts.advice].filter(Boolean).join('\n');
}

let pressStarted = 0;
let toggleMode = false;

async function micDown() {
  if (state.capture) return;
  if (listenMode === 'none') await loadVoice();
  if (listenMode === 'none') {
    showNotice(state.server === 'up'
      ? `No speech recognition: ${state.voice?.stt.detail || 'the server has no engine'}. ${state.voice?.stt.advice || ''}`
      : 'No speech recognition: the tabrelay server is not running and this browser has no on-device recognition.');
    return;
  }
  pressStarted = Date.now();
  // the server's offline engine loads its model while the user speaks
  if (listenMode === 'server') api('POST', '/api/transcribe/warm', { timeout: 3000 }).catch(() => { /* an older server: decoded cold */ });
  const cap = new Capture({ mode: /** @type {any} */ (listenMode), lang: navigator.language || 'en-US', tab: () => state.targetId, accepts: state.voice?.accepts || [] });
  state.capture = cap;
  setMic(true, 'Listening…');
  try {
    await cap.start();
    state.voiceLog.push({ event: 'listening', mode: listenMode, ...cap.timings });
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

async function micUp() {
  const cap = state.capture;
  if (!cap) return;
  if (!toggleMode && Date.now() - pressStarted < 300) { toggleMode = true; return; } // a click: keep listening until the next
  toggleMode = false;
  state.capture = null;
  setMic(false, 'Transcribing…');
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
    /** @type {HTMLTextAreaElement} */ ($('request')).value = heard.text;
    await submit(heard.text, { spoken: true });
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

// ---------------------------------------------------------------------------------------------
// Skills

/** The URL of the tab this panel is about ('' when unknown). */
async function tabURL() {
  if (state.tabId == null) return '';
  try { return (await chrome.tabs.get(state.tabId)).url || ''; } catch { return ''; }
}

async function loadSkills() {
  const q = /** @type {HTMLInputElement} */ ($('skills-q')).value.trim();
  try {
    // a search ranks the skills for the tab's page (skills for other sites are left out)
    const qs = new URLSearchParams();
    if (q) {
      qs.set('q', q);
      const u = await tabURL();
      if (u) qs.set('url', u);
    }
    const r = await api('GET', `/api/skills${q ? `?${qs}` : ''}`, { timeout: 5000 });
    state.skills = r.skills || [];
  } catch (e) {
    state.skills = [];
    $('skills-list').replaceChildren(el('li', 'muted', e instanceof ApiError && e.status === 404 ? 'This server has no skills yet.' : `Skills unavailable: ${e instanceof Error ? e.message : e}`));
    return;
  }
  const ql = q.toLowerCase();
  const list = state.skills.filter((s) => !ql || `${s.name} ${s.description}`.toLowerCase().includes(ql) || s.score);
  $('skills-list').replaceChildren(...(list.length ? list.map((s) => {
    const li = el('li');
    li.dataset.skill = s.name;
    li.append(el('div', '', s.name), el('div', 'desc', s.description || ''));
    li.addEventListener('click', () => openSkill(s));
    return li;
  }) : [el('li', 'muted', q ? 'No skill matches.' : 'No skills yet: record one.')]));
}

/** @param {any} s */
function openSkill(s) {
  state.selectedSkill = s;
  $('skill-form-title').textContent = `${s.name}: ${s.description || ''}`;
  const params = $('skill-params');
  params.replaceChildren(...(s.parameters || []).map((/** @type {any} */ p) => {
    const label = el('label', '', `${p.name}${p.required ? ' *' : ''}${p.description ? ` (${p.description})` : ''}`);
    const input = /** @type {HTMLInputElement} */ (el('input'));
    input.name = p.name;
    input.placeholder = p.example || p.default || '';
    if (p.default) input.value = p.default;
    input.required = !!p.required;
    label.append(input);
    return label;
  }));
  $('skill-form').hidden = false;
  $('skill-result').hidden = true;
  const first = params.querySelector('input');
  if (first) first.focus();
}

/**
 * Asks the user to approve a skill's flagged steps before it runs (nothing has run yet): lists
 * exactly which, with Approve and run, and Cancel.
 * @param {string} name the skill
 * @param {any[]} steps the steps that need confirmation, described
 * @param {() => void} onApprove runs the skill again, approved
 * @param {() => void} [onCancel]
 */
function askSkillApproval(name, steps, onApprove, onCancel) {
  const out = $('skill-result');
  out.hidden = false;
  out.dataset.status = 'confirm';
  const list = el('ul');
  for (const step of steps) list.append(el('li', '', String(step)));
  const go = /** @type {HTMLButtonElement} */ (el('button', '', 'Approve and run'));
  go.id = 'skill-approve';
  go.type = 'button';
  go.addEventListener('click', () => { out.hidden = true; onApprove(); });
  const no = /** @type {HTMLButtonElement} */ (el('button', 'link', 'Cancel'));
  no.type = 'button';
  no.addEventListener('click', () => { out.hidden = true; onCancel?.(); });
  const row = el('div', 'row');
  row.append(go, no);
  out.replaceChildren(el('strong', '', `${name || 'The skill'} will do steps that need your confirmation:`), list, row);
  out.classList.add('confirm');
  const section = out.closest('details');
  if (section) section.open = true;
  out.scrollIntoView({ block: 'nearest' });
  go.focus();
}

/** @param {boolean} [approve] run steps that need confirmation (the user approved them) */
async function runSkill(approve = false) {
  const s = state.selectedSkill;
  if (!s || !(await ready())) return;
  /** @type {Record<string, string>} */
  const params = {};
  for (const i of /** @type {NodeListOf<HTMLInputElement>} */ ($('skill-params').querySelectorAll('input'))) if (i.value) params[i.name] = i.value;
  const out = $('skill-result');
  out.hidden = false;
  out.classList.remove('confirm');
  out.textContent = `Running ${s.name}…`;
  /** @type {HTMLButtonElement} */ ($('skill-run')).disabled = true;
  // follow the run's task live when it appears
  const known = new Set((await listTasks(5)).map((t) => t.id));
  let settled = false;
  const poll = (async () => {
    while (!settled) {
      await new Promise((r) => setTimeout(r, 200));
      const t = (await listTasks(5)).find((x) => !known.has(x.id));
      if (t && !settled) { attach(t); return; }
    }
  })();
  try {
    const r = await api('POST', `/api/skills/${encodeURIComponent(s.name)}/run`, { body: { params, tab: state.targetId, approve }, timeout: 600000 });
    settled = true;
    out.textContent = `${s.name}: ${r.status}${r.error ? ` — ${r.error}` : ''}${r.output ? `\n${r.output}` : ''} (${(r.steps || []).length} steps, ${r.durationMs} ms${r.handovers ? `, ${r.handovers} handed to the model` : ''})`;
    out.dataset.status = r.status;
    $('skill-form').hidden = true;
    if (r.draft) offerRunDraft({ taskId: r.taskId, skill: s.name, markdown: r.draft });
    // show the run's task (steps, report) without holding the Run button meanwhile
    if (r.taskId) api('GET', `/api/tasks/${r.taskId}`).then(attach, () => { /* not stored */ });
  } catch (e) {
    settled = true;
    if (e instanceof ApiError && e.status === 409 && Array.isArray(e.body?.confirm)) {
      askSkillApproval(s.name, e.body.confirm, () => { void runSkill(true); });
      return;
    }
    out.dataset.status = 'failed';
    out.textContent = `${s.name} could not run: ${e instanceof Error ? e.message : e}${e instanceof ApiError && e.body?.missing ? ` (missing: ${e.body.missing.join(', ')})` : ''}`;
  } finally {
    settled = true;
    /** @type {HTMLButtonElement} */ ($('skill-run')).disabled = false; // at once: the poll may sleep on
    await poll;
  }
}

/** @param {boolean} start */
async function record(start) {
  if (start && !(await ready())) return;
  try {
    if (start) {
      await api('POST', '/api/skills/record/start', { body: { tab: state.targetId } });
      state.recording = true;
      /** @type {HTMLTextAreaElement} */ ($('record-narration')).value = '';
      $('record-state').hidden = false;
      $('record-state').textContent = 'Recording: do the task in the tab once, then press Stop recording.';
    } else {
      // what the user typed or said while showing (the field below the Record button)
      const narration = /** @type {HTMLTextAreaElement} */ ($('record-narration')).value.trim();
      const d = await api('POST', '/api/skills/record/stop', { body: { tab: state.targetId, narration } });
      state.recording = false;
      $('record-state').hidden = true;
      showDraft(d.skill?.name || '', d.markdown || '', 'Review the recorded skill (markdown)', 'Review the steps and the description, then save.');
    }
  } catch (e) {
    showNotice(`Recording: ${e instanceof Error ? e.message : e}`);
    if (!start) state.recording = false;
  }
  $('record').hidden = state.recording;
  $('record-stop').hidden = !state.recording;
  $('record-narration-box').hidden = !state.recording;
  if (state.recording) $('record-narration').focus();
}

/**
 * Adds what the user said while recording to the narration (it is not a command).
 * @param {string} text
 */
function addNarration(text) {
  const n = /** @type {HTMLTextAreaElement} */ ($('record-narration'));
  const cur = n.value.trimEnd();
  n.value = cur ? `${cur} ${text}` : text;
}

/**
 * Shows a skill draft to review and save (a recording's, or a run's the model healed).
 * @param {string} name
 * @param {string} markdown
 * @param {string} label
 * @param {string} note
 */
function showDraft(name, markdown, label, note) {
  $('draft').hidden = false;
  $('draft-label').textContent = label;
  /** @type {HTMLInputElement} */ ($('draft-name')).value = name;
  /** @type {HTMLTextAreaElement} */ ($('draft-md')).value = markdown;
  $('draft-result').textContent = note;
  const section = $('draft').closest('details');
  if (section) section.open = true;
}

/**
 * Offers the updated skill a run produced when the model did a step differently than written
 * (once per run: the user's edits are not overwritten).
 * @param {{taskId?: string, skill: string, markdown: string}} d
 */
function offerRunDraft(d) {
  if (!d?.markdown || (d.taskId && state.draftFor === d.taskId)) return;
  state.draftFor = d.taskId || '';
  showDraft(d.skill, d.markdown, `Review the updated skill ${d.skill} (markdown)`,
    `The model did a step of ${d.skill} differently than written. Review the change and save it to replay it this way without the model.`);
}

/**
 * After a skill's run in the background (a command naming it), offers its healed draft if any.
 * @param {Task} t
 */
async function checkRunDraft(t) {
  if (!t.id || t.status !== 'succeeded' || !(t.model || '').startsWith('skill:') || state.draftFor === t.id) return;
  try {
    offerRunDraft(await api('GET', `/api/skills/drafts/${encodeURIComponent(t.id)}`, { timeout: 5000 }));
  } catch { /* 404: the run went as written */ }
}

async function saveDraft() {
  const name = /** @type {HTMLInputElement} */ ($('draft-name')).value.trim();
  const markdown = /** @type {HTMLTextAreaElement} */ ($('draft-md')).value;
  try {
    const r = await api('PUT', `/api/skills/${encodeURIComponent(name)}`, { body: { markdown } });
    $('draft-result').textContent = `Saved "${r.skill?.name || name}".`;
    $('draft').hidden = true;
    await loadSkills();
  } catch (e) {
    $('draft-result').textContent = `Not saved: ${e instanceof Error ? e.message : e}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Recent tasks

async function loadRecent() {
  const tasks = await listTasks(10);
  $('recent').replaceChildren(...(tasks.length ? tasks.map((t) => {
    const li = el('li');
    li.dataset.task = t.id;
    const goal = el('div', '', t.goal);
    goal.style.cursor = 'pointer';
    goal.addEventListener('click', () => attach(t));
    li.append(goal, el('div', 'meta', `${t.status} · ${new Date(t.created_at).toLocaleTimeString()}`));
    for (const [fmt, label] of /** @type {const} */ ([['json', 'JSON'], ['csv', 'CSV'], ['markdown', 'Markdown']])) {
      const a = /** @type {HTMLAnchorElement} */ (el('a', '', label));
      a.href = '#';
      a.dataset.format = fmt;
      a.addEventListener('click', (ev) => {
        ev.preventDefault();
        downloadReport(t.id, fmt).then((d) => state.downloads.push({ task: t.id, format: fmt, ...d }), (e) => showNotice(`Report: ${e.message}`));
      });
      li.append(a);
    }
    return li;
  }) : [el('li', 'muted', 'No tasks yet.')]));
}

// ---------------------------------------------------------------------------------------------
// Wiring

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
$('mic').addEventListener('pointerleave', () => { if (state.capture && !toggleMode) void micUp(); });
$('mute').addEventListener('click', () => {
  speaker.muted = !speaker.muted;
  if (speaker.muted) speaker.stop();
  $('mute').setAttribute('aria-pressed', String(speaker.muted));
  $('mute').textContent = speaker.muted ? 'Sound off' : 'Sound on';
  void chrome.storage.local.set({ panelMuted: speaker.muted });
});
// Hold Ctrl+Space anywhere in the panel to talk.
document.addEventListener('keydown', (ev) => {
  if (ev.code === 'Space' && ev.ctrlKey && !ev.repeat) { ev.preventDefault(); pressStarted = 0; void micDown(); }
});
document.addEventListener('keyup', (ev) => {
  if (ev.code === 'Space' && state.capture) { ev.preventDefault(); toggleMode = false; pressStarted = 0; void micUp(); }
});
let skillTimer = 0;
$('skills-q').addEventListener('input', () => { clearTimeout(skillTimer); skillTimer = setTimeout(() => { void loadSkills(); }, 200); });
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
});
chrome.tabs.onActivated.addListener(() => { void refresh(); });
chrome.tabs.onUpdated.addListener((tabId, change) => { if (tabId === state.tabId && change.status === 'complete') void refresh(); });

async function start() {
  await refresh();
  if (state.server === 'up' && state.pairing === 'ok') {
    await Promise.all([loadVoice(), loadSkills(), loadRecent()]);
  }
}

// The end-to-end tests drive and read the panel through these.
Object.assign(globalThis, {
  tabrelayPanel: {
    state, refresh, submit, stop, confirm, loadSkills, loadRecent, loadVoice, micDown, micUp, speaker,
    get listenMode() { return listenMode; },
  },
});

const { panelMuted } = await chrome.storage.local.get('panelMuted');
if (panelMuted) $('mute').click();
await start();
setInterval(() => { if (!state.capture) void refresh().then(() => (state.server === 'up' && !state.voice ? start() : undefined)); }, 3000);
