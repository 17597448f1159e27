// @ts-check
// The mutual proof of the pairing secret (relay/wire/PROTOCOL.md, "Authentication"; the Go side
// is internal/proof, and both reproduce the same test vector). Nothing derived from the secret
// goes to a server before it proved it knows the secret for the very address we connected to;
// then requests carry a short-lived credential, never the secret itself.

const SERVER_LABEL = 'tabrelay-server-v1';
const CLIENT_LABEL = 'tabrelay-client-v1';
const PAIR_SERVER_LABEL = 'tabrelay-pair-server-v1';
const PAIR_CLIENT_LABEL = 'tabrelay-pair-client-v1';
export const CREDENTIAL_PREFIX = 'tr1.';

/** The server at addr failed the proof: it does not know the secret (or pairing code). */
export class NotProvedError extends Error {
  /**
   * @param {string} addr
   * @param {boolean} pairing the key was a pairing code
   */
  constructor(addr, pairing) {
    super(pairing
      ? `the server at ${addr} does not know this pairing code: another program may be using the port, or the code was used or expired (\`tabrelay pair\` prints a new link)`
      : `the server at ${addr} does not know this secret: another program may be using the port (or the server's secret changed: pair again from the options page)`);
    this.name = 'NotProvedError';
    this.addr = addr;
  }
}

/** Nothing answered at addr. */
export class UnreachableError extends Error {
  /** @param {string} addr */
  constructor(addr) {
    super(`tabrelay server not running at ${addr}`);
    this.name = 'UnreachableError';
    this.addr = addr;
  }
}

/**
 * The loopback address addr names, in the canonical form the proofs use ("127.0.0.1:18792",
 * "[::1]:18792"); anything else (0.0.0.0, other IPs, names such as localhost, no port) throws
 * an Error that says what to use instead.
 * @param {string} input
 * @returns {string}
 */
export function loopbackAddr(input) {
  const raw = String(input).trim().replace(/^(https?|wss?):\/\//, '').replace(/\/.*$/, '');
  const m = /^(.*):(\d{1,5})$/.exec(raw);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) {
    throw new Error(`"${raw}" is not an address with a port: use 127.0.0.1:PORT (or [::1]:PORT), the address tabrelay prints`);
  }
  let host = '';
  try { host = new URL(`http://${m[1]}/`).hostname; } catch { /* not a host */ }
  if (host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)) return `${host}:${port}`;
  throw new Error(`tabrelay pairs only with a loopback address (127.0.0.1:PORT or [::1]:PORT), not "${raw}": a server elsewhere could control your browser`);
}

const enc = new TextEncoder();

/**
 * HMAC-SHA256(key, parts joined with "|") in lowercase hex.
 * @param {string} key
 * @param {string[]} parts
 */
