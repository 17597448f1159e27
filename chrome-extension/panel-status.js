// @ts-check
// Status at a glance: the server, pairing and whether this tab is shared (re-read without
// overlapping readings), and the Share / Stop sharing buttons.

import { api, ApiError, settings } from './panel-api.js';
import { $, el, optionsLink, pill, showNotice } from './panel-dom.js';
import { state } from './panel-state.js';

/**
 * Shows a notice about the connection or the tab's sharing, which a later refresh clears once
 * the tab is shared (as it clears errors; an info notice a button showed stays).
 * @param {string} text
 * @param {'error'|'info'} [kind]
 * @param {Node[]} [extra]
 */
function statusNotice(text, kind, extra) {
  showNotice(text, kind, extra);
  state.statusNotice = text;
}

/**
 * The browser tab this panel is about: as a side panel, the window's active tab, whatever it
 * shows (an extension page too: the panel then says it cannot act there); opened as a tab of
 * its own, the most recently used web tab.
 * @returns {Promise<chrome.tabs.Tab|undefined>}
 */
async function currentTab() {
  const q = new URLSearchParams(location.search).get('tabId');
  if (q) return chrome.tabs.get(Number(q)).catch(() => undefined);
  const self = await chrome.tabs.getCurrent().catch(() => undefined);
  const [active] = await chrome.tabs.query({ active: true, currentWindow: true });
  if (!self) return active;
  const own = chrome.runtime.getURL('');
  const tabs = (await chrome.tabs.query({})).filter((t) => !(t.url || '').startsWith(own) && /^(https?|file):/.test(t.url || ''));
  tabs.sort((a, b) => (b.lastAccessed || 0) - (a.lastAccessed || 0));
  return tabs[0];
}

/**
 * How the panel names a tab: its title, else its address.
 * @param {chrome.tabs.Tab|undefined} tab
 */
function tabName(tab) {
  const name = (tab?.title || tab?.url || tab?.pendingUrl || '').trim();
  return name.length > 60 ? `${name.slice(0, 59)}…` : name;
}

/**
 * Why the extension cannot act on tab at all (a page no extension may debug), or ''.
 * @param {chrome.tabs.Tab} tab
 */
function unreachable(tab) {
  const url = tab.url || tab.pendingUrl || '';
  if (url.startsWith('chrome-extension://')) return 'it is an extension page, which tabrelay cannot see or act on';
  if (/^(chrome|chrome-untrusted|devtools|edge):\/\//i.test(url)) return 'it is a browser page, which no extension may debug';
  return '';
}

/**
 * Re-reads the server, pairing and sharing state and shows it. Readings never overlap (an
 * older one finishing late used to paint "Server running" over a newer "not running"), and
 * whoever asks while one is under way gets the next one, started after it: never a reading
 * older than the question, and never a growing queue.
 * @returns {Promise<void>}
 */
export function refresh() {
  if (!state.reading) {
    state.reading = readState().finally(() => { state.reading = null; });
    return state.reading;
  }
  state.nextReading ||= state.reading.catch(() => {}).then(() => { state.nextReading = null; return refresh(); });
  return state.nextReading;
}

/** One reading of the server, pairing and sharing state; only refresh calls it. */
async function readState() {
  const { addr, token } = await settings();
  state.addr = addr;
  const tab = await currentTab();
  state.tabId = tab?.id;
  let health = null;
  try {
    const r = await fetch(`http://${addr}/health`, { cache: 'no-store', signal: AbortSignal.timeout(3000) });
    health = r.ok ? await r.json() : null;
  } catch { /* not running */ }
  if (!health) {
    showServerDown(addr);
    return;
  }
  state.server = 'up';
  // a part of the server in trouble (the task history cannot be written: a full disk), until it clears
  const problems = Object.values(health.problems || {}).map(String);
  pill('srv', problems.length ? 'Server running (a problem)' : 'Server running', problems.length ? 'warn' : 'ok');
  showServerProblem(problems.map((p) => `Server: ${p}.`).join(' '));
  if (!token) {
    state.pairing = 'unpaired';
    pill('pair', 'Not paired', 'bad');
    statusNotice('Not paired with the server yet: open the pairing link the server printed, or paste the token in the ', 'error', [optionsLink('extension options'), document.createTextNode('.')]);
    pill('tabstate', 'Tab ?', '');
    $('share').hidden = $('unshare').hidden = true;
    return;
  }
  /** @type {{targetId: string, tabId?: number}[]} */
  let tabs = [];
  try {
    tabs = (await api('GET', '/api/tabs', { timeout: 5000 })).tabs || [];
    state.pairing = 'ok';
    pill('pair', 'Paired', 'ok');
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      state.pairing = 'rejected';
      pill('pair', 'Token rejected', 'bad');
      statusNotice(`Pairing token rejected: ${e.body?.notProved ? e.message.replace(/\.$/, '') : `the server at ${addr} does not accept this token`}. Open a pairing link (\`tabrelay pair\` prints one), or paste the token from "tabrelay token" into the `, 'error', [optionsLink('extension options'), document.createTextNode('.')]);
      pill('tabstate', 'Tab ?', '');
      $('share').hidden = $('unshare').hidden = true;
      return;
    }
    if (e instanceof ApiError && e.status === 0) { // it stopped since /health answered
      showServerDown(addr);
      return;
    }
    pill('pair', 'Pairing ?', 'warn');
    statusNotice(e instanceof Error ? e.message : String(e));
    return;
  }
  /** @type {any} */
  let ext = null;
  try {
    ext = await Promise.race([chrome.runtime.sendMessage({ type: 'status' }), new Promise((r) => setTimeout(r, 2000, null))]);
  } catch { /* worker asleep */ }
  const mine = ext?.sharedTabs?.find((/** @type {any} */ t) => t.tabId === state.tabId);
  const listed = mine && tabs.some((t) => t.targetId === mine.targetId);
  state.targetId = mine && (listed || !tabs.length) ? mine.targetId : (mine?.targetId || '');
  const name = tabName(tab);
  $('tabstate').title = tab ? `${tab.title || ''}\n${tab.url || tab.pendingUrl || ''}`.trim() : 'no tab';
  const cannot = tab ? unreachable(tab) : '';
  if (state.targetId) {
    state.pendingSend = null; // shared: Send works now (the request is still in the box)
    pill('tabstate', `This tab is shared: ${name}`, 'ok');
    $('share').hidden = true;
    $('unshare').hidden = false;
    // its own notices and errors go; an info notice a button showed ("New conversation…") stays
    if (state.notice && (state.notice === state.statusNotice || $('notice').className !== 'info')) showNotice('');
  } else if (cannot) {
    state.targetId = '';
    state.pendingSend = null;
    pill('tabstate', `This tab cannot be shared: ${name}`, 'warn');
    $('share').hidden = $('unshare').hidden = true;
    statusNotice(`tabrelay cannot act on this tab (${name}): ${cannot}. Switch to a web page to use the agent there.`, 'info');
  } else {
    pill('tabstate', `This tab is not shared: ${name}`, 'warn');
    $('share').hidden = state.tabId === undefined;
    $('unshare').hidden = true;
    /** @type {string} */
    const why = (state.tabId !== undefined && ext?.tabErrors?.[state.tabId]) || (ext?.notice && ext.notice.startsWith('sharing stopped') ? ext.notice : '');
    if (state.tabId === undefined) statusNotice('No tab to work on: open a web page next to this panel.', 'info');
    else if (state.pendingSend) showSendNotice(why);
    else statusNotice(`This tab is not shared with tabrelay${why ? ` (${why})` : ''}: click "Share this tab" (or the tabrelay icon) so the agent can see and act on it.`, 'info');
  }
}

