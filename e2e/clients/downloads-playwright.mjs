// Playwright (connectOverCDP) downloads a file from a shared tab the way its docs show:
// page.waitForEvent('download') around the click, then download.path() and the bytes.
// Prints the file's name, size and SHA-256 for the Go test to compare with what was served.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { chromium } from 'playwright-core';
import { env, run } from './common.mjs';

await run(async (out, step) => {
  step('connect');
  const browser = await chromium.connectOverCDP(env.http, { headers: { Authorization: `Bearer ${env.token}` }, timeout: 30_000 });
  const ctx = browser.contexts()[0];

  step('find the shared page');
  const page = ctx.pages().find((p) => p.url() === process.env.PAGE_URL);
  if (!page) throw new Error(`no page at ${process.env.PAGE_URL} among ${ctx.pages().map((p) => p.url())}`);

  step('download');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#invoice')]);
  out.suggestedFilename = download.suggestedFilename();
  out.url = download.url();
  step('download.path()');
  const path = await download.path();
  out.failure = await download.failure();
  const bytes = await readFile(path);
  out.size = bytes.length;
  out.sha256 = createHash('sha256').update(bytes).digest('hex');

  step('disconnect');
  await browser.close();
  out.ok = true;
});
