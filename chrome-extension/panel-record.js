// @ts-check
// Recording a skill by showing it once (with narration), and reviewing and saving drafts: a
// recording's, or the updated skill a run produced when the model did a step differently.

import { api } from './panel-api.js';
import { $, showNotice } from './panel-dom.js';
import { loadSkills } from './panel-skills.js';
import { state } from './panel-state.js';
import { ready } from './panel-status.js';

/** @typedef {import('./panel-state.js').Task} Task */

/** @param {boolean} start */
export async function record(start) {
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
export function addNarration(text) {
  const n = /** @type {HTMLTextAreaElement} */ ($('record-narration'));
  const cur = n.value.trimEnd();
  n.value = cur ? `${cur} ${text}` : text;
}

/**
 * Shows a skill draft to review and save (a recording's, a run's the model healed, or one made
 * from a finished task).
 * @param {string} name
 * @param {string} markdown
 * @param {string} label
 * @param {string} note
 */
export function showDraft(name, markdown, label, note) {
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
export function offerRunDraft(d) {
  if (!d?.markdown || (d.taskId && state.draftFor === d.taskId)) return;
  state.draftFor = d.taskId || '';
  showDraft(d.skill, d.markdown, `Review the updated skill ${d.skill} (markdown)`,
    `The model did a step of ${d.skill} differently than written. Review the change and save it to replay it this way without the model.`);
}

/**
 * After a skill's run in the background (a command naming it), offers its healed draft if any.
 * @param {Task} t
 */
export async function checkRunDraft(t) {
  if (!t.id || t.status !== 'succeeded' || !(t.model || '').startsWith('skill:') || state.draftFor === t.id) return;
  try {
    offerRunDraft(await api('GET', `/api/skills/drafts/${encodeURIComponent(t.id)}`, { timeout: 5000 }));
  } catch { /* 404: the run went as written */ }
}

export async function saveDraft() {
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