/**
 * Says that the request just sent waits for this tab to be shared, with the button that shares
 * it and sends the request.
 * @param {string} why why the tab is not shared any more ('' when it never was)
 */
function showSendNotice(why) {
  const b = /** @type {HTMLButtonElement} */ (el('button', '', 'Share this tab and send'));
  b.type = 'button';
  b.id = 'share-send';
  b.addEventListener('click', () => { void shareAndSend(); });
  statusNotice(`Not sent: this tab is not shared with tabrelay${why ? ` (${why})` : ''}, so the agent cannot see it. Your request is kept. `, 'info',
    [b, document.createTextNode(' (or share it with "Share this tab" above, then press Send again).')]);
}

/** Shares this tab, then sends the request kept while it was not shared. */
async function shareAndSend() {
  const pending = state.pendingSend;
  await share(true);
  if (!state.targetId || !pending || state.pendingSend !== null) return;
  await pending.send();
}

/**
 * Shows what the server's /health says is wrong ("" hides it).
 * @param {string} text
 */
function showServerProblem(text) {
  const box = $('server-problem');
  box.textContent = text;
  box.hidden = !text;
}

/**
 * Shows that the server does not answer at addr.
 * @param {string} addr
 */
function showServerDown(addr) {
  showServerProblem('');
  state.server = 'down';
  state.pairing = 'unknown';
  state.targetId = '';
  pill('srv', 'Server not running', 'bad');
  pill('pair', 'Pairing ?', '');
  pill('tabstate', 'Tab ?', '');
  $('share').hidden = $('unshare').hidden = true;
  statusNotice(`tabrelay server not running at ${addr}. Start it with "tabrelay" (or "go run ./cmd/tabrelay") and this panel reconnects by itself.`);
}

export async function share(on = true) {
  if (state.tabId === undefined) return;
  const btn = /** @type {HTMLButtonElement} */ ($(on ? 'share' : 'unshare'));
  btn.disabled = true;
  try {
    const r = await chrome.runtime.sendMessage({ type: on ? 'share' : 'unshare', tabId: state.tabId });
    if (r?.error) showNotice(`Could not ${on ? 'share' : 'stop sharing'} this tab: ${r.error}`);
  } catch (e) {
    showNotice(`Could not reach the extension: ${e}. Click the tabrelay icon on the tab instead.`);
  } finally {
    btn.disabled = false;
  }
  for (let i = 0; i < 20; i++) {
    await refresh();
    if (!!state.targetId === on) break;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Makes sure the tab is shared before sending; says what to do otherwise. A request sent on a
 * tab that can be shared but is not is kept (send sends it), and the notice offers to share the
 * tab and send it.
 * Without send (a skill run, a recording) it says to share the tab first.
 * @param {string} [text] the request
 * @param {() => Promise<unknown>} [send] sends it once the tab is shared
 */
export async function ready(text = '', send = undefined) {
  state.pendingSend = null;
  await refresh();
  if (state.server !== 'up' || state.pairing !== 'ok') return false;
  if (!state.targetId) {
    if (!send) {
      showNotice('This tab is not shared with tabrelay: share it first ("Share this tab" above), then try again.');
    } else if (!$('share').hidden) { // a tab that can be shared
      state.pendingSend = { text, send };
      /** @type {any} */
      const ext = await chrome.runtime.sendMessage({ type: 'status' }).catch(() => null);
      showSendNotice((state.tabId !== undefined && ext?.tabErrors?.[state.tabId]) || '');
    }
    $('notice').scrollIntoView({ block: 'nearest' });
    return false;
  }
  return true;
}
