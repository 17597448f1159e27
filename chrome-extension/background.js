// tabrelay service worker: shares chosen tabs with the local tabrelay relay over one WebSocket
// (protocol in relay/wire/PROTOCOL.md, JS shapes in protocol.js).
//
// A tab is shared when the user clicks the toolbar button (or uses the shortcut or the context
// menu), when a shared tab opens it, or when a relay client asks for a new tab. Sharing means
// chrome.debugger is attached with flat auto-attach on, every debugger event is forwarded, and
// the relay's CDP commands are sent to the tab or its child sessions.
//
// State that must survive a service-worker restart (shared tabs, a stop reason) lives in
// chrome.storage.session; settings (relayAddr, token) live in chrome.storage.local.

import * as P from './protocol.js';
import { authorize, NotProvedError, UnreachableError } from './auth.js';

const DEFAULT_ADDR = '127.0.0.1:18792';
const PING_MS = 20_000;
const DEAD_MS = 60_000;
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5_000;
const WELCOME_TIMEOUT_MS = 5_000;
const KEEPALIVE_ALARM = 'tabrelay-keepalive';
const MENU_ID = 'tabrelay-toggle';
const PANEL_MENU_ID = 'tabrelay-panel';
const SESSION_KEY = 'tabrelayState';

/**
 * One shared tab.
 * @typedef {object} SharedTab
 * @property {number} tabId
 * @property {string} targetId
 * @property {'user'|'opener'|'client'} origin
 * @property {string} [openerTargetId]
 * @property {boolean} ready true once attached, auto-attach is on and the tab may be announced
 * @property {boolean} reattached the next announcement says the debugger was attached anew
 * @property {boolean} detaching we are detaching it ourselves (ignore the onDetach)
 * @property {Map<string, object>} children child sessions of the tab: sessionId -> targetInfo
 */

/**
 * @typedef {'unpaired'|'connecting'|'connected'|'error'|'stopped'} Status
 */

const state = {
  addr: DEFAULT_ADDR,
  token: '',
  /** @type {Map<number, SharedTab>} */
  shared: new Map(),
  /** tabs being attached right now (dedupes onCreated vs onCreatedNavigationTarget) @type {Map<number, Promise<SharedTab>>} */
  sharing: new Map(),
  /** tabs the relay asked us to create: not shared again as "opener" tabs @type {Set<number>} */
  clientCreated: new Set(),
  /** client-created tab -> the tab that was in front when it was created (brought back to the
   * front when a client closes it) @type {Map<number, number>} */
  returnTo: new Map(),
  /** tabs Chrome replaced (a discard) whose onReplaced is being handled: their debugger detach
   * is not a close @type {Set<number>} */
  replaced: new Set(),
  /** @type {WebSocket|null} */
  ws: null,
  /** the proof of the server under way (replaced to abandon it) @type {object|null} */
  proving: null,
  /** true after welcome and after every shared tab was announced on this connection */
  live: false,
  /** @type {Status} */
  status: 'connecting',
  /** plain words for the tooltip when status is error or stopped */
  reason: '',
  /** a one-off notice shown until the next click (e.g. sharing canceled by the user) */
  notice: '',
  attempts: 0,
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  reconnectTimer: undefined,
  /** @type {ReturnType<typeof setInterval>|undefined} */
  pingTimer: undefined,
  lastHeard: 0,
  /** tabs with a tab-specific title (a title cannot be reset to the default) @type {Set<number>} */
  titled: new Set(),
  /** per-tab error text when sharing that tab failed @type {Map<number, string>} */
  tabErrors: new Map(),
  /** @type {{product: string, userAgent: string}|null} */
  product: null,
  /** how many times this worker got a welcome (a restarted worker starts again at 0) */
  connects: 0,
};

// ---------------------------------------------------------------------------------------------
// Listeners are registered synchronously at top level, as MV3 requires; each waits for init.

const ready = init();

chrome.action.onClicked.addListener((tab) => { void withReady(() => toggle(tab)); });
chrome.commands.onCommand.addListener((command, tab) => { void onCommand(command, tab); });
chrome.contextMenus.onClicked.addListener((info, tab) => { void onMenuClicked(info, tab); });
chrome.runtime.onInstalled.addListener(() => {
  chrome.contextMenus.removeAll(() => {
    chrome.contextMenus.create({
      id: MENU_ID,
      title: 'Share or stop sharing this tab with tabrelay',
      contexts: ['page', 'action'],
    });
    chrome.contextMenus.create({ id: PANEL_MENU_ID, title: 'Open the tabrelay side panel', contexts: ['page', 'action'] });
  });
});

