// chrome-remote-interface drives a shared tab through /json/list and the tab's own endpoint
// (/devtools/page/<id>), reaches the cross-origin iframe through a flat child session, and opens,
// drives and closes a tab through /json/new and /json/close.
import CDP from 'chrome-remote-interface';
import { env, run } from './common.mjs';

const u = new URL(env.http);
const http = {
  host: u.hostname,
  port: Number(u.port),
  alterPath: (/** @type {string} */ p) => `${p}${p.includes('?') ? '&' : '?'}token=${encodeURIComponent(env.token)}`,
};

/**
 * @param {any} client
 * @param {string} expression
 * @param {string} [sessionId]
 */
async function evaluate(client, expression, sessionId) {
  const r = await client.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
  if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
  return r.result.value;
}

await run(async (out, step) => {
  step('list');
  const targets = await CDP.List(http);
  const target = targets.find((t) => t.type === 'page' && t.url.includes(env.marker));
  if (!target) throw new Error(`no page with ${env.marker} in /json/list`);
  step('connect');
  const client = await CDP({ target: target.webSocketDebuggerUrl, local: true });
  out.title = await evaluate(client, 'document.title');

  step('click');
  const [x, y] = await evaluate(client, `(() => { const r = document.getElementById('clicker').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`);
  await client.Input.dispatchMouseEvent({ type: 'mousePressed', x, y, button: 'left', clickCount: 1 });
  await client.Input.dispatchMouseEvent({ type: 'mouseReleased', x, y, button: 'left', clickCount: 1 });
  out.clicked = await evaluate(client, `document.getElementById('out').textContent`);

  step('type');
  await evaluate(client, `document.getElementById('name').focus()`);
  for (const ch of 'typed by cri') {
    await client.Input.dispatchKeyEvent({ type: 'keyDown', text: ch, key: ch, unmodifiedText: ch });
    await client.Input.dispatchKeyEvent({ type: 'keyUp', key: ch });
  }
  out.echo = await evaluate(client, `document.getElementById('echo').textContent`);

  step('evaluate');
  out.evaluated = await evaluate(client, '`${6 * 7} ${location.hostname}`');

  step('cross-origin iframe');
  const attached = new Promise((resolve) => {
    client.on('Target.attachedToTarget', (/** @type {any} */ p) => {
      if (p.targetInfo.type === 'iframe' && p.targetInfo.url.includes('/frame.html')) resolve(p.sessionId);
    });
  });
  await client.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: false, flatten: true });
  const sid = await attached;
  out.frameText = await evaluate(client, `document.getElementById('inner').textContent`, sid);
  await evaluate(client, `document.getElementById('frame-button').click()`, sid);
  out.frameButton = await evaluate(client, `document.getElementById('frame-button').textContent`, sid);
  await client.close();

  step('new page');
  const nt = await CDP.New({ ...http }); // a copy: New sets options.method to PUT
  const nc = await CDP({ target: nt.webSocketDebuggerUrl, local: true });
  await nc.Page.enable();
  await Promise.all([nc.Page.loadEventFired(), nc.Page.navigate({ url: env.bigURL })]);
  step('screenshot');
  const shot = await nc.Page.captureScreenshot({ format: 'png' });
  out.screenshotBytes = Buffer.from(shot.data, 'base64').length;
  step('navigate the new page');
  await Promise.all([nc.Page.loadEventFired(), nc.Page.navigate({ url: env.otherURL })]);
  out.newPageTitle = await evaluate(nc, 'document.title');
  await nc.close();
  step('close the new page');
  await CDP.Close({ ...http, id: nt.id });
  for (let i = 0; i < 50; i++) {
    const list = await CDP.List(http);
    if (!list.some((t) => t.id === nt.id)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  out.pagesAfterClose = (await CDP.List(http)).map((t) => t.url);
  out.ok = true;
});
