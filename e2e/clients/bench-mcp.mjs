// @ts-check
// Benchmark: one MCP server driven through a fixed 10-step flow on the fixture site, with the
// official TypeScript SDK client over stdio (the same client for every server). SERVER names the
// server's dialect (tabrelay, playwright or devtools); MCP_COMMAND is its command line as a JSON
// array; FLOW_URL is the flow's first page (flow.html), already open in a shared tab; FLOW_TAB
// is that tab's target id (tabrelay's switch_tab); RUNS is how many times to run the flow on one
// connection. Prints one JSON object: the tools/list size, and per run the wall time and the
// tokens (characters / 4) of each step's result.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const env = process.env;
const server = /** @type {'tabrelay' | 'playwright' | 'devtools'} */ (env.SERVER);
const flowURL = /** @type {string} */ (env.FLOW_URL);
const origin = new URL(flowURL).origin; // the shared tab may be on any page of the site
const runs = Number(env.RUNS ?? 1);
const who = 'Ada Lovelace';
/** chrome-devtools-mcp's id of the shared page. */
let pageId = 0;

/** The characters of a tool result a model reads: text as it is, anything else as JSON. @param {any} res */
const size = (res) => (res.content ?? []).reduce((/** @type {number} */ n, /** @type {any} */ c) => n + (c.type === 'text' ? c.text.length : JSON.stringify(c).length), 0);
/** @param {any} res */
const text = (res) => (res.content ?? []).filter((/** @type {any} */ c) => c.type === 'text').map((/** @type {any} */ c) => c.text).join('\n');

/**
 * The element reference on the snapshot line with role and a name starting with name, in the
 * server's syntax ([ref=e12] or uid=1_5).
 * @param {string} snap @param {string} role @param {string} name
 */
function ref(snap, role, name) {
  const re = server === 'devtools' ? /uid=([\w_]+)/ : /\[ref=([\w-]+)\]/;
  // an outline line, not a header line that names the element too (tabrelay's page summary)
  const line = snap.split('\n').find((l) => l.includes(`${role} "${name}`) && re.test(l));
  const m = line && re.exec(line);
  if (!m) throw new Error(`no ${role} "${name}…" with a ref in the snapshot:\n${snap.slice(0, 3000)}`);
  return m[1];
}

/**
 * The flow's steps in each server's tools. Each step returns [tool, arguments]; snap is the
 * text of the last snapshot step.
 * @type {Record<string, Record<string, (snap: string, extra: any) => [string, Record<string, unknown>]>>}
 */
const dialects = {
  tabrelay: {
    open: () => ['navigate', { url: flowURL }],
    snapshot: () => ['snapshot', {}],
    fill: (s) => ['fill', { fields: [
      { ref: ref(s, 'textbox', 'Full name'), value: who },
      { ref: ref(s, 'textbox', 'Email'), value: 'ada@example.com' },
      { ref: ref(s, 'combobox', 'Plan'), value: 'Member' },
      { ref: ref(s, 'checkbox', 'Send me'), value: 'true' },
    ] }],
    click: (s, [role, name]) => ['click', { ref: ref(s, role, name) }],
    wait: (_, t) => ['wait', { text: t }],
    type: (s, [role, name, t]) => ['type', { ref: ref(s, role, name), text: t }],
  },
  playwright: {
    open: () => ['browser_navigate', { url: flowURL }],
    snapshot: () => ['browser_snapshot', {}],
    fill: (s) => ['browser_fill_form', { fields: [
      { name: 'Full name', type: 'textbox', target: ref(s, 'textbox', 'Full name'), value: who },
      { name: 'Email', type: 'textbox', target: ref(s, 'textbox', 'Email'), value: 'ada@example.com' },
      { name: 'Plan', type: 'combobox', target: ref(s, 'combobox', 'Plan'), value: 'Member' },
      { name: 'Send me the monthly letter', type: 'checkbox', target: ref(s, 'checkbox', 'Send me'), value: 'true' },
    ] }],
    click: (s, [role, name]) => ['browser_click', { element: name, target: ref(s, role, name) }],
    wait: (_, t) => ['browser_wait_for', { text: t }],
    type: (s, [role, name, t]) => ['browser_type', { element: name, target: ref(s, role, name), text: t }],
  },
  devtools: { // this version's page tools take the page's id
    open: () => ['navigate_page', { pageId, type: 'url', url: flowURL }],
    snapshot: () => ['take_snapshot', { pageId }],
    fill: (s) => ['fill_form', { pageId, elements: [
      { uid: ref(s, 'textbox', 'Full name'), value: who },
      { uid: ref(s, 'textbox', 'Email'), value: 'ada@example.com' },
      { uid: ref(s, 'combobox', 'Plan'), value: 'Member' },
      { uid: ref(s, 'checkbox', 'Send me'), value: 'true' },
    ] }],
    click: (s, [role, name]) => ['click', { pageId, uid: ref(s, role, name) }],
    wait: (_, t) => ['wait_for', { pageId, text: [t] }],
    type: (s, [role, name, t]) => ['fill', { pageId, uid: ref(s, role, name), value: t }],
  },
};

