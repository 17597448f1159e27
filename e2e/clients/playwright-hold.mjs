// Playwright (playwright-core, connectOverCDP) connects, evaluates in the shared page, stays
// connected for HOLD_MS without sending anything, and evaluates again: with the debugger on
// demand, a client that attaches to every page on connect keeps the tab attached meanwhile.
import { chromium } from 'playwright-core';
import { env, run } from './common.mjs';

await run(async (out, step) => {
  step('connect');
  const browser = await chromium.connectOverCDP(env.http, { headers: { Authorization: `Bearer ${env.token}` }, timeout: 30_000 });
  const page = browser.contexts()[0].pages().find((p) => p.url().includes(env.marker));
  if (!page) throw new Error(`no page with ${env.marker}`);
  step('evaluate');
  out.first = await page.evaluate(() => document.querySelector('h1')?.textContent ?? '');
  step('hold');
  await new Promise((resolve) => setTimeout(resolve, Number(process.env.HOLD_MS ?? 3000)));
  step('evaluate again');
  out.second = await page.evaluate(() => `${6 * 7}`);
  step('disconnect');
  await browser.close();
  out.ok = true;
});
