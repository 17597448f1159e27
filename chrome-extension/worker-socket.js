// @ts-check
// The relay connection: the server's proof (auth.js), the WebSocket with its short-lived
// credential, hello/welcome, pings, reconnecting with backoff, and the stopped state (replaced,
// token rejected, wrong protocol version) in which the extension waits for the user.

import * as P from './protocol.js';
import { authorize, NotProvedError, UnreachableError } from './auth.js';
import { setStatus } from './worker-badge.js';
import { handleCDP, handleRequest } from './worker-dispatch.js';
import { send } from './worker-send.js';
import { childrenOf, wireTab } from './worker-sharing.js';
import { clearPermissions } from './worker-permissions.js';
import { endTabChoice, offerTabChoice } from './worker-firstrun.js';
import { persist, state, withReady } from './worker-state.js';
import { errorText } from './worker-util.js';

const PING_MS = 20_000;

const DEAD_MS = 60_000;

const BACKOFF_MIN_MS = 250;

const BACKOFF_MAX_MS = 5_000;

const WELCOME_TIMEOUT_MS = 5_000;

export function connect() {
  if (state.ws || state.proving || state.status === 'stopped') return;
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = undefined;
  if (!state.token) {
    setStatus('unpaired', '');
    return;
  }
  const attempt = {};
  state.proving = attempt;
  if (state.status !== 'error') setStatus('connecting', '');
  void openSocket(attempt);
}

/**
 * Has the server prove it knows the secret (auth.js), then opens the WebSocket with the
 * short-lived credential; the secret itself never leaves the extension. A server that fails the
 * proof stops the extension with the reason on the badge.
 * @param {object} attempt
 */
async function openSocket(attempt) {
  const { addr, token } = state;
  let cred;
  try {
    cred = await authorize(addr, token);
  } catch (e) {
    if (state.proving !== attempt) return;
    state.proving = null;
    if (e instanceof NotProvedError) {
      await setStopped(e.message);
      return;
    }
    setStatus('error', e instanceof UnreachableError ? e.message : errorText(e));
    scheduleReconnect();
    return;
  }
  if (state.proving !== attempt) return; // settings changed or the connection restarted meanwhile
  state.proving = null;
  if (state.ws || state.status === 'stopped') return;
  let ws;
  try {
    ws = new WebSocket(`ws://${cred.addr}/extension?token=${encodeURIComponent(cred.credential)}`);
  } catch (e) {
    setStatus('error', `tabrelay server address "${state.addr}" is not valid: ${errorText(e)}`);
    return;
  }
  state.ws = ws;
  state.live = false;
  state.chunks = false; // until this relay's welcome says whether it takes chunk frames
  state.batches = false; // and batch frames
  /** @type {ReturnType<typeof setTimeout>|undefined} */
  let welcomeTimer;
  ws.onopen = async () => {
    state.lastHeard = Date.now();
    // a new relay holds no client's site permissions yet (it resends them after the welcome)
    clearPermissions();
    const info = await productInfo();
    if (state.ws !== ws) return;
    ws.send(JSON.stringify(P.hello({ extensionVersion: chrome.runtime.getManifest().version, ...info, onDemand: state.onDemand, batches: true })));
    welcomeTimer = setTimeout(() => {
      if (state.ws === ws && !state.live) dropConnection(ws, 'the tabrelay server did not answer the hello');
    }, WELCOME_TIMEOUT_MS);
  };
  ws.onmessage = (ev) => {
    const received = performance.now();
    if (state.ws !== ws) return;
    state.lastHeard = Date.now();
    /** @type {P.RelayMessage|P.RelayMessage[]} */
    let parsed;
    try {
      parsed = JSON.parse(typeof ev.data === 'string' ? ev.data : '');
    } catch {
      return;
    }
    // a batch frame: several messages the relay had queued at once, in order
    if (Array.isArray(parsed)) {
      for (const msg of parsed) onRelayMessage(msg, received);
    } else {
      onRelayMessage(parsed, received);
    }
  };
  /**
   * @param {P.RelayMessage} msg
   * @param {number} received performance.now() when the socket handed over its frame
   */
  const onRelayMessage = (msg, received) => {
    if (msg === null || typeof msg !== 'object') return;
    if (msg.type === P.Type.CDP) {
      handleCDP(ws, msg, received);
    } else if (msg.type === P.Type.WELCOME) {
      clearTimeout(welcomeTimer);
      state.chunks = msg.chunks === true;
      state.batches = msg.batches === true;
      void onWelcome(ws);
    } else if (msg.type === P.Type.PONG) {
      // lastHeard is enough
    } else if (msg.type === P.Type.CHOOSE_TAB) {
      void withReady(() => offerTabChoice(String(msg.client || ''))).catch((e) => console.warn('tabrelay: tab chooser', e));
    } else if (msg.type === P.Type.CHOOSE_TAB_ENDED) {
      void withReady(endTabChoice).catch((e) => console.warn('tabrelay: tab chooser', e));
    } else if (typeof msg.id === 'number') {
      void handleRequest(ws, msg, received);
    }
  };
  ws.onclose = (ev) => {
    clearTimeout(welcomeTimer);
    if (state.ws !== ws) return;
    void onClosed(ws, ev.code, ev.reason);
  };
  ws.onerror = () => { /* onclose follows with the details we can get */ };
}

