// @ts-check
// chrome-remote-interface as its docs show: CDP({host, port}) with default options (it fetches
// /json/protocol and /json/list) and with `local: true`; on tabrelay the secret rides on every
// HTTP path through `alterPath` (?token=…), the only place cri lets a caller put it.
import CDP from 'chrome-remote-interface';
import { env, S, runScenarios, expect, expectEq, waitFor, checkPNG, formResult, evalWant, title, clearForm, visible } from './harness.mjs';

const u = new URL(env.http);
const base = () => ({
  host: u.hostname,
  port: Number(u.port),
  ...(env.token ? { alterPath: (/** @type {string} */ p) => `${p}${p.includes('?') ? '&' : '?'}token=${encodeURIComponent(env.token)}` } : {}),
});

/** @type {any} */
let client = null;
async function userTarget() {
  const targets = await CDP.List(base());
  const t = targets.find((/** @type {any} */ x) => x.type === 'page' && x.url.includes(env.marker));
  if (!t) throw new Error(`no page with ${env.marker} in /json/list`);
  return t;
}
async function conn() {
  // the target's own endpoint as /json/list gives it (on tabrelay it carries the secret)
  if (!client) client = await CDP({ local: true, target: (await userTarget()).webSocketDebuggerUrl });
  return client;
}
async function reset() {
  const c = client;
  client = null;
  await c?.close();
}
/** @param {any} c @param {string} expression */
async function evaluate(c, expression) {
  const r = await c.Runtime.evaluate({ expression, returnByValue: true });
  if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
  return r.result.value;
}

await runScenarios([
  { name: 'connect: default options', run: async (step) => {
    step('CDP()');
    const c = await CDP({ ...base(), target: (/** @type {any[]} */ ts) => ts.find((x) => x.type === 'page' && x.url.includes(env.marker)) });
    try {
      step('evaluate');
      expectEq(await evaluate(c, 'document.title'), title, 'title');
    } finally {
      await c.close();
    }
  } },
  { name: 'connect: local: true', run: async (step) => {
    step('CDP({local: true})');
    await conn();
  } },
  { name: S.find, run: async () => { await userTarget(); } },
  { name: S.titleEval, run: async (step) => {
    const c = await conn();
    step('evaluate');
    expectEq(await evaluate(c, 'document.title'), title, 'title');
    expectEq(await evaluate(c, "6 * 7 + ' ' + location.hostname"), evalWant, 'evaluate');
  } },
  { name: S.form, run: async (step) => {
    const c = await conn();
    step('clear the form');
    await evaluate(c, clearForm);
    step('DOM.getDocument + querySelector');
    const { root } = await c.DOM.getDocument();
    const { nodeId: input } = await c.DOM.querySelector({ nodeId: root.nodeId, selector: 'input[name=name]' });
    const { nodeId: submit } = await c.DOM.querySelector({ nodeId: root.nodeId, selector: '[data-testid=in-submit]' });
    step('focus + Input.insertText');
    await c.DOM.focus({ nodeId: input });
    await c.Input.insertText({ text: 'Ada Lovelace' });
    step('click');
    await c.DOM.scrollIntoViewIfNeeded({ nodeId: submit });
    const { model } = await c.DOM.getBoxModel({ nodeId: submit });
    const [x1, y1, , , x3, y3] = model.content;
    for (const type of ['mousePressed', 'mouseReleased']) {
      await c.Input.dispatchMouseEvent({ type, x: (x1 + x3) / 2, y: (y1 + y3) / 2, button: 'left', clickCount: 1 });
    }
    step('result');
    await waitFor(async () => String(await evaluate(c, "document.getElementById('result').textContent")).startsWith(formResult), 'the form result');
  } },
  { name: S.screenshot, run: async (step) => {
    const c = await conn();
    step('Page.captureScreenshot');
    const { data } = await c.Page.captureScreenshot({ format: 'png' });
    checkPNG(Buffer.from(data, 'base64'));
  } },
  { name: S.newPage, run: async (step) => {
    const c = await conn();
    step('CDP.New');
    const nt = await CDP.New({ ...base(), url: env.otherURL });
    const nc = await CDP({ local: true, target: nt.webSocketDebuggerUrl });
    step('the new page loads');
    await waitFor(async () => (await evaluate(nc, 'document.title')) === 'Other page', 'the new page loads');
    await nc.close();
    step('CDP.Close');
    await CDP.Close({ ...base(), id: nt.id });
    await waitFor(async () => !(await CDP.List(base())).some((/** @type {any} */ t) => t.id === nt.id), 'the closed page leaves /json/list');
    step("the user's tab is still there");
    expectEq(await evaluate(c, 'document.title'), title, "the user's tab after the close");
  } },
  { name: S.activeAgain, run: async () => {
    const c = await conn();
    await waitFor(async () => (await evaluate(c, visible)) === 'visible', "the user's tab is the visible (active) tab again");
  } },
], reset);