chrome.debugger.onEvent.addListener((source, method, params) => onDebuggerEvent(source, method, params));
chrome.debugger.onDetach.addListener((source, reason) => { void withReady(() => handleDetach(source, reason)); });

// Tabs opened by a shared tab (window.open, target=_blank, "open link in new tab") are shared
// too. chrome.tabs.onCreated's openerTabId is not used: Chrome also sets it for tabs opened by
// other means while a shared tab is active (for example over the DevTools protocol), which
// would share tabs the user never meant to share.
chrome.webNavigation.onCreatedNavigationTarget.addListener((d) => {
  void withReady(() => shareOpened(d.tabId, d.sourceTabId));
});
chrome.tabs.onUpdated.addListener((tabId, change, tab) => { void withReady(() => onTabUpdated(tabId, change, tab)); });
chrome.tabs.onRemoved.addListener((tabId) => { void withReady(() => onTabRemoved(tabId)); });
chrome.tabs.onReplaced.addListener((added, removed) => {
  state.replaced.add(removed); // at once: the old tab's detach may be handled first
  void withReady(() => onTabReplaced(added, removed)).finally(() => state.replaced.delete(removed));
});

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local' || !(('relayAddr' in changes) || ('token' in changes))) return;
  void withReady(async () => {
    await loadSettings();
    state.notice = '';
    await setStopped('');
    restartConnection();
  });
});

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === KEEPALIVE_ALARM) void withReady(async () => ensureConnected());
});

chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id) return false;
  void withReady(async () => {
    if (msg?.type === 'status') {
      sendResponse(statusReport());
    } else if (msg?.type === 'reconnect') {
      await setStopped('');
      restartConnection();
      sendResponse(statusReport());
    } else if ((msg?.type === 'share' || msg?.type === 'unshare') && typeof msg.tabId === 'number') {
      // One-click sharing from the side panel: the same path as a toolbar click on that tab.
      const tab = await chrome.tabs.get(msg.tabId).catch(() => undefined);
      if (!tab) {
        sendResponse({ error: `no tab ${msg.tabId}` });
        return;
      }
      const shared = state.shared.get(msg.tabId)?.ready === true;
      if (shared !== (msg.type === 'share')) await toggle(tab);
      const err = state.tabErrors.get(msg.tabId);
      sendResponse(err ? { ...statusReport(), error: err } : statusReport());
    } else {
      sendResponse({ error: 'unknown message' });
    }
  });
  return true;
});

/**
 * The keyboard shortcuts (manifest "commands"). Returns when the toggle is done.
 * @param {string} command
 * @param {chrome.tabs.Tab} [tab]
 */
function onCommand(command, tab) {
  if (command === 'open-panel') {
    if (tab?.windowId !== undefined) void chrome.sidePanel.open({ windowId: tab.windowId }).catch(() => {});
    return Promise.resolve();
  }
  if (command !== 'toggle-share') return Promise.resolve();
  return withReady(async () => {
    const t = tab ?? (await chrome.tabs.query({ active: true, lastFocusedWindow: true }))[0];
    if (t) await toggle(t);
  });
}

/**
 * The context-menu items. Returns when the toggle is done.
 * @param {chrome.contextMenus.OnClickData} info
 * @param {chrome.tabs.Tab} [tab]
 */
function onMenuClicked(info, tab) {
  // sidePanel.open must run in the click's user gesture: no await before it.
  if (info.menuItemId === PANEL_MENU_ID && tab?.windowId !== undefined) void chrome.sidePanel.open({ windowId: tab.windowId }).catch(() => {});
  if (info.menuItemId === MENU_ID && tab) return withReady(() => toggle(tab));
  return Promise.resolve();
}

/**
 * Runs fn after initialisation, logging (never throwing) failures.
 * @param {() => Promise<unknown>} fn
 */
async function withReady(fn) {
  try {
    await ready;
    await fn();
  } catch (e) {
    console.warn('tabrelay:', e);
  }
}

// Exposed for the maintainers' console and the end-to-end harness (read-mostly helpers that go
// through the same code paths as the real events).
Object.assign(globalThis, {
  tabrelay: {
    state,
    statusReport,
    toggle: (/** @type {number} */ tabId) => withReady(async () => toggle(await chrome.tabs.get(tabId))),
    handleDetach,
    onCommand,
    onMenuClicked,
  },
});

// ---------------------------------------------------------------------------------------------
// Initialisation and persistence