/** @param {WebSocket} ws */
async function onWelcome(ws) {
  // Gather every shared tab's info, then announce them all in one synchronous block so that no
  // event of a shared tab reaches the relay before its tabShared.
  const recs = [...state.shared.values()].filter((r) => r.ready);
  const tabs = await Promise.all(recs.map((r) => chrome.tabs.get(r.tabId).catch(() => null)));
  if (state.ws !== ws) return;
  state.attempts = 0;
  state.connects++;
  recs.forEach((rec, i) => {
    const tab = tabs[i];
    if (!tab || state.shared.get(rec.tabId) !== rec || !rec.ready) return;
    ws.send(JSON.stringify(P.tabShared(wireTab(rec, tab), childrenOf(rec))));
    rec.reattached = false;
  });
  state.live = true;
  clearInterval(state.pingTimer);
  state.pingTimer = setInterval(() => {
    if (state.ws !== ws) return;
    if (Date.now() - state.lastHeard > DEAD_MS) {
      dropConnection(ws, `no answer from the tabrelay server at ${state.addr} for 60 s`);
      return;
    }
    send(P.ping());
  }, PING_MS);
  setStatus('connected', '');
}

/**
 * @param {WebSocket} ws
 * @param {number} code
 * @param {string} reason
 */
async function onClosed(ws, code, reason) {
  const wasLive = state.live;
  clearPermissions(); // the clients that set them cannot reach the browser any more
  state.ws = null;
  state.live = false;
  clearInterval(state.pingTimer);
  if (code === P.Close.REPLACED) {
    await setStopped("replaced by another browser's connection (click the tabrelay button to take over again)");
    return;
  }
  if (code === P.Close.TOKEN_ROTATED) {
    await setStopped('pairing token rejected: the server has a new token; pair again from the options page');
    return;
  }
  if (code === P.Close.BAD_VERSION) {
    await setStopped(`the tabrelay server speaks another protocol version (${reason || 'unsupported'}); update the extension or the server`);
    return;
  }
  if (wasLive) {
    // A clean drop after a live session (relay restart): try again at once.
    setStatus('connecting', '');
    scheduleReconnect();
    return;
  }
  const { addr, token } = state;
  const why = await diagnose();
  // New settings (pairing again after a rejected token, say) arrived meanwhile: the verdict is
  // about the old ones, and the settings handler connects with the new ones. Stopping here would
  // leave the extension stopped with a good token.
  if (state.ws || state.status === 'stopped' || state.token !== token || state.addr !== addr) return;
  if (why.tokenRejected) {
    await setStopped(why.text);
    return;
  }
  setStatus('error', why.text);
  scheduleReconnect();
}

/**
 * Finds out in plain words why the WebSocket could not be opened (the browser does not tell).
 * @returns {Promise<{text: string, tokenRejected?: boolean}>}
 */
