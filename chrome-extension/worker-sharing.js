// @ts-check
// Sharing a tab: attaching chrome.debugger with flat auto-attach, announcing the tab to the
// relay, stopping (unshare), and re-attaching when the debugger session ends but the tab lives on.
//
// With the "onDemand" setting (on by default) a tab is shared without attaching: its target id
// comes from chrome.debugger.getTargets() (the same id the debugger reports once attached), and
// the debugger is attached when the relay asks (attachTab, a client attached to the tab) or a
// command for the tab comes, and detached again when the relay says nobody drives it
// (detachTab). Attaching and detaching take turns per tab (rec.op); commands wait for them.

import * as P from './protocol.js';
import { refreshBadge, refreshBadges } from './worker-badge.js';
import { joinGroup, leaveGroup } from './worker-groups.js';
import { send } from './worker-send.js';
import { connect, restartConnection, setStopped } from './worker-socket.js';
import { persist, state } from './worker-state.js';
import { errorText, sleep } from './worker-util.js';

/** @typedef {import('./worker-state.js').SharedTab} SharedTab */

/**
 * Shares the tab, or stops sharing it. After a stop (replaced, token rejected) a click first
 * reconnects; on a shared tab it does nothing else.
 * @param {chrome.tabs.Tab} tab
 */
export async function toggle(tab) {
  if (tab.id === undefined) return;
  const tabId = tab.id;
  const wasStopped = state.status === 'stopped';
  if (state.notice) {
    state.notice = '';
    void persist();
  }
  if (wasStopped) {
    await setStopped('');
    restartConnection();
  }
  const rec = state.shared.get(tabId);
  if (rec) {
    if (!wasStopped) await unshare(rec, P.Reason.USER);
    await refreshBadges();
    return;
  }
  if (state.sharing.has(tabId)) return;
  state.tabErrors.delete(tabId);
  try {
    await shareTab(tabId, P.Origin.USER);
  } catch (e) {
    state.tabErrors.set(tabId, `cannot share this tab: ${errorText(e)}`);
    await leaveGroup(tabId); // it was dragged into the group, say: the group shows what is shared
  }
  await refreshBadges();
  if (!state.ws && state.status !== 'stopped') connect();
}

/**
 * Shares a tab: attaches the debugger (or, on demand, only finds its target id), announces it
 * and moves it into the tabrelay group.
 * @param {number} tabId
 * @param {'user'|'opener'|'client'} origin
 * @param {{openerTargetId?: string}} [opts]
 * @returns {Promise<SharedTab>}
 */
export function shareTab(tabId, origin, opts = {}) {
  const existing = state.shared.get(tabId);
  if (existing?.ready) return Promise.resolve(existing);
  const inflight = state.sharing.get(tabId);
  if (inflight) return inflight;
  // A tab a client creates is driven at once: attach it now (the relay detaches it when unused).
  const onDemand = state.onDemand && origin !== P.Origin.CLIENT;
  const p = (async () => {
    /** @type {SharedTab} */
    const rec = {
      tabId, targetId: '', origin, openerTargetId: opts.openerTargetId,
      ready: false, reattached: false, detaching: false, children: new Map(), attached: false, op: null,
    };
    state.shared.set(tabId, rec); // collects child attach events from here on
    try {
      if (onDemand) {
        rec.targetId = await targetIdOf(tabId, origin !== P.Origin.USER);
      } else {
        await attach(tabId, origin !== P.Origin.USER);
        rec.attached = true;
        const info = await cdp(tabId, undefined, 'Target.getTargetInfo');
        rec.targetId = info.targetInfo.targetId;
        autoAttach(tabId);
      }
      const tab = await chrome.tabs.get(tabId);
      if (state.shared.get(tabId) !== rec) throw new Error('the tab went away while it was being shared');
      rec.ready = true;
      if (state.live) send(P.tabShared(wireTab(rec, tab), childrenOf(rec)));
      void persist();
      void refreshBadge(tabId);
      await joinGroup(tabId);
      return rec;
    } catch (e) {
      if (state.shared.get(tabId) === rec) state.shared.delete(tabId);
      if (rec.attached) {
        rec.detaching = true;
        await chrome.debugger.detach({ tabId }).catch(() => {});
      }
      throw e;
    } finally {
      state.sharing.delete(tabId);
    }
  })();
  state.sharing.set(tabId, p);
  return p;
}

