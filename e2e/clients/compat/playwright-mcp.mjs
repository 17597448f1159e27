// @ts-check
// Playwright MCP (@playwright/mcp) as its docs show: `--cdp-endpoint <http URL>` (the README's URL
// with ?token= on tabrelay), driven by an MCP client: tabs, snapshot, click and type by ref.
import { createRequire } from 'node:module';
import path from 'node:path';
import { env, S, runScenarios, expect, expectEq, waitFor, formResult, evalWant, title, mcpClient, lineWith, agentSnapshot, clearForm, visible } from './harness.mjs';

const require = createRequire(import.meta.url);
const cli = path.join(path.dirname(require.resolve('@playwright/mcp/package.json')), 'cli.js');
const endpointURL = () => (env.token ? `${env.http}/?token=${encodeURIComponent(env.token)}` : env.http);

/** @type {Awaited<ReturnType<typeof mcpClient>> | null} */
let mcp = null;
async function conn() {
  if (!mcp) mcp = await mcpClient(cli, ['--cdp-endpoint', endpointURL(), '--cdp-timeout', String(env.timeoutMs), '--executable-path', env.chromePath]);
  return mcp;
}
async function reset() {
  const m = mcp;
  mcp = null;
  await m?.close();
}
/** Selects the user's tab; returns the tab list. */
async function selectUserTab() {
  const m = await conn();
  const list = (await m.call('browser_tabs', { action: 'list' })).text;
  const idx = /(\d+):/.exec(lineWith(list, [env.marker]))?.[1];
  expect(idx !== undefined, `no tab index in ${list}`);
  await m.call('browser_tabs', { action: 'select', index: Number(idx) });
  return m;
}
/** @param {Awaited<ReturnType<typeof mcpClient>>} m @param {string} fn */
async function evaluate(m, fn) {
  const t = (await m.call('browser_evaluate', { function: fn })).text;
  const res = /### Result\s*\n([^\n]*)/.exec(t)?.[1] ?? t;
  return res.trim().replace(/^"|"$/g, '');
}
/** Fills the name by ref and clicks "Create account" by ref, from a fresh snapshot. @param {(s: string) => void} step */
async function formByRef(step) {
  const m = await selectUserTab();
  step('clear the form');
  await evaluate(m, `() => (${clearForm}, 'ok')`);
  step('browser_snapshot');
  const snap = (await m.call('browser_snapshot')).text;
  const nameRef = /\[ref=([\w-]+)\]/.exec(lineWith(snap, ['textbox "Full name"']))?.[1];
  const submitRef = /\[ref=([\w-]+)\]/.exec(lineWith(snap, ['button "Create account"']))?.[1];
  expect(!!nameRef && !!submitRef, 'refs of the name field and the submit button');
  step('browser_type by ref');
  await m.call('browser_type', { element: 'Full name', target: nameRef, text: 'Ada Lovelace' });
  step('browser_click by ref');
  await m.call('browser_click', { element: 'Create account', target: submitRef });
  step('result');
  await waitFor(async () => (await evaluate(m, "() => document.getElementById('result').textContent")).startsWith(formResult), 'the form result');
}

await runScenarios([
  { name: 'connect: --cdp-endpoint (http URL)', run: async (step) => {
    step('start the MCP server, list tabs');
    const m = await conn();
    lineWith((await m.call('browser_tabs', { action: 'list' })).text, [env.marker]);
  } },
  { name: S.find, run: async () => { await selectUserTab(); } },
  { name: S.titleEval, run: async (step) => {
    const m = await selectUserTab();
    step('browser_evaluate');
    expectEq(await evaluate(m, '() => document.title'), title, 'title');
    expectEq(await evaluate(m, "() => 6 * 7 + ' ' + location.hostname"), evalWant, 'evaluate');
  } },
  { name: S.form, run: formByRef },
  { name: S.screenshot, run: async (step) => {
    const m = await selectUserTab();
    step('browser_take_screenshot');
    const r = await m.call('browser_take_screenshot', {});
    expect(r.content.some((c) => c.type === 'image' && c.data?.length > 1000), `no image in the answer: ${r.text.slice(0, 300)}`);
  } },
  { name: S.newPage, run: async (step) => {
    const m = await selectUserTab();
    step('browser_tabs new');
    await m.call('browser_tabs', { action: 'new' });
    step('browser_navigate');
    await m.call('browser_navigate', { url: env.otherURL });
    const list = (await m.call('browser_tabs', { action: 'list' })).text;
    const idx = /(\d+):/.exec(lineWith(list, [`(${env.otherURL})`]))?.[1];
    step('browser_tabs close');
    await m.call('browser_tabs', { action: 'close', index: Number(idx) });
    step("the user's tab is still listed");
    const after = (await m.call('browser_tabs', { action: 'list' })).text;
    lineWith(after, [env.marker]);
    expect(!after.includes(`(${env.otherURL})`), `the closed tab is still listed: ${after}`);
  } },
  { name: S.activeAgain, run: async () => {
    const m = await selectUserTab();
    await waitFor(async () => (await evaluate(m, `() => ${visible}`)) === 'visible', "the user's tab is the visible (active) tab again");
  } },
  { name: S.afterAgent, run: async (step) => {
    step('stop the MCP server');
    await reset();
    step("the agent's snapshot");
    await agentSnapshot();
    step('a new MCP server');
    await formByRef(step);
  } },
], reset);
