// chrome-remote-interface's own test suite (test/*.js in its repository: connect, close, devtools,
// event, send), as scenarios written here through the real client: its published package does
// not carry the suite. Each scenario is one of the suite's cases, named by its describe/it path,
// with the suite's 10 s limit, run against the endpoint at localhost:CRI_PORT (a forwarder that
// adds the secret, as a user configures it). Options are the suite's: the default host with the
// forwarder's port. The close-then-connect-again cases run CRI_REPEAT times each (one of them
// once timed out now and then under load). Prints one JSON line: {results: {name: "pass" |
// "fail: why"}}.
import CDP from 'chrome-remote-interface';

const port = Number(process.env.CRI_PORT);
const repeat = Number(process.env.CRI_REPEAT ?? 10);
const opts = { port };
const LIMIT_MS = Number(process.env.CRI_LIMIT_MS ?? 10_000);

/** @type {Array<[string, () => Promise<void>]>} */
const cases = [];
/** @param {string} name @param {() => Promise<void>} fn */
const it = (name, fn) => cases.push([name, fn]);

/** @param {unknown} cond @param {string} what */
function assert(cond, what) {
  if (!cond) throw new Error(`assertion failed: ${what}`);
}

/**
 * The callback style of CDP(): resolves with the client on 'connect', rejects on 'error'.
 * @param {object} options
 * @returns {Promise<any>}
 */
function connectWithCallback(options) {
  return new Promise((resolve, reject) => {
    CDP(options, (/** @type {any} */ client) => resolve(client)).on('error', reject);
  });
}

/** @param {any} client @returns {Promise<void>} */
function closeWithCallback(client) {
  return new Promise((resolve) => client.close(resolve));
}

/** Fails when fn succeeds. @param {() => Promise<unknown>} fn @param {string} what */
async function fails(fn, what) {
  let ok = false;
  try {
    const c = await fn();
    ok = true;
    // @ts-ignore
    await c?.close?.();
  } catch {
    return;
  }
  assert(!ok, what);
}

/**
 * Closes the target id and waits until /json/list no longer has it, so that the next case's
 * default target is not a page that is closing.
 * @param {string} id
 */
async function closeTarget(id) {
  await CDP.Close({ ...opts, id });
  await gone(id);
}

