// @ts-check
// Drives tabrelay's MCP server with the official TypeScript SDK client, over streamable HTTP
// (MCP_TRANSPORT=http: TABRELAY_HTTP/mcp with the secret as a Bearer header) or stdio
// (MCP_TRANSPORT=stdio: spawns `TABRELAY_BIN mcp --addr TABRELAY_ADDR --home TABRELAY_HOME`).
// Prints one JSON object: what it saw.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const env = process.env;

/** @param {any} res */
const text = (res) => (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

/**
 * @param {string} snap
 * @param {string} role
 * @param {string} name
 */
function ref(snap, role, name) {
  const esc = (role + ' "' + name + '"').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = snap.match(new RegExp(esc + '[^\\n]*\\[ref=(e\\d+)\\]'));
  if (!m) throw new Error(`no ${role} "${name}" in the snapshot:\n${snap}`);
  return m[1];
}

async function main() {
  const transport = env.MCP_TRANSPORT === 'stdio'
    ? new StdioClientTransport({
      command: /** @type {string} */ (env.TABRELAY_BIN),
      args: ['mcp', '--addr', /** @type {string} */ (env.TABRELAY_ADDR), '--home', /** @type {string} */ (env.TABRELAY_HOME)],
      stderr: 'inherit',
    })
    : new StreamableHTTPClientTransport(new URL(env.TABRELAY_HTTP + '/mcp'), {
      requestInit: { headers: { Authorization: 'Bearer ' + env.TABRELAY_TOKEN } },
    });
  const client = new Client({ name: 'e2e-ts', version: '1.0.0' });
  await client.connect(transport);
  const out = {};
  try {
    /**
     * @param {string} name
     * @param {Record<string, unknown>} [args]
     */
    const call = async (name, args = {}) => {
      const res = await client.callTool({ name, arguments: args });
      if (res.isError) throw new Error(`${name}: ${text(res)}`);
      return res;
    };
    const list = await client.listTools();
    out.tools = list.tools.length;
    out.listTokens = Math.round(JSON.stringify(list).length / 4);

    await call('switch_tab', { tab: env.FORM_TAB });
    const snap = text(await call('snapshot'));
    const who = 'Grace ' + env.MCP_TRANSPORT; // a new greeting on each run, to show as a change
    await call('type', { ref: ref(snap, 'textbox', 'Name'), text: who });
    // "Greet", not the form's "Send": the safety gate asks before an outside model clicks Send
    const after = text(await call('click', { ref: ref(snap, 'button', 'Greet') }));
    out.greeting = after.includes('Hello, ' + who);
    out.console = text(await call('console')).includes('submitted ' + who);
    const shot = await call('screenshot');
    out.image = /** @type {any} */ (shot.content)[0].mimeType;

    await call('switch_tab', { tab: env.CONTACTS_TAB });
    await call('navigate', { url: env.CONTACTS_URL });
    const skill = text(await call('run_skill', { name: 'site-search', params: { query: 'Turing' } }));
    out.skill = skill.includes('succeeded') && text(await call('snapshot')).includes('Results for Turing');

    await call('switch_tab', { tab: env.FORM_TAB });
    let progress = 0;
    const task = await client.callTool({ name: 'run_task', arguments: { goal: 'say done' } }, undefined, {
      onprogress: () => { progress++; },
      timeout: 120000,
    });
    out.progress = progress;
    const answer = text(task).match(/Answer: (.*)/);
    out.answer = answer ? answer[1] : text(task);
  } finally {
    await client.close();
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.stack || e) }));
  process.exit(1);
});