/** Pages chrome.debugger may not attach to (it answers "Cannot access a chrome:// URL"). */
const RESTRICTED = /^(chrome|chrome-extension|chrome-untrusted|devtools|edge):\/\//i;

/**
 * Why the debugger could not attach to a page at url, or '' when it could.
 * @param {string} url
 */
export function restricted(url) {
  const m = RESTRICTED.exec(url);
  return m ? `Cannot access a ${m[1].toLowerCase()}:// URL` : '';
}

/**
 * The target id of a tab's page, without attaching (chrome.debugger.getTargets), refusing the
 * pages the debugger could not attach to later.
 * @param {number} tabId
 * @param {boolean} patient the tab is still being created: wait for its target a moment
 */
async function targetIdOf(tabId, patient) {
  for (let i = 0; i < (patient ? 20 : 3); i++) {
    const tab = await chrome.tabs.get(tabId);
    const why = restricted(tab.url || tab.pendingUrl || '');
    if (why) throw new Error(why);
    const t = (await chrome.debugger.getTargets()).find((x) => x.tabId === tabId && x.type === 'page');
    if (t) return t.id;
    await sleep(100);
  }
  throw new Error('the browser lists no debugging target for this tab');
}

/**
 * Runs fn after the attach or detach under way on the tab (they take turns).
 * @param {SharedTab} rec
 * @param {() => Promise<void>} fn
 */
function turn(rec, fn) {
  const p = (rec.op ?? Promise.resolve()).then(fn);
  const tail = p.catch(() => {});
  rec.op = tail;
  void tail.then(() => { if (rec.op === tail) rec.op = null; });
  return p;
}

/**
 * Makes sure a shared tab's debugger is attached (debugger on demand): at once when it is and
 * nothing is under way, else after what is under way.
 * @param {SharedTab} rec
 */
export function ensureAttached(rec) {
  if (rec.attached && !rec.op) return Promise.resolve();
  return turn(rec, async () => {
    if (rec.attached || state.shared.get(rec.tabId) !== rec) return;
    await attach(rec.tabId, true);
    rec.attached = true;
    rec.children = new Map();
    const info = await cdp(rec.tabId, undefined, 'Target.getTargetInfo');
    const targetId = info.targetInfo.targetId;
    if (targetId !== rec.targetId) {
      // not expected (getTargets gives the same id), but the relay must hear the truth
      if (state.live) send(P.tabUnshared(rec.targetId, rec.tabId, P.Reason.DETACHED));
      rec.targetId = targetId;
      const tab = await chrome.tabs.get(rec.tabId);
      if (state.live) send(P.tabShared(wireTab(rec, tab)));
    }
    autoAttach(rec.tabId);
    void persist();
    void refreshBadge(rec.tabId);
  });
}

/**
 * Detaches a shared tab's debugger and keeps the tab shared (debugger on demand).
 * @param {SharedTab} rec
 */
export function ensureDetached(rec) {
  return turn(rec, async () => {
    if (!rec.attached || state.shared.get(rec.tabId) !== rec) return;
    rec.detaching = true;
    try {
      await chrome.debugger.detach({ tabId: rec.tabId }).catch(() => {});
    } finally {
      rec.detaching = false;
    }
    rec.attached = false;
    rec.children = new Map();
    void persist();
    void refreshBadge(rec.tabId);
  });
}

/**
 * Attaches chrome.debugger, retrying briefly for tabs that are still being created.
 * @param {number} tabId
 * @param {boolean} [patient]
 */
