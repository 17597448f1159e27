// @ts-check
// Options page: server address and pairing token (chrome.storage.local keys relayAddr and
// token, which the service worker watches), a plain-words connection test, and one-time pairing
// links of the form options.html#addr=127.0.0.1:18792&code=<code>: the page clears the link from
// the address bar, accepts only loopback addresses, asks "Pair with ADDR?" and then exchanges the
// code for the token with a server that proves it knows the code (auth.js). The language model
// section is options-model.js.

import { authorize, loopbackAddr, NotProvedError, pair, UnreachableError } from './auth.js';
import { loadModel, saveModel, testModel } from './options-model.js';

const DEFAULT_ADDR = '127.0.0.1:18792';

const $ = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
const addrInput = $('addr');
const tokenInput = $('token');
const result = $('result');
const statusLine = $('status');
const confirmBox = $('confirm');

/**
 * @param {string} text
 * @param {'ok'|'bad'|''} kind
 */
function show(text, kind) {
  result.textContent = text;
  result.className = kind;
}

/** @param {unknown} e */
function errText(e) {
  return e instanceof Error ? e.message : String(e);
}

async function load() {
  // chrome.storage's types say unknown: the options page stores strings.
  const s = /** @type {{relayAddr?: string, token?: string}} */ (await chrome.storage.local.get(['relayAddr', 'token']));
  addrInput.value = s.relayAddr || DEFAULT_ADDR;
  tokenInput.value = s.token || '';
}

/**
 * Saves the settings; the address must be a loopback address (loopbackAddr throws otherwise).
 * @param {string} addr
 * @param {string} token
 */
async function save(addr, token) {
  const a = loopbackAddr(addr || DEFAULT_ADDR);
  await chrome.storage.local.set({ relayAddr: a, token: token.trim() });
  return a;
}

/**
 * Checks the server in plain words: not running, not knowing the token (an impostor, or another
 * token), or connected with N tabs. The token itself is never sent.
 * @returns {Promise<{ok: boolean, text: string}>}
 */
async function testConnection() {
  let addr;
  try {
    addr = loopbackAddr(addrInput.value || DEFAULT_ADDR);
  } catch (e) {
    return { ok: false, text: `${errText(e)}.` };
  }
  const token = tokenInput.value.trim();
  if (!token) return { ok: false, text: 'No pairing token yet: open the pairing link the server printed (`tabrelay pair` prints one), or paste the token ("tabrelay token").' };
  let cred;
  try {
    cred = await authorize(addr, token);
  } catch (e) {
    if (e instanceof UnreachableError) return { ok: false, text: `tabrelay server not running at ${addr}.` };
    if (e instanceof NotProvedError) return { ok: false, text: `The server at ${addr} does not know this secret: another program may be using the port, or the pairing token is wrong (pair again: \`tabrelay pair\` prints a link).` };
    return { ok: false, text: errText(e) };
  }
  const headers = { Authorization: `Bearer ${cred.credential}` };
  let res;
  try {
    res = await fetch(`http://${cred.addr}/json/version`, { headers, cache: 'no-store', signal: AbortSignal.timeout(3000) });
  } catch {
    return { ok: false, text: `tabrelay server not running at ${addr}.` };
  }
  if (res.status === 401) return { ok: false, text: 'Pairing token rejected: the server does not accept this token.' };
  if (res.status === 403) return { ok: false, text: `The server at ${addr} refused this extension (origin or host not allowed).` };
  if (!res.ok) return { ok: false, text: `The server at ${addr} answered HTTP ${res.status}; is it tabrelay?` };
  let n = 0;
  try {
    const list = await (await fetch(`http://${cred.addr}/json/list`, { headers, cache: 'no-store' })).json();
    n = Array.isArray(list) ? list.filter((t) => t.type === 'page').length : 0;
  } catch { /* keep 0 */ }
  return { ok: true, text: `Connected: the tabrelay server at ${addr} knows the token and sees ${n} shared tab${n === 1 ? '' : 's'}.` };
}

async function refreshStatus() {
  try {
    const st = await chrome.runtime.sendMessage({ type: 'status' });
    if (st?.text) statusLine.textContent = `Extension: ${st.text}${st.notice ? ` (${st.notice})` : ''}; ${st.sharedTabs.length} tab(s) shared.`;
  } catch { /* worker not reachable */ }
}

async function runTest() {
  show('Testing…', '');
  const r = await testConnection();
  show(r.text, r.ok ? 'ok' : 'bad');
  await refreshStatus();
  if (r.ok) await loadModel();
  return r;
}

$('form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  try {
    addrInput.value = await save(addrInput.value, tokenInput.value);
  } catch (e) {
    show(`Not saved: ${errText(e)}.`, 'bad');
    return;
  }
  show('Saved.', 'ok');
  setTimeout(runTest, 500);
});
$('test').addEventListener('click', () => { void runTest(); });

/** @type {{addr: string, code: string}|null} the pairing link waiting for confirmation */
let pending = null;

