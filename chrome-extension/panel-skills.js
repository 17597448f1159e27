// @ts-check
// Skills: search (ranked for the tab's page), run with parameters, and approving a skill's steps
// that need confirmation before it runs.

import { api, ApiError } from './panel-api.js';
import { $, el } from './panel-dom.js';
import { offerRunDraft } from './panel-record.js';
import { state } from './panel-state.js';
import { ready } from './panel-status.js';
import { attach, listTasks } from './panel-task.js';

/** The URL of the tab this panel is about ('' when unknown). */
async function tabURL() {
  if (state.tabId == null) return '';
  try { return (await chrome.tabs.get(state.tabId)).url || ''; } catch { return ''; }
}

export async function loadSkills() {
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
export function askSkillApproval(name, steps, onApprove, onCancel) {
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
export async function runSkill(approve = false) {
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
    if (r.status === 'failed' && Array.isArray(r.confirm) && r.confirm.length && !approve) {
      // the safety gate held a step before doing it: ask, and run again approved
      askSkillApproval(s.name, r.confirm, () => { void runSkill(true); });
      return;
    }
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