async function init() {
  void chrome.alarms.create(KEEPALIVE_ALARM, { periodInMinutes: 0.5 });
  await loadSettings();
  const saved = (await chrome.storage.session.get(SESSION_KEY))[SESSION_KEY] ?? {};
  state.status = 'connecting';
  if (saved.stoppedReason) {
    state.status = 'stopped';
    state.reason = saved.stoppedReason;
  }
  state.notice = saved.notice ?? '';
  /** @type {Array<{tabId:number,targetId:string,origin:any,openerTargetId?:string,children?:Array<[string,object]>}>} */
  const tabs = saved.shared ?? [];
  let attachedTabs = new Set();
  try {
    attachedTabs = new Set((await chrome.debugger.getTargets())
      .filter((t) => t.attached && t.tabId !== undefined).map((t) => t.tabId));
  } catch { /* ignore */ }
  for (const s of tabs) {
    const tab = await chrome.tabs.get(s.tabId).catch(() => null);
    if (!tab) continue;
    /** @type {SharedTab} */
    const rec = {
      tabId: s.tabId, targetId: s.targetId, origin: s.origin, openerTargetId: s.openerTargetId,
      ready: true, reattached: false, detaching: false, children: new Map(s.children ?? []),
    };
    if (!attachedTabs.has(s.tabId)) {
      // The debugger session did not survive: attach again and say so.
      try {
        await attach(s.tabId);
        const info = await cdp(s.tabId, undefined, 'Target.getTargetInfo');
        rec.targetId = info.targetInfo.targetId;
        rec.children = new Map();
        await cdp(s.tabId, undefined, 'Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true });
        rec.reattached = true;
      } catch (e) {
        console.warn('tabrelay: could not restore tab', s.tabId, e);
        continue;
      }
    }
    state.shared.set(rec.tabId, rec);
  }
  await persist();
  await refreshBadges();
  if (state.status !== 'stopped') connect();
}

async function loadSettings() {
  const s = await chrome.storage.local.get(['relayAddr', 'token']);
  state.addr = (typeof s.relayAddr === 'string' && s.relayAddr.trim()) || DEFAULT_ADDR;
  state.token = (typeof s.token === 'string' && s.token.trim()) || '';
}

let persistQueued = false;
/** Saves shared tabs and the stop reason to chrome.storage.session (coalesced). */
async function persist() {
  if (persistQueued) return;
  persistQueued = true;
  await Promise.resolve();
  persistQueued = false;
  const shared = [...state.shared.values()].filter((r) => r.ready).map((r) => ({
    tabId: r.tabId, targetId: r.targetId, origin: r.origin, openerTargetId: r.openerTargetId,
    children: [...r.children],
  }));
  await chrome.storage.session.set({
    [SESSION_KEY]: { shared, stoppedReason: state.status === 'stopped' ? state.reason : '', notice: state.notice },
  });
}

// ---------------------------------------------------------------------------------------------
// The toolbar click

/**
 * Shares the tab, or stops sharing it. After a stop (replaced, token rejected) a click first
 * reconnects; on a shared tab it does nothing else.
 * @param {chrome.tabs.Tab} tab
 */
async function toggle(tab) {
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
  }
  await refreshBadges();
  if (!state.ws && state.status !== 'stopped') connect();
}

// ---------------------------------------------------------------------------------------------
// Sharing

/**
 * Attaches the debugger to a tab and shares it.
 * @param {number} tabId
 * @param {'user'|'opener'|'client'} origin
 * @param {{openerTargetId?: string}} [opts]
 * @returns {Promise<SharedTab>}
 */
