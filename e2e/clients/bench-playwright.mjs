// Benchmark scenario for Playwright: connect over CDP to ENDPOINT, find the page at PAGE_URL,
// click, type, evaluate, take a screenshot, disconnect. Prints {"ms":[...]} with the wall time of
// each of RUNS runs (connect included).
import { chromium } from 'playwright-core';

const endpoint = process.env.ENDPOINT;
const pageURL = process.env.PAGE_URL;
const runs = Number(process.env.RUNS ?? 3);
const ms = [];
try {
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const browser = await chromium.connectOverCDP(endpoint);
    const page = browser.contexts().flatMap((c) => c.pages()).find((p) => p.url() === pageURL);
    if (!page) throw new Error(`no page at ${pageURL}`);
    await page.click('#clicker');
    await page.fill('#name', `bench ${i}`);
    const echoed = await page.evaluate(() => document.getElementById('echo').textContent);
    if (echoed !== `bench ${i}`) throw new Error(`typed text not seen: ${echoed}`);
    await page.screenshot();
    await browser.close();
    ms.push(performance.now() - t0);
  }
  console.log(JSON.stringify({ ms }));
} catch (e) {
  console.log(JSON.stringify({ ms, error: String(e?.stack ?? e) }));
  process.exit(1);
}
