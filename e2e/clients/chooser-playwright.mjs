// Playwright (playwright-core, connectOverCDP) connects while no tab is shared, then waits for
// the tab the person picks in tabrelay's tab chooser, and drives it. Never launches a browser.
import { writeFileSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { env, run } from './common.mjs';

await run(async (out, step) => {
  step('connect');
  const browser = await chromium.connectOverCDP(env.http, { headers: { Authorization: `Bearer ${env.token}` }, timeout: 30_000 });
  const ctx = browser.contexts()[0];
  if (!ctx) throw new Error('no browser context');
  out.pagesAtConnect = ctx.pages().length;
  console.error('connected; waiting for the chosen tab');
  // the test picks a tab only once Playwright has connected (a pick during the connection would
  // be among the pages it found)
  if (process.env.READY_FILE) writeFileSync(process.env.READY_FILE, 'connected');

  step('wait for the chosen tab');
  const page = ctx.pages().find((p) => p.url().includes(env.marker))
    ?? await ctx.waitForEvent('page', { predicate: (p) => p.url().includes(env.marker), timeout: 60_000 });
  out.title = await page.title();
  out.client = await page.evaluate(() => new URL(location.href).searchParams.get('client'));
  await browser.close();
});
