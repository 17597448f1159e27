// @ts-check
// Page.navigate to a URL the tab cannot show. Chrome's own endpoint answers such a navigation
// with a result carrying errorText (net::ERR_ABORTED for an unknown scheme,
// net::ERR_CERT_AUTHORITY_INVALID for a TLS error, …). Through chrome.debugger some of these
// navigations end the debugger session instead (the page went where the extension may not
// follow, for a moment), and the command fails with "Detached while handling command.". Then the
// answer is built as Chrome's: the error comes from chrome.webNavigation.onErrorOccurred, and it
// is given once the tab is attached again (handleDetach re-attaches it), so that the client's
// next command finds the tab as Chrome's would. And a tab showing a page the debugger may not
// attach to (Chrome's error page after a TLS error) still navigates: through chrome.tabs, the
// debugger attached again once the new page is there.

import { cdp, ensureAttached } from './worker-sharing.js';
import { state } from './worker-state.js';
import { errorText, sleep } from './worker-util.js';

/** @typedef {import('./worker-state.js').SharedTab} SharedTab */

/**
 * The last main-frame navigation error of each tab: tabId -> {error, at (Date.now())}.
 * @type {Map<number, {error: string, at: number}>}
 */
const lastError = new Map();

/**
 * chrome.webNavigation.onErrorOccurred: remembers main-frame errors of shared tabs.
 * @param {chrome.webNavigation.WebNavigationFramedErrorCallbackDetails} d
 */
export function onNavigationError(d) {
  if (d.frameId !== 0 || !state.shared.has(d.tabId)) return;
  lastError.set(d.tabId, { error: d.error, at: Date.now() });
}

/** chrome.tabs.onRemoved: forget the tab's error. @param {number} tabId */
export function forgetNavigationErrors(tabId) {
  lastError.delete(tabId);
}

/** How long a navigation that ended the session may take to report its error and re-attach. */
const SETTLE_MS = 10000;

/**
 * Sends Page.navigate to a shared tab's page session. The command goes out at once (commands
 * keep their order); only its failure takes the slow path.
 * @param {SharedTab} rec
 * @param {Record<string, unknown>|undefined} params
 * @returns {Promise<object>}
 */
export async function navigate(rec, params) {
  const started = Date.now();
  try {
    return await cdp(rec.tabId, undefined, 'Page.navigate', params);
  } catch (e) {
    if (pageRefusesDebugger(e)) return navigateUnattached(rec, params);
    if (!/Detached while handling command/i.test(errorText(e))) throw e;
    const deadline = Date.now() + SETTLE_MS;
    /** @type {string} */
    let failure = '';
    for (;;) {
      const last = lastError.get(rec.tabId);
      if (!failure && last && last.at >= started) failure = last.error;
      if (state.shared.get(rec.tabId) !== rec || Date.now() > deadline) throw e;
      if (failure && rec.attached && !rec.op && await debuggerAttached(rec.tabId)) break;
      await sleep(50);
    }
    return { frameId: rec.targetId, errorText: failure };
  }
}

/** @param {number} tabId */
async function debuggerAttached(tabId) {
  const t = (await chrome.debugger.getTargets()).find((x) => x.tabId === tabId && x.type === 'page');
  return !!t?.attached;
}

/**
 * Whether attaching failed because of the page the tab shows (an error page), not the tab.
 * @param {unknown} e
 */
export function pageRefusesDebugger(e) {
  return /Cannot attach to this target/i.test(errorText(e));
}

/**
 * Page.navigate for a tab whose page the debugger may not attach to or send commands to (Chrome
 * answers "Cannot attach to this target." there): the navigation goes through
 * chrome.tabs, and the answer comes once the debugger is attached to the new page, with its
 * frame and loader ids (and Chrome's errorText when the new page failed too).
 * @param {SharedTab} rec
 * @param {Record<string, unknown>|undefined} params
 * @returns {Promise<object>}
 */
export async function navigateUnattached(rec, params) {
  const url = typeof params?.url === 'string' ? params.url : '';
  if (!url) throw Object.assign(new Error('Invalid parameters: Failed to deserialize params.url'), { code: -32602 });
  const started = Date.now();
  await chrome.tabs.update(rec.tabId, { url });
  const deadline = started + SETTLE_MS;
  let tree;
  for (;;) {
    try {
      await ensureAttached(rec);
      tree = await cdp(rec.tabId, undefined, 'Page.getFrameTree'); // refused until the new page is there
      break;
    } catch (e) {
      if (!pageRefusesDebugger(e) || Date.now() > deadline || state.shared.get(rec.tabId) !== rec) throw e;
      await sleep(100);
    }
  }
  /** @type {{frameId: string, loaderId: string, errorText?: string}} */
  const out = { frameId: tree.frameTree.frame.id, loaderId: tree.frameTree.frame.loaderId };
  const last = lastError.get(rec.tabId);
  if (last && last.at >= started) out.errorText = last.error;
  return out;
}
