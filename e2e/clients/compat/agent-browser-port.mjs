// @ts-check
// agent-browser as its docs show for a browser with a debugging port: `agent-browser --cdp PORT
// <command>`, which sends no secret. tabrelay lets it in when it runs with --trust-same-user (the
// compatibility suite checks the 401 without it). `close` ends the session's daemon without
// closing the browser it connected to.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import fs from 'node:fs';
import { env, S, runScenarios, expect, expectEq, evalWant, title, lineWith, notRunnable } from './harness.mjs';

const require = createRequire(import.meta.url);
const bin = path.join(path.dirname(require.resolve('agent-browser/package.json')), 'bin', `agent-browser-${process.platform}-${process.arch === 'x64' ? 'x64' : process.arch}`);
const session = `tabrelay-compat-port${env.endpoint}-${process.pid}`;

/** Runs one agent-browser command with --cdp PORT; rejects with its output on failure. @param {string[]} args */
function ab(args) {
  return new Promise((resolve, reject) => {
    execFile(bin, ['--session', session, '--cdp', env.port, ...args], { timeout: env.timeoutMs, env: { ...process.env, AGENT_BROWSER_SESSION: session } }, (err, stdout, stderr) => {
      if (err) reject(new Error(`agent-browser ${args.join(' ')}: ${(stderr || stdout || err.message).trim().slice(0, 500)}`));
      else resolve(stdout.trim());
    });
  });
}
async function selectUserTab() {
  const list = await ab(['tab', 'list']);
  const id = /\[(t\d+)\]/.exec(lineWith(list, [env.marker]))?.[1];
  expect(!!id, `no tab id in ${list}`);
  await ab(['tab', /** @type {string} */ (id)]);
}

if (!fs.existsSync(bin)) notRunnable(['connect: --cdp PORT, no secret'], `the agent-browser package ships no binary for ${process.platform}-${process.arch}`);

await runScenarios([
  { name: 'connect: --cdp PORT, no secret', run: async (step) => {
    step('tab list');
    lineWith(await ab(['tab', 'list']), [env.marker]);
  } },
  { name: S.titleEval, run: async (step) => {
    await selectUserTab();
    step('get title');
    expectEq(await ab(['get', 'title']), title, 'title');
    step('eval');
    expectEq((await ab(['eval', "6 * 7 + ' ' + location.hostname"])).replace(/^"|"$/g, ''), evalWant, 'evaluate');
  } },
], async () => { await ab(['close']).catch(() => {}); });
