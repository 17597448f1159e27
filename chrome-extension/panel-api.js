// @ts-check
// The side panel's client of the tabrelay server: settings from chrome.storage.local, JSON
// requests with a short-lived credential as a Bearer header (made after the server proved it
// knows the pairing token, auth.js; the token itself is never sent), and Server-Sent Events read
// through fetch's streaming body (EventSource cannot send headers, and a credential in a URL
// would end up in logs).

import { forgetSessions, NotProvedError, session, UnreachableError } from './auth.js';

export const DEFAULT_ADDR = '127.0.0.1:18792';

/** An error with the HTTP status and the server's JSON body. */
export class ApiError extends Error {
  /**
   * @param {string} message
   * @param {number} status 0 when the server could not be reached
   * @param {any} [body]
   */
  constructor(message, status, body) {
    super(message);
    this.status = status;
    this.body = body;
  }
}

/** @returns {Promise<{addr: string, token: string}>} */
export async function settings() {
  // chrome.storage's types say unknown: the options page stores strings.
  const s = /** @type {{relayAddr?: string, token?: string}} */ (await chrome.storage.local.get(['relayAddr', 'token']));
  return { addr: s.relayAddr || DEFAULT_ADDR, token: s.token || '' };
}

/**
 * The literal address and a credential for the paired server; an ApiError (status 0 when not
 * running, 401 when the server does not prove it knows the token) otherwise.
 * @param {string} addr
 * @param {string} token
 */
async function credential(addr, token) {
  try {
    return await session(addr, token);
  } catch (e) {
    if (e instanceof UnreachableError) throw new ApiError(`tabrelay server not running at ${addr}.`, 0);
    if (e instanceof NotProvedError) throw new ApiError(`${e.message}.`, 401, { notProved: true });
    throw new ApiError(e instanceof Error ? e.message : String(e), 0);
  }
}

/**
 * Calls the server. JSON bodies are sent as JSON; Blob/ArrayBuffer/FormData as they are.
 * @param {string} method
 * @param {string} path e.g. /api/tabs
 * @param {{body?: any, type?: string, timeout?: number, raw?: boolean, signal?: AbortSignal}} [opts]
 * @returns {Promise<any>} the decoded JSON (or the Response when raw)
 */
export async function api(method, path, opts = {}) {
  const { addr, token } = await settings();
  /** @type {Record<string, string>} */
  const headers = {};
  let target = addr;
  if (token) {
    const c = await credential(addr, token);
    headers.Authorization = `Bearer ${c.credential}`;
    target = c.addr;
  }
  let body = opts.body;
  if (body !== undefined && !(body instanceof Blob) && !(body instanceof FormData) && !(body instanceof ArrayBuffer)) {
    body = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  } else if (opts.type) {
    headers['Content-Type'] = opts.type;
  }
  const signal = opts.signal ?? AbortSignal.timeout(opts.timeout ?? 30000);
  let res;
  try {
    res = await fetch(`http://${target}${path}`, { method, headers, body, cache: 'no-store', signal });
  } catch (e) {
    if (/** @type {Error} */ (e).name === 'AbortError' || /** @type {Error} */ (e).name === 'TimeoutError') throw e;
    throw new ApiError(`tabrelay server not running at ${addr}.`, 0);
  }
  if (opts.raw && res.ok) return res;
  const text = await res.text();
  /** @type {any} */
  let data = text;
  try { data = text ? JSON.parse(text) : null; } catch { /* plain text */ }
  if (!res.ok) {
    let msg = (data && typeof data === 'object' && (data.error || data.message)) || (typeof data === 'string' && data) || `HTTP ${res.status}`;
    if (res.status === 401) forgetSessions();
    if (res.status === 401) msg = 'Pairing token rejected: the server does not accept this token. Open the pairing link the server printed (`tabrelay token` prints the token).';
    if (res.status === 404 && !(data && data.error)) msg = `The server at ${addr} has no ${path.split('?')[0]} route (is it an older tabrelay?).`;
    throw new ApiError(String(msg), res.status, data);
  }
  return data;
}

/**
 * Follows a task's Server-Sent Events (GET /api/tasks/:id/events) until the stream ends or the
 * signal aborts, calling onEvent(type, data) for each event.
 * @param {string} taskId
 * @param {(type: string, data: any) => void} onEvent
 * @param {AbortSignal} signal
 */
export async function followTask(taskId, onEvent, signal) {
  const { addr, token } = await settings();
  const c = await credential(addr, token);
  const res = await fetch(`http://${c.addr}/api/tasks/${encodeURIComponent(taskId)}/events`, {
    headers: { Authorization: `Bearer ${c.credential}`, Accept: 'text/event-stream' }, cache: 'no-store', signal,
  });
  if (!res.ok || !res.body) throw new ApiError(`task events: HTTP ${res.status}`, res.status);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      let type = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) type = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (!data.length) continue;
      let parsed;
      try { parsed = JSON.parse(data.join('\n')); } catch { parsed = data.join('\n'); }
      onEvent(type, parsed);
    }
  }
}

/**
 * Downloads a task report (json, csv or markdown) through the authenticated API: of its steps,
 * or with data 'records' the records its extract steps read (GET /api/tasks/{id}/report's
 * data=).
 * @param {string} taskId
 * @param {'json'|'csv'|'markdown'} format
 * @param {'steps'|'records'} [data]
 */
export async function downloadReport(taskId, format, data = 'steps') {
  const res = /** @type {Response} */ (await api('GET', `/api/tasks/${encodeURIComponent(taskId)}/report?format=${format}&data=${data}`, { raw: true }));
  const blob = await res.blob();
  const ext = { json: 'json', csv: 'csv', markdown: 'md' }[format];
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `tabrelay-task-${taskId}${data === 'records' ? '-records' : ''}.${ext}`;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  return { size: blob.size, type: blob.type, name: a.download };
}
