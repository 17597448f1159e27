// @ts-check
// The options page's "Language model" section: provider, model, base URL and key, saved on the
// tabrelay server (PUT /api/model, with the same credential as every /api request; the server
// keeps the key in its home, readable by its owner only, and never sends it back: GET shows its
// last four characters), a Test button that makes one tiny real call (POST /api/model/test),
// and a word when the server's environment overrides the choice.

import { api, ApiError } from './panel-api.js';

const $ = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (document.getElementById(id));

/**
 * GET /api/model's answer (agent/api.ModelState).
 * @typedef {{saved: {provider: string, model: string, baseUrl: string}, keyHint: string, active: string, keySource?: string, problem?: string, missing?: string, envOverrides: string[], providers: {name: string, baseUrl?: string, keyRequired: boolean, defaultModel?: string, exampleModel?: string, keyEnv?: string}[]}} ModelState
 */

/** @type {ModelState|null} */
let current = null;

/**
 * @param {string} text
 * @param {'ok'|'bad'|''} kind
 */
function say(text, kind) {
  const r = $('model-result');
  r.textContent = text;
  r.className = kind;
}

/** Placeholders and the key hint that fit the chosen provider. */
function fitProvider() {
  const p = current?.providers.find((x) => x.name === $('model-provider').value);
  $('model-name').placeholder = p?.defaultModel ? `${p.defaultModel} (default)` : (p?.exampleModel ? `e.g. ${p.exampleModel}` : '');
  // a provider with its own endpoint may leave the field empty; one without needs the address
  $('model-base-note').textContent = !p ? '' : (p.baseUrl ? "(leave empty for the provider's)" : '(needed: your server’s address)');
  $('model-base').placeholder = p?.baseUrl || 'e.g. http://localhost:8080/v1';
  const sameProvider = current?.saved.provider === $('model-provider').value;
  const hint = sameProvider && current?.keyHint ? `A key is saved (${current.keyHint === 'set' ? 'hidden' : `ending ${current.keyHint.replace('…', '')}`}); leave this empty to keep it.` : '';
  $('model-key-hint').textContent = hint || (p && !p.keyRequired ? 'Leave empty unless your server asks for a key.' : '');
  $('model-key').placeholder = hint ? `saved key ${current?.keyHint}` : '';
}

/**
 * Shows the state the server answered.
 * @param {ModelState} st
 */
function showState(st) {
  current = st;
  const sel = /** @type {HTMLSelectElement} */ (/** @type {unknown} */ ($('model-provider')));
  if (!sel.options.length) {
    const none = document.createElement('option');
    none.value = '';
    none.textContent = 'Choose a provider';
    sel.append(none, ...st.providers.map((p) => {
      const o = document.createElement('option');
      o.value = p.name;
      o.textContent = p.name;
      return o;
    }));
  }
  sel.value = st.saved.provider || '';
  $('model-name').value = st.saved.model || '';
  $('model-base').value = st.saved.baseUrl || '';
  $('model-key').value = '';
  // Nothing chosen here nor in the server's environment: the server's general advice (which
  // names this very page and the environment variables) would only confuse; say what to do here.
  const unchosen = !st.active && !st.saved.provider && !st.envOverrides.length;
  $('model-active').textContent = st.active
    ? `In use: ${st.active}${st.keySource ? ` (key from ${st.keySource})` : ''}.`
    : unchosen
      ? 'No model in use yet: choose a provider below, then its model and key; Test tries them, Save makes the next request use them.'
      : `No model in use: ${st.problem || 'none chosen'}.`;
  const env = $('model-env');
  env.hidden = !st.envOverrides.length;
  env.textContent = st.envOverrides.length
    ? `The server's environment sets ${st.envOverrides.join(', ')}, which override${st.envOverrides.length === 1 ? 's' : ''} the choice here (unset ${st.envOverrides.length === 1 ? 'it' : 'them'} and restart the server to use this page's choice).`
    : '';
  fitProvider();
}

/** The form's settings as PUT /api/model and POST /api/model/test take them. */
function formSettings() {
  return { provider: $('model-provider').value, model: $('model-name').value.trim(), baseUrl: $('model-base').value.trim(), apiKey: $('model-key').value.trim() };
}

/** @param {unknown} e */
function problem(e) {
  if (e instanceof ApiError && e.status === 0) return 'the tabrelay server is not running (start it with `tabrelay`, then reload this page)';
  if (e instanceof ApiError && e.status === 401) return 'the extension is not paired with the server (pair it above first)';
  return e instanceof Error ? e.message : String(e);
}

/** Reads the server's model state into the form. */
export async function loadModel() {
  try {
    showState(/** @type {ModelState} */ (await api('GET', '/api/model', { timeout: 5000 })));
    return true;
  } catch (e) {
    $('model-active').textContent = `Cannot read the model settings: ${problem(e)}.`;
    return false;
  }
}

/** Saves the form on the server; the next request uses it. */
export async function saveModel() {
  say('Saving…', '');
  try {
    const st = /** @type {ModelState} */ (await api('PUT', '/api/model', { body: formSettings(), timeout: 10000 }));
    showState(st);
    say(st.active ? `Saved: the next request uses ${st.active}.` : `Saved, but no model can be used yet: ${st.missing ? `fill in the ${st.missing}` : st.problem}.`, st.active ? 'ok' : 'bad');
  } catch (e) {
    say(`Not saved: ${problem(e)}.`, 'bad');
  }
}

/** One tiny real call with the form's settings (not saved), and what happened. */
export async function testModel() {
  say('Asking the model for one word…', '');
  try {
    /** @type {{ok: boolean, model: string, reply?: string, error?: string, missing?: string, ms: number}} */
    const r = await api('POST', '/api/model/test', { body: formSettings(), timeout: 45000 });
    // an incomplete form: name the field, not the server's general advice on configuring a model
    say(r.ok ? `It works: ${r.model} answered “${r.reply}” in ${(r.ms / 1000).toFixed(1)} s.`
      : r.missing ? `Not tried yet: fill in the ${r.missing} first.` : `It does not work: ${r.error}`, r.ok ? 'ok' : 'bad');
    return r;
  } catch (e) {
    say(`Test not run: ${problem(e)}.`, 'bad');
    return null;
  }
}

$('model-provider').addEventListener('change', fitProvider);
$('model-form').addEventListener('submit', (ev) => { ev.preventDefault(); void saveModel(); });
$('model-test').addEventListener('click', () => { void testModel(); });
