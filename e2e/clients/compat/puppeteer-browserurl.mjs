// @ts-check
// Puppeteer (puppeteer-core) as its docs show for a browser started with a debugging port:
// puppeteer.connect({ browserURL }), with no headers and no secret. tabrelay lets it in when it
// runs with --trust-same-user (the compatibility suite checks the 401 without it).
import puppeteer from 'puppeteer-core';
import { env, S, runScenarios, expect, expectEq, evalExpr, evalWant, title } from './harness.mjs';

/** @type {import('puppeteer-core').Browser | null} */
let browser = null;

async function conn() {
  if (!browser) browser = await puppeteer.connect({ browserURL: env.http, defaultViewport: null, protocolTimeout: env.timeoutMs });
  return browser;
}
async function userPage() {
  const pages = await (await conn()).pages();
  const page = pages.find((p) => p.url().includes(env.marker));
  if (!page) throw new Error(`no page with ${env.marker} among ${pages.map((p) => p.url())}`);
  return page;
}

await runScenarios([
  { name: 'connect: browserURL, no secret', run: async (step) => {
    step('connect');
    const b = await conn();
    step('version');
    expect((await b.version()).includes('/'), 'browser.version()');
  } },
  { name: S.find, run: async () => { await userPage(); } },
  { name: S.titleEval, run: async (step) => {
    const p = await userPage();
    step('title');
    expectEq(await p.title(), title, 'title');
    step('evaluate');
    expectEq(await p.evaluate(evalExpr), evalWant, 'evaluate');
  } },
], async () => {
  const b = browser;
  browser = null;
  await b?.disconnect();
});
