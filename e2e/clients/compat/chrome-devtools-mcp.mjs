// @ts-check
// chrome-devtools-mcp as its docs show: `--browserUrl <http URL>` and `--wsEndpoint <ws URL>`
// (with `--wsHeaders` carrying the secret on tabrelay), driven by an MCP client.
import { createRequire } from 'node:module';
import path from 'node:path';
import { env, S, runScenarios, expect, expectEq, waitFor, formResult, evalWant, title, mcpClient, lineWith, clearForm, visible } from './harness.mjs';

const require = createRequire(import.meta.url);
const bin = path.join(path.dirname(require.resolve('chrome-devtools-mcp/package.json')), 'build', 'src', 'bin', 'chrome-devtools-mcp.js');
const common = ['--no-usage-statistics', '--no-performance-crux'];

/** @type {Awaited<ReturnType<typeof mcpClient>> | null} */
let mcp = null;
/** The user's page id (this version's page tools take a pageId). */
let pageId = 0;
async function conn() {
  if (!mcp) {
    const args = ['--wsEndpoint', env.ws];
    if (env.token) args.push('--wsHeaders', JSON.stringify({ Authorization: `Bearer ${env.token}` }));
    mcp = await mcpClient(bin, [...args, ...common]);
  }
  return mcp;
}
async function reset() {
  const m = mcp;
  mcp = null;
  await m?.close();
}
async function selectUserPage() {
  const m = await conn();
  const list = (await m.call('list_pages')).text;
  const id = /(\d+):/.exec(lineWith(list, [env.marker]))?.[1];
  expect(id !== undefined, `no page id in ${list}`);
  pageId = Number(id);
  await m.call('select_page', { pageId });
  return m;
}
/** @param {Awaited<ReturnType<typeof mcpClient>>} m @param {string} fn */
async function evaluate(m, fn) {
  const t = (await m.call('evaluate_script', { function: fn, pageId })).text;
  const json = /```json\s*\n([\s\S]*?)\n```/.exec(t)?.[1];
  return json !== undefined ? JSON.parse(json) : t;
}

await runScenarios([
  { name: 'connect: --browserUrl', run: async (step) => {
    step('start the MCP server, list pages');
    const m = await mcpClient(bin, ['--browserUrl', env.token ? `${env.http}/?token=${encodeURIComponent(env.token)}` : env.http, ...common]);
    try {
      lineWith((await m.call('list_pages')).text, [env.marker]);
    } finally {
      await m.close();
    }
  } },
  { name: 'connect: --wsEndpoint', run: async (step) => {
    step('start the MCP server, list pages');
    const m = await conn();
    lineWith((await m.call('list_pages')).text, [env.marker]);
  } },
  { name: S.find, run: async () => { await selectUserPage(); } },
  { name: S.titleEval, run: async (step) => {
    const m = await selectUserPage();
    step('evaluate_script');
    expectEq(await evaluate(m, '() => document.title'), title, 'title');
    expectEq(await evaluate(m, "() => 6 * 7 + ' ' + location.hostname"), evalWant, 'evaluate');
  } },
  { name: S.form, run: async (step) => {
    const m = await selectUserPage();
    step('clear the form');
    await evaluate(m, `() => (${clearForm}, 'ok')`);
    step('take_snapshot');
    const snap = (await m.call('take_snapshot', { pageId })).text;
    const nameUid = /uid=([\w_]+)/.exec(lineWith(snap, ['textbox "Full name"']))?.[1];
    const submitUid = /uid=([\w_]+)/.exec(lineWith(snap, ['button "Create account"']))?.[1];
    expect(!!nameUid && !!submitUid, 'uids of the name field and the submit button');
    step('fill by uid');
    await m.call('fill', { uid: nameUid, value: 'Ada Lovelace', pageId });
    step('click by uid');
    await m.call('click', { uid: submitUid, pageId });
    step('result');
    await waitFor(async () => String(await evaluate(m, "() => document.getElementById('result').textContent")).startsWith(formResult), 'the form result');
  } },
  { name: S.screenshot, run: async (step) => {
    const m = await selectUserPage();
    step('take_screenshot');
    const r = await m.call('take_screenshot', { pageId });
    expect(r.content.some((c) => c.type === 'image' && c.data?.length > 1000), `no image in the answer: ${r.text.slice(0, 300)}`);
  } },
  { name: S.newPage, run: async (step) => {
    const m = await selectUserPage();
    step('new_page');
    const list = (await m.call('new_page', { url: env.otherURL })).text;
    const id = /(\d+):/.exec(lineWith(list, [`(${env.otherURL})`]))?.[1];
    step('close_page');
    await m.call('close_page', { pageId: Number(id) });
    step("the user's page is still listed");
    const after = (await m.call('list_pages')).text;
    lineWith(after, [env.marker]);
    expect(!after.includes(`(${env.otherURL})`), `the closed page is still listed: ${after}`);
  } },
  { name: S.activeAgain, run: async () => {
    const m = await selectUserPage();
    await waitFor(async () => (await evaluate(m, `() => ${visible}`)) === 'visible', "the user's tab is the visible (active) tab again");
  } },
], reset);
