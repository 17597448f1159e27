// Benchmark reference: Playwright's own AI snapshot (page.ariaSnapshot({mode: 'ai'})) of the page at
// PAGE_URL, over ENDPOINT. Prints {"ms":[...],"text":"..."} (the last snapshot's text).
import { chromium } from 'playwright-core';

const endpoint = process.env.ENDPOINT;
const pageURL = process.env.PAGE_URL;
const runs = Number(process.env.RUNS ?? 3);
try {
  const browser = await chromium.connectOverCDP(endpoint);
  const page = browser.contexts().flatMap((c) => c.pages()).find((p) => p.url() === pageURL);
  if (!page) throw new Error(`no page at ${pageURL}`);
  const ms = [];
  let text = '';
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    text = await page.ariaSnapshot({ mode: 'ai', timeout: 0 }); // no time limit: on a loaded machine the 20k page takes more than the default 30 s
    ms.push(performance.now() - t0);
  }
  await browser.close();
  console.log(JSON.stringify({ ms, text }));
} catch (e) {
  console.log(JSON.stringify({ error: String(e?.stack ?? e) }));
  process.exit(1);
}
