// @ts-check
// agent-browser (its npm package ships the native CLI; no browser download) as its docs show:
// `agent-browser --cdp PORT <command>`. On tabrelay, where --cdp PORT cannot carry the secret,
// the other scenarios use `--cdp <ws URL>?token=…`. Each endpoint gets its own --session;
// `close` ends the session's daemon without closing a browser it connected to.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import os from 'node:os';
import fs from 'node:fs';
import { env, S, activeWaitMs, runScenarios, expect, expectEq, waitFor, formResult, evalWant, title, lineWith, clearForm, visible } from './harness.mjs';

const require = createRequire(import.meta.url);
const bin = path.join(path.dirname(require.resolve('agent-browser/package.json')), 'bin', `agent-browser-${process.platform}-${process.arch === 'x64' ? 'x64' : process.arch}`);
const session = `tabrelay-compat-${env.endpoint}-${process.pid}`;
const cdpArg = () => (env.token ? `${env.ws}?token=${encodeURIComponent(env.token)}` : env.port);

/** Runs one agent-browser command; rejects with its output on failure. @param {string[]} args @param {string} [cdp] */
function ab(args, cdp = cdpArg()) {
  return new Promise((resolve, reject) => {
    execFile(bin, ['--session', session, '--cdp', cdp, ...args], { timeout: env.timeoutMs, env: { ...process.env, AGENT_BROWSER_SESSION: session } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`agent-browser ${args.join(' ')}: ${(stderr || stdout || err.message).trim().slice(0, 500)}`));
      else resolve(stdout.trim());
    });
  });
}
async function reset() {
  await ab(['close']).catch(() => {});
}
async function selectUserTab() {
  const list = await ab(['tab', 'list']);
  const id = /\[(t\d+)\]/.exec(lineWith(list, [env.marker]))?.[1];
  expect(!!id, `no tab id in ${list}`);
  await ab(['tab', /** @type {string} */ (id)]);
}
/** @param {string} js */
const evaluate = async (js) => (await ab(['eval', js])).replace(/^"|"$/g, '');

if (!fs.existsSync(bin)) {
  const { notRunnable } = await import('./harness.mjs');
  notRunnable(['connect: --cdp PORT'], `the agent-browser package ships no binary for ${process.platform}-${process.arch}`);
}

await runScenarios([
  { refused: true, name: 'connect: --cdp PORT', run: async (step) => {
    step('tab list');
    lineWith(await ab(['--session', `${session}-port`, 'tab', 'list'], env.port), [env.marker]);
    await ab(['--session', `${session}-port`, 'close'], env.port).catch(() => {});
  } },
  { name: S.find, run: selectUserTab },
  { name: S.titleEval, run: async (step) => {
    await selectUserTab();
    step('get title');
    expectEq(await ab(['get', 'title']), title, 'title');
    step('eval');
    expectEq(await evaluate("6 * 7 + ' ' + location.hostname"), evalWant, 'evaluate');
  } },
  { name: S.form, run: async (step) => {
    await selectUserTab();
    step('clear the form');
    await evaluate(`(${clearForm}, 'ok')`);
    step('snapshot -i');
    const snap = await ab(['snapshot', '-i']);
    const nameRef = /\[ref=(\w+)\]/.exec(lineWith(snap, ['textbox "Full name"']))?.[1];
    const submitRef = /\[ref=(\w+)\]/.exec(lineWith(snap, ['button "Create account"']))?.[1];
    expect(!!nameRef && !!submitRef, 'refs of the name field and the submit button');
    step('fill @ref');
    await ab(['fill', `@${nameRef}`, 'Ada Lovelace']);
    // agent-browser's click does not scroll: it clicks the element's centre in page coordinates
    // even when that is below the viewport (the button of this long form is, in an 780×493
    // headless tab), and the click lands on <html> (seen the same on Chrome's own endpoint).
    // Its documented `scrollintoview` first, as an agent does for an element out of view.
    step('scrollintoview @ref');
    await ab(['scrollintoview', `@${submitRef}`]);
    step('click @ref');
    await ab(['click', `@${submitRef}`]);
    step('result');
    await waitFor(async () => (await evaluate("document.getElementById('result').textContent")).startsWith(formResult), 'the form result');
  } },
  { name: S.screenshot, run: async (step) => {
    await selectUserTab();
    step('screenshot');
    const file = path.join(os.tmpdir(), `${session}.png`);
    await ab(['screenshot', file]);
    const png = fs.readFileSync(file);
    fs.rmSync(file, { force: true });
    expect(png.length > 1000 && png[1] === 0x50, `not a PNG screenshot (${png.length} bytes)`);
  } },
  { name: S.newPage, run: async (step) => {
    await selectUserTab();
    step('tab new');
    await ab(['tab', 'new', env.otherURL]);
    const list = await ab(['tab', 'list']);
    const id = /\[(t\d+)\]/.exec(lineWith(list.split('\n').filter((l) => l.trimEnd().endsWith(`- ${env.otherURL}`)).join('\n'), [env.otherURL]))?.[1];
    step('tab close');
    await ab(['tab', 'close', /** @type {string} */ (id)]);
    step("the user's tab is still listed");
    const after = await ab(['tab', 'list']);
    lineWith(after, [env.marker]);
    expect(!after.split('\n').some((l) => l.trimEnd().endsWith(`- ${env.otherURL}`)), `the closed tab is still listed: ${after}`);
  } },
  { name: S.activeAgain, run: async () => {
    await selectUserTab();
    await waitFor(async () => (await evaluate(visible)) === 'visible', "the user's tab is the visible (active) tab again", activeWaitMs);
  } },
], reset);
