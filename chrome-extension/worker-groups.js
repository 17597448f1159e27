// @ts-check
// The "tabrelay" tab group: the visible boundary of what is shared (setting "tabGroup", on by
// default). Shared tabs are moved into their window's tabrelay group (made on first share and
// reused); a tab the user drags into the group is shared, a shared tab dragged out of it (or
// ungrouped) stops being shared. With the setting off, nothing here runs.
//
// The group of each window is remembered in state.groups (saved with the shared tabs); after a
// worker restart a group not in it is found again by its title and colour.

import { refreshBadge } from './worker-badge.js';
import { persist, state } from './worker-state.js';
import { sleep } from './worker-util.js';

/** The group's title and colour, which is also how it is found again. */
export const GROUP = Object.freeze({ title: 'tabrelay', color: /** @type {`${chrome.tabGroups.Color}`} */ ('blue') });

/** Group changes one at a time: two tabs shared at once must not make two groups. */
let queue = Promise.resolve();

/**
 * Runs fn after the group changes before it, logging (never throwing) failures.
 * @param {() => Promise<void>} fn
 */
function serial(fn) {
  const p = queue.then(fn).catch((e) => console.warn('tabrelay: tab group:', e));
  queue = p;
  return p;
}

/**
 * Whether groupId is one of tabrelay's groups.
 * @param {number|undefined} groupId
 */
export function isRelayGroup(groupId) {
  if (groupId === undefined || groupId < 0) return false;
  for (const g of state.groups.values()) if (g === groupId) return true;
  return false;
}

/**
 * Whether groupId is one of tabrelay's groups, adopting a group that looks like one (its title
 * and colour) in a window that has none: a closed tabrelay group the user restored comes back
 * under a new id.
 * @param {number|undefined} groupId
 */
async function relayGroup(groupId) {
  if (isRelayGroup(groupId)) return true;
  if (groupId === undefined || groupId < 0) return false;
  const g = await chrome.tabGroups.get(groupId).catch(() => null);
  if (!g || g.title !== GROUP.title || g.color !== GROUP.color) return false;
  if (await groupOf(g.windowId) !== undefined) return isRelayGroup(groupId);
  state.groups.set(g.windowId, groupId);
  void persist();
  return true;
}

/** Pages a new tab shows before it has one of its own: it joins the group and is shared once it loads a page. */
const NEW_TAB = /^(chrome:\/\/(newtab|new-tab-page)\b|chrome-search:\/\/|about:blank|$)/i;

/**
 * Whether a tab in the group shows only a new tab page (which no extension may debug): it stays
 * in the group and is shared as soon as it loads a page.
 * @param {chrome.tabs.Tab} tab
 */
export function showsNewTabPage(tab) {
  return NEW_TAB.test(tab.url || tab.pendingUrl || '');
}

/**
 * The window's tabrelay group, if it has one (checked against the browser: the user may have
 * closed or ungrouped it).
 * @param {number} windowId
 * @returns {Promise<number|undefined>}
 */
async function groupOf(windowId) {
  const known = state.groups.get(windowId);
  if (known !== undefined) {
    const g = await chrome.tabGroups.get(known).catch(() => null);
    if (g && g.windowId === windowId) return known;
    state.groups.delete(windowId);
  }
  const [found] = await chrome.tabGroups.query({ windowId, title: GROUP.title, color: GROUP.color });
  if (!found) return undefined;
  state.groups.set(windowId, found.id);
  void persist();
  return found.id;
}

/**
 * Moves a shared tab into its window's tabrelay group, making the group if needed.
 * @param {number} tabId
 */
export function joinGroup(tabId) {
  if (!state.tabGroup) return Promise.resolve();
  return serial(async () => {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (!tab || tab.windowId === undefined || isRelayGroup(tab.groupId)) return;
    const win = await chrome.windows.get(tab.windowId).catch(() => null);
    if (win?.type !== 'normal') return; // only normal windows have tab groups
    const existing = await groupOf(tab.windowId);
    if (existing !== undefined) {
      await chrome.tabs.group({ groupId: existing, tabIds: [tabId] });
      return;
    }
    const groupId = await chrome.tabs.group({ tabIds: [tabId], createProperties: { windowId: tab.windowId } });
    state.groups.set(tab.windowId, groupId);
    void persist();
    await chrome.tabGroups.update(groupId, { title: GROUP.title, color: GROUP.color, collapsed: false });
  });
}

/**
 * Takes a tab that stopped being shared out of the tabrelay group.
 * @param {number} tabId
 */
