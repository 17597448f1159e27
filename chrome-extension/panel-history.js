// @ts-check
// Recent tasks, with their reports to download.

import { downloadReport } from './panel-api.js';
import { $, el, showNotice } from './panel-dom.js';
import { state } from './panel-state.js';
import { attach, listTasks, shownRequest, usageText } from './panel-task.js';

export async function loadRecent() {
  const tasks = await listTasks(10);
  $('recent').replaceChildren(...(tasks.length ? tasks.map((t) => {
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
  }) : [el('li', 'muted', 'No tasks yet.')]));
}
