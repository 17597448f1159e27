// @ts-check
// Puppeteer (puppeteer-core) as its docs show: connect({browserURL, headers}) and
// connect({browserWSEndpoint}), with defaultViewport: null so the user's window keeps its size.
import puppeteer from 'puppeteer-core';
import { env, S, activeWaitMs, runScenarios, expect, expectEq, waitFor, checkPNG, formResult, evalExpr, evalWant, title, clearForm, visible } from './harness.mjs';

/** @type {import('puppeteer-core').Browser | null} */
let browser = null;
/** @type {import('puppeteer-core').Page | null} */
let page = null;

const wsEndpoint = () => (env.token ? `${env.ws}?token=${encodeURIComponent(env.token)}` : env.ws);
const headers = () => (env.token ? { Authorization: `Bearer ${env.token}` } : undefined);

async function conn() {
  if (!browser) browser = await puppeteer.connect({ browserWSEndpoint: wsEndpoint(), headers: headers(), defaultViewport: null, protocolTimeout: env.timeoutMs });
  return browser;
}
async function userPage() {
  if (page && !page.isClosed()) return page;
  const pages = await (await conn()).pages();
  page = pages.find((p) => p.url().includes(env.marker)) ?? null;
  if (!page) throw new Error(`no page with ${env.marker} among ${pages.map((p) => p.url())}`);
  return page;
}
async function reset() {
  const b = browser;
  browser = null;
  page = null;
  await b?.disconnect();
}

await runScenarios([
  { refused: true, name: 'connect: browserURL + headers', run: async (step) => {
    step('connect');
    const b = await puppeteer.connect({ browserURL: env.http, headers: headers(), defaultViewport: null, protocolTimeout: env.timeoutMs });
    step('version');
    expect((await b.version()).includes('/'), 'browser.version()');
    await b.disconnect();
  } },
  { name: 'connect: browserWSEndpoint', run: async (step) => {
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
  { name: S.form, run: async (step) => {
    const p = await userPage();
    step('clear the result');
    await p.evaluate(clearForm);
    step('type');
    await p.locator('input[name=name]').fill('Ada Lovelace');
    step('click');
    await p.click('[data-testid=in-submit]');
    step('result');
    await p.waitForFunction((want) => document.getElementById('result')?.textContent?.includes(want), { timeout: 8000 }, formResult);
  } },
  { name: S.screenshot, run: async (step) => {
    const p = await userPage();
    step('screenshot');
    checkPNG(await p.screenshot());
  } },
  { name: S.newPage, run: async (step) => {
    const b = await conn();
    const p = await userPage();
    step('newPage');
    const np = await b.newPage();
    step('goto');
    await np.goto(env.otherURL);
    expectEq(await np.title(), 'Other page', 'new page title');
    step('close');
    await np.close();
    step('pages after close');
    await waitFor(async () => !(await b.pages()).includes(np), 'the closed page is gone from browser.pages()');
    expect((await b.pages()).includes(p), "the user's tab is still among browser.pages()");
    step("the user's tab is still there");
    expectEq(await p.title(), title, "the user's tab after the close");
  } },
  { name: S.activeAgain, run: async () => {
    const p = await userPage();
    await waitFor(async () => (await p.evaluate(visible)) === 'visible', "the user's tab is the visible (active) tab again", activeWaitMs);
  } },
  { name: S.browserContext, refused: true, run: async (step) => {
    const b = await conn();
    step('createBrowserContext');
    const ctx = await b.createBrowserContext();
    step('newPage in it');
    const np = await ctx.newPage();
    await np.goto(env.otherURL);
    expectEq(await np.title(), 'Other page', 'title in the new context');
    step('close the context');
    await ctx.close();
  } },
  { name: S.closeUserTab, refused: true, run: async (step) => {
    const b = await conn();
    const p = await userPage();
    step('page.close');
    await p.close();
    step('gone');
    await waitFor(async () => !(await b.pages()).some((x) => x.url().includes(env.marker)), "the user's tab is gone");
  }, afterRefusal: async () => {
    page = null;
    const p = await userPage();
    expectEq(await p.title(), title, "the user's tab after the refusal");
  } },
], reset);