async function mac(key, parts) {
  const k = await crypto.subtle.importKey('raw', enc.encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const sig = await crypto.subtle.sign('HMAC', k, enc.encode(parts.join('|')));
  return hex(new Uint8Array(sig));
}

/** @param {Uint8Array} b */
function hex(b) {
  return [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
}

/** A fresh client nonce: 32 hex digits. */
export function newNonce() {
  return hex(crypto.getRandomValues(new Uint8Array(16)));
}

/**
 * Compares two strings without stopping at the first difference.
 * @param {string} a
 * @param {string} b
 */
function sameText(a, b) {
  if (typeof a !== 'string' || typeof b !== 'string' || a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return d === 0;
}

/** The proof functions, exactly as internal/proof computes them (the e2e test checks the vector). */
export const proofs = {
  /** @param {string} secret @param {string} nc @param {string} ns @param {string} addr */
  serverProof: (secret, nc, ns, addr) => mac(secret, [SERVER_LABEL, nc, ns, addr]),
  /** @param {string} secret @param {string} nc @param {string} ns */
  credential: async (secret, nc, ns) => `${CREDENTIAL_PREFIX}${ns}.${nc}.${await mac(secret, [CLIENT_LABEL, nc, ns])}`,
  /** @param {string} code @param {string} nc @param {string} ns @param {string} addr */
  pairServerProof: (code, nc, ns, addr) => mac(code, [PAIR_SERVER_LABEL, nc, ns, addr]),
  /** @param {string} code @param {string} nc @param {string} ns */
  pairCredential: async (code, nc, ns) => `${CREDENTIAL_PREFIX}${ns}.${nc}.${await mac(code, [PAIR_CLIENT_LABEL, nc, ns])}`,
  /** @param {string} code */
  pairingCodeId: async (code) => hex(new Uint8Array(await crypto.subtle.digest('SHA-256', enc.encode(`tabrelay-pair-id-v1|${code}`)))).slice(0, 32),
};

/**
 * POSTs JSON to http://addr+path; a network failure is an UnreachableError.
 * @param {string} addr
 * @param {string} path
 * @param {object} body
 */
async function post(addr, path, body) {
  try {
    return await fetch(`http://${addr}${path}`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
      cache: 'no-store', signal: AbortSignal.timeout(5000),
    });
  } catch {
    throw new UnreachableError(addr);
  }
}

/**
 * Runs the challenge with the key's server proof and returns the server nonce once the proof
 * checks out; otherwise throws NotProvedError.
 * @param {string} addr canonical loopback address
 * @param {string} nc
 * @param {(ns: string) => Promise<string>} expected the proof a server knowing the key gives
 * @param {string} [pairing] a pairing code's id
 */
async function challenge(addr, nc, expected, pairing) {
  const res = await post(addr, '/auth/challenge', pairing ? { clientNonce: nc, pairing } : { clientNonce: nc });
  /** @type {any} */
  let ans = null;
  try { ans = res.ok ? await res.json() : null; } catch { /* not JSON */ }
  const ns = ans?.serverNonce;
  if (typeof ns !== 'string' || !/^\d{1,12}\.[0-9a-f]{32}$/.test(ns) || !sameText(await expected(ns), ans?.proof)) {
    throw new NotProvedError(addr, !!pairing);
  }
  return ns;
}

/**
 * A credential for the server at addr, after it proved it knows secret.
 * @param {string} addr any spelling of a loopback address (see loopbackAddr)
 * @param {string} secret
 * @returns {Promise<{addr: string, credential: string, expiry: number}>} expiry in ms since the epoch
 */
export async function authorize(addr, secret) {
  const a = loopbackAddr(addr);
  const nc = newNonce();
  const ns = await challenge(a, nc, (n) => proofs.serverProof(secret, nc, n, a));
  return { addr: a, credential: await proofs.credential(secret, nc, ns), expiry: Number(ns.split('.')[0]) * 1000 };
}

/** @type {Map<string, {addr: string, credential: string, expiry: number}>} */
const sessions = new Map();

/**
 * authorize, reusing a credential until a minute before it expires.
 * @param {string} addr
 * @param {string} secret
 */
export async function session(addr, secret) {
  const key = `${addr}\n${secret}`;
  const s = sessions.get(key);
  if (s && s.expiry - Date.now() > 60_000) return s;
  sessions.delete(key);
  const fresh = await authorize(addr, secret);
  sessions.set(key, fresh);
  return fresh;
}

/** Forgets cached credentials (after a 401: the secret was rotated, say). */
export function forgetSessions() {
  sessions.clear();
}

/**
 * Exchanges a one-time pairing code for the secret with the server at addr, after it proved it
 * knows the code (an impostor gets only the code's id and a nonce). The code is then used up.
 * @param {string} addr
 * @param {string} code
 * @returns {Promise<string>} the secret
 */
export async function pair(addr, code) {
  const a = loopbackAddr(addr);
  const id = await proofs.pairingCodeId(code);
  const nc = newNonce();
  const ns = await challenge(a, nc, (n) => proofs.pairServerProof(code, nc, n, a), id);
  const res = await post(a, '/auth/pair', { pairing: id, credential: await proofs.pairCredential(code, nc, ns) });
  /** @type {any} */
  let ans = null;
  try { ans = await res.json(); } catch { /* not JSON */ }
  if (!res.ok || typeof ans?.token !== 'string' || !ans.token) {
    throw new Error(`the tabrelay server at ${a} did not complete the pairing (HTTP ${res.status}); run \`tabrelay pair\` for a new link`);
  }
  return ans.token;
}
