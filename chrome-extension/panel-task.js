// @ts-check
// Requests and the live task: sending a typed or spoken request, following the task's events
// (plan stepper, steps, confirmation, streamed prose, answer), approving and stopping.

import { api, ApiError, followTask } from './panel-api.js';
import { spokenSummary } from './converse.js';
import { announce } from './panel-converse.js';
import { $, el, showNotice } from './panel-dom.js';
import { loadRecent } from './panel-history.js';
import { checkRunDraft } from './panel-record.js';
import { askSkillApproval } from './panel-skills.js';
import { speaker, state } from './panel-state.js';
import { ready, refresh } from './panel-status.js';

/** @typedef {import('./panel-state.js').Task} Task */
/** @typedef {import('./panel-state.js').Step} Step */

/**
 * Sends a typed or spoken request: simple commands run at once through the fast path, the rest
 * becomes a model task; the live view follows either.
 * @param {string} text
 * @param {{spoken?: boolean, approve?: boolean}} [opts] approve: run a named skill's steps that need confirmation (the user approved them)
 */
export async function submit(text, opts = {}) {
  text = text.trim();
  if (!text) return null;
  if (!(await ready())) return null;
  const sentAt = Date.now();
  startView({ id: '', goal: text, status: 'planning', plan: [], steps: [] });
  try {
    // wait: false answers at once with the new task; the live view follows its events
    const res = await api('POST', '/api/command', { body: { text, tab: state.targetId, wait: false, approve: !!opts.approve }, timeout: 15000 });
    if (opts.spoken) state.voiceLog.push({ event: 'command-started', at: Date.now(), fastPath: !!res.fastPath, skill: res.skill || '', sentAt });
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

/**
 * @param {number} n
 * @returns {Promise<Task[]>}
 */
export async function listTasks(n) {
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
export function attach(t) {
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
  void speaker.speak(spokenSummary(say));
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
  announce(t);
}

/**
 * @param {boolean} approve
 * @param {string} [stepId] the waiting step (default: the one shown)
 */
export async function confirm(approve, stepId = $('confirm').dataset.step) {
  const t = state.task;
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

export async function stop() {
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
