// Clicks #clicker CLICKS times in the shared page marked PAGE_MARKER with CLIENT_LIB
// (playwright or puppeteer), for the test where two clients drive two tabs at once.
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { env, run } from './common.mjs';

const n = Number(process.env.CLICKS ?? 10);

await run(async (out, step) => {
  step('connect');
  if (process.env.CLIENT_LIB === 'puppeteer') {
    const browser = await puppeteer.connect({ browserWSEndpoint: `${env.cdp}?token=${encodeURIComponent(env.token)}`, defaultViewport: null });
    const page = (await browser.pages()).find((p) => p.url().includes(env.marker));
    if (!page) throw new Error(`no page with ${env.marker}`);
    step('click');
    for (let i = 0; i < n; i++) await page.click('#clicker');
    out.out = await page.$eval('#out', (e) => e.textContent);
    await browser.disconnect();
  } else {
    const browser = await chromium.connectOverCDP(env.http, { headers: { Authorization: `Bearer ${env.token}` } });
    const page = browser.contexts()[0].pages().find((p) => p.url().includes(env.marker));
    if (!page) throw new Error(`no page with ${env.marker}`);
    step('click');
    for (let i = 0; i < n; i++) await page.click('#clicker');
    out.out = await page.textContent('#out');
    await browser.close();
  }
  out.ok = true;
});
