// Playwright's locator.setInputFiles or Puppeteer's ElementHandle.uploadFile (CLIENT=playwright
// or puppeteer), as their docs show, on upload.html in a shared tab, with the files named in
// FILES (paths joined by "|"). Prints what the page saw: the files (name, size, type, a digest)
// and the events fired.
import puppeteer from 'puppeteer-core';
import { chromium } from 'playwright-core';
import { env, run } from './common.mjs';

await run(async (out, step) => {
  const files = (process.env.FILES ?? '').split('|');
  const url = process.env.PAGE_URL;
  if (process.env.CLIENT === 'playwright') {
    step('connect');
    const browser = await chromium.connectOverCDP(env.http, { headers: { Authorization: `Bearer ${env.token}` }, timeout: 30_000 });
    const page = browser.contexts()[0].pages().find((p) => p.url() === url);
    if (!page) throw new Error(`no page at ${url}`);
    step('setInputFiles');
    try {
      await page.locator('#doc').setInputFiles(files);
    } catch (e) {
      out.uploadError = String(e?.message ?? e);
    }
    step('read the page');
    if (!out.uploadError) await page.waitForFunction(() => window.uploads.length > 0);
    out.page = await page.evaluate(() => ({ uploads: window.uploads, events: window.uploadEvents }));
    await browser.close();
  } else {
    step('connect');
    const browser = await puppeteer.connect({ browserWSEndpoint: `${env.cdp}?token=${encodeURIComponent(env.token)}`, defaultViewport: null, protocolTimeout: 30_000 });
    const page = (await browser.pages()).find((p) => p.url() === url);
    if (!page) throw new Error(`no page at ${url}`);
    step('uploadFile');
    const input = await page.$('#doc');
    try {
      await input.uploadFile(...files);
    } catch (e) {
      out.uploadError = String(e?.message ?? e);
    }
    step('read the page');
    if (!out.uploadError) await page.waitForFunction(() => window.uploads.length > 0);
    out.page = await page.evaluate(() => ({ uploads: window.uploads, events: window.uploadEvents }));
    await browser.disconnect();
  }
  out.ok = true;
});
