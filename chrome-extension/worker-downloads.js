// @ts-check
// Downloads started in shared tabs, for the relay's Browser.setDownloadBehavior (relay/download.go),
// and whether the extension may read local files (for uploads, relay/upload.go).
//
// chrome.downloads says where the browser saved a file but not which tab started it; the tab's
// debugger session says which tab and frame (Page.downloadWillBegin, with the download's guid,
// while the relay keeps Page on) but not where the file went. A download is matched across the
// two by its URL, in order; once it completes (or is interrupted) the relay gets a `download`
// report with the guid and the file's path, and it may ask to cancel one (`cancelDownload`).
// Downloads of tabs that are not shared are never reported.

import * as P from './protocol.js';
import { send } from './worker-send.js';
import { downloads, state } from './worker-state.js';

/**
 * Reads whether the extension may read local files (chrome://extensions, "Allow access to file
 * URLs"): without it Chrome refuses uploads from the debugger and the relay sets the files
 * itself (relay/upload.go); the tooltip says so. Changing it reloads the extension, so once at
 * start is enough.
 */
export async function checkFileAccess() {
  state.fileAccess = await chrome.extension.isAllowedFileSchemeAccess();
}

/** Items and tab downloads unmatched for longer than this are forgotten. */
const MATCH_WINDOW_MS = 60_000;

/**
 * chrome.debugger.onEvent listener: a shared tab announced a download.
 * @param {chrome.debugger.Debuggee} source
 * @param {string} method
 * @param {any} params
 */
export function onDownloadDebuggerEvent(source, method, params) {
  if (method !== 'Page.downloadWillBegin' || source.tabId === undefined) return;
  const rec = state.shared.get(source.tabId);
  if (!rec?.ready || typeof params?.guid !== 'string' || downloads.byGuid.get(params.guid)?.targetId) return;
  const prior = downloads.byGuid.get(params.guid); // the relay asked to cancel it already
  /** @type {import('./worker-state.js').TabDownload} */
  const d = { targetId: rec.targetId, url: String(params.url ?? ''), cancel: prior?.cancel ?? false, reported: false, at: Date.now() };
  downloads.byGuid.set(params.guid, d);
  forgetOld();
  const i = downloads.unmatched.findIndex((item) => item.url === d.url || item.finalUrl === d.url);
  if (i >= 0) void link(params.guid, d, downloads.unmatched.splice(i, 1)[0]);
}

/**
 * chrome.downloads.onCreated listener.
 * @param {chrome.downloads.DownloadItem} item
 */
export function onDownloadCreated(item) {
  forgetOld();
  for (const [guid, d] of downloads.byGuid) {
    if (d.id === undefined && d.targetId && (d.url === item.url || d.url === item.finalUrl)) {
      void link(guid, d, item);
      return;
    }
  }
  downloads.unmatched.push(item);
}

/**
 * chrome.downloads.onChanged listener: reports a matched download once it completed or was
 * interrupted.
 * @param {chrome.downloads.DownloadDelta} delta
 */
export async function onDownloadChanged(delta) {
  const guid = downloads.byId.get(delta.id);
  if (guid === undefined) {
    const item = downloads.unmatched.find((i) => i.id === delta.id);
    if (item && delta.finalUrl?.current) item.finalUrl = delta.finalUrl.current;
    return;
  }
  if (delta.state?.current === P.DownloadState.COMPLETE || delta.state?.current === P.DownloadState.INTERRUPTED) {
    await report(guid, delta.id);
  }
}

/**
 * Cancels the download named by guid (the relay's cancelDownload), now or as soon as it is
 * matched.
 * @param {string} guid
 */
export async function cancelDownload(guid) {
  const d = downloads.byGuid.get(guid);
  if (!d) {
    downloads.byGuid.set(guid, { targetId: '', url: '', cancel: true, reported: false, at: Date.now() });
    return;
  }
  d.cancel = true;
  if (d.id !== undefined) await cancelItem(d.id);
}

/**
 * Cancels a download; one that finished already is removed from the disk and the download list,
 * as if it had been refused.
 * @param {number} id
 */
async function cancelItem(id) {
  const [item] = await chrome.downloads.search({ id });
  if (item?.state === P.DownloadState.COMPLETE) {
    await chrome.downloads.removeFile(id).catch(() => {});
    await chrome.downloads.erase({ id });
    return;
  }
  await chrome.downloads.cancel(id);
}

/**
 * @param {string} guid
 * @param {import('./worker-state.js').TabDownload} d
 * @param {chrome.downloads.DownloadItem} item
 */
async function link(guid, d, item) {
  d.id = item.id;
  downloads.byId.set(item.id, guid);
  if (d.cancel) {
    await cancelItem(item.id).catch((e) => console.warn('tabrelay: cancel download', e));
    return;
  }
  // it may have finished before the two were matched
  const [now] = await chrome.downloads.search({ id: item.id });
  if (now && now.state !== P.DownloadState.IN_PROGRESS) await report(guid, item.id);
}

/**
 * Sends the relay the download's report (once: it is forgotten afterwards).
 * @param {string} guid
 * @param {number} id
 */
async function report(guid, id) {
  const d = downloads.byGuid.get(guid);
  if (!d || d.reported) return;
  const [item] = await chrome.downloads.search({ id });
  if (!item || item.state === P.DownloadState.IN_PROGRESS || d.reported) return;
  d.reported = true; // kept a while: a cancel may still come (forgetOld drops it)
  if (state.live) send(P.download(d.targetId, guid, item));
}

function forgetOld() {
  const old = Date.now() - MATCH_WINDOW_MS;
  downloads.unmatched = downloads.unmatched.filter((i) => Date.parse(i.startTime) >= old);
  for (const [guid, d] of downloads.byGuid) {
    if ((d.id === undefined || d.reported) && d.at < old) {
      downloads.byGuid.delete(guid);
      if (d.id !== undefined) downloads.byId.delete(d.id);
    }
  }
}
