// @ts-check
// The JavaScript twin of relay/wire (wire.go and PROTOCOL.md, which is authoritative): message
// types, close codes, reasons and builders for the extension <-> relay protocol, version 1.
// Change all three together (relay/wire TestProtocolJSMatchesWire fails when the constants differ).

/** Protocol version this extension speaks. */
export const VERSION = 1;

/** Close codes the relay uses on the extension socket. */
export const Close = Object.freeze({
  /** A newer extension connection took over: do not reconnect on our own. */
  REPLACED: 4001,
  /** The hello's protocol version is not supported. */
  BAD_VERSION: 4002,
  /** The pairing secret changed (or was rejected): a new token is needed. */
  TOKEN_ROTATED: 4003,
});

/** Message types. */
export const Type = Object.freeze({
  HELLO: 'hello',
  WELCOME: 'welcome',
  TAB_SHARED: 'tabShared',
  TAB_UPDATED: 'tabUpdated',
  TAB_UNSHARED: 'tabUnshared',
  EVENT: 'event',
  RESPONSE: 'response',
  PING: 'ping',
  PONG: 'pong',
  CDP: 'cdp',
  CREATE_TAB: 'createTab',
  CLOSE_TAB: 'closeTab',
  ACTIVATE_TAB: 'activateTab',
  UNSHARE_TAB: 'unshareTab',
  ATTACH_TAB: 'attachTab',
  DETACH_TAB: 'detachTab',
  DOWNLOAD: 'download',
  CANCEL_DOWNLOAD: 'cancelDownload',
  SET_PERMISSIONS: 'setPermissions',
  CHOOSE_TAB: 'chooseTab',
  CHOOSE_TAB_ENDED: 'chooseTabEnded',
});

/**
 * Content types (chrome.contentSettings names) the extension manages for CDP clients' site
 * permission overrides (setPermissions), and clears when it starts, connects or loses the relay.
 */
export const ContentType = Object.freeze({
  LOCATION: 'location',
  NOTIFICATIONS: 'notifications',
  MICROPHONE: 'microphone',
  CAMERA: 'camera',
  CLIPBOARD: 'clipboard',
});

/** Values of a content setting, as chrome.contentSettings names them. */
export const Setting = Object.freeze({
  ALLOW: 'allow',
  BLOCK: 'block',
  ASK: 'ask',
});

/**
 * One site permission override of a setPermissions request.
 * @typedef {object} WireContentSetting
 * @property {string} contentType one of ContentType
 * @property {string} pattern chrome.contentSettings' primaryPattern ("<all_urls>" for every site)
 * @property {string} setting one of Setting
 */

/** States of a download report, as chrome.downloads names them. */
export const DownloadState = Object.freeze({
  IN_PROGRESS: 'in_progress',
  COMPLETE: 'complete',
  INTERRUPTED: 'interrupted',
});

/** Reasons a tab stops being shared. */
export const Reason = Object.freeze({
  USER: 'user',
  CLOSED: 'closed',
  CANCELED_BY_USER: 'canceled_by_user',
  CRASHED: 'crashed',
  REPLACED: 'replaced',
  DISCARDED: 'discarded',
  DETACHED: 'detached',
});

/** Who caused a tab to be shared. */
export const Origin = Object.freeze({
  USER: 'user',
  OPENER: 'opener',
  CLIENT: 'client',
});

/**
 * One shared tab as reported to the relay.
 * @typedef {object} WireTab
 * @property {number} tabId
 * @property {string} targetId
 * @property {string} url
 * @property {string} title
 * @property {number} [windowId]
 * @property {boolean} [active]
 * @property {string} [openerTargetId]
 * @property {'user'|'opener'|'client'} [origin]
 * @property {boolean} [reattached]
 * @property {boolean} [detached] shared without the debugger attached (debugger on demand)
 * @property {boolean} [loading] the tab was still loading when it was announced (chrome.tabs' status; for a tab whose debugger was attached again, its main document's own state)
 */

/**
 * A child target (out-of-process iframe, worker) already attached when a tab is announced.
 * @typedef {object} WireChild
 * @property {string} sessionId
 * @property {object} targetInfo
 */

/**
 * A CDP-shaped error.
 * @typedef {object} WireError
 * @property {number} code
 * @property {string} message
 * @property {string} [data]
 */

/**
 * Any message from the relay (requests carry an id).
 * @typedef {object} RelayMessage
 * @property {string} type
 * @property {number} [id]
 * @property {string} [targetId]
 * @property {string} [sessionId]
 * @property {string} [method]
 * @property {Record<string, unknown>} [params]
 * @property {string} [url]
 * @property {boolean} [background]
 * @property {boolean} [newWindow]
 * @property {number} [protocol]
 * @property {string} [relayVersion]
 * @property {string} [browserId]
 * @property {boolean} [chunks] welcome: the relay takes large messages in chunk frames
 * @property {boolean} [batches] welcome: the relay takes batch frames from the extension too
 * @property {string} [guid] cancelDownload: the download's guid
 * @property {boolean} [trace] cdp: answer with the extension's times (see withTrace)
 * @property {WireContentSetting[]} [settings] setPermissions: the content settings to hold
 * @property {string} [client] chooseTab: who waits for a tab ("cdp", "agent")
 */

