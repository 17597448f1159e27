// @ts-check
// Requests and the live task: sending a typed or spoken request, following the task's events
// (plan stepper, steps, confirmation, questions, hand-overs, streamed prose, answer, model calls
// and tokens), approving, answering, continuing, stopping; saving a finished task as a skill,
// downloading the records its extract steps read, and starting a new conversation in the tab.

import { api, ApiError, downloadReport, followTask } from './panel-api.js';
import { spokenSummary } from './converse.js';
import { announce } from './panel-converse.js';
import { $, el, showNotice } from './panel-dom.js';
import { loadRecent, rememberUnsent } from './panel-history.js';
import { loadModelHint, modelLink } from './panel-model.js';
import { checkRunDraft, showDraft } from './panel-record.js';
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
  if (!(await ready(text, () => submit(text, opts)))) return null;
  // sent: the box is free for the next request (a spoken request never was in it)
  const box = /** @type {HTMLTextAreaElement} */ ($('request'));
  if (box.value.trim() === text) box.value = '';
  const sentAt = Date.now();
  startView({ id: '', goal: text, request: text, status: 'planning', plan: [], steps: [] });
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
      const why = 'This request needs a language model; only simple commands (“click sign in”, “scroll down”) run without one: ';
      finishView('failed', why);
      if (state.task) state.task.needsModel = true;
      render();
      void loadModelHint();
      keepUnsent(text, why, true, !!opts.spoken);
    } else {
      finishView('failed', msg);
      if (e instanceof ApiError && (e.status === 0 || e.status === 401)) void refresh();
      keepUnsent(text, msg, false, !!opts.spoken);
    }
    return null;
  }
}

/**
 * A request failed before it became a task: it stays, in the recent list (with its error and
 * what to do) and, typed, in the request box, to send again once the problem is solved.
 * @param {string} text
 * @param {string} error
 * @param {boolean} needsModel
 * @param {boolean} spoken
 */
function keepUnsent(text, error, needsModel, spoken) {
  const box = /** @type {HTMLTextAreaElement} */ ($('request'));
  if (!spoken && !box.value.trim()) box.value = text;
  void rememberUnsent(text, error, needsModel).then(loadRecent, (e) => console.warn('tabrelay: keep the failed request', e));
}

/**
 * Shows a request that failed before it became a task (from the recent list).
 * @param {{request: string, error: string, needsModel: boolean}} u
 */
