// @ts-check
// The doors that need no toolbar icon: the welcome page opened once, on install (Chromium keeps
// a freshly loaded extension's icon in its extensions menu until it is pinned), and the tab
// chooser opened when the relay says a client waits for a tab while none is shared (chooseTab),
// unless the options page's setting chooseTab is off, and told when nobody waits any more
// (chooseTabEnded: the clients that asked disconnected or gave up).

import { state } from './worker-state.js';

const WELCOME = 'welcome.html';
const CHOOSER = 'chooser.html';

/** The chrome.storage.local setting that turns the chooser off (false). */
const CHOOSE_TAB = 'chooseTab';

/**
 * The chrome.storage.session key that says whether someone waits for the chooser's pick (true
 * from a chooseTab on, false after chooseTabEnded); the chooser page reads and watches it.
 */
export const CHOOSER_WAITING = 'chooserWaiting';

/**
 * chrome.runtime.onInstalled: the welcome page on a first install only (not on updates or
 * Chrome updates).
 * @param {chrome.runtime.InstalledDetails} details
 */
export function onInstalledFirstRun(details) {
  if (details.reason !== 'install') return;
  void chrome.tabs.create({ url: chrome.runtime.getURL(WELCOME) }).catch((e) => console.warn('tabrelay: welcome page', e));
}

/**
 * Opens the tab chooser, or brings forward the one already open, unless a tab was shared
 * meanwhile. who is the relay's "client" ("cdp", "agent").
 * @param {string} who
 */
export async function offerTabChoice(who) {
  if ([...state.shared.values()].some((r) => r.ready)) return;
  // the options page's "Ask which tab to share…" (on unless turned off)
  if ((await chrome.storage.local.get(CHOOSE_TAB))[CHOOSE_TAB] === false) return;
  await chrome.storage.session.set({ [CHOOSER_WAITING]: true });
  const url = chrome.runtime.getURL(CHOOSER);
  const [open] = await chrome.tabs.query({ url: `${url}*` });
  if (open?.id !== undefined) {
    await chrome.tabs.update(open.id, { active: true });
    if (open.windowId !== undefined) await chrome.windows.update(open.windowId, { focused: true }).catch(() => {});
    return;
  }
  await chrome.tabs.create({ url: `${url}?client=${encodeURIComponent(who || 'cdp')}` });
}

/**
 * The relay says nobody waits for a tab any more: an open chooser says so and shares nothing
 * unless the person still wants to (chooser.js watches CHOOSER_WAITING).
 */
export async function endTabChoice() {
  await chrome.storage.session.set({ [CHOOSER_WAITING]: false });
}
