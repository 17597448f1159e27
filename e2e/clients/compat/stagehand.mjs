// @ts-check
// Stagehand (@browserbasehq/stagehand v3) without a model: env LOCAL with
// localBrowserLaunchOptions.cdpUrl (plus cdpHeaders carrying the secret on tabrelay), driving
// pages with its deterministic page API (locator fill/click, evaluate, screenshot); act/extract/
// observe need a model and are not exercised.
import { Stagehand } from '@browserbasehq/stagehand';
import { env, S, runScenarios, expect, expectEq, waitFor, checkPNG, formResult, evalWant, title, clearForm, visible } from './harness.mjs';

/** @type {any} */
let sh = null;
async function conn() {
  if (!sh) {
    const s = new Stagehand({
      env: 'LOCAL',
      verbose: 0,
      disablePino: true,
      localBrowserLaunchOptions: {
        cdpUrl: env.ws,
        ...(env.token ? { cdpHeaders: { Authorization: `Bearer ${env.token}` } } : {}),
      },
    });
    await s.init();
    sh = s;
  }
  return sh;
}
async function userPage() {
  const s = await conn();
  const pages = s.context.pages();
  const p = pages.find((/** @type {any} */ x) => x.url().includes(env.marker));
  if (!p) throw new Error(`no page with ${env.marker} among ${pages.map((/** @type {any} */ x) => x.url())}`);
  return p;
}
async function reset() {
  const s = sh;
  sh = null;
  await s?.close();
}

await runScenarios([
  { name: 'connect: localBrowserLaunchOptions.cdpUrl', run: async (step) => {
    step('init');
    await conn();
  } },
  { name: S.find, run: async () => { await userPage(); } },
  { name: S.titleEval, run: async (step) => {
    const p = await userPage();
    step('title');
    expectEq(await p.title(), title, 'title');
    step('evaluate');
    expectEq(await p.evaluate("6 * 7 + ' ' + location.hostname"), evalWant, 'evaluate');
  } },
  { name: S.form, run: async (step) => {
    const p = await userPage();
    step('clear the form');
    await p.evaluate(clearForm);
    step('fill');
    await p.locator('input[name=name]').fill('Ada Lovelace');
    step('click');
    await p.locator('[data-testid=in-submit]').click();
    step('result');
    await waitFor(async () => String(await p.evaluate("document.getElementById('result').textContent")).startsWith(formResult), 'the form result');
  } },
  { name: S.screenshot, run: async (step) => {
    const p = await userPage();
    step('screenshot');
    checkPNG(await p.screenshot());
  } },
  { name: S.newPage, run: async (step) => {
    const s = await conn();
    await userPage();
    step('newPage');
    const np = await s.context.newPage(env.otherURL);
    await waitFor(async () => (await np.title()) === 'Other page', 'the new page loads');
    step('close');
    await np.close();
    step("the user's tab is still there");
    expect(!s.context.pages().includes(np), 'the closed page is still in context.pages()');
    expectEq(await (await userPage()).title(), title, "the user's tab after the close");
  } },
  { name: S.activeAgain, run: async () => {
    const p = await userPage();
    await waitFor(async () => (await p.evaluate(visible)) === 'visible', "the user's tab is the visible (active) tab again");
  } },
], reset);
