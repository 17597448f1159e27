// Puppeteer downloads a file from a shared tab the way its docs show: connect with
// downloadBehavior {policy: 'allow', downloadPath}, click, and wait for the file to appear there
// under its suggested name. Prints its size and SHA-256 for the Go test to compare.
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import puppeteer from 'puppeteer-core';
import { env, run } from './common.mjs';

await run(async (out, step) => {
  const dir = process.env.DOWNLOAD_DIR ?? '';
  const name = process.env.DOWNLOAD_NAME ?? '';
  step('connect');
  const browser = await puppeteer.connect({
    browserWSEndpoint: `${env.cdp}?token=${encodeURIComponent(env.token)}`,
    defaultViewport: null,
    protocolTimeout: 30_000,
    downloadBehavior: { policy: 'allow', downloadPath: dir },
  });

  step('find the shared page');
  const pages = await browser.pages();
  const page = pages.find((p) => p.url() === process.env.PAGE_URL);
  if (!page) throw new Error(`no page at ${process.env.PAGE_URL} among ${pages.map((p) => p.url())}`);

  step('click the link');
  await page.click('#invoice');

  step('wait for the file');
  for (;;) {
    const files = await readdir(dir);
    if (files.includes(name)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  out.files = await readdir(dir);
  const bytes = await readFile(join(dir, name));
  out.size = bytes.length;
  out.sha256 = createHash('sha256').update(bytes).digest('hex');

  step('disconnect');
  await browser.disconnect();
  out.ok = true;
});
