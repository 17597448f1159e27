// @ts-check
// Small DOM helpers of the side panel, and the notice and status pills at its top.

import { state } from './panel-state.js';

export const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

export const el = (/** @type {string} */ tag, /** @type {string} */ cls = '', /** @type {string} */ text = '') => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text) e.textContent = text;
  return e;
};

/**
 * @param {string} text
 * @param {'error'|'info'} [kind]
 * @param {Node[]} [extra] nodes appended (links, buttons, text)
 */
export function showNotice(text, kind = 'error', extra = []) {
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
export function pill(id, text, kind) {
  const p = $(id);
  p.textContent = text;
  p.className = `pill ${kind}`;
}

/** @param {string} text */
export function optionsLink(text) {
  const a = /** @type {HTMLAnchorElement} */ (el('a', '', text));
  a.href = chrome.runtime.getURL('options.html');
  a.target = '_blank';
  return a;
}