function shareTab(tabId, origin, opts = {}) {
  const existing = state.shared.get(tabId);
  if (existing?.ready) return Promise.resolve(existing);
  const inflight = state.sharing.get(tabId);
  if (inflight) return inflight;
  const p = (async () => {
    /** @type {SharedTab} */
    const rec = {
      tabId, targetId: '', origin, openerTargetId: opts.openerTargetId,
      ready: false, reattached: false, detaching: false, children: new Map(),
    };
    state.shared.set(tabId, rec); // collects child attach events from here on
    try {
      await attach(tabId, origin !== P.Origin.USER);
      const info = await cdp(tabId, undefined, 'Target.getTargetInfo');
      rec.targetId = info.targetInfo.targetId;
      await cdp(tabId, undefined, 'Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true });
      const tab = await chrome.tabs.get(tabId);
      if (state.shared.get(tabId) !== rec) throw new Error('the tab went away while it was being shared');
      rec.ready = true;
      if (state.live) send(P.tabShared(wireTab(rec, tab), childrenOf(rec)));
      void persist();
      void refreshBadge(tabId);
      return rec;
    } catch (e) {
      if (state.shared.get(tabId) === rec) state.shared.delete(tabId);
      rec.detaching = true;
      await chrome.debugger.detach({ tabId }).catch(() => {});
      throw e;
    } finally {
      state.sharing.delete(tabId);
    }
  })();
  state.sharing.set(tabId, p);
  return p;
}

/**
 * Attaches chrome.debugger, retrying briefly for tabs that are still being created.
 * @param {number} tabId
 * @param {boolean} [patient]
 */
async function attach(tabId, patient = false) {
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
async function shareOpened(tabId, openerTabId) {
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
async function unshare(rec, reason, opts = {}) {
  if (state.shared.get(rec.tabId) !== rec) return;
  state.shared.delete(rec.tabId);
  if (rec.ready && state.live) send(P.tabUnshared(rec.targetId, rec.tabId, reason));
  if (opts.detach !== false) {
    rec.detaching = true;
    await chrome.debugger.detach({ tabId: rec.tabId }).catch(() => {});
  }
  void persist();
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
async function handleDetach(source, reason) {
  const tabId = source.tabId;
  if (tabId === undefined) return;
  const rec = state.shared.get(tabId);
  if (!rec || rec.detaching) return;
  if (reason === 'canceled_by_user') {
    await unshareAll(P.Reason.CANCELED_BY_USER);
    state.notice = 'sharing stopped: the "tabrelay started debugging this browser" bar was canceled; click the tabrelay button to share a tab again';
    void persist();
    await refreshBadges();
    return;
  }
  if (reason === 'target_closed') {
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
    await unshare(rec, tab ? P.Reason.DETACHED : P.Reason.CLOSED, { detach: false });
    return;
  }
  await unshare(rec, P.Reason.DETACHED, { detach: false });
}

/**
 * Attaches the debugger again to a shared tab whose session ended while the tab lives on.
 * @param {SharedTab} rec
 */
async function reattach(rec) {
  rec.children = new Map();
  await attach(rec.tabId, true);
  const info = await cdp(rec.tabId, undefined, 'Target.getTargetInfo');
  const targetId = info.targetInfo.targetId;
  if (targetId !== rec.targetId) {
    if (state.live) send(P.tabUnshared(rec.targetId, rec.tabId, P.Reason.DETACHED));
    rec.targetId = targetId;
  }
  await cdp(rec.tabId, undefined, 'Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true });
  const tab = await chrome.tabs.get(rec.tabId);
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
 * @param {number} tabId
 * @param {chrome.tabs.TabChangeInfo} change
 * @param {chrome.tabs.Tab} tab
 */
async function onTabUpdated(tabId, change, tab) {
  const rec = state.shared.get(tabId);
  if (!rec) {
    if (change.status === 'loading' && state.tabErrors.has(tabId)) {
      state.tabErrors.delete(tabId);
      await refreshBadge(tabId);
    }
    return;
  }
  if (!rec.ready) return;
  if (change.discarded) {
    await unshare(rec, P.Reason.DISCARDED, { detach: true });
    return;
  }
  if ('url' in change || 'title' in change || 'status' in change) {
    if (state.live) send(P.tabUpdated(wireTab(rec, tab)));
  }
  if ('status' in change || 'url' in change) await refreshBadge(tabId);
}

/** @param {number} tabId */
async function onTabRemoved(tabId) {
  state.tabErrors.delete(tabId);
  state.titled.delete(tabId);
  state.clientCreated.delete(tabId);
  state.returnTo.delete(tabId);
  const rec = state.shared.get(tabId);
  if (rec) await unshare(rec, P.Reason.CLOSED, { detach: false });
}

/**
 * @param {number} addedTabId
 * @param {number} removedTabId
 */
async function onTabReplaced(addedTabId, removedTabId) {
  const rec = state.shared.get(removedTabId);
  if (!rec) return;
  // Discarding a tab replaces it with a discarded one under a new id (Chromium 156): report the
  // discard, and do not attach to the discarded tab (that fails, or would reload it).
  const added = await chrome.tabs.get(addedTabId).catch(() => null);
  if (added?.discarded) {
    await unshare(rec, P.Reason.DISCARDED, { detach: false });
    return;
  }
  await unshare(rec, P.Reason.REPLACED, { detach: false });
  try {
    await shareTab(addedTabId, rec.origin, { openerTargetId: rec.openerTargetId });
  } catch (e) {
    console.warn('tabrelay: could not share the replacing tab', addedTabId, e);
  }
}

/**
 * chrome.debugger.onEvent: keep the child-session registry and forward the event.
 * @param {chrome.debugger.DebuggerSession} source
 * @param {string} method
 * @param {any} params
 */
function onDebuggerEvent(source, method, params) {
  const rec = source.tabId === undefined ? undefined : state.shared.get(source.tabId);
  if (!rec) return;
  if (!source.sessionId) {
    if (method === 'Target.attachedToTarget' && params?.sessionId) {
      rec.children.set(params.sessionId, params.targetInfo);
      if (rec.ready) void persist();
    } else if (method === 'Target.detachedFromTarget' && params?.sessionId) {
      rec.children.delete(params.sessionId);
      if (rec.ready) void persist();
    }
  }
  if (!rec.ready || !state.live) return;
  send(P.event(rec.targetId, source.sessionId, method, params));
  if (method === 'Inspector.targetCrashed' && !source.sessionId) {
    void withReady(() => unshare(rec, P.Reason.CRASHED));
  }
}

/**
 * @param {SharedTab} rec
 * @param {chrome.tabs.Tab} tab
 * @returns {P.WireTab}
 */
function wireTab(rec, tab) {
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
  return t;
}

/** @param {SharedTab} rec @returns {P.WireChild[]} */
function childrenOf(rec) {
  return [...rec.children].map(([sessionId, targetInfo]) => ({ sessionId, targetInfo }));
}

// ---------------------------------------------------------------------------------------------
// The relay connection

function connect() {
  if (state.ws || state.proving || state.status === 'stopped') return;
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = undefined;
  if (!state.token) {
    setStatus('unpaired', '');
    return;
  }
  const attempt = {};
  state.proving = attempt;
  if (state.status !== 'error') setStatus('connecting', '');
  void openSocket(attempt);
}

/**
 * Has the server prove it knows the secret (auth.js), then opens the WebSocket with the
 * short-lived credential; the secret itself never leaves the extension. A server that fails the
 * proof stops the extension with the reason on the badge.
 * @param {object} attempt
 */
async function openSocket(attempt) {
  const { addr, token } = state;
  let cred;
  try {
    cred = await authorize(addr, token);
  } catch (e) {
    if (state.proving !== attempt) return;
    state.proving = null;
    if (e instanceof NotProvedError) {
      await setStopped(e.message);
      return;
    }
    setStatus('error', e instanceof UnreachableError ? e.message : errorText(e));
    scheduleReconnect();
    return;
  }
  if (state.proving !== attempt) return; // settings changed or the connection restarted meanwhile
  state.proving = null;
  if (state.ws || state.status === 'stopped') return;
  let ws;
  try {
    ws = new WebSocket(`ws://${cred.addr}/extension?token=${encodeURIComponent(cred.credential)}`);
  } catch (e) {
    setStatus('error', `tabrelay server address "${state.addr}" is not valid: ${errorText(e)}`);
    return;
  }
  state.ws = ws;
  state.live = false;
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let welcomeTimer;
  ws.onopen = async () => {
    state.lastHeard = Date.now();
    const info = await productInfo();
    if (state.ws !== ws) return;
    ws.send(JSON.stringify(P.hello({ extensionVersion: chrome.runtime.getManifest().version, ...info })));
    welcomeTimer = setTimeout(() => {
      if (state.ws === ws && !state.live) dropConnection(ws, 'the tabrelay server did not answer the hello');
    }, WELCOME_TIMEOUT_MS);
  };
  ws.onmessage = (ev) => {
    if (state.ws !== ws) return;
    state.lastHeard = Date.now();
    /** @type {P.RelayMessage} */
    let msg;
    try {
      msg = JSON.parse(typeof ev.data === 'string' ? ev.data : '');
    } catch {
      return;
    }
    if (msg.type === P.Type.WELCOME) {
      clearTimeout(welcomeTimer);
      void onWelcome(ws);
    } else if (msg.type === P.Type.PONG) {
      // lastHeard is enough
    } else if (typeof msg.id === 'number') {
      void handleRequest(ws, msg);
    }
  };
  ws.onclose = (ev) => {
    clearTimeout(welcomeTimer);
    if (state.ws !== ws) return;
    void onClosed(ws, ev.code, ev.reason);
  };
  ws.onerror = () => { /* onclose follows with the details we can get */ };
}

/** @param {WebSocket} ws */
async function onWelcome(ws) {
  // Gather every shared tab's info, then announce them all in one synchronous block so that no
  // event of a shared tab reaches the relay before its tabShared.
  const recs = [...state.shared.values()].filter((r) => r.ready);
  const tabs = await Promise.all(recs.map((r) => chrome.tabs.get(r.tabId).catch(() => null)));
  if (state.ws !== ws) return;
  state.attempts = 0;
  state.connects++;
  recs.forEach((rec, i) => {
    const tab = tabs[i];
    if (!tab || state.shared.get(rec.tabId) !== rec || !rec.ready) return;
    ws.send(JSON.stringify(P.tabShared(wireTab(rec, tab), childrenOf(rec))));
    rec.reattached = false;
  });
  state.live = true;
  clearInterval(state.pingTimer);
  state.pingTimer = setInterval(() => {
    if (state.ws !== ws) return;
    if (Date.now() - state.lastHeard > DEAD_MS) {
      dropConnection(ws, `no answer from the tabrelay server at ${state.addr} for 60 s`);
      return;
    }
    send(P.ping());
  }, PING_MS);
  setStatus('connected', '');
}

/**
 * @param {WebSocket} ws
 * @param {number} code
 * @param {string} reason
 */
async function onClosed(ws, code, reason) {
  const wasLive = state.live;
  state.ws = null;
  state.live = false;
  clearInterval(state.pingTimer);
  if (code === P.Close.REPLACED) {
    await setStopped("replaced by another browser's connection (click the tabrelay button to take over again)");
    return;
  }
  if (code === P.Close.TOKEN_ROTATED) {
    await setStopped('pairing token rejected: the server has a new token; pair again from the options page');
    return;
  }
  if (code === P.Close.BAD_VERSION) {
    await setStopped(`the tabrelay server speaks another protocol version (${reason || 'unsupported'}); update the extension or the server`);
    return;
  }
  if (wasLive) {
    // A clean drop after a live session (relay restart): try again at once.
    setStatus('connecting', '');
    scheduleReconnect();
    return;
  }
  const { addr, token } = state;
  const why = await diagnose();
  // New settings (pairing again after a rejected token, say) arrived meanwhile: the verdict is
  // about the old ones, and the settings handler connects with the new ones. Stopping here would
  // leave the extension stopped with a good token.
  if (state.ws || state.status === 'stopped' || state.token !== token || state.addr !== addr) return;
  if (why.tokenRejected) {
    await setStopped(why.text);
    return;
  }
  setStatus('error', why.text);
  scheduleReconnect();
}

/**
 * Finds out in plain words why the WebSocket could not be opened (the browser does not tell).
 * @returns {Promise<{text: string, tokenRejected?: boolean}>}
 */
async function diagnose() {
  const addr = state.addr;
  let cred;
  try {
    cred = await authorize(addr, state.token);
  } catch (e) {
    if (e instanceof NotProvedError) return { text: e.message, tokenRejected: true };
    if (e instanceof UnreachableError) return { text: e.message };
    return { text: errorText(e), tokenRejected: true };
  }
  let res;
  try {
    res = await fetch(`http://${cred.addr}/json/version`, {
      headers: { Authorization: `Bearer ${cred.credential}` },
      signal: AbortSignal.timeout(3000),
      cache: 'no-store',
    });
  } catch {
    return { text: `tabrelay server not running at ${addr}` };
  }
  if (res.status === 401) return { text: 'pairing token rejected', tokenRejected: true };
  if (res.status === 403) return { text: `the server at ${addr} refused this extension (origin or host not allowed)` };
  if (!res.ok) return { text: `the server at ${addr} answered HTTP ${res.status}; is it tabrelay?` };
  return { text: `could not open the extension connection to the tabrelay server at ${addr}` };
}

/**
 * @param {WebSocket} ws
 * @param {string} why
 */
function dropConnection(ws, why) {
  if (state.ws !== ws) return;
  ws.onclose = null;
  try { ws.close(1000, 'tabrelay: dropping connection'); } catch { /* ignore */ }
  state.ws = null;
  state.live = false;
  clearInterval(state.pingTimer);
  setStatus('error', why);
  scheduleReconnect();
}

function scheduleReconnect() {
  if (state.status === 'stopped' || !state.token) return;
  clearTimeout(state.reconnectTimer);
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** state.attempts);
  const delay = base / 2 + Math.random() * (base / 2);
  state.attempts = Math.min(state.attempts + 1, 16);
  state.reconnectTimer = setTimeout(() => { state.reconnectTimer = undefined; connect(); }, delay);
}

/** Called by the keepalive alarm: reconnects a worker that lost its timers. */
function ensureConnected() {
  if (!state.ws && !state.proving && state.reconnectTimer === undefined && state.status !== 'stopped') connect();
}

/** Closes the current socket (if any) and connects again now. */
function restartConnection() {
  const ws = state.ws;
  if (ws) {
    ws.onclose = null;
    try { ws.close(1000, 'tabrelay: settings changed'); } catch { /* ignore */ }
  }
  state.ws = null;
  state.proving = null;
  state.live = false;
  clearInterval(state.pingTimer);
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = undefined;
  state.attempts = 0;
  if (state.status !== 'stopped') {
    state.status = 'connecting';
    state.reason = '';
  }
  connect();
}

/**
 * Enters (reason non-empty) or leaves the stopped state, in which the extension does not
 * reconnect on its own.
 * @param {string} reason
 */
async function setStopped(reason) {
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = undefined;
  if (reason) {
    setStatus('stopped', reason);
  } else if (state.status === 'stopped') {
    setStatus('connecting', '');
  }
  await persist();
}

/** @param {object} msg */
function send(msg) {
  const ws = state.ws;
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
}

/**
 * Answers one relay request on the socket it came from.
 * @param {WebSocket} ws
 * @param {P.RelayMessage} msg
 */
async function handleRequest(ws, msg) {
  const id = /** @type {number} */ (msg.id);
  /** @type {object} */
  let out;
  try {
    out = P.response(id, await dispatch(msg));
  } catch (e) {
    out = P.errorResponse(id, toWireError(e));
  }
  if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(out));
}

/**
 * @param {P.RelayMessage} msg
 * @returns {Promise<object>}
 */
async function dispatch(msg) {
  switch (msg.type) {
    case P.Type.CDP: {
      const rec = sharedByTarget(msg.targetId);
      return (await cdp(rec.tabId, msg.sessionId, msg.method ?? '', msg.params)) ?? {};
    }
    case P.Type.CREATE_TAB: {
      const url = msg.url || 'about:blank';
      let tab;
      // The tab in front now: the new tab's opener, so that Chrome returns to it when the new
      // tab closes (without one it picks a neighbour and the user's tab stays hidden).
      const [front] = msg.newWindow ? [] : await chrome.tabs.query({ active: true, lastFocusedWindow: true });
      if (msg.newWindow) {
        const win = await chrome.windows.create({ url, focused: !msg.background });
        tab = win?.tabs?.[0];
      } else {
        try {
          const opener = front?.id === undefined ? {} : { openerTabId: front.id, windowId: front.windowId };
          tab = await chrome.tabs.create({ url, active: !msg.background, ...opener });
        } catch {
          const win = await chrome.windows.create({ url, focused: !msg.background });
          tab = win?.tabs?.[0];
        }
      }
      if (tab?.id === undefined) throw new Error('the browser did not create a tab');
      state.clientCreated.add(tab.id);
      if (front?.id !== undefined && !msg.background) state.returnTo.set(tab.id, front.id);
      const rec = await shareTab(tab.id, P.Origin.CLIENT);
      return { targetId: rec.targetId };
    }
    case P.Type.CLOSE_TAB: {
      const rec = sharedByTarget(msg.targetId);
      const back = state.returnTo.get(rec.tabId);
      const closing = await chrome.tabs.get(rec.tabId).catch(() => undefined);
      await chrome.tabs.remove(rec.tabId);
      // The tab that was in front when a client opened this one comes back to the front.
      if (back !== undefined && closing?.active) await chrome.tabs.update(back, { active: true }).catch(() => {});
      return {};
    }
    case P.Type.ACTIVATE_TAB: {
      const rec = sharedByTarget(msg.targetId);
      const tab = await chrome.tabs.update(rec.tabId, { active: true });
      if (tab?.windowId !== undefined) await chrome.windows.update(tab.windowId, { focused: true });
      return {};
    }
    case P.Type.UNSHARE_TAB: {
      const rec = sharedByTarget(msg.targetId);
      await unshare(rec, P.Reason.USER);
      return {};
    }
    default:
      throw Object.assign(new Error(`tabrelay extension: unknown request type "${msg.type}"`), { code: -32601 });
  }
}

/**
 * @param {string|undefined} targetId
 * @returns {SharedTab}
 */
function sharedByTarget(targetId) {
  for (const rec of state.shared.values()) {
    if (rec.ready && rec.targetId === targetId) return rec;
  }
  throw new Error(`tabrelay: target ${targetId} is not a shared tab (it was closed or is no longer shared)`);
}

/**
 * chrome.debugger.sendCommand as a promise.
 * @param {number} tabId
 * @param {string|undefined} sessionId
 * @param {string} method
 * @param {object} [params]
 * @returns {Promise<any>}
 */
function cdp(tabId, sessionId, method, params) {
  /** @type {chrome.debugger.DebuggerSession} */
  const target = sessionId ? { tabId, sessionId } : { tabId };
  return chrome.debugger.sendCommand(target, method, params ?? {});
}

/**
 * Turns a chrome.debugger failure into a CDP-shaped error. Protocol errors arrive as the JSON
 * text of the CDP error object.
 * @param {unknown} e
 * @returns {P.WireError}
 */
function toWireError(e) {
  const text = errorText(e);
  if (text.startsWith('{')) {
    try {
      const o = JSON.parse(text);
      if (typeof o.message === 'string') {
        /** @type {P.WireError} */
        const err = { code: typeof o.code === 'number' ? o.code : -32000, message: o.message };
        if (typeof o.data === 'string') err.data = o.data;
        return err;
      }
    } catch { /* not JSON after all */ }
  }
  const code = /** @type {any} */ (e)?.code;
  return { code: typeof code === 'number' ? code : -32000, message: text };
}

/** @param {unknown} e */
function errorText(e) {
  if (e instanceof Error) return e.message;
  if (typeof e === 'string') return e;
  try { return JSON.stringify(e); } catch { return String(e); }
}

/** @returns {Promise<{product: string, userAgent: string}>} */
async function productInfo() {
  if (state.product) return state.product;
  let version = '';
  try {
    // @ts-ignore userAgentData is not in every lib.dom
    const data = await navigator.userAgentData.getHighEntropyValues(['fullVersionList']);
    /** @type {Array<{brand: string, version: string}>} */
    const list = data.fullVersionList ?? [];
    const pick = list.find((b) => b.brand === 'Google Chrome') ?? list.find((b) => b.brand === 'Chromium')
      ?? list.find((b) => /chrom/i.test(b.brand));
    version = pick?.version ?? '';
  } catch { /* fall back to the UA string */ }
  if (!version) version = navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? '0.0.0.0';
  state.product = { product: `Chrome/${version}`, userAgent: navigator.userAgent };
  return state.product;
}

// ---------------------------------------------------------------------------------------------
// Status, badge and tooltip

/**
 * @param {Status} status
 * @param {string} reason
 */
function setStatus(status, reason) {
  state.status = status;
  state.reason = reason;
  void refreshBadges();
}

/** The connection state in plain words. */
function statusText() {
  switch (state.status) {
    case 'unpaired':
      return 'tabrelay: not paired yet; open the extension options and paste the pairing link or token';
    case 'connecting':
      return `tabrelay: connecting to the server at ${state.addr}…`;
    case 'connected':
      return `tabrelay: connected to ${state.addr}`;
    case 'error':
      return `tabrelay: ${state.reason} (retrying)`;
    case 'stopped':
      return `tabrelay: ${state.reason}`;
  }
  return 'tabrelay';
}

function statusReport() {
  return {
    status: state.status,
    reason: state.reason,
    notice: state.notice,
    text: statusText(),
    addr: state.addr,
    paired: !!state.token,
    connected: state.live,
    connects: state.connects,
    sharedTabs: [...state.shared.values()].filter((r) => r.ready)
      .map((r) => ({ tabId: r.tabId, targetId: r.targetId, origin: r.origin })),
  };
}

/** The badge and tooltip of tabs that are not shared. */
function globalBadge() {
  const bad = state.status === 'stopped' || !!state.notice;
  return {
    text: bad ? '!' : '',
    color: bad ? '#d93025' : '#5f6368',
    title: state.notice ? `tabrelay: ${state.notice}` : `${statusText()}. Click to share this tab.`,
  };
}

async function refreshBadges() {
  const g = globalBadge();
  await setBadge(undefined, g.text, g.color, g.title);
  const tabs = new Set([...state.shared.keys(), ...state.tabErrors.keys(), ...state.titled]);
  for (const tabId of tabs) await refreshBadge(tabId);
}

/** @param {number} tabId */
async function refreshBadge(tabId) {
  const rec = state.shared.get(tabId);
  if (!rec) {
    const err = state.tabErrors.get(tabId);
    if (err) {
      await setBadge(tabId, '!', '#d93025', `tabrelay: ${err}`);
    } else {
      // Back to the global badge (null clears the tab's own text); a tab's own title cannot be
      // cleared, so it is set to the global one.
      const g = globalBadge();
      await setBadge(tabId, null, null, state.titled.has(tabId) ? g.title : null);
    }
    return;
  }
  if (!rec.ready || state.status === 'connecting') {
    await setBadge(tabId, '…', '#5f6368', `${statusText()} This tab will be shared once connected.`);
  } else if (state.status === 'connected' && state.live) {
    await setBadge(tabId, 'ON', '#188038', `tabrelay: this tab is shared with the server at ${state.addr} (click to stop sharing)`);
  } else {
    const click = state.status === 'stopped' ? ' Click to reconnect.' : '';
    await setBadge(tabId, '!', '#d93025', `${statusText()}.${click} This tab stays shared.`);
  }
}

/**
 * @param {number|undefined} tabId undefined for the global default
 * @param {string|null} text null clears a tab's own value
 * @param {string|null} color
 * @param {string|null} title
 */
async function setBadge(tabId, text, color, title) {
  try {
    const t = tabId === undefined ? {} : { tabId };
    // @ts-ignore null clears the tab-specific value
    await chrome.action.setBadgeText({ ...t, text });
    if (title !== null) {
      await chrome.action.setTitle({ ...t, title });
      if (tabId !== undefined) state.titled.add(tabId);
    }
    // @ts-ignore
    if (color) await chrome.action.setBadgeBackgroundColor({ ...t, color });
  } catch {
    // the tab is gone
  }
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
