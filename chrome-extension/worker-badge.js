// @ts-check
// The toolbar button's badge and tooltip for every tab, and the status in plain words (also the
// status report the side panel and options page read).

import { state } from './worker-state.js';

/** @typedef {import('./worker-state.js').Status} Status */

/**
 * @param {Status} status
 * @param {string} reason
 */
export function setStatus(status, reason) {
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

export function statusReport() {
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
    // why tabs that were shared are not any more (the badge's "!" tooltip), by tab id
    tabErrors: Object.fromEntries(state.tabErrors),
  };
}

/** The badge and tooltip of tabs that are not shared. */
function globalBadge() {
  const bad = state.status === 'stopped' || !!state.notice;
  return {
    text: bad ? '!' : '',
    color: bad ? '#d93025' : '#5f6368',
    title: state.notice ? `tabrelay: ${state.notice}` : `${statusText()}. Click to share this tab.${fileAccessNote()}`,
  };
}

/** A word on uploads when the extension may not read local files (else ''). */
function fileAccessNote() {
  return state.fileAccess === false
    ? ' File access is off: uploads go through the tabrelay server (up to 50 MB by default); turn on "Allow access to file URLs" in the extension\'s details to let Chrome read files itself.'
    : '';
}

export async function refreshBadges() {
  const g = globalBadge();
  await setBadge(undefined, g.text, g.color, g.title);
  const tabs = new Set([...state.shared.keys(), ...state.tabErrors.keys(), ...state.titled, ...state.waiting]);
  for (const tabId of tabs) await refreshBadge(tabId);
}

/** @param {number} tabId */
export async function refreshBadge(tabId) {
  const rec = state.shared.get(tabId);
  if (!rec) {
    const err = state.tabErrors.get(tabId);
    if (state.waiting.has(tabId)) {
      await setBadge(tabId, '…', '#5f6368', 'tabrelay: this tab is in the tabrelay group and is shared as soon as it shows a web page');
    } else if (err) {
      await setBadge(tabId, '!', '#d93025', `tabrelay: ${err}`);
    } else {
      // Back to the global badge (null clears the tab's own text); a tab's own title and colour
      // cannot be cleared, so they are set to the global ones (a tab that was shared would keep
      // the green of "ON" under the global "!").
      const g = globalBadge();
      await setBadge(tabId, null, state.titled.has(tabId) ? g.color : null, state.titled.has(tabId) ? g.title : null);
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
