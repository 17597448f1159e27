// Options page: server address and pairing token (chrome.storage.local keys relayAddr and
// token, which the service worker watches), a plain-words connection test, and pairing links of
// the form options.html#addr=127.0.0.1:18792&token=<token>.

const DEFAULT_ADDR = '127.0.0.1:18792';

const $ = (/** @type {string} */ id) => /** @type {HTMLInputElement} */ (document.getElementById(id));
const addrInput = $('addr');
const tokenInput = $('token');
const result = $('result');
const statusLine = $('status');

/**
 * @param {string} text
 * @param {'ok'|'bad'|''} kind
 */
function show(text, kind) {
  result.textContent = text;
  result.className = kind;
}

/** @param {string} addr */
function normalizeAddr(addr) {
  return addr.trim().replace(/^(https?|wss?):\/\//, '').replace(/\/.*$/, '') || DEFAULT_ADDR;
}

async function load() {
  const s = await chrome.storage.local.get(['relayAddr', 'token']);
  addrInput.value = s.relayAddr || DEFAULT_ADDR;
  tokenInput.value = s.token || '';
}

/**
 * @param {string} addr
 * @param {string} token
 */
async function save(addr, token) {
  await chrome.storage.local.set({ relayAddr: normalizeAddr(addr), token: token.trim() });
}

/**
 * Checks the server in plain words: not running, token rejected, or connected with N tabs.
 * @returns {Promise<{ok: boolean, text: string}>}
 */
async function testConnection() {
  const addr = normalizeAddr(addrInput.value);
  const token = tokenInput.value.trim();
  if (!token) return { ok: false, text: 'No pairing token yet: paste the token the server printed (or run "tabrelay token").' };
  const headers = { Authorization: `Bearer ${token}` };
  let res;
  try {
    res = await fetch(`http://${addr}/json/version`, { headers, cache: 'no-store', signal: AbortSignal.timeout(3000) });
  } catch {
    return { ok: false, text: `tabrelay server not running at ${addr}.` };
  }
  if (res.status === 401) return { ok: false, text: 'Pairing token rejected: the server does not accept this token.' };
  if (res.status === 403) return { ok: false, text: `The server at ${addr} refused this extension (origin or host not allowed).` };
  if (!res.ok) return { ok: false, text: `The server at ${addr} answered HTTP ${res.status}; is it tabrelay?` };
  let n = 0;
  try {
    const list = await (await fetch(`http://${addr}/json/list`, { headers, cache: 'no-store' })).json();
    n = Array.isArray(list) ? list.filter((t) => t.type === 'page').length : 0;
  } catch { /* keep 0 */ }
  return { ok: true, text: `Connected: the tabrelay server at ${addr} accepts the token and sees ${n} shared tab${n === 1 ? '' : 's'}.` };
}

async function refreshStatus() {
  try {
    const st = await chrome.runtime.sendMessage({ type: 'status' });
    if (st?.text) statusLine.textContent = `Extension: ${st.text}${st.notice ? ` (${st.notice})` : ''}; ${st.sharedTabs.length} tab(s) shared.`;
  } catch { /* worker not reachable */ }
}

async function runTest() {
  show('Testing…', '');
  const r = await testConnection();
  show(r.text, r.ok ? 'ok' : 'bad');
  await refreshStatus();
  return r;
}

$('form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  await save(addrInput.value, tokenInput.value);
  addrInput.value = normalizeAddr(addrInput.value);
  show('Saved.', 'ok');
  setTimeout(runTest, 500);
});
$('test').addEventListener('click', () => { void runTest(); });

/** Applies a pairing link (#addr=…&token=…) and removes the token from the address bar. */
async function applyPairingLink() {
  const h = new URLSearchParams(location.hash.replace(/^#/, ''));
  const token = h.get('token');
  if (!token) return false;
  addrInput.value = normalizeAddr(h.get('addr') || addrInput.value || DEFAULT_ADDR);
  tokenInput.value = token;
  history.replaceState(null, '', location.pathname);
  await save(addrInput.value, token);
  show(`Paired with the tabrelay server at ${addrInput.value}. Testing…`, 'ok');
  setTimeout(runTest, 500);
  return true;
}

// The page's test hooks: the end-to-end tests read these.
Object.assign(globalThis, { tabrelayOptions: { testConnection, runTest } });

await load();
await applyPairingLink();
await refreshStatus();
window.addEventListener('hashchange', () => { void applyPairingLink(); });
