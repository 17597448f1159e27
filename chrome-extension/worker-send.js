// @ts-check
// Sending on the one socket: small messages go at once; a large one (a screenshot, a big
// evaluation result) goes in chunk frames taking turns, so it never holds other tabs' messages.

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
    ws.send(text);
    return;
  }
  outgoing.jobs.push({ ws, key, text, pos: 0, stream: ++outgoing.stream, after: [] });
  pumpChunks(0);
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