/**
 * @param {{extensionVersion: string, product: string, userAgent: string, onDemand?: boolean, batches?: boolean}} info
 * onDemand: the debugger is attached only when the relay asks (attachTab) or a command comes;
 * batches: the extension takes batch frames (JSON arrays of messages, see MAX_BATCH_BYTES)
 */
export function hello({ extensionVersion, product, userAgent, onDemand, batches }) {
  /** @type {Record<string, unknown>} */
  const m = { type: Type.HELLO, protocol: VERSION, extensionVersion, product, userAgent };
  if (onDemand) m.onDemand = true;
  if (batches) m.batches = true;
  return m;
}

/**
 * @param {WireTab} tab
 * @param {WireChild[]} [children]
 */
export function tabShared(tab, children) {
  /** @type {{type: string, tab: WireTab, children?: WireChild[]}} */
  const m = { type: Type.TAB_SHARED, tab };
  if (children && children.length) m.children = children;
  return m;
}

/** @param {WireTab} tab */
export function tabUpdated(tab) {
  return { type: Type.TAB_UPDATED, tab };
}

/**
 * @param {string} targetId
 * @param {number} tabId
 * @param {string} reason one of Reason
 */
export function tabUnshared(targetId, tabId, reason) {
  return { type: Type.TAB_UNSHARED, targetId, tabId, reason };
}

/**
 * @param {string} targetId
 * @param {string|undefined} sessionId absent for the tab's own session
 * @param {string} method
 * @param {object|undefined} params
 */
export function event(targetId, sessionId, method, params) {
  /** @type {Record<string, unknown>} */
  const m = { type: Type.EVENT, targetId, method, params: params ?? {} };
  if (sessionId) m.sessionId = sessionId;
  return m;
}

/**
 * The text of a successful response, built around the result's own JSON text.
 * @param {number} id
 * @param {object|undefined} result
 */
export function responseText(id, result) {
  return `{"type":"${Type.RESPONSE}","id":${id},"result":${JSON.stringify(result ?? {})}}`;
}

/**
 * @param {number} id
 * @param {WireError} error
 */
export function errorResponse(id, error) {
  return { type: Type.RESPONSE, id, error };
}

/**
 * Adds the extension's times to the text of a response to a traced request (one whose "trace"
 * is true): `"trace":[received, sendCommand called, its answer, sent]`, Unix times in
 * milliseconds with fractions, from performance.now() values.
 * @param {string} text the response's JSON text
 * @param {number[]} times performance.now() values
 */
export function withTrace(text, times) {
  const at = times.map((t) => performance.timeOrigin + t);
  return `${text.slice(0, -1)},"trace":${JSON.stringify(at)}}`;
}

/**
 * Batch frames (a JSON array of messages queued together: the relay's to an extension whose
 * hello said "batches": true, the extension's to a relay whose welcome said it) hold at most
 * this many bytes (relay/wire MaxBatchBytes).
 */
export const MAX_BATCH_BYTES = 256 << 10;

/** Starts a chunk frame: a piece of one large message (see chunk). */
export const CHUNK_PREFIX = '#chunk ';

/**
 * Messages longer than this (in UTF-16 code units) are split into chunk frames of at most this
 * much text when the relay's welcome said "chunks": true, so that small messages of other tabs
 * can go between the pieces (relay/wire ChunkSize).
 */
export const CHUNK_SIZE = 1 << 20;

/**
 * One chunk frame: `#chunk <stream> <more|end>\n<piece>`. The pieces of a stream, concatenated
 * in order, are one message's JSON text. Not JSON itself: the piece goes through untouched.
 * @param {number} stream names the message on this connection while it is in flight
 * @param {boolean} last this is the message's last piece
 * @param {string} piece
 */
export function chunk(stream, last, piece) {
  return `${CHUNK_PREFIX}${stream} ${last ? 'end' : 'more'}\n${piece}`;
}

/**
 * A report on a download started in a shared tab (see PROTOCOL.md, Downloads).
 * @param {string} targetId the tab it started in
 * @param {string} guid from the tab's Page.downloadWillBegin
 * @param {chrome.downloads.DownloadItem} item from chrome.downloads
 */
export function download(targetId, guid, item) {
  /** @type {Record<string, unknown>} */
  const m = {
    type: Type.DOWNLOAD, targetId, guid, state: item.state,
    totalBytes: item.totalBytes > 0 ? item.totalBytes : item.fileSize, receivedBytes: item.bytesReceived,
  };
  if (item.filename) m.path = item.filename;
  if (item.error) m.error = item.error;
  return m;
}

export function ping() {
  return { type: Type.PING };
}
