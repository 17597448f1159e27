// @ts-check
// The service worker's state, in one place: the shared tabs, the connection, the badge's words
// and the large messages being sent. Every worker-*.js module reads and changes it through the
// one `state` (and `outgoing`) object exported here; nothing else holds state.
//
// What must survive a service-worker restart (shared tabs, a stop reason, a notice) is saved to
// chrome.storage.session by persist; settings (relayAddr, token, tabGroup, onDemand) come from
// chrome.storage.local.

const DEFAULT_ADDR = '127.0.0.1:18792';

export const SESSION_KEY = 'tabrelayState';

/**
 * One shared tab.
 * @typedef {object} SharedTab
 * @property {number} tabId
 * @property {string} targetId
 * @property {'user'|'opener'|'client'} origin
 * @property {string} [openerTargetId]
 * @property {boolean} ready true once attached, auto-attach is on and the tab may be announced
 * @property {boolean} reattached the next announcement says the debugger was attached anew
 * @property {boolean} [mainLoading] its main document was still loading when the debugger was attached anew
 * @property {boolean} detaching we are detaching it ourselves (ignore the onDetach)
 * @property {Map<string, object>} children child sessions of the tab: sessionId -> targetInfo
 * @property {boolean} attached chrome.debugger is attached (false: shared on demand, not driven now)
 * @property {Promise<void>|null} op the attach or detach under way (commands wait for it)
 * @property {Map<string, {method: string, params: object|undefined}>} [switched] what clients
 *   switched on in the page session that a new debugger session forgets (see rememberSwitch)
 */

/**
 * @typedef {'unpaired'|'connecting'|'connected'|'error'|'stopped'} Status
 */
export const state = {
  /** init's work (settings, restored tabs): every listener waits for it (see withReady) @type {Promise<void>} */
  ready: Promise.resolve(),
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
  /** tabs in the tabrelay group showing a new tab page: shared once they load a page @type {Set<number>} */
  waiting: new Set(),
  /** @type {{product: string, userAgent: string}|null} */
  product: null,
  /** how many times this worker got a welcome (a restarted worker starts again at 0) */
  connects: 0,
  /** the relay's welcome said it takes chunk frames (see transmit) */
  chunks: false,
  /** the relay's welcome said it takes batch frames from the extension (see transmit) */
  batches: false,
  /** setting: shared tabs live in a "tabrelay" tab group (drag in to share, out to stop) */
  tabGroup: true,
  /** setting: the debugger is attached only while a client or the agent drives the tab */
  onDemand: true,
  /** the "tabrelay" tab group of each window: windowId -> groupId @type {Map<number, number>} */
  groups: new Map(),
  /** "Allow access to file URLs" (undefined until checked; see checkFileAccess) @type {boolean|undefined} */
  fileAccess: undefined,
};

/**
 * A download started in a shared tab: what the tab's Page.downloadWillBegin said, and the
 * chrome.downloads item it was matched with (see worker-downloads.js).
 * @typedef {object} TabDownload
 * @property {string} targetId the shared tab it started in
 * @property {string} url
 * @property {number} [id] the chrome.downloads id, once matched
 * @property {boolean} cancel the relay asked to cancel it
 * @property {boolean} reported the relay got its report (kept a while for a late cancel)
 * @property {number} at when it was seen (ms)
 */

/** Downloads started in shared tabs, matched between the debugger and chrome.downloads. */
export const downloads = {
  /** by guid @type {Map<string, TabDownload>} */
  byGuid: new Map(),
  /** chrome.downloads id -> guid @type {Map<number, string>} */
  byId: new Map(),
  /** chrome.downloads items not matched to a tab yet @type {chrome.downloads.DownloadItem[]} */
  unmatched: [],
};

/**
 * A large outgoing message being sent in chunk frames.
 * @typedef {object} ChunkJob
 * @property {WebSocket} ws
 * @property {string} key the tab it is about ('' for none): later messages of that tab wait for it
 * @property {string} text
 * @property {number} pos how much of text was sent
 * @property {number} stream
 * @property {string[]} after messages of the same tab sent meanwhile, to send once it is done
 */

/**
 * Small messages held to go out together in one batch frame (see transmit).
 * @typedef {object} HeldBatch
 * @property {WebSocket|null} ws the socket they are for
 * @property {string[]} texts
 * @property {number} size their length together, with the brackets and commas
 * @property {ReturnType<typeof setTimeout>|undefined} timer the flush due once the worker's
 *   queued tasks (more answers, typically) have run
 */

/** What goes out on the relay socket: large messages taking turns, small ones held together. */
export const outgoing = {
  /** Large messages in flight, taking turns one chunk each (see transmit). @type {ChunkJob[]} */
  jobs: [],
  stream: 0,
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  timer: undefined,
  /** CDP commands sent with chrome.debugger and not answered yet (see handleCDP) */
  inflight: 0,
  /** @type {HeldBatch} */
  batch: { ws: null, texts: [], size: 1, timer: undefined },
};

/**
 * Runs fn after initialisation, logging (never throwing) failures.
 * @param {() => Promise<unknown>} fn
 */
export async function withReady(fn) {
  try {
    await state.ready;
    await fn();
  } catch (e) {
    console.warn('tabrelay:', e);
  }
}

/** The settings' keys in chrome.storage.local (the options page writes them). */
export const SETTINGS = Object.freeze({ TAB_GROUP: 'tabGroup', ON_DEMAND: 'onDemand' });

export async function loadSettings() {
  const s = await chrome.storage.local.get(['relayAddr', 'token', SETTINGS.TAB_GROUP, SETTINGS.ON_DEMAND]);
  state.tabGroup = s[SETTINGS.TAB_GROUP] !== false; // on unless turned off
  state.onDemand = s[SETTINGS.ON_DEMAND] !== false;
  state.addr = (typeof s.relayAddr === 'string' && s.relayAddr.trim()) || DEFAULT_ADDR;
  state.token = (typeof s.token === 'string' && s.token.trim()) || '';
}

/**
 * What persist saves in chrome.storage.session (and init reads back after a worker restart).
 * @typedef {object} SavedState
 * @property {Array<{tabId: number, targetId: string, origin: SharedTab['origin'], openerTargetId?: string, children?: Array<[string, object]>, attached?: boolean}>} [shared]
 * @property {Array<[number, number]>} [groups] the "tabrelay" tab group of each window
 * @property {string} [stoppedReason]
 * @property {string} [notice]
 */

let persistQueued = false;

/** Saves shared tabs and the stop reason to chrome.storage.session (coalesced). */
export async function persist() {
  if (persistQueued) return;
  persistQueued = true;
  await Promise.resolve();
  persistQueued = false;
  const shared = [...state.shared.values()].filter((r) => r.ready).map((r) => ({
    tabId: r.tabId, targetId: r.targetId, origin: r.origin, openerTargetId: r.openerTargetId,
    children: [...r.children], attached: r.attached,
  }));
  /** @type {SavedState} */
  const saved = {
    shared, stoppedReason: state.status === 'stopped' ? state.reason : '', notice: state.notice,
    groups: [...state.groups],
  };
  await chrome.storage.session.set({ [SESSION_KEY]: saved });
}
