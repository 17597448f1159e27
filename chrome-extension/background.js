// @ts-check
// tabrelay service worker: shares chosen tabs with the local tabrelay relay over one WebSocket
// (protocol in relay/wire/PROTOCOL.md, JS shapes in protocol.js).
//
// A tab is shared when the user clicks the toolbar button (or uses the shortcut or the context
// menu, or picks it in the tab chooser opened when a client waits for a tab), drags it into the "tabrelay" tab group, when a shared tab opens it, or when a relay
// client asks for a new tab. Sharing means chrome.debugger is attached with flat auto-attach on
// (with the onDemand setting: only while a client or the agent drives the tab), every debugger
// event is forwarded, and the relay's CDP commands are sent to the tab or its child sessions.
//
// This file registers every listener and restores the shared tabs at start; the work is in the
// worker-*.js modules, by concern:
//   worker-state.js     the one state object, its persistence, withReady
//   worker-sharing.js   attach, share, unshare, re-attach
//   worker-tabs.js      tab lifecycle and debugger events
//   worker-groups.js    the "tabrelay" tab group (drag in to share, out to stop)
//   worker-socket.js    the relay connection (proof, WebSocket, reconnects, stopped state)
//   worker-send.js      sending, with chunk frames for large messages
//   worker-dispatch.js  answering the relay's requests
//   worker-badge.js     badge, tooltip and status report
//   worker-commands.js  shortcuts, context menu, messages from the extension's pages
//   worker-downloads.js downloads started in shared tabs, reported to the relay
//   worker-permissions.js site permissions clients set, as the extension's content settings
//   worker-navigate.js  Page.navigate answered as Chrome's when the navigation ends the session
//   worker-firstrun.js  the welcome page on install, the tab chooser when a client waits
//
// State that must survive a service-worker restart (shared tabs, a stop reason) lives in
// chrome.storage.session; settings (relayAddr, token, tabGroup, onDemand) live in
// chrome.storage.local.

import { refreshBadges, statusReport } from './worker-badge.js';
import { createMenus, onCommand, onMenuClicked, onMessage } from './worker-commands.js';
import { groupAllShared, onGroupRemoved, ungroupAllShared } from './worker-groups.js';
import { attach, autoAttach, cdp, ensureAttached, handleDetach, shareOpened, toggle } from './worker-sharing.js';
import { connect, ensureConnected, restartConnection, setStopped } from './worker-socket.js';
import { loadSettings, persist, SESSION_KEY, SETTINGS, state, withReady } from './worker-state.js';
import { onDebuggerEvent, onTabAppeared, onTabRemoved, onTabReplaced, onTabUpdated } from './worker-tabs.js';
import { clearPermissions } from './worker-permissions.js';
import { forgetNavigationErrors, onNavigationError } from './worker-navigate.js';
import { onInstalledFirstRun } from './worker-firstrun.js';
import { checkFileAccess, onDownloadChanged, onDownloadCreated, onDownloadDebuggerEvent } from './worker-downloads.js';

/** @typedef {import('./worker-state.js').SharedTab} SharedTab */
/** @typedef {import('./worker-state.js').SavedState} SavedState */

const KEEPALIVE_ALARM = 'tabrelay-keepalive';

// Listeners are registered synchronously at top level, as MV3 requires; each waits for init.
state.ready = init();

chrome.action.onClicked.addListener((tab) => { void withReady(() => toggle(tab)); });

chrome.commands.onCommand.addListener((command, tab) => { void onCommand(command, tab); });

chrome.contextMenus.onClicked.addListener((info, tab) => { void onMenuClicked(info, tab); });

chrome.runtime.onInstalled.addListener(createMenus);

chrome.runtime.onInstalled.addListener(onInstalledFirstRun);

chrome.debugger.onEvent.addListener((source, method, params) => onDebuggerEvent(source, method, params));

chrome.debugger.onEvent.addListener(onDownloadDebuggerEvent);

chrome.downloads.onCreated.addListener((item) => { void withReady(async () => onDownloadCreated(item)); });

