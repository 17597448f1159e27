// @ts-check
// The side panel's word on the language model, before anything is sent: which model requests
// use, or that only simple commands run without one and where to choose one (the options
// page). GET /api/model answers; the key never comes back.

import { api } from './panel-api.js';
import { $, el } from './panel-dom.js';
import { state } from './panel-state.js';

/** The options page's model section, as a link that opens in a tab. */
export function modelLink(text = 'choose one in Settings') {
  const a = /** @type {HTMLAnchorElement} */ (el('a', '', text));
  a.href = chrome.runtime.getURL('options.html#model');
  a.target = '_blank';
  return a;
}

/** Reads the model in use and shows it under the request box. */
export async function loadModelHint() {
  const hint = $('model-hint');
  /** @type {{active: string, problem?: string}|null} */
  let st = null;
  try { st = await api('GET', '/api/model', { timeout: 5000 }); } catch { /* an older server, or not paired */ }
  state.model = st ? st.active : null;
  // the request box's example fits what can run: without a model, only simple commands
  const box = /** @type {HTMLTextAreaElement} */ ($('request'));
  box.placeholder = st && !st.active
    ? 'A simple command: "click sign in", "scroll down"…'
    : 'Ask or command: "click sign in", "find the cheapest kettle"…';
  if (!st) {
    hint.hidden = true;
    return;
  }
  hint.replaceChildren(...(st.active
    ? [document.createTextNode(`Model: ${st.active}.`)]
    : [document.createTextNode('No language model yet: only simple commands run (“click sign in”, “scroll down”); for more, '), modelLink(), document.createTextNode('.')]));
  hint.hidden = false;
}
