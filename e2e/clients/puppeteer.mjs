// Puppeteer (puppeteer-core, connect with defaultViewport null) drives a shared tab through the
// relay's browser-level endpoint. Never launches or downloads a browser.
import puppeteer from 'puppeteer-core';
import { env, run } from './common.mjs';

await run(async (out, step) => {
  step('connect');
  const browser = await puppeteer.connect({
    browserWSEndpoint: `${env.cdp}?token=${encodeURIComponent(env.token)}`,
    defaultViewport: null,
    protocolTimeout: 30_000,
  });
  out.version = await browser.version();

  step('find the shared page');
  const pages = await browser.pages();
  const page = pages.find((p) => p.url().includes(env.marker));
  if (!page) throw new Error(`no page with ${env.marker} among ${pages.map((p) => p.url())}`);
  out.title = await page.title();

  step('click');
  await page.click('#clicker');
  out.clicked = await page.$eval('#out', (e) => e.textContent);

  step('type');
  await page.type('#name', 'typed by puppeteer');
  out.echo = await page.$eval('#echo', (e) => e.textContent);

  step('evaluate');
  out.evaluated = await page.evaluate(() => `${6 * 7} ${location.hostname}`);

  step('cross-origin iframe');
  const frame = page.frames().find((f) => f.url().includes('/frame.html'));
  if (!frame) throw new Error(`no frame.html among frames ${page.frames().map((f) => f.url())}`);
  out.frameText = await frame.$eval('#inner', (e) => e.textContent);
  await frame.click('#frame-button');
  out.frameButton = await frame.$eval('#frame-button', (e) => e.textContent);

  step('new page');
  const np = await browser.newPage();
  await np.goto(env.bigURL);
  step('screenshot');
  const png = await np.screenshot();
  out.screenshotBytes = png.length;
  step('navigate the new page');
  await np.goto(env.otherURL);
  out.newPageTitle = await np.title();
  step('close the new page');
  await np.close();
  // Puppeteer drops a closed page from browser.pages() once the target is destroyed.
  for (let i = 0; i < 50 && (await browser.pages()).some((p) => p.url() === env.otherURL); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
  out.pagesAfterClose = (await browser.pages()).map((p) => p.url());

  step('disconnect');
  await browser.disconnect();
  out.ok = true;
});
