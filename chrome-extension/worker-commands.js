// @ts-check
// The user's doors other than the toolbar button: keyboard shortcuts (manifest "commands"), the
// context menu, and messages from the extension's own pages (side panel, options).

import { statusReport } from './worker-badge.js';
import { toggle } from './worker-sharing.js';
import { restartConnection, setStopped } from './worker-socket.js';
import { state, withReady } from './worker-state.js';

const MENU_ID = 'tabrelay-toggle';

const PANEL_MENU_ID = 'tabrelay-panel';

/** Creates the context-menu items (on install and update). */
export function createMenus() {
  chrome.contextMenus.removeAll(() => {
    chrome.contextMenus.create({
      id: MENU_ID,
      title: 'Share or stop sharing this tab with tabrelay',
      contexts: ['page', 'action'],
    });
    // On the icon's menu only: with two items on the page's menu Chrome would put both in a
    // "tabrelay" submenu, and sharing is meant to be one right-click away.
    chrome.contextMenus.create({ id: PANEL_MENU_ID, title: 'Open the tabrelay side panel', contexts: ['action'] });
  });
}

/**
 * The keyboard shortcuts (manifest "commands"). Returns when the toggle is done.
 * @param {string} command
 * @param {chrome.tabs.Tab} [tab]
 */
export function onCommand(command, tab) {
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
export function onMenuClicked(info, tab) {
  // sidePanel.open must run in the click's user gesture: no await before it.
  if (info.menuItemId === PANEL_MENU_ID && tab?.windowId !== undefined) void chrome.sidePanel.open({ windowId: tab.windowId }).catch(() => {});
  if (info.menuItemId === MENU_ID && tab) return withReady(() => toggle(tab));
  return Promise.resolve();
}

/**
 * Messages from the extension's own pages (the side panel, the options page): status,
 * reconnect, share and unshare. Answers asynchronously (returns true).
 * @param {any} msg
 * @param {chrome.runtime.MessageSender} sender
 * @param {(response?: any) => void} sendResponse
 */
export function onMessage(msg, sender, sendResponse) {
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
}
