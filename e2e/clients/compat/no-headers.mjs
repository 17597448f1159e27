// @ts-check
// A client that sends no headers of its own and no secret: Node's fetch of /json/version, then a
// plain WebSocket to its webSocketDebuggerUrl (Node's own WebSocket where it has one, else the ws
// package), speaking raw CDP. tabrelay lets it in when it runs with --trust-same-user (the
// compatibility suite checks the 401 without it).
import { env, S, runScenarios, expect, expectEq, evalExpr, evalWant, title } from './harness.mjs';

/** @type {typeof WebSocket} */
const WS = globalThis.WebSocket ?? /** @type {any} */ ((await import('ws')).default);

/** @type {{ ws: WebSocket, call: (method: string, params?: object, sessionId?: string) => Promise<any> } | null} */
let conn = null;

async function connect() {
  if (conn) return conn;
  const r = await fetch(`${env.http}/json/version`);
  expect(r.ok, `GET /json/version: HTTP ${r.status}`);
  const url = (await r.json()).webSocketDebuggerUrl;
  expect(typeof url === 'string' && url.startsWith('ws://'), `webSocketDebuggerUrl ${url}`);
  const ws = new WS(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = (/** @type {any} */ e) => reject(new Error(`WebSocket ${url}: ${e?.message ?? e?.error?.message ?? 'error'}`));
  });
  let next = 0;
  /** @type {Map<number, {resolve: (v: any) => void, reject: (e: Error) => void}>} */
  const waiting = new Map();
  ws.onmessage = (/** @type {MessageEvent} */ ev) => {
    const m = JSON.parse(String(ev.data));
    const w = m.id !== undefined && waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error) w.reject(new Error(`${m.error.message} (${m.error.code})`));
    else w.resolve(m.result);
  };
  ws.onclose = () => { for (const w of waiting.values()) w.reject(new Error('the WebSocket closed')); waiting.clear(); conn = null; };
  conn = {
    ws,
    call: (method, params = {}, sessionId) => new Promise((resolve, reject) => {
      const id = ++next;
      waiting.set(id, { resolve, reject });
      ws.send(JSON.stringify(sessionId ? { id, method, params, sessionId } : { id, method, params }));
    }),
  };
  return conn;
}
async function userTarget() {
  const c = await connect();
  const { targetInfos } = await c.call('Target.getTargets');
  const t = targetInfos.find((/** @type {any} */ i) => i.type === 'page' && i.url.includes(env.marker));
  if (!t) throw new Error(`no page with ${env.marker} among ${targetInfos.map((/** @type {any} */ i) => i.url)}`);
  return t;
}
/** @param {string} expression */
async function evaluate(expression) {
  const c = await connect();
  const { sessionId } = await c.call('Target.attachToTarget', { targetId: (await userTarget()).targetId, flatten: true });
  try {
    const { result } = await c.call('Runtime.evaluate', { expression, returnByValue: true }, sessionId);
    return result.value;
  } finally {
    await c.call('Target.detachFromTarget', { sessionId }).catch(() => {});
  }
}

await runScenarios([
  { name: 'connect: /json/version + WebSocket, no headers', run: async (step) => {
    step('connect');
    const c = await connect();
    step('Browser.getVersion');
    const v = await c.call('Browser.getVersion');
    expect(String(v.product).includes('/'), 'Browser.getVersion product');
  } },
  { name: S.find, run: async () => { await userTarget(); } },
  { name: S.titleEval, run: async (step) => {
    step('title');
    expectEq(await evaluate('document.title'), title, 'title');
    step('evaluate');
    expectEq(await evaluate(evalExpr), evalWant, 'evaluate');
  } },
], async () => {
  const c = conn;
  conn = null;
  c?.ws.close();
});
