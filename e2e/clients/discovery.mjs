// Discovery the way clients do it, against tabrelay or Chrome's own endpoint (TABRELAY_HTTP;
// TABRELAY_TOKEN may be empty for Chrome): Node's own fetch (undici sends Sec-Fetch-Mode: cors,
// no Origin, no Sec-Fetch-Site) on /json/version without the secret and on /json/list with the
// Authorization header; Puppeteer's connect({browserURL, headers}) (browserURL drops any query
// and sends no headers to /json/version; the headers go to the WebSocket) with a small
// scenario; and a per-tab webSocketDebuggerUrl given ?token= again, as a client that always adds
// it would, driven with chrome-remote-interface.
import puppeteer from 'puppeteer-core';
import CDP from 'chrome-remote-interface';
import { env, run } from './common.mjs';

const auth = env.token ? { Authorization: `Bearer ${env.token}` } : {};

await run(async (out, step) => {
  step('fetch /json/version without the secret');
  const v = await fetch(`${env.http}/json/version`);
  out.versionStatus = v.status;
  const version = await v.json();
  out.versionHasBrowser = typeof version.Browser === 'string' && version.Browser.startsWith('Chrome/');
  out.versionURLHasToken = /[?&]token=/.test(version.webSocketDebuggerUrl);
  out.versionURLIsBrowser = /^ws:\/\/[^/]+\/devtools\/browser\//.test(version.webSocketDebuggerUrl);

  step('fetch /json/list with the Authorization header');
  const l = await fetch(`${env.http}/json/list`, { headers: auth });
  out.listStatus = l.status;
  const list = await l.json();
  const listed = list.find((t) => t.type === 'page' && t.url.includes(env.marker));
  out.listHasPage = Boolean(listed);
  if (!listed) throw new Error(`no page with ${env.marker} in /json/list`);

  step('puppeteer.connect({browserURL, headers})');
  // Puppeteer fetches browserURL's /json/version (with no secret: it sends no headers there)
  // and opens its webSocketDebuggerUrl. Releases with puppeteer/puppeteer#15238 send `headers`
  // on that socket; older ones (such as the pinned 24.x) drop them, and the socket is then
  // refused (401): the same two steps are done by hand then, with the headers on the socket.
  /** @type {import('puppeteer-core').Browser} */
  let browser;
  try {
    browser = await puppeteer.connect({ browserURL: env.http, headers: auth, defaultViewport: null, protocolTimeout: 30_000 });
    out.browserURLForwardsHeaders = true;
  } catch (e) {
    if (!env.token || !String(/** @type {any} */ (e)?.message ?? '').includes('401')) throw e;
    out.browserURLForwardsHeaders = false;
    step('puppeteer.connect({browserWSEndpoint: /json/version\'s URL, headers})');
    browser = await puppeteer.connect({ browserWSEndpoint: version.webSocketDebuggerUrl, headers: auth, defaultViewport: null, protocolTimeout: 30_000 });
  }
  const page = (await browser.pages()).find((p) => p.url().includes(env.marker));
  if (!page) throw new Error(`puppeteer: no page with ${env.marker}`);
  out.puppeteerTitle = await page.title();
  await page.click('#clicker');
  out.puppeteerClicked = await page.$eval('#out', (e) => e.textContent);
  out.puppeteerEvaluated = await page.evaluate(() => `${6 * 7} ${location.hostname}`);
  await browser.disconnect();

  step('per-tab webSocketDebuggerUrl with ?token= added again');
  let ws = listed.webSocketDebuggerUrl;
  if (env.token) ws += `${ws.includes('?') ? '&' : '?'}token=${encodeURIComponent(env.token)}`;
  out.doubledToken = (ws.match(/token=/g) ?? []).length;
  const client = await CDP({ target: ws, local: true });
  try {
    const r = await client.send('Runtime.evaluate', { expression: 'document.title', returnByValue: true });
    out.doubledTokenTitle = r.result.value;
  } finally {
    await client.close();
  }
  out.ok = true;
});