export function leaveGroup(tabId) {
  return serial(async () => {
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    if (tab && isRelayGroup(tab.groupId)) await chrome.tabs.ungroup(tabId);
  });
}

/**
 * A tab's group changed (chrome.tabs.onUpdated groupId): into the tabrelay group shares it,
 * out of it stops sharing it.
 * @param {number} tabId
 * @param {number} groupId
 * @param {{share: (tabId: number, openerTabId: number|undefined) => Promise<void>, unshare: (tabId: number) => Promise<void>}} act
 */
export async function onGroupChanged(tabId, groupId, act) {
  if (!state.tabGroup) return;
  // Our own group changes fire this too, sometimes before chrome.tabs.group's answer told us the
  // new group's id: let them finish, then look at where the tab is now.
  await queue;
  const now = await chrome.tabs.get(tabId).catch(() => null);
  if (!now || now.groupId !== groupId) return; // it moved again: that change is handled on its own
  if (!(await relayGroup(groupId))) {
    if (state.waiting.delete(tabId)) await refreshBadge(tabId);
    if (state.shared.get(tabId)?.ready) await act.unshare(tabId);
    return;
  }
  await enteredGroup(tabId, act);
}

/**
 * A tab is in a tabrelay group and maybe not shared yet: share it (the toolbar click's way, or
 * its opener's), unless it shows a new tab page, which is shared once it loads a page.
 * @param {number} tabId
 * @param {{share: (tabId: number, openerTabId: number|undefined) => Promise<void>}} act
 */
async function enteredGroup(tabId, act) {
  if (state.shared.has(tabId) || state.sharing.has(tabId)) return;
  // A tab created for a client, or opened by a shared tab, may land in the group before the
  // code that shares it (with the right origin) has its id: give it that moment.
  await sleep(150);
  if (state.shared.has(tabId) || state.sharing.has(tabId) || state.clientCreated.has(tabId)) return;
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab || !isRelayGroup(tab.groupId)) return;
  if (showsNewTabPage(tab)) {
    state.waiting.add(tabId);
    await refreshBadge(tabId);
    return;
  }
  state.waiting.delete(tabId);
  await act.share(tabId, tab.openerTabId);
}

/**
 * A tab appeared in a window: created there ("New tab to the right" of a grouped tab, a
 * restored group, a tab a page opened) or moved there from another window. The group it is in
 * decides, as a drag does: inside a tabrelay group it is shared; a shared tab moved to another
 * window outside the group stops being shared (only on a move: a new tab is shared by whoever
 * made it, before it joins the group).
 * @param {number} tabId
 * @param {boolean} moved
 * @param {{share: (tabId: number, openerTabId: number|undefined) => Promise<void>, unshare: (tabId: number) => Promise<void>}} act
 */
export async function onTabEntered(tabId, moved, act) {
  if (!state.tabGroup) return;
  await queue;
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) return;
  if (await relayGroup(tab.groupId)) {
    await enteredGroup(tabId, act);
    return;
  }
  if (!moved || !state.shared.get(tabId)?.ready) return;
  const win = await chrome.windows.get(tab.windowId).catch(() => null);
  if (win?.type === 'normal') await act.unshare(tabId); // a popup window has no groups: it stays
}

/**
 * A tab in a tabrelay group that showed a new tab page loaded a page: share it now.
 * @param {number} tabId
 * @param {{share: (tabId: number, openerTabId: number|undefined) => Promise<void>}} act
 */
export async function onWaitingLoaded(tabId, act) {
  if (!state.waiting.has(tabId)) return;
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab || !isRelayGroup(tab.groupId)) {
    state.waiting.delete(tabId);
    await refreshBadge(tabId);
    return;
  }
  if (!showsNewTabPage(tab)) await enteredGroup(tabId, act);
}

/**
 * The user closed or emptied a tabrelay group: forget it.
 * @param {chrome.tabGroups.TabGroup} group
 */
export function onGroupRemoved(group) {
  for (const [windowId, id] of state.groups) {
    if (id === group.id) state.groups.delete(windowId);
  }
  void persist();
}

/** The setting was turned on: every shared tab joins the group. */
export async function groupAllShared() {
  for (const rec of state.shared.values()) if (rec.ready) await joinGroup(rec.tabId);
}

/** The setting was turned off: shared tabs leave the group (and stay shared). */
export async function ungroupAllShared() {
  for (const rec of state.shared.values()) await leaveGroup(rec.tabId);
}
