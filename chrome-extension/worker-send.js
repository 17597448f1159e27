// @ts-check
// Sending on the one socket: small messages go at once, or, while other commands are in flight,
// together in one batch frame; a large one (a screenshot, a big evaluation result) goes in chunk
// frames taking turns, so it never holds other tabs' messages.

import * as P from './protocol.js';
import { outgoing, state } from './worker-state.js';

/** Chunks wait while more than this many bytes are still to go out on the socket. */
const CHUNK_HIGH_WATER = 2 * P.CHUNK_SIZE;

/** @param {object & {targetId?: string}} msg */
export function send(msg) {
  const ws = state.ws;
  if (ws && ws.readyState === WebSocket.OPEN) transmit(ws, JSON.stringify(msg), msg.targetId ?? '');
}

/**
 * Sends one message's text on ws. Everything goes through the one socket, so a large message
 * (a screenshot, a big evaluation result) would hold every tab's small messages behind it: when
 * the relay takes chunk frames, a message longer than P.CHUNK_SIZE goes out in pieces, taking
 * turns with other large ones, while small messages go at once between the pieces. Messages of
 * the same tab keep their order: they wait for its large message to be sent.
 * @param {WebSocket} ws
 * @param {string} text
 * @param {string} key the tab the message is about ('' for none)
 */
export function transmit(ws, text, key) {
  const job = key && outgoing.jobs.length ? outgoing.jobs.find((j) => j.ws === ws && j.key === key) : undefined;
  if (job) {
    job.after.push(text);
    return;
  }
  if (!state.chunks || text.length <= P.CHUNK_SIZE) {
    sendSmall(ws, text);
    return;
  }
  flushBatch(); // what was held goes first
  outgoing.jobs.push({ ws, key, text, pos: 0, stream: ++outgoing.stream, after: [] });
  pumpChunks(0);
}

/**
 * Sends a message that goes in one frame. While other CDP commands are in flight (fifty clients
 * at once, say), their answers come in a burst of callbacks: a message is then held and goes out
 * with the others in one batch frame (one socket write, one frame for the relay to read) once
 * the worker's queued tasks have run, or at once when the last command in flight is answered. A
 * lone command's answer goes at once. Held messages keep their order with every later one.
 * @param {WebSocket} ws
 * @param {string} text
 */
function sendSmall(ws, text) {
  const b = outgoing.batch;
  if (!state.batches || (b.texts.length === 0 && outgoing.inflight === 0)) {
    if (b.texts.length) flushBatch();
    ws.send(text);
    return;
  }
  if (b.ws !== ws || b.size + text.length + 1 > P.MAX_BATCH_BYTES) flushBatch();
  if (text.length + 2 > P.MAX_BATCH_BYTES) {
    ws.send(text);
    return;
  }
  b.ws = ws;
  b.texts.push(text);
  b.size += text.length + 1;
  if (outgoing.inflight === 0) {
    flushBatch();
  } else if (b.timer === undefined) {
    b.timer = setTimeout(flushBatch, 0);
  }
}

/** Sends the messages held by sendSmall, in one frame. */
export function flushBatch() {
  const b = outgoing.batch;
  clearTimeout(b.timer);
  b.timer = undefined;
  const { ws, texts } = b;
  if (texts.length === 0) return;
  b.texts = [];
  b.size = 1;
  if (!ws || ws.readyState !== WebSocket.OPEN) return; // the relay fails what was pending on it
  ws.send(texts.length === 1 ? texts[0] : `[${texts.join(',')}]`);
}

/** @param {number} delay */
function pumpChunks(delay) {
  if (outgoing.timer !== undefined) return;
  outgoing.timer = setTimeout(() => {
    outgoing.timer = undefined;
    sendChunk();
  }, delay);
}

/** Sends the next piece of the first large message in line, then lets the next one take a turn. */
function sendChunk() {
  const job = outgoing.jobs.shift();
  if (!job) return;
  if (job.ws.readyState !== WebSocket.OPEN) { // the relay fails what was pending on it
    if (outgoing.jobs.length) pumpChunks(0);
    return;
  }
  if (job.ws.bufferedAmount > CHUNK_HIGH_WATER) { // let what is queued go out first
    outgoing.jobs.unshift(job);
    pumpChunks(2);
    return;
  }
  let end = Math.min(job.pos + P.CHUNK_SIZE, job.text.length);
  const c = job.text.charCodeAt(end - 1);
  if (end < job.text.length && c >= 0xd800 && c <= 0xdbff) end--; // never split a surrogate pair
  const last = end === job.text.length;
  job.ws.send(P.chunk(job.stream, last, job.text.slice(job.pos, end)));
  job.pos = end;
  if (last) {
    for (const t of job.after) transmit(job.ws, t, job.key);
  } else {
    outgoing.jobs.push(job);
  }
  if (outgoing.jobs.length) pumpChunks(0);
}