export async function attach(tabId, patient = false) {
  let last;
  for (let i = 0; i < (patient ? 10 : 2); i++) {
    try {
      await chrome.debugger.attach({ tabId }, '1.3');
      return;
    } catch (e) {
      last = e;
      const msg = errorText(e);
      if (/already attached/i.test(msg)) {
        // Possibly our own session from before a worker restart: drop it and try once more.
        await chrome.debugger.detach({ tabId }).catch(() => {});
        continue;
      }
      if (/cannot access|cannot attach|chrome:\/\/|chrome-extension:\/\//i.test(msg) && !patient) break;
      await sleep(100);
    }
  }
  const msg = errorText(last);
  if (/already attached/i.test(msg)) {
    throw new Error('another debugger (DevTools or another extension) is attached to this tab');
  }
  throw new Error(msg);
}

/**
 * Shares a tab opened by a shared tab.
 * @param {number} tabId
 * @param {number} openerTabId
 */
export async function shareOpened(tabId, openerTabId) {
  const opener = state.shared.get(openerTabId);
  if (!opener?.ready || state.clientCreated.has(tabId) || state.shared.get(tabId)?.ready) return;
  try {
    await shareTab(tabId, P.Origin.OPENER, { openerTargetId: opener.targetId });
  } catch (e) {
    console.warn('tabrelay: could not share opened tab', tabId, e);
  }
}

/**
 * Stops sharing a tab and tells the relay.
 * @param {SharedTab} rec
 * @param {string} reason
 * @param {{detach?: boolean}} [opts]
 */
export async function unshare(rec, reason, opts = {}) {
  if (state.shared.get(rec.tabId) !== rec) return;
  state.shared.delete(rec.tabId);
  if (rec.ready && state.live) send(P.tabUnshared(rec.targetId, rec.tabId, reason));
  if (opts.detach !== false && (rec.attached || rec.op)) {
    rec.detaching = true;
    await rec.op;
    await chrome.debugger.detach({ tabId: rec.tabId }).catch(() => {});
  }
  rec.attached = false;
  void persist();
  // out of the group first: once the badge says "not shared", the tab strip says so too
  if (reason !== P.Reason.CLOSED) await leaveGroup(rec.tabId);
  await refreshBadge(rec.tabId);
}

/**
 * @param {string} reason
 */
async function unshareAll(reason) {
  for (const rec of [...state.shared.values()]) await unshare(rec, reason);
}

/**
 * chrome.debugger.onDetach: re-attach when the tab lives on after target_closed; stop
 * everything when the user canceled the debugging bar.
 * @param {chrome.debugger.Debuggee} source
 * @param {string} reason
 */
export async function handleDetach(source, reason) {
  const tabId = source.tabId;
  if (tabId === undefined) return;
  const rec = state.shared.get(tabId);
  if (!rec || rec.detaching || !rec.attached) return;
  if (reason === 'canceled_by_user') {
    await unshareAll(P.Reason.CANCELED_BY_USER);
    state.notice = 'sharing stopped: the "tabrelay started debugging this browser" bar was canceled; click the tabrelay button to share a tab again';
    void persist();
    await refreshBadges();
    return;
  }
  if (reason === 'target_closed') {
    // The re-attach takes the tab's turn at once, so that commands wait for it (rather than
    // fail with "Debugger is not attached") and a navigation that ended the session finds the
    // tab attached again (worker-navigate.js).
    /** @type {string} */
    let gone = '';
    await turn(rec, async () => {
      // A closing tab detaches first and is removed a moment later: give onRemoved its chance.
      await sleep(100);
      if (state.shared.get(tabId) !== rec || state.replaced.has(tabId)) return; // onTabReplaced reports it
      const tab = await chrome.tabs.get(tabId).catch(() => null);
      if (tab && state.shared.get(tabId) === rec) {
        try {
          await reattach(rec);
          return;
        } catch (e) {
          // The tab went where the debugger may not follow (a chrome:// page, another
          // extension's page): say so on the tab until it navigates again.
          console.warn('tabrelay: re-attach failed', tabId, e);
          if (state.shared.get(tabId) === rec) state.tabErrors.set(tabId, `sharing stopped: ${errorText(e)}`);
        }
      }
      gone = tab ? P.Reason.DETACHED : P.Reason.CLOSED;
    });
    if (gone) await unshare(rec, gone, { detach: false });
    return;
  }
  await unshare(rec, P.Reason.DETACHED, { detach: false });
}

/**
 * The page-session commands a new debugger session forgets and a re-attach sends again, before
 * any command that waited for it (the relay switches them on again too, but only once it hears
 * of the re-attach: a navigation sent meanwhile would lose its events): each command -> what it
 * switches.
 * @type {Record<string, string>}
 */
const SWITCHES = {
  'Page.enable': 'Page', 'Page.disable': 'Page', 'Network.enable': 'Network', 'Network.disable': 'Network',
  'Page.setLifecycleEventsEnabled': 'lifecycle',
};

/**
 * Remembers a command a client sent to a tab's page session that SWITCHES names.
 * @param {SharedTab} rec
 * @param {string} method
 * @param {Record<string, unknown>|undefined} params
 */
export function rememberSwitch(rec, method, params) {
  const key = SWITCHES[method];
  if (!key) return;
  rec.switched ??= new Map();
  if (method.endsWith('.disable') || (key === 'lifecycle' && !params?.enabled)) rec.switched.delete(key);
  else rec.switched.set(key, { method, params });
}

/**
 * Attaches the debugger again to a shared tab whose session ended while the tab lives on.
 * @param {SharedTab} rec
 */
async function reattach(rec) {
  rec.children = new Map();
  await attach(rec.tabId, true);
  // the domains first, the lifecycle events (which need Page) last
  const again = [...(rec.switched ?? new Map())].sort(([a], [b]) => Number(a === 'lifecycle') - Number(b === 'lifecycle'));
  for (const [, c] of again) await cdp(rec.tabId, undefined, c.method, c.params).catch(() => {});
  const info = await cdp(rec.tabId, undefined, 'Target.getTargetInfo');
  const targetId = info.targetInfo.targetId;
  if (targetId !== rec.targetId) {
    if (state.live) send(P.tabUnshared(rec.targetId, rec.tabId, P.Reason.DETACHED));
    rec.targetId = targetId;
  }
  autoAttach(rec.tabId);
  const tab = await chrome.tabs.get(rec.tabId);
  rec.mainLoading = await mainDocumentLoading(rec.tabId, tab);
  rec.ready = true;
  rec.reattached = true;
  if (state.live) {
    send(P.tabShared(wireTab(rec, tab), childrenOf(rec)));
    rec.reattached = false;
  }
  void persist();
  await refreshBadge(rec.tabId);
}

/**
 * @param {SharedTab} rec
 * @param {chrome.tabs.Tab} tab
 * @returns {P.WireTab}
 */
export function wireTab(rec, tab) {
  /** @type {P.WireTab} */
  const t = {
    tabId: rec.tabId,
    targetId: rec.targetId,
    url: tab.url || tab.pendingUrl || '',
    title: tab.title || '',
    windowId: tab.windowId,
    active: !!tab.active,
    origin: rec.origin,
  };
  if (rec.openerTargetId) t.openerTargetId = rec.openerTargetId;
  if (rec.reattached) t.reattached = true;
  if (!rec.attached) t.detached = true;
  if (rec.reattached ? rec.mainLoading : tab.status === 'loading') t.loading = true;
  return t;
}

/**
 * Whether a tab's main document is still loading, as the page says once the debugger is attached
 * again. chrome.tabs' status also counts its frames' loads: a page with a frame that reloads
 * every 100 ms says "loading" most of the time, and the end of a main-frame load lost while the
 * debugger was away would then never be given. A page that does not answer within a second (a
 * dialog, a busy script) is taken at chrome.tabs' word.
 * @param {number} tabId
 * @param {chrome.tabs.Tab} tab
 * @returns {Promise<boolean>}
 */
async function mainDocumentLoading(tabId, tab) {
  const byStatus = tab.status === 'loading';
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve(byStatus), 1000); });
  const asked = cdp(tabId, undefined, 'Runtime.evaluate', { expression: 'document.readyState', returnByValue: true })
    .then((r) => /** @type {{result?: {value?: unknown}}} */ (r)?.result?.value !== 'complete', () => byStatus);
  try {
    return /** @type {boolean} */ (await Promise.race([asked, late]));
  } finally {
    clearTimeout(timer);
  }
}

/** @param {SharedTab} rec @returns {P.WireChild[]} */
export function childrenOf(rec) {
  return [...rec.children].map(([sessionId, targetInfo]) => ({ sessionId, targetInfo }));
}

/**
 * Turns on flat auto-attach for a tab's child targets (out-of-process iframes, workers). Its
 * answer is not awaited: Chrome gives it only once the page's renderer answers, which a page
 * behind a JavaScript dialog or a busy script does not, and nothing may wait on such a page
 * (the command still takes effect in order, before any later command of the tab).
 * @param {number} tabId
 */
export function autoAttach(tabId) {
  cdp(tabId, undefined, 'Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true })
    .catch((e) => console.warn('tabrelay: auto-attach', tabId, errorText(e)));
}

/**
 * chrome.debugger.sendCommand as a promise.
 * @param {number} tabId
 * @param {string|undefined} sessionId
 * @param {string} method
 * @param {Record<string, unknown>} [params]
 * @returns {Promise<any>}
 */
export function cdp(tabId, sessionId, method, params) {
  /** @type {chrome.debugger.DebuggerSession} */
  const target = sessionId ? { tabId, sessionId } : { tabId };
  return chrome.debugger.sendCommand(target, method, params ?? {});
}
