// @ts-check
// Answering the relay's requests: CDP commands to a shared tab or its child sessions, and
// creating, closing, activating and unsharing tabs, and attaching or detaching a shared tab's
// debugger (debugger on demand), and holding the site permissions clients set.

import * as P from './protocol.js';
import { transmit } from './worker-send.js';
import { cancelDownload } from './worker-downloads.js';
import { applyPermissions } from './worker-permissions.js';
import { navigate, navigateUnattached, pageRefusesDebugger } from './worker-navigate.js';
import { cdp, ensureAttached, ensureDetached, rememberSwitch, shareTab, unshare } from './worker-sharing.js';
import { outgoing, state } from './worker-state.js';
import { errorText } from './worker-util.js';

/** @typedef {import('./worker-state.js').SharedTab} SharedTab */

/**
 * The times (performance.now()) a traced request passed in the extension.
 * @typedef {{received: number, called: number, answered: number}} Trace
 */

/** The shared tab last found for a target id: most commands go to the same few tabs. */
const byTarget = new Map();

/**
 * Answers a cdp request: the hot path. A tab whose debugger is attached gets the command at
 * once, with no promise chain in between, and the answer goes out from sendCommand's callback;
 * a tab being attached or detached (debugger on demand) and unknown targets take handleRequest.
 * @param {WebSocket} ws
 * @param {P.RelayMessage} msg
 * @param {number} received performance.now() when the socket handed it over
 */
export function handleCDP(ws, msg, received) {
  const rec = sharedOrNull(msg.targetId);
  if (!rec || !rec.attached || rec.op || (msg.method === 'Page.navigate' && !msg.sessionId)) {
    void handleRequest(ws, msg, received);
    return;
  }
  const id = /** @type {number} */ (msg.id);
  const key = msg.targetId ?? '';
  const traced = msg.trace === true;
  /** @type {chrome.debugger.DebuggerSession} */
  const target = msg.sessionId ? { tabId: rec.tabId, sessionId: msg.sessionId } : { tabId: rec.tabId };
  const called = traced ? performance.now() : 0;
  outgoing.inflight++;
  chrome.debugger.sendCommand(target, msg.method ?? '', msg.params ?? {}, (result) => {
    outgoing.inflight--;
    const answered = traced ? performance.now() : 0;
    const err = chrome.runtime.lastError;
    let text = err
      ? JSON.stringify(P.errorResponse(id, toWireError(new Error(err.message))))
      : P.responseText(id, result);
    if (traced) text = P.withTrace(text, [received, called, answered, performance.now()]);
    if (ws.readyState === WebSocket.OPEN) transmit(ws, text, key);
  });
}

/**
 * Answers one relay request on the socket it came from.
 * @param {WebSocket} ws
 * @param {P.RelayMessage} msg
 * @param {number} received performance.now() when the socket handed it over
 */
export async function handleRequest(ws, msg, received) {
  const id = /** @type {number} */ (msg.id);
  /** @type {Trace|undefined} */
  const trace = msg.trace === true ? { received, called: 0, answered: 0 } : undefined;
  /** @type {string} */
  let text;
  try {
    text = P.responseText(id, await dispatch(msg, trace));
  } catch (e) {
    text = JSON.stringify(P.errorResponse(id, toWireError(e)));
  }
  if (trace) text = P.withTrace(text, [trace.received, trace.called, trace.answered, performance.now()]);
  if (ws.readyState === WebSocket.OPEN) transmit(ws, text, msg.targetId ?? '');
}

/**
 * @param {P.RelayMessage} msg
 * @param {Trace} [trace] set for a traced request
 * @returns {Promise<object>}
 */
async function dispatch(msg, trace) {
  switch (msg.type) {
    case P.Type.CDP: {
      const rec = sharedByTarget(msg.targetId);
      // debugger on demand: a command attaches the tab first (commands keep their order: each
      // waits for the same attach)
      const navigation = msg.method === 'Page.navigate' && !msg.sessionId;
      if (!rec.attached || rec.op) {
        try {
          await ensureAttached(rec);
        } catch (e) {
          if (navigation && pageRefusesDebugger(e)) return await navigateUnattached(rec, msg.params);
          throw e;
        }
      }
      if (trace) trace.called = performance.now();
      const result = navigation
        ? await navigate(rec, msg.params)
        : await cdp(rec.tabId, msg.sessionId, msg.method ?? '', msg.params);
      if (!msg.sessionId) rememberSwitch(rec, msg.method ?? '', msg.params);
      if (trace) trace.answered = performance.now();
      return result ?? {};
    }
    case P.Type.ATTACH_TAB: {
      await ensureAttached(sharedByTarget(msg.targetId));
      return {};
    }
    case P.Type.DETACH_TAB: {
      const rec = sharedByTarget(msg.targetId);
      if (state.onDemand) await ensureDetached(rec);
      return {};
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
    case P.Type.CANCEL_DOWNLOAD:
      await cancelDownload(msg.guid ?? '');
      return {};
    case P.Type.SET_PERMISSIONS:
      await applyPermissions(msg.settings ?? []);
      return {};
    default:
      throw Object.assign(new Error(`tabrelay extension: unknown request type "${msg.type}"`), { code: -32601 });
  }
}

/**
 * @param {string|undefined} targetId
 * @returns {SharedTab}
 */
function sharedByTarget(targetId) {
  const rec = sharedOrNull(targetId);
  if (rec) return rec;
  throw new Error(`tabrelay: target ${targetId} is not a shared tab (it was closed or is no longer shared)`);
}

/**
 * The shared tab with this target id, or null. The last answer per target id is kept and
 * checked against the shared tabs (still shared, still that target) before it is used.
 * @param {string|undefined} targetId
 * @returns {SharedTab|null}
 */
function sharedOrNull(targetId) {
  if (targetId === undefined) return null;
  const known = byTarget.get(targetId);
  if (known && known.ready && known.targetId === targetId && state.shared.get(known.tabId) === known) return known;
  byTarget.delete(targetId);
  for (const rec of state.shared.values()) {
    if (rec.ready && rec.targetId === targetId) {
      byTarget.set(targetId, rec);
      return rec;
    }
  }
  return null;
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