async function diagnose() {
  const addr = state.addr;
  let cred;
  try {
    cred = await authorize(addr, state.token);
  } catch (e) {
    if (e instanceof NotProvedError) return { text: e.message, tokenRejected: true };
    if (e instanceof UnreachableError) return { text: e.message };
    return { text: errorText(e), tokenRejected: true };
  }
  let res;
  try {
    res = await fetch(`http://${cred.addr}/json/version`, {
      headers: { Authorization: `Bearer ${cred.credential}` },
      signal: AbortSignal.timeout(3000),
      cache: 'no-store',
    });
  } catch {
    return { text: `tabrelay server not running at ${addr}` };
  }
  if (res.status === 401) return { text: 'pairing token rejected', tokenRejected: true };
  if (res.status === 403) return { text: `the server at ${addr} refused this extension (origin or host not allowed)` };
  if (!res.ok) return { text: `the server at ${addr} answered HTTP ${res.status}; is it tabrelay?` };
  return { text: `could not open the extension connection to the tabrelay server at ${addr}` };
}

/**
 * @param {WebSocket} ws
 * @param {string} why
 */
function dropConnection(ws, why) {
  if (state.ws !== ws) return;
  clearPermissions();
  ws.onclose = null;
  try { ws.close(1000, 'tabrelay: dropping connection'); } catch { /* ignore */ }
  state.ws = null;
  state.live = false;
  clearInterval(state.pingTimer);
  setStatus('error', why);
  scheduleReconnect();
}

function scheduleReconnect() {
  if (state.status === 'stopped' || !state.token) return;
  clearTimeout(state.reconnectTimer);
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** state.attempts);
  const delay = base / 2 + Math.random() * (base / 2);
  state.attempts = Math.min(state.attempts + 1, 16);
  state.reconnectTimer = setTimeout(() => { state.reconnectTimer = undefined; connect(); }, delay);
}

/** Called by the keepalive alarm: reconnects a worker that lost its timers. */
export function ensureConnected() {
  if (!state.ws && !state.proving && state.reconnectTimer === undefined && state.status !== 'stopped') connect();
}

/** Closes the current socket (if any) and connects again now. */
export function restartConnection() {
  const ws = state.ws;
  if (ws) {
    ws.onclose = null;
    try { ws.close(1000, 'tabrelay: settings changed'); } catch { /* ignore */ }
  }
  state.ws = null;
  state.proving = null;
  state.live = false;
  clearInterval(state.pingTimer);
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = undefined;
  state.attempts = 0;
  if (state.status !== 'stopped') {
    state.status = 'connecting';
    state.reason = '';
  }
  connect();
}

/**
 * Enters (reason non-empty) or leaves the stopped state, in which the extension does not
 * reconnect on its own.
 * @param {string} reason
 */
export async function setStopped(reason) {
  clearTimeout(state.reconnectTimer);
  state.reconnectTimer = undefined;
  if (reason) {
    setStatus('stopped', reason);
  } else if (state.status === 'stopped') {
    setStatus('connecting', '');
  }
  await persist();
}

/** @returns {Promise<{product: string, userAgent: string}>} */
async function productInfo() {
  if (state.product) return state.product;
  let version = '';
  try {
    // @ts-ignore userAgentData is not in every lib.dom
    const data = await navigator.userAgentData.getHighEntropyValues(['fullVersionList']);
    /** @type {Array<{brand: string, version: string}>} */
    const list = data.fullVersionList ?? [];
    const pick = list.find((b) => b.brand === 'Google Chrome') ?? list.find((b) => b.brand === 'Chromium')
      ?? list.find((b) => /chrom/i.test(b.brand));
    version = pick?.version ?? '';
  } catch { /* fall back to the UA string */ }
  if (!version) version = navigator.userAgent.match(/Chrome\/([\d.]+)/)?.[1] ?? '0.0.0.0';
  state.product = { product: `Chrome/${version}`, userAgent: navigator.userAgent };
  return state.product;
}