export function showUnsent(u) {
  startView({ id: '', goal: u.request, request: u.request, status: 'failed', error: u.error, needsModel: u.needsModel, plan: [], steps: [], spoken: true });
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

/**
 * What the user asked (never the model's internal goal, e.g. a skill hand-over's prompt).
 * @param {{request?: string, goal?: string}} t
 */
export function shownRequest(t) { return t.request || t.goal || ''; }

/**
 * "N model calls · X tokens in · Y out", or "no model" for a task that needed none.
 * @param {import('./panel-state.js').Usage|undefined} u
 */
export function usageText(u) {
  const calls = u?.modelCalls || 0;
  if (!calls) return 'no model';
  const n = (/** @type {number} */ x) => x.toLocaleString('en-US');
  return `${n(calls)} model call${calls === 1 ? '' : 's'} · ${n(u?.promptTokens || 0)} tokens in · ${n(u?.completionTokens || 0)} out`;
}

/** @param {Task} t */
function startView(t) {
  state.follow?.abort();
  state.follow = null;
  state.task = t;
  state.taskTab = state.tabId;
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
  if (state.task?.id !== t.id) state.taskTab = state.tabId;
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
      if (t.status !== 'waiting_input') t.question = undefined;
      if (t.status !== 'waiting_user') t.handover = undefined;
      break;
    case 'question_asked':
      t.question = ev.question;
      t.status = 'waiting_input';
      break;
    case 'handover_requested':
      t.handover = ev.handover;
      t.status = 'waiting_user';
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
      if (ev.usage) t.usage = ev.usage;
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
  if (!t.usage && t.id) {
    // a skill run's answer comes without the usage: read the task
    api('GET', `/api/tasks/${t.id}`, { timeout: 5000 }).then((full) => {
      const cur = state.task;
      if (cur && cur.id === full.id) { cur.usage = full.usage; cur.steps = full.steps || cur.steps; render(); }
    }, () => { /* keep what we have */ });
  }
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
 * A step's result in words: what the action said (inside the observation's first page block),
 * or the "message" of a JSON result, else the text.
 * @param {string} result
 */
function readable(result) {
  const said = /^result:\n<page_content>\n([\s\S]*?)\n<\/page_content>/.exec(result);
  if (said) return said[1];
  if (!result.startsWith('{')) return result;
  try {
    const r = JSON.parse(result.split('\n')[0]);
    return typeof r.message === 'string' ? r.message : result;
  } catch {
    return result;
  }
}

function render() {
  const t = state.task;
  if (!t) return;
  $('task-goal').textContent = shownRequest(t);
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
  // a question of the agent: its choices as buttons, and a box for any other answer
  const qbox = $('question');
  const q = t.status === 'waiting_input' ? t.question : undefined;
  if (q) {
    const fresh = qbox.hidden || qbox.dataset.question !== q.id;
    qbox.hidden = false;
    if (fresh) {
      state.marks.questionShown = Date.now();
      qbox.dataset.question = q.id;
      $('question-text').textContent = q.text;
      $('question-choices').replaceChildren(...(q.choices || []).map((c) => {
        const b = /** @type {HTMLButtonElement} */ (el('button', '', c));
        b.type = 'button';
        b.dataset.choice = c;
        b.addEventListener('click', () => { void answer(c); });
        return b;
      }));
      /** @type {HTMLInputElement} */ ($('question-answer')).value = '';
      qbox.scrollIntoView({ block: 'nearest' });
    }
  } else {
    qbox.hidden = true;
    qbox.dataset.question = '';
  }
  // a hand-over: the person acts in the tab, then presses Continue
  const hbox = $('handover');
  const h = t.status === 'waiting_user' ? t.handover : undefined;
  if (h) {
    if (hbox.hidden || hbox.dataset.handover !== h.id) {
      state.marks.handoverShown = Date.now();
      hbox.scrollIntoView({ block: 'nearest' });
    }
    hbox.hidden = false;
    hbox.dataset.handover = h.id;
    $('handover-text').textContent = h.instruction;
  } else {
    hbox.hidden = true;
    hbox.dataset.handover = '';
  }
  // model calls and tokens, once the task ended
  const usage = $('task-usage');
  usage.hidden = !isDone(t.status) || !t.id;
  usage.textContent = usage.hidden ? '' : usageText(t.usage);
  // a task the server could not write to its history yet (a full disk): it keeps it and retries
  const unsaved = $('task-unsaved');
  unsaved.hidden = !t.notSaved;
  unsaved.textContent = t.notSaved ? `This task is ${t.notSaved}. The server keeps it and saves it when it can.` : '';
  $('save-skill').hidden = t.status !== 'succeeded' || !t.id || (t.model || '').startsWith('skill:');
  // the records the task's extract steps read, as one CSV file
  const extracts = t.steps.filter((s) => s.records);
  const recs = $('records-csv');
  recs.hidden = !t.id || !extracts.length;
  const n = extracts.reduce((sum, s) => sum + (s.records?.items.length || 0), 0);
  recs.title = `${n} record${n === 1 ? '' : 's'} from step${extracts.length === 1 ? '' : 's'} ${extracts.map((s) => s.index).join(', ')}`;
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
    if (t.needsModel && t.status === 'failed') ans.append(modelLink('choose a model in Settings'), document.createTextNode(' (no restart needed).'));
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

/**
 * Answers the question the task waits for (a choice clicked, or the text typed).
 * @param {string} text
 */
export async function answer(text) {
  const t = state.task;
  const questionId = $('question').dataset.question;
  text = text.trim();
  if (!t?.id || !questionId || !text) return;
  const send = /** @type {HTMLButtonElement} */ ($('question-send'));
  send.disabled = true;
  try {
    await api('POST', `/api/tasks/${t.id}/answer`, { body: { questionId, answer: text } });
    if (t.status === 'waiting_input') t.status = 'running';
    t.question = undefined;
    render();
  } catch (e) {
    showNotice(`Could not send your answer: ${e instanceof Error ? e.message : e}`);
  } finally {
    send.disabled = false;
  }
}

/** The person did what the hand-over asked: the task reads the page again and goes on. */
export async function continueTask() {
  const t = state.task;
  const handoverId = $('handover').dataset.handover;
  if (!t?.id || !handoverId) return;
  const b = /** @type {HTMLButtonElement} */ ($('handover-continue'));
  b.disabled = true;
  try {
    await api('POST', `/api/tasks/${t.id}/continue`, { body: { handoverId } });
    if (t.status === 'waiting_user') t.status = 'running';
    t.handover = undefined;
    render();
  } catch (e) {
    showNotice(`Could not continue: ${e instanceof Error ? e.message : e}`);
  } finally {
    b.disabled = false;
  }
}

/** Drafts a skill from the finished task and shows it for review, as a recording's draft. */
export async function saveAsSkill() {
  const t = state.task;
  if (!t?.id) return;
  try {
    const d = await api('POST', `/api/tasks/${t.id}/skill`);
    showDraft(d.skill?.name || '', d.markdown || '', 'Review the skill made from this task (markdown)',
      'The steps the agent took, to replay without the model. Review the steps and the parameters, then save.');
  } catch (e) {
    showNotice(`Save as skill: ${e instanceof Error ? e.message : e}`);
  }
}

/** Downloads the records the shown task's extract steps read, as one CSV file. */
export async function downloadRecords() {
  const t = state.task;
  if (!t?.id) return;
  try {
    const d = await downloadReport(t.id, 'csv', 'records');
    state.downloads.push({ task: t.id, format: 'csv', data: 'records', ...d });
  } catch (e) {
    showNotice(`Download records: ${e instanceof Error ? e.message : e}`);
  }
}

/** Starts a new conversation in this tab: the next request no longer sees the earlier ones. */
export async function newConversation() {
  try {
    const r = await api('POST', '/api/conversation/new', { body: { tab: state.targetId } });
    state.conversationCleared = r.cleared ?? 0;
    showNotice('New conversation: the next request starts afresh.', 'info');
  } catch (e) {
    showNotice(`New conversation: ${e instanceof Error ? e.message : e}`);
  }
}

// The controls this module draws (questions, hand-overs, save as skill, new conversation) are
// wired here, beside their code.
$('question-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void answer(/** @type {HTMLInputElement} */ ($('question-answer')).value);
});
$('handover-continue').addEventListener('click', () => { void continueTask(); });
$('save-skill').addEventListener('click', () => { void saveAsSkill(); });
$('records-csv').addEventListener('click', (ev) => { ev.preventDefault(); void downloadRecords(); });
$('new-conversation').addEventListener('click', () => { void newConversation(); });

/**
 * Hides the task shown when the panel is now about another tab and that task has ended (a
 * finished or failed task belongs to the tab it was asked in); a running task stays in view.
 */
export function forgetOtherTabsTask() {
  const t = state.task;
  if (!t || state.taskTab === undefined || state.taskTab === state.tabId || !isDone(t.status)) return;
  state.task = null;
  state.taskTab = undefined;
  $('task').hidden = true;
}
