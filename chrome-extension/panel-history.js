// @ts-check
// Recent tasks, with their reports to download, and the requests that failed before they became
// a task (no language model, the server refused them): those are kept by the panel itself
// (chrome.storage.local), with their error and what to do, since the server has no task for them.

import { downloadReport } from './panel-api.js';
import { $, el, showNotice } from './panel-dom.js';
import { modelLink } from './panel-model.js';
import { state } from './panel-state.js';
import { attach, listTasks, showUnsent, shownRequest, usageText } from './panel-task.js';

/** The chrome.storage.local key of the requests that failed before becoming a task. */
const UNSENT = 'panelUnsent';

/** How many such requests are kept (the newest). */
const MAX_UNSENT = 10;

/**
 * A request that failed before it became a task.
 * @typedef {{id: string, request: string, error: string, needsModel: boolean, createdAt: string}} Unsent
 */

/** @returns {Promise<Unsent[]>} the kept requests, newest first */
async function readUnsent() {
  const v = (await chrome.storage.local.get(UNSENT))[UNSENT];
  return Array.isArray(v) ? v : [];
}

/**
 * Keeps a request that failed before it became a task, for the recent list.
 * @param {string} request
 * @param {string} error
 * @param {boolean} needsModel
 */
export async function rememberUnsent(request, error, needsModel) {
  /** @type {Unsent} */
  const u = { id: `unsent-${Date.now()}`, request, error, needsModel, createdAt: new Date().toISOString() };
  await chrome.storage.local.set({ [UNSENT]: [u, ...(await readUnsent())].slice(0, MAX_UNSENT) });
}

/**
 * A recent-list entry for a request that failed before it became a task: what was asked, that
 * it failed and was not run, and its error with what to do.
 * @param {Unsent} u
 */
function unsentItem(u) {
  const li = el('li', 'unsent');
  li.dataset.unsent = u.id;
  const goal = el('div', '', u.request);
  goal.style.cursor = 'pointer';
  goal.addEventListener('click', () => showUnsent(u));
  const err = el('div', 'meta', u.error);
  if (u.needsModel) err.append(modelLink('choose a model in Settings'), document.createTextNode(' (no restart needed), then send it again.'));
  li.append(goal, el('div', 'meta', `failed · ${new Date(u.createdAt).toLocaleTimeString()} · not run`), err);
  return li;
}

export async function loadRecent() {
  const [tasks, unsent] = await Promise.all([listTasks(10), readUnsent()]);
  /** @type {Array<{at: string, li: () => HTMLElement}>} */
  const items = [
    ...unsent.map((u) => ({ at: u.createdAt, li: () => unsentItem(u) })),
    ...tasks.map((t) => ({ at: t.createdAt ?? '', li: () => taskItem(t) })),
  ];
  items.sort((a, b) => Date.parse(b.at || '0') - Date.parse(a.at || '0'));
  $('recent').replaceChildren(...(items.length ? items.slice(0, 10).map((x) => x.li()) : [el('li', 'muted', 'No tasks yet.')]));
}

/**
 * A recent-list entry for a task: what was asked (click: show it), its status, time and model
 * use, and its reports.
 * @param {import('./panel-state.js').Task} t
 */
function taskItem(t) {
  const li = el('li');
  li.dataset.task = t.id;
  // what the user asked, never the model's goal (a skill hand-over's internal prompt)
  const goal = el('div', '', shownRequest(t));
  goal.style.cursor = 'pointer';
  goal.addEventListener('click', () => attach(t));
  li.append(goal, el('div', 'meta', `${t.status} · ${new Date(t.createdAt ?? '').toLocaleTimeString()} · ${usageText(t.usage)}`));
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
}