/** Waits until /json/list no longer has the target id. @param {string} id */
async function gone(id) {
  const deadline = Date.now() + 8000;
  while ((await CDP.List(opts)).some((/** @type {any} */ x) => x.id === id)) {
    assert(Date.now() < deadline, `the closed target ${id} leaves the list`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

// connect.js
for (const style of ['with callback', 'without callback']) {
  /** @param {object} o */
  const connect = (o) => (style === 'with callback' ? connectWithCallback(o) : CDP(o));
  it(`connecting to Chrome ${style} with default parameters should succeed`, async () => {
    const c = await connect({ ...opts });
    await c.close();
  });
  it(`connecting to Chrome ${style} with custom parameters should succeed with custom target by index`, async () => {
    const c = await connect({ ...opts, target: () => 0 });
    await c.close();
  });
  it(`connecting to Chrome ${style} with custom parameters should succeed with custom target by function`, async () => {
    const c = await connect({ ...opts, target: (/** @type {any[]} */ targets) => targets[0] });
    await c.close();
  });
  it(`connecting to Chrome ${style} with custom parameters should succeed with custom target by object`, async () => {
    const targets = await CDP.List(opts);
    const c = await connect({ ...opts, target: targets[0] });
    await c.close();
  });
  it(`connecting to Chrome ${style} with custom parameters should succeed with custom target by full URL`, async () => {
    const targets = await CDP.List(opts);
    const c = await connect({ ...opts, target: targets[0].webSocketDebuggerUrl });
    await c.close();
  });
  it(`connecting to Chrome ${style} with custom parameters should succeed with custom target by partial URL`, async () => {
    const targets = await CDP.List(opts);
    const u = new URL(targets[0].webSocketDebuggerUrl);
    const c = await connect({ ...opts, target: u.pathname + u.search });
    await c.close();
  });
  it(`connecting to Chrome ${style} with custom parameters should succeed with custom target by id`, async () => {
    const targets = await CDP.List(opts);
    const c = await connect({ ...opts, target: targets[0].id });
    await c.close();
  });
  it(`connecting to Chrome ${style} with custom (wrong) parameters should fail (wrong port)`, async () => {
    await fails(() => connect({ port: 1 }), 'connected to port 1');
  });
  it(`connecting to Chrome ${style} with custom (wrong) parameters should fail (wrong host)`, async () => {
    await fails(() => connect({ ...opts, host: '255.255.255.255' }), 'connected to a wrong host');
  });
  it(`connecting to Chrome ${style} with custom (wrong) parameters should fail (wrong target)`, async () => {
    await fails(() => connect({ ...opts, target: () => null }), 'connected to a null target');
  });
}

// close.js
it('closing a connection with callback should allow a subsequent new connection', async () => {
  for (let i = 0; i < repeat; i++) {
    const a = await connectWithCallback(opts);
    await closeWithCallback(a);
    const b = await connectWithCallback(opts);
    await closeWithCallback(b);
  }
});
it('closing a connection without callback should allow a subsequent new connection', async () => {
  for (let i = 0; i < repeat; i++) {
    const a = await CDP(opts);
    await a.close();
    const b = await CDP(opts);
    await b.close();
  }
});

// devtools.js
it('devtool interaction Protocol should return the local protocol descriptor', async () => {
  const p = await CDP.Protocol({ ...opts, local: true });
  assert(Array.isArray(p.domains) && p.domains.length > 0, 'local descriptor has domains');
});
it('devtool interaction Protocol should return the remote protocol descriptor', async () => {
  const p = await CDP.Protocol({ ...opts, local: false });
  assert(Array.isArray(p.domains) && p.domains.some((/** @type {any} */ d) => d.domain === 'Page'), 'remote descriptor has Page');
});
it('devtool interaction Protocol should fail if remote is not available', async () => {
  await fails(() => CDP.Protocol({ port: 1, local: false }), 'fetched the protocol from port 1');
});
it('devtool interaction List should return the target list', async () => {
  const targets = await CDP.List(opts);
  assert(Array.isArray(targets) && targets.length > 0, 'a non-empty list');
});
it('devtool interaction New should spawn a target to a specific URL', async () => {
  const url = process.env.OTHER_URL ?? 'about:blank';
  const t = await CDP.New({ ...opts, url });
  try {
    assert(t.id && t.webSocketDebuggerUrl, 'the new target has an id and a socket');
    const deadline = Date.now() + 8000;
    for (;;) {
      const listed = (await CDP.List(opts)).find((/** @type {any} */ x) => x.id === t.id);
      if (listed?.url === url) break;
      assert(Date.now() < deadline, `the new target lists ${url}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await closeTarget(t.id);
  }
});
it('devtool interaction New should spawn a new target', async () => {
  const t = await CDP.New(opts);
  await closeTarget(t.id);
});
it('devtool interaction Activate should activate an existing target', async () => {
  const t = await CDP.New(opts);
  try {
    await CDP.Activate({ ...opts, id: t.id });
  } finally {
    await closeTarget(t.id);
  }
});
it('devtool interaction Close should close an existing target', async () => {
  const t = await CDP.New(opts);
  await closeTarget(t.id);
});
it('devtool interaction Version should return the version information', async () => {
  const v = await CDP.Version(opts);
  assert(typeof v.Browser === 'string' && v['Protocol-Version'], 'Browser and Protocol-Version');
});

// event.js: a navigation gives Network and Page events.
/** @param {(client: any) => Promise<void>} body */
async function withClient(body) {
  const c = await CDP(opts);
  try {
    await body(c);
  } finally {
    await c.close();
  }
}
it('registering event with callback "event" should give the raw message', () => withClient(async (c) => {
  const got = new Promise((resolve) => c.on('event', (/** @type {any} */ m) => { if (m.method === 'Network.requestWillBeSent') resolve(m); }));
  await c.Network.enable();
  await c.Page.reload();
  const m = /** @type {any} */ (await got);
  assert(m.params && m.params.request, 'method and params');
}));
it('registering event with callback sub-domain event syntax should behave as the regular syntax', () => withClient(async (c) => {
  const got = new Promise((resolve) => c.on('Network.requestWillBeSent', resolve));
  await c.Network.enable();
  await c.Page.reload();
  assert((/** @type {any} */ (await got)).request, 'the payload');
}));
it('registering event with callback should return an unsubscribe function', () => withClient(async (c) => {
  let n = 0;
  const unsubscribe = c.Network.requestWillBeSent(() => { n++; });
  unsubscribe();
  const done = new Promise((resolve) => c.Page.loadEventFired(resolve));
  await c.Network.enable();
  await c.Page.enable();
  await c.Page.reload();
  await done;
  assert(n === 0, 'no call after unsubscribing');
}));
it('registering event without callback should give the payload only', () => withClient(async (c) => {
  await c.Network.enable();
  const got = c.Network.requestWillBeSent();
  await c.Page.reload();
  assert((await got).request, 'the payload');
}));
// The suite takes getTargets' first targets; this browser also runs the extension's worker, so
// its first pages are taken.
/** @param {any} chrome @returns {Promise<any[]>} */
async function pages(chrome) {
  const { targetInfos } = await chrome.Target.getTargets();
  return targetInfos.filter((/** @type {any} */ t) => t.type === 'page');
}
it('registering event passing a sessionId should only listen for those events', async () => {
  const version = await CDP.Version(opts);
  const chrome = await CDP({ ...opts, target: version.webSocketDebuggerUrl });
  const { targetId } = await chrome.Target.createTarget({ url: 'about:blank' });
  try {
    const infos = await pages(chrome);
    const { sessionId: sessionId0 } = await chrome.Target.attachToTarget({ targetId: infos[0].targetId, flatten: true });
    const { sessionId: sessionId1 } = await chrome.Target.attachToTarget({ targetId: infos[1].targetId, flatten: true });
    await chrome.Page.enable(sessionId0);
    await chrome.Page.enable(sessionId1);
    chrome.Page.reload(sessionId0);
    chrome.Page.reload(sessionId1);
    await Promise.all([
      chrome.Page.loadEventFired(sessionId0),
      chrome.Page.loadEventFired(sessionId1),
      new Promise((fulfill) => {
        let counter = 0;
        chrome.Page.loadEventFired(() => { if (++counter === 2) fulfill(undefined); });
      }),
    ]);
  } finally {
    await chrome.Target.closeTarget({ targetId });
    await chrome.close();
    await gone(targetId);
  }
});

// send.js
it('sending a command checking the result and specifying parameters should succeed', () => withClient(async (c) => {
  const r = await new Promise((resolve, reject) => c.send('Runtime.evaluate', { expression: '6*7' }, (/** @type {any} */ err, /** @type {any} */ res) => (err ? reject(res) : resolve(res))));
  assert((/** @type {any} */ (r)).result.value === 42, '6*7 is 42');
}));
it('sending a command without a callback should fulfill the promise if the command succeeds', () => withClient(async (c) => {
  await c.send('Page.enable');
}));
it('sending a command without a callback should reject the promise if the command fails', () => withClient(async (c) => {
  await fails(() => c.send('Page.nonExistentMethod'), 'an unknown method succeeded');
}));
it('sending a command without a callback (shorthand) should fulfill the promise if the command succeeds', () => withClient(async (c) => {
  await c.Page.enable();
}));
it('sending a command should catch WebSocket errors', async () => {
  const c = await CDP(opts);
  await c.close();
  await fails(() => c.send('Page.enable'), 'a command on a closed connection succeeded');
});
it('sending a command passing a sessionId should interact with the correct target', async () => {
  const version = await CDP.Version(opts);
  const chrome = await CDP({ ...opts, target: version.webSocketDebuggerUrl });
  try {
    const infos = await pages(chrome);
    const { sessionId } = await chrome.Target.attachToTarget({ targetId: infos[0].targetId, flatten: true });
    const info = await chrome.Target.getTargetInfo(sessionId);
    assert(info?.targetInfo?.type === 'page', `type page: ${JSON.stringify(info)}`);
    assert(info.targetInfo.attached === true, `attached: ${JSON.stringify(info)}`);
  } finally {
    await chrome.close();
  }
});

/** @type {Record<string, string>} */
const results = {};
for (const [name, fn] of cases) {
  let timer;
  try {
    await Promise.race([fn(), new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${LIMIT_MS} ms`)), LIMIT_MS * (name.startsWith('closing') ? repeat : 1)); })]);
    results[name] = 'pass';
  } catch (e) {
    results[name] = `fail: ${e instanceof Error ? e.message : String(e)}`;
  } finally {
    clearTimeout(timer);
  }
}
console.log(JSON.stringify({ results }));
process.exit(0);