/**
 * Reads a pairing link (#addr=…&code=…), removes it from the address bar and history at once,
 * and asks "Pair with ADDR?" (nothing is saved before the user confirms). Links that carry the
 * token itself (#token=…, older servers) are refused.
 */
function readPairingLink() {
  const h = new URLSearchParams(location.hash.replace(/^#/, ''));
  if (!h.has('code') && !h.has('token') && !h.has('addr')) return false;
  history.replaceState(null, '', location.pathname);
  confirmBox.hidden = true;
  pending = null;
  if (h.has('token')) {
    show('This pairing link carries the token itself, which tabrelay no longer accepts: run `tabrelay pair` for a one-time link.', 'bad');
    return true;
  }
  const code = (h.get('code') || '').trim();
  if (!/^[0-9a-f]{32}$/.test(code)) {
    show('This pairing link has no valid one-time code: run `tabrelay pair` for a new link.', 'bad');
    return true;
  }
  let addr;
  try {
    addr = loopbackAddr(h.get('addr') || DEFAULT_ADDR);
  } catch (e) {
    show(`Pairing refused: ${errText(e)}.`, 'bad');
    return true;
  }
  pending = { addr, code };
  $('confirm-text').textContent = `Pair with ${addr}?`;
  confirmBox.hidden = false;
  show('', '');
  return true;
}

/**
 * Whether this browser is already paired with the server at addr (a used pairing link is no
 * problem then): the saved address is addr and the server there proves it knows the saved
 * token. 'connected' when the extension is connected to it too, 'paired' when not yet, ''
 * when not paired with it.
 * @param {string} addr canonical loopback address
 * @returns {Promise<''|'paired'|'connected'>}
 */
async function pairedWith(addr) {
  const s = /** @type {{relayAddr?: string, token?: string}} */ (await chrome.storage.local.get(['relayAddr', 'token']));
  if (!s.token || !s.relayAddr) return '';
  try {
    if (loopbackAddr(s.relayAddr) !== addr) return '';
    await authorize(addr, s.token);
  } catch {
    return '';
  }
  /** @type {any} */
  const st = await chrome.runtime.sendMessage({ type: 'status' }).catch(() => null);
  return st?.connected && st.addr === addr ? 'connected' : 'paired';
}

/** The user confirmed: exchange the code for the token, then save and test. */
async function confirmPairing() {
  const p = pending;
  pending = null;
  confirmBox.hidden = true;
  if (!p) return;
  show(`Pairing with ${p.addr}…`, '');
  let token;
  try {
    token = await pair(p.addr, p.code);
  } catch (e) {
    if (e instanceof UnreachableError) show(`Not paired: tabrelay server not running at ${p.addr}.`, 'bad');
    else {
      const already = e instanceof NotProvedError ? await pairedWith(p.addr) : '';
      if (already) show(`This pairing link was already used (or has expired), and nothing needs it: this browser is already paired with the tabrelay server at ${p.addr}${already === 'connected' ? ' and connected' : ', and the extension connects by itself'}.`, 'ok');
      else show(`Not paired: ${errText(e)}.`, 'bad');
    }
    await refreshStatus();
    return;
  }
  addrInput.value = p.addr;
  tokenInput.value = token;
  await save(p.addr, token);
  show(`Paired with the tabrelay server at ${p.addr}. Testing…`, 'ok');
  setTimeout(runTest, 500);
}

$('confirm-pair').addEventListener('click', () => { void confirmPairing(); });
$('confirm-cancel').addEventListener('click', () => {
  pending = null;
  confirmBox.hidden = true;
  show('Pairing canceled: nothing was saved.', '');
});

/** Says whether the extension may read local files, and what that changes for uploads. */
async function showFileAccess() {
  const on = await chrome.extension.isAllowedFileSchemeAccess();
  $('file-access').textContent = on
    ? 'File access is on: Chrome reads the files clients and the agent upload itself (any size), and shared file:// pages can be driven.'
    : 'File access is off ("Allow access to file URLs" on tabrelay\'s details page). Uploads still work: the tabrelay server reads the files and hands them to the page, up to 50 MB per upload by default (tabrelay serve --max-upload-mb). Turning it on lets Chrome read the files itself, without that limit, and lets shared file:// pages be driven.';
}

$('open-details').addEventListener('click', () => {
  void chrome.tabs.create({ url: `chrome://extensions/?id=${chrome.runtime.id}` });
});

// The page's test hooks, which the end-to-end tests call: set before the module's first await, so
// they are there once the page has loaded.
Object.assign(globalThis, { tabrelayOptions: { testConnection, runTest, loadModel, saveModel, testModel } });

// The sharing settings (chrome.storage.local tabGroup, chooseTab and onDemand, on unless turned
// off): saved at once; the service worker reads them.
for (const key of ['tabGroup', 'chooseTab', 'onDemand']) {
  const box = $(key);
  box.checked = (await chrome.storage.local.get(key))[key] !== false;
  box.addEventListener('change', () => { void chrome.storage.local.set({ [key]: box.checked }); });
}

await load();
readPairingLink();
await refreshStatus();
await showFileAccess();
await loadModel();
window.addEventListener('hashchange', () => { readPairingLink(); });