/** The fixed flow: [step name, dialect step, its extra argument]. */
const flow = /** @type {const} */ ([
  ['open the page', 'open', null],
  ['snapshot', 'snapshot', null],
  ['fill the form (4 fields)', 'fill', null],
  ['submit', 'click', ['button', 'Join']],
  ['read the result', 'wait', `Welcome, ${who} (Member, letter)`],
  ['follow a link', 'click', ['link', 'Contacts']],
  ['snapshot the new page', 'snapshot', null],
  ['type a search', 'type', ['searchbox', 'Search contacts', 'Turing']],
  ['submit the search', 'click', ['button', 'Search']],
  ['read the results', 'wait', 'Results for Turing'],
]);

async function main() {
  const [command, ...args] = JSON.parse(/** @type {string} */ (env.MCP_COMMAND));
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr = (stderr + d).slice(-2000); });
  const client = new Client({ name: 'tabrelay-bench', version: '1' });
  const out = /** @type {any} */ ({ runs: [] });
  try {
    await client.connect(transport);
    /** @param {string} name @param {Record<string, unknown>} a */
    const call = async (name, a) => {
      const res = await client.callTool({ name, arguments: a }, undefined, { timeout: 60000 });
      if (res.isError) throw new Error(`${name} ${JSON.stringify(a)}: ${text(res).slice(0, 1500)}`);
      return res;
    };
    const list = await client.listTools();
    out.tools = list.tools.length;
    out.listTokens = Math.round(JSON.stringify(list).length / 4);

    // choose the shared tab (not part of the flow)
    if (server === 'tabrelay') {
      await call('switch_tab', { tab: env.FLOW_TAB });
    } else if (server === 'playwright') {
      const tabs = text(await call('browser_tabs', { action: 'list' }));
      const idx = /(\d+):/.exec(tabs.split('\n').find((l) => l.includes(origin)) ?? '')?.[1];
      if (idx === undefined) throw new Error(`no tab on ${origin} in:\n${tabs}`);
      await call('browser_tabs', { action: 'select', index: Number(idx) });
    } else {
      const pages = text(await call('list_pages', {}));
      const id = /(\d+):/.exec(pages.split('\n').find((l) => l.includes(origin)) ?? '')?.[1];
      if (id === undefined) throw new Error(`no page on ${origin} in:\n${pages}`);
      pageId = Number(id);
      await call('select_page', { pageId });
    }

    const d = dialects[server];
    for (let r = 0; r < runs; r++) {
      const steps = [];
      let snap = '';
      const t0 = performance.now();
      for (const [label, kind, extra] of flow) {
        const [tool, a] = d[kind](snap, extra);
        const res = await call(tool, a);
        if (kind === 'snapshot') snap = text(res);
        steps.push({ step: label, tool, tokens: Math.round(size(res) / 4), ...(env.BENCH_DUMP ? { text: text(res) } : {}) });
      }
      const ms = performance.now() - t0;
      out.runs.push({ ms, tokens: steps.reduce((n, s) => n + s.tokens, 0), steps });
    }
  } catch (e) {
    out.error = String(/** @type {any} */ (e)?.stack ?? e) + (stderr ? `\nserver stderr: ${stderr}` : '');
  } finally {
    await client.close().catch(() => {});
  }
  console.log(JSON.stringify(out));
  if (out.error) process.exitCode = 1;
}

main();
