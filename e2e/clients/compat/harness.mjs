// @ts-check
// Shared bits of the compatibility suite's client scripts (see e2e/compat_test.go): the endpoint
// the Go test passes, scenarios run in order with a time limit each, one JSON line per scenario.

/** Where to connect and what to use, from the environment TestCompat sets. */
export const env = {
  endpoint: process.env.COMPAT_ENDPOINT ?? '', // "chrome" or "tabrelay"
  http: process.env.COMPAT_HTTP ?? '', // http://127.0.0.1:PORT, no secret
  port: process.env.COMPAT_PORT ?? '',
  ws: process.env.COMPAT_WS ?? '', // browser-level WebSocket endpoint, no secret
  token: process.env.COMPAT_TOKEN ?? '', // "" on Chrome
  marker: process.env.COMPAT_MARKER ?? '', // in the user's tab's URL
  target: process.env.COMPAT_TARGET ?? '', // the user's tab's target id
  otherURL: process.env.COMPAT_OTHER_URL ?? '',
  hook: process.env.COMPAT_HOOK ?? '',
  timeoutMs: Number(process.env.COMPAT_TIMEOUT_MS ?? 20_000),
  chromePath: process.env.CHROME_PATH ?? '/usr/bin/chromium',
};

/** Scenario names, the same as in e2e/compat_test.go. */
export const S = {
  find: 'find the shared page',
  titleEval: 'title + evaluate',
  form: 'fill + click a form',
  screenshot: 'screenshot',
  newPage: "open + close a page; the user's tab stays",
  activeAgain: "the user's tab is the active tab again after that",
  afterAgent: "after the agent's snapshot of the tab",
  browserContext: 'separate browser context',
  closeUserTab: "close the user's tab",
};

/** The form's expected result after filling "Ada Lovelace" and submitting. */
export const formResult = 'name=Ada+Lovelace';
export const evalExpr = "6 * 7 + ' ' + location.hostname";
export const evalWant = '42 127.0.0.1';
export const title = 'Every input';
/** Clears the form's name field and result (page-side JavaScript). */
export const clearForm = "document.getElementById('result').textContent = document.querySelector('input[name=name]').value = ''";
export const visible = 'document.visibilityState';
/**
 * How long the user's tab gets to come back in front after a page a client opened is closed:
 * required of tabrelay; on Chrome's endpoint, which leaves a neighbour in front, the result is
 * only shown, so it is not waited for as long (the same in compat_go_test.go).
 */
export const activeWaitMs = env.endpoint === 'chrome' ? 2000 : 8000;

/**
 * Asks the harness to have "the agent" (tabrelay's own, or the same snapshot code on Chrome) take
 * a snapshot of the user's tab.
 */
export async function agentSnapshot() {
  const r = await fetch(`${env.hook}/snapshot?endpoint=${env.endpoint}&target=${encodeURIComponent(env.target)}`, { method: 'POST' });
  const body = await r.text();
  if (!r.ok) throw new Error(`agent snapshot: HTTP ${r.status}: ${body}`);
}

