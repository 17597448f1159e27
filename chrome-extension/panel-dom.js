// @ts-check
// Small DOM helpers of the side panel, the notice and status pills at its top, and how the
// panel's links to the extension's own pages (Settings, microphone access) open.

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

/**
 * Opens one of the extension's own pages (options.html#model, mic.html) in a new tab at the end
 * of the panel's window, outside any tab group. A plain link would open it beside the active
 * tab, and into that tab's group: the tabrelay group when the tab is shared, where the page
 * would look shared.
 * @param {string} url the page's full chrome-extension:// URL
 */
export async function openOwnPage(url) {
  const [active] = await chrome.tabs.query({ active: true, currentWindow: true });
  const tab = await chrome.tabs.create({ url, active: true, ...(active?.windowId !== undefined ? { windowId: active.windowId } : {}) });
  if (tab.id !== undefined && tab.groupId !== undefined && tab.groupId >= 0) await chrome.tabs.ungroup(tab.id);
}

// Every link of the panel to one of the extension's pages opens through openOwnPage (the
// footer's, and those the notices and answers draw).
document.addEventListener('click', (ev) => {
  const a = ev.target instanceof Element ? ev.target.closest('a[href]') : null;
  if (!(a instanceof HTMLAnchorElement) || !a.href.startsWith(chrome.runtime.getURL('')) || a.href.startsWith(location.href.split('#')[0])) return;
  ev.preventDefault();
  void openOwnPage(a.href).catch((e) => showNotice(`Could not open ${a.textContent}: ${e instanceof Error ? e.message : e}`));
});
