// Playwright (playwright-core, connectOverCDP) drives a shared tab through the relay's HTTP
// discovery and browser-level endpoint. Never launches or downloads a browser.
import { chromium } from 'playwright-core';
import { env, run } from './common.mjs';

await run(async (out, step) => {
  step('connect');
  const browser = await chromium.connectOverCDP(env.http, { headers: { Authorization: `Bearer ${env.token}` }, timeout: 30_000 });
  out.version = browser.version();
  const ctx = browser.contexts()[0];

  step('find the shared page');
  const page = ctx.pages().find((p) => p.url().includes(env.marker));
  if (!page) throw new Error(`no page with ${env.marker} among ${ctx.pages().map((p) => p.url())}`);
  out.title = await page.title();

  step('click');
  await page.click('#clicker');
  out.clicked = await page.textContent('#out');

  step('type');
  await page.locator('#name').pressSequentially('typed by playwright');
  out.echo = await page.textContent('#echo');

  step('evaluate');
  out.evaluated = await page.evaluate(() => `${6 * 7} ${location.hostname}`);

  step('cross-origin iframe');
  const frame = page.frames().find((f) => f.url().includes('/frame.html'));
  if (!frame) throw new Error(`no frame.html among frames ${page.frames().map((f) => f.url())}`);
  out.frameText = await frame.textContent('#inner');
  await frame.click('#frame-button');
  out.frameButton = await frame.textContent('#frame-button');

  step('new page');
  const np = await ctx.newPage();
  await np.goto(env.bigURL);
  step('screenshot');
  const png = await np.screenshot();
  out.screenshotBytes = png.length;
  step('navigate the new page');
  await np.goto(env.otherURL);
  out.newPageTitle = await np.title();
  step('close the new page');
  await np.close();
  out.pagesAfterClose = ctx.pages().map((p) => p.url());

  step('disconnect');
  await browser.close();
  out.ok = true;
});