/** @param {unknown} got @param {unknown} want @param {string} what */
export function expectEq(got, want, what) {
  if (got !== want) throw new Error(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
}

/** @param {boolean} cond @param {string} what */
export function expect(cond, what) {
  if (!cond) throw new Error(what);
}

/**
 * Polls fn until it returns a truthy value (each try awaited), up to ms.
 * @template T @param {() => Promise<T>} fn @param {string} what @param {number} [ms]
 * @returns {Promise<T>}
 */
export async function waitFor(fn, what, ms = 8000) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`${what}: not true after ${ms} ms (last: ${last})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Checks a PNG's signature and size. @param {Uint8Array} png */
export function checkPNG(png) {
  const sig = [0x89, 0x50, 0x4e, 0x47];
  expect(png.length > 1000 && sig.every((b, i) => png[i] === b), `not a PNG screenshot (${png.length} bytes)`);
}

/**
 * @typedef {object} Scenario
 * @property {string} name
 * @property {(step: (s: string) => void) => Promise<void>} run
 * @property {boolean} [refused] tabrelay refuses it on purpose: on tabrelay it must fail with an error
 * @property {() => Promise<void>} [afterRefusal] checks after tabrelay's refusal (the user's tab is still there)
 */

/**
 * Runs the scenarios in order, each within env.timeoutMs; prints one JSON line per scenario.
 * After a failure or a hang, reset() is called so the next scenario starts from a fresh connection.
 * @param {Scenario[]} list
 * @param {() => Promise<void>} reset drops the client's connection (must not hang)
 */
export async function runScenarios(list, reset) {
  for (const sc of list) {
    let current = 'start';
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${env.timeoutMs / 1000}s in step "${current}"`)), env.timeoutMs);
    });
    let status = 'pass';
    let error = '';
    const started = Date.now();
    try {
      await Promise.race([sc.run((s) => { current = s; }), timeout]);
    } catch (e) {
      const msg = errorMessage(e);
      status = 'fail';
      error = msg.startsWith('timed out after') ? msg : `${current}: ${msg}`;
    }
    clearTimeout(timer);
    if (sc.refused && env.endpoint === 'tabrelay') {
      if (status === 'pass') {
        status = 'fail';
        error = 'tabrelay allowed what it refuses on purpose';
      } else if (!error.startsWith('timed out after')) {
        status = 'refused';
        if (sc.afterRefusal) {
          try {
            await Promise.race([sc.afterRefusal(), new Promise((_, rej) => setTimeout(() => rej(new Error('timed out')), env.timeoutMs))]);
          } catch (e) {
            status = 'fail';
            error = `after the refusal: ${e instanceof Error ? e.message : e}`;
          }
        }
      }
    }
    console.error(`compat: ${sc.name}: ${status} in ${Date.now() - started} ms`);
    console.log(JSON.stringify({ scenario: sc.name, status, error: error.split('\n').slice(0, 6).join('\n') }));
    if (status === 'fail') {
      await Promise.race([reset().catch(() => {}), new Promise((r) => setTimeout(r, 3000))]);
    }
  }
  await Promise.race([reset().catch(() => {}), new Promise((r) => setTimeout(r, 3000))]);
  process.exit(0);
}

/**
 * What went wrong, from an Error or from what some clients reject with instead (Puppeteer
 * rejects a refused WebSocket with the ws package's ErrorEvent, whose message is the HTTP status).
 * @param {unknown} e
 */
function errorMessage(e) {
  if (e instanceof Error) return e.message;
  const o = /** @type {any} */ (e);
  return typeof o?.message === 'string' ? o.message : typeof o?.error?.message === 'string' ? o.error.message : String(e);
}

/**
 * Reports a client that cannot run on this machine, for every scenario it would have run.
 * @param {string[]} names @param {string} why
 */
export function notRunnable(names, why) {
  for (const n of names) console.log(JSON.stringify({ scenario: n, status: 'not runnable', error: why }));
  process.exit(0);
}

/**
 * An MCP client (the official SDK's Client over stdio) for an MCP server started as `node script args`.
 * @param {string} script path of the server's entry point
 * @param {string[]} args
 */
export async function mcpClient(script, args) {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
  const transport = new StdioClientTransport({ command: process.execPath, args: [script, ...args], stderr: 'pipe', env: /** @type {Record<string,string>} */ (process.env) });
  const client = new Client({ name: 'tabrelay-compat', version: '1' });
  await client.connect(transport);
  return {
    /** @param {string} name @param {Record<string, unknown>} [a] */
    async call(name, a = {}) {
      const r = /** @type {any} */ (await client.callTool({ name, arguments: a }, undefined, { timeout: env.timeoutMs }));
      const text = (r.content ?? []).filter((/** @type {any} */ c) => c.type === 'text').map((/** @type {any} */ c) => c.text).join('\n');
      if (r.isError) throw new Error(`${name}: ${text.slice(0, 600)}`);
      return { text, content: /** @type {any[]} */ (r.content ?? []) };
    },
    close: () => client.close(),
  };
}

/** The first line of text that contains all of needles. @param {string} text @param {string[]} needles */
export function lineWith(text, needles) {
  const line = text.split('\n').find((l) => needles.every((n) => l.includes(n)));
  if (!line) throw new Error(`no line with ${needles.join(' + ')} in:\n${text.slice(0, 1500)}`);
  return line;
}
