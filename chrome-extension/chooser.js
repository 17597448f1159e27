// @ts-check
// The tab chooser, opened by the service worker when a client (a CDP client, or the agent)
// waits for a tab while none is shared (relay notice chooseTab, worker-firstrun.js): it lists
// the tabs that can be shared, and picking one shares it through the same path as the toolbar
// button, then brings that tab forward and closes the chooser. When the relay says nobody waits
// any more (chooseTabEnded: the client disconnected, the agent's call gave up), the page says
// so and hides the tabs: a tab is shared only if the person still wants to ("Share a tab
// anyway").

import { CHOOSER_WAITING } from './worker-firstrun.js';

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

const who = new URLSearchParams(location.search).get('client');
if (who === 'agent') {
  $('why').textContent = 'The tabrelay agent was asked to do something and no tab is shared yet. Pick the tab it may see and use; only that tab is shared, and you can stop sharing it at any time.';
}

/**
 * Whether a tab shows a page tabrelay can share (a web page or a local file; never the
 * browser's own pages or an extension's).
 * @param {chrome.tabs.Tab} t
 */
function shareable(t) {
  return /^(https?|file):/.test(t.url || t.pendingUrl || '');
}

/**
 * @param {string} text
 * @param {'ok'|'bad'|''} kind
 */
function show(text, kind) {
  const r = $('result');
  r.textContent = text;
  r.className = `state ${kind}`;
  r.hidden = !text;
}

/**
 * Shares the tab, then brings it forward and closes this page.
 * @param {chrome.tabs.Tab} tab
 */
async function pick(tab) {
  if (tab.id === undefined) return;
  for (const b of document.querySelectorAll('button')) b.disabled = true;
  show(`Sharing “${tab.title || tab.url}”…`, '');
  /** @type {any} */
  const r = await chrome.runtime.sendMessage({ type: 'share', tabId: tab.id }).catch((e) => ({ error: String(e) }));
  const shared = r?.sharedTabs?.some((/** @type {any} */ s) => s.tabId === tab.id);
  if (r?.error || !shared) {
    show(`Could not share this tab: ${r?.error || 'the extension did not share it'}. Pick another one.`, 'bad');
    await list();
    return;
  }
  show(`Shared “${tab.title || tab.url}”: the program can use it now.`, 'ok');
  await chrome.tabs.update(tab.id, { active: true }).catch(() => {});
  if (tab.windowId !== undefined) await chrome.windows.update(tab.windowId, { focused: true }).catch(() => {});
  const self = await chrome.tabs.getCurrent();
  if (self?.id !== undefined) await chrome.tabs.remove(self.id).catch(() => {});
}

/** Lists the tabs that can be shared, most recently used first. */
async function list() {
  const tabs = (await chrome.tabs.query({})).filter(shareable);
  tabs.sort((a, b) => (b.lastAccessed || 0) - (a.lastAccessed || 0));
  const ul = $('tabs');
  ul.replaceChildren(...tabs.map((t) => {
    const li = document.createElement('li');
    const img = document.createElement('img');
    img.alt = '';
    img.src = t.favIconUrl && /^(https?|data):/.test(t.favIconUrl) ? t.favIconUrl : 'icons/icon16.png';
    const what = document.createElement('span');
    what.className = 'what';
    const title = document.createElement('span');
    title.className = 'title';
    title.textContent = t.title || t.url || '';
    const url = document.createElement('span');
    url.className = 'url';
    url.textContent = t.url || '';
    what.append(title, url);
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'primary';
    b.textContent = 'Share';
    b.setAttribute('aria-label', `Share ${t.title || t.url}`);
    b.dataset.tabId = String(t.id);
    b.addEventListener('click', () => { void pick(t); });
    li.append(img, what, b);
    return li;
  }));
  $('none').hidden = tabs.length > 0;
}

/** The person chose "Share a tab anyway" after nobody waited any more. */
let anyway = false;

/**
 * Shows whether someone waits for the pick: while nobody does, the tabs are hidden (and
 * nothing can be shared by a click meant for a program that left) unless the person chose to
 * share one anyway.
 * @param {boolean} waiting
 */
function showWaiting(waiting) {
  if (waiting) anyway = false;
  $('gone').hidden = waiting || anyway;
  $('choice').hidden = !waiting && !anyway;
}

$('close').addEventListener('click', () => {
  void chrome.tabs.getCurrent().then((self) => { if (self?.id !== undefined) return chrome.tabs.remove(self.id); return undefined; });
});
$('anyway').addEventListener('click', () => {
  anyway = true;
  showWaiting(false);
});
chrome.storage.session.onChanged.addListener((changes) => {
  if (CHOOSER_WAITING in changes) showWaiting(changes[CHOOSER_WAITING].newValue !== false);
});

chrome.tabs.onUpdated.addListener((_, change) => { if (change.status === 'complete' || change.title) void list(); });
chrome.tabs.onRemoved.addListener(() => { void list(); });
chrome.tabs.onCreated.addListener(() => { void list(); });

showWaiting((await chrome.storage.session.get(CHOOSER_WAITING))[CHOOSER_WAITING] !== false);
await list();

export {};