chrome.downloads.onChanged.addListener((delta) => { void withReady(() => onDownloadChanged(delta)); });

chrome.debugger.onDetach.addListener((source, reason) => { void withReady(() => handleDetach(source, reason)); });

// Tabs opened by a shared tab (window.open, target=_blank, "open link in new tab") are shared
// too. chrome.tabs.onCreated's openerTabId is not used: Chrome also sets it for tabs opened by
// other means while a shared tab is active (for example over the DevTools protocol), which
// would share tabs the user never meant to share.
chrome.webNavigation.onCreatedNavigationTarget.addListener((d) => {
  void withReady(() => shareOpened(d.tabId, d.sourceTabId));
});

chrome.webNavigation.onErrorOccurred.addListener(onNavigationError);

chrome.tabs.onUpdated.addListener((tabId, change, tab) => { void withReady(() => onTabUpdated(tabId, change, tab)); });

chrome.tabs.onRemoved.addListener((tabId) => { forgetNavigationErrors(tabId); void withReady(() => onTabRemoved(tabId)); });

// The group is the boundary of what is shared, however a tab gets into it (or out of it).
chrome.tabs.onCreated.addListener((tab) => { if (tab.id !== undefined) void withReady(() => onTabAppeared(/** @type {number} */ (tab.id), false)); });

chrome.tabs.onAttached.addListener((tabId) => { void withReady(() => onTabAppeared(tabId, true)); });

chrome.tabs.onReplaced.addListener((added, removed) => {
  state.replaced.add(removed); // at once: the old tab's detach may be handled first
  void withReady(() => onTabReplaced(added, removed)).finally(() => state.replaced.delete(removed));
});

chrome.tabGroups.onRemoved.addListener((group) => { void withReady(async () => onGroupRemoved(group)); });

chrome.storage.onChanged.addListener((changes, area) => {
  if (area !== 'local') return;
  if (SETTINGS.TAB_GROUP in changes || SETTINGS.ON_DEMAND in changes) {
    void withReady(async () => {
      const before = { tabGroup: state.tabGroup, onDemand: state.onDemand };
      await loadSettings();
      if (state.tabGroup !== before.tabGroup) await (state.tabGroup ? groupAllShared() : ungroupAllShared());
      if (state.onDemand !== before.onDemand) {
        // off: every shared tab is attached again, as before the setting existed
        if (!state.onDemand) for (const rec of state.shared.values()) if (rec.ready) await ensureAttached(rec).catch(() => {});
        restartConnection(); // the hello tells the relay whether to ask for detaches
      }
    });
  }
  if (!(('relayAddr' in changes) || ('token' in changes))) return;
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

chrome.runtime.onMessage.addListener(onMessage);

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

async function init() {
  void chrome.alarms.create(KEEPALIVE_ALARM, { periodInMinutes: 0.5 });
  clearPermissions(); // site permissions a client set before a crash or restart end here
  await loadSettings();
  // chrome.storage's types say unknown: this is what persist saved.
  const saved = /** @type {SavedState} */ ((await chrome.storage.session.get(SESSION_KEY))[SESSION_KEY] ?? {});
  state.status = 'connecting';
  if (saved.stoppedReason) {
    state.status = 'stopped';
    state.reason = saved.stoppedReason;
  }
  state.notice = saved.notice ?? '';
  state.groups = new Map(saved.groups ?? []);
  await checkFileAccess().catch((e) => console.warn('tabrelay: file access', e));
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
      attached: attachedTabs.has(s.tabId), op: null,
    };
    if (!rec.attached && s.attached === false && state.onDemand) {
      rec.children = new Map(); // shared on demand and not driven: it stays detached
    } else if (!rec.attached) {
      // The debugger session did not survive: attach again and say so.
      try {
        await attach(s.tabId);
        rec.attached = true;
        const info = await cdp(s.tabId, undefined, 'Target.getTargetInfo');
        rec.targetId = info.targetInfo.targetId;
        rec.children = new Map();
        autoAttach(s.tabId);
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
