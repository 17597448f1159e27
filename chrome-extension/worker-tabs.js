// @ts-check
// Tab lifecycle: what happens to a shared tab when it navigates, closes, is discarded or replaced,
// and the debugger events it produces (forwarded to the relay, child sessions tracked).

import * as P from './protocol.js';
import { refreshBadge } from './worker-badge.js';
import { send } from './worker-send.js';
import { onGroupChanged, onTabEntered, onWaitingLoaded } from './worker-groups.js';
import { restricted, shareOpened, shareTab, toggle, unshare, wireTab } from './worker-sharing.js';
import { persist, state, withReady } from './worker-state.js';

/** @typedef {import('./worker-state.js').SharedTab} SharedTab */

/**
 * @param {number} tabId
 * @param {chrome.tabs.OnUpdatedInfo} change
 * @param {chrome.tabs.Tab} tab
 */
export async function onTabUpdated(tabId, change, tab) {
  if ('groupId' in change && change.groupId !== undefined) await onGroupChanged(tabId, change.groupId, groupActs);
  const rec = state.shared.get(tabId);
  if (!rec) {
    if ('url' in change || change.status === 'complete') await onWaitingLoaded(tabId, groupActs);
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
  const why = change.url && !rec.attached && !rec.op ? restricted(change.url) : '';
  if (why) {
    // Detached on demand, it went where the debugger may not follow: stop sharing it and say so,
    // as the re-attach of an attached tab does.
    await unshare(rec, P.Reason.DETACHED);
    state.tabErrors.set(tabId, `sharing stopped: ${why}`);
    await refreshBadge(tabId);
    return;
  }
  if (!rec.attached && !rec.op && 'url' in change) await followTarget(rec);
  if ('url' in change || 'title' in change || 'status' in change) {
    if (state.live) send(P.tabUpdated(wireTab(rec, tab)));
  }
  if ('status' in change || 'url' in change) await refreshBadge(tabId);
}

/**
 * A tab shared on demand and detached navigated: if Chrome gave its page a new target (a
 * cross-process navigation may), the relay hears the old one is gone and the new one shared.
 * @param {SharedTab} rec
 */
async function followTarget(rec) {
  const t = (await chrome.debugger.getTargets()).find((x) => x.tabId === rec.tabId && x.type === 'page');
  if (!t || t.id === rec.targetId || state.shared.get(rec.tabId) !== rec || rec.attached) return;
  if (state.live) send(P.tabUnshared(rec.targetId, rec.tabId, P.Reason.DETACHED));
  rec.targetId = t.id;
  void persist();
  const tab = await chrome.tabs.get(rec.tabId).catch(() => null);
  if (tab && state.live) send(P.tabShared(wireTab(rec, tab)));
}

/** What joining or leaving the tabrelay group does: the toolbar click's sharing, or an opener's. */
const groupActs = {
  /** @param {number} tabId @param {number|undefined} openerTabId */
  async share(tabId, openerTabId) {
    if (openerTabId !== undefined && state.shared.get(openerTabId)?.ready) {
      await shareOpened(tabId, openerTabId);
      return;
    }
    const tab = await chrome.tabs.get(tabId).catch(() => null);
    // Two events of one change (a waiting tab's url and then its load, say) may both get here:
    // the later one must not toggle what the first one shared back off (out of the group).
    if (state.shared.has(tabId) || state.sharing.has(tabId)) return;
    if (tab) await toggle(tab);
  },
  /** @param {number} tabId */
  async unshare(tabId) {
    const rec = state.shared.get(tabId);
    if (rec) await unshare(rec, P.Reason.USER);
  },
};

/**
 * chrome.tabs.onCreated and onAttached: a tab that appears inside the tabrelay group is shared
 * (see onTabEntered).
 * @param {number} tabId
 * @param {boolean} moved it came from another window (onAttached)
 */
export function onTabAppeared(tabId, moved) {
  return onTabEntered(tabId, moved, groupActs);
}

/** @param {number} tabId */
export async function onTabRemoved(tabId) {
  state.waiting.delete(tabId);
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
export async function onTabReplaced(addedTabId, removedTabId) {
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
export function onDebuggerEvent(source, method, params) {
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
