// @ts-check
// Playwright (playwright-core) as its docs show: chromium.connectOverCDP(http URL). On tabrelay
// the URL carries the secret as the README shows (http://HOST:PORT/?token=…).
import { chromium } from 'playwright-core';
import { env, S, runScenarios, expect, expectEq, waitFor, checkPNG, formResult, evalExpr, evalWant, title, agentSnapshot, clearForm, visible } from './harness.mjs';

/** @type {import('playwright-core').Browser | null} */
let browser = null;

const endpointURL = () => (env.token ? `${env.http}/?token=${encodeURIComponent(env.token)}` : env.http);

async function conn() {
  if (!browser) browser = await chromium.connectOverCDP(endpointURL(), { timeout: env.timeoutMs });
  return browser;
}
async function userPage() {
  const ctx = (await conn()).contexts()[0];
  const page = ctx.pages().find((p) => p.url().includes(env.marker));
  if (!page) throw new Error(`no page with ${env.marker} among ${ctx.pages().map((p) => p.url())}`);
  return page;
}
async function reset() {
  const b = browser;
  browser = null;
  await b?.close();
}

/** @param {import('playwright-core').Page} p @param {(s: string) => void} step */
async function fillAndSubmit(p, step) {
  step('clear the result');
  await p.evaluate(clearForm);
  step('fill');
  await p.fill('input[name=name]', 'Ada Lovelace', { timeout: 8000 });
  step('click');
  await p.click('[data-testid=in-submit]', { timeout: 8000 });
  step('result');
  await p.waitForFunction((want) => document.getElementById('result')?.textContent?.includes(want), formResult, { timeout: 8000 });
}

await runScenarios([
  { name: 'connect: connectOverCDP(http URL)', run: async (step) => {
    step('connectOverCDP');
    const b = await conn();
    expect(/^\d+\./.test(b.version()), `browser.version() = ${b.version()}`);
  } },
  { name: S.find, run: async () => { await userPage(); } },
  { name: S.titleEval, run: async (step) => {
    const p = await userPage();
    step('title');
    expectEq(await p.title(), title, 'title');
    step('evaluate');
    expectEq(await p.evaluate(evalExpr), evalWant, 'evaluate');
  } },
  { name: S.form, run: async (step) => { await fillAndSubmit(await userPage(), step); } },
  { name: S.screenshot, run: async (step) => {
    const p = await userPage();
    step('screenshot');
    checkPNG(await p.screenshot({ timeout: 10_000 }));
  } },
  { name: S.newPage, run: async (step) => {
    const b = await conn();
    const p = await userPage();
    step('newPage');
    const np = await b.contexts()[0].newPage();
    step('goto');
    await np.goto(env.otherURL);
    expectEq(await np.title(), 'Other page', 'new page title');
    step('close');
    await np.close();
    expect(!b.contexts()[0].pages().includes(np), 'the closed page is still in context.pages()');
    step("the user's tab is still there");
    expectEq(await p.title(), title, "the user's tab after the close");
  } },
  { name: S.activeAgain, run: async () => {
    const p = await userPage();
    await waitFor(async () => (await p.evaluate(visible)) === 'visible', "the user's tab is the visible (active) tab again");
  } },
  { name: S.afterAgent, run: async (step) => {
    step('disconnect');
    await reset();
    step("the agent's snapshot");
    await agentSnapshot();
    step('connectOverCDP');
    const p = await userPage();
    step('evaluate');
    expectEq(await p.evaluate(evalExpr), evalWant, 'evaluate');
    await fillAndSubmit(p, step);
  } },
  { name: S.browserContext, refused: true, run: async (step) => {
    const b = await conn();
    step('newContext');
    const ctx = await b.newContext();
    step('newPage in it');
    const np = await ctx.newPage();
    await np.goto(env.otherURL);
    expectEq(await np.title(), 'Other page', 'title in the new context');
    step('close the context');
    await ctx.close();
  } },
], reset);
