// Playwright (playwright-core, connectOverCDP) drives one shared tab the short way a script
// does: evaluate, fill, click. Used on tabs other clients (the agent, a raw client) already
// use, where Playwright must still learn each frame's main world.
import { chromium } from 'playwright-core';
import { env, run } from './common.mjs';

await run(async (out, step) => {
  step('connect');
  const browser = await chromium.connectOverCDP(env.http, { headers: { Authorization: `Bearer ${env.token}` }, timeout: 30_000 });
  const ctx = browser.contexts()[0];

  step('find the shared page');
  const page = ctx.pages().find((p) => p.url().includes(env.marker));
  if (!page) throw new Error(`no page with ${env.marker} among ${ctx.pages().map((p) => p.url())}`);

  step('evaluate');
  out.evaluated = await page.evaluate(() => `${6 * 7} ${location.hostname}`);
  step('fill');
  await page.fill('#name', 'filled by playwright');
  out.echo = await page.textContent('#echo');
  step('click');
  await page.click('#clicker');
  out.clicked = await page.textContent('#out');

  step('disconnect');
  await browser.close();
  out.ok = true;
});
