// @ts-check
// What an utterance means in the conversation with a task, what the panel says for a waiting
// task, and what it says for an answer: pure functions of the task and the text (no DOM, no
// network), so they are tested as a table (converse_test.go runs them in node).
//
// The spoken answers here match the offline grammar's (agent/voice/grammar.go: approveWords,
// declineWords, continueWords, ordinalWords): keep the lists alike. This side accepts a few
// more phrasings, which other recognisers (Chrome's, a cloud endpoint) may give.

/**
 * The task as the panel holds it (state.task), with the conversation fields the server sends.
 * @typedef {{id: string, status: string, steps?: {id: string, tool?: string, args?: any, confirmation?: {prompt: string, reason?: string, approved?: boolean}}[],
 *   question?: {id: string, text: string, choices?: string[]}|null, handover?: {id: string, instruction: string}|null}} ConverseTask
 */

/**
 * What to do with an utterance.
 * @typedef {{kind: 'command', text: string}
 *   | {kind: 'confirm', taskId: string, stepId: string, approve: boolean}
 *   | {kind: 'answer', taskId: string, questionId: string, answer: string}
 *   | {kind: 'continue', taskId: string, handoverId: string}
 *   | {kind: 'stop', taskId: string}
 *   | {kind: 'again', taskId: string, say: string}
 *   | {kind: 'quiet'}} Decision
 * command: a new request, as typed; confirm/answer/continue: answers what the task waits for;
 * stop: stops the task; again: the task waits for an answer this was not (say asks again; no
 * task is started); quiet: "stop" with nothing running (the panel only stops speaking).
 */

export const APPROVE = ['yes', 'yeah', 'yep', 'yup', 'ok', 'okay', 'sure', 'approve', 'approved', 'confirm', 'confirmed', 'go ahead', 'do it', 'proceed', 'of course', 'alright', 'all right'];
export const DECLINE = ['no', 'nope', 'nah', 'cancel', 'reject', 'decline', 'refuse', 'deny', "don't", 'do not', "don't do it", 'do not do it'];
export const CONTINUE = ['continue', 'done', "i'm done", 'i am done', 'finished', "i've finished", 'i have finished', "i'm finished", 'ready', 'go on', 'carry on', 'ok', 'okay', 'all done', 'resume'];
const STOP = ['stop', 'stop it', 'stop that', 'stop the task', 'stop this', 'abort', 'halt', 'never mind', 'cancel the task', 'cancel it', 'cancel that', 'cancel everything', 'stop everything'];
const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];
const NUMBERS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
/** words that carry no answer at either end of an utterance */
const FILLERS = new Set(['please', 'um', 'uh', 'erm', 'oh', 'well', 'so', 'thanks', 'thank', 'you', 'and', 'hey', 'just']);

/** @param {string} s */
export function normalize(s) {
  const words = String(s || '').toLowerCase().replace(/[’`]/g, "'").replace(/&/g, ' and ').replace(/[^\p{L}\p{N}' ]+/gu, ' ').split(/\s+/).filter(Boolean);
  while (words.length && FILLERS.has(words[0])) words.shift();
  while (words.length && FILLERS.has(words[words.length - 1])) words.pop();
  return words.join(' ');
}

/**
 * Whether the normalised phrase is one or more phrases of the list in a row ("yes go ahead").
 * @param {string} phrase
 * @param {string[]} list
 * @returns {boolean}
 */
function isAll(phrase, list) {
  if (!phrase) return false;
  if (list.includes(phrase)) return true;
  return list.some((p) => phrase.startsWith(`${p} `) && isAll(phrase.slice(p.length + 1).replace(/^(please|and) /, ''), list));
}

/** @param {string} status */
export function isDone(status) { return status === 'succeeded' || status === 'failed' || status === 'cancelled'; }

/**
 * The step whose confirmation waits, if any.
 * @param {ConverseTask} t
 */
export function waitingStep(t) {
  return [...(t.steps || [])].reverse().find((s) => s.confirmation && s.confirmation.approved == null) || null;
}

/**
 * The choice an utterance names: its name (alone or within the utterance, whole words), or its
 * position ("the second one", "number two", "option 2"); -1 for none.
 * @param {string[]} choices
 * @param {string} said normalised
 */
export function matchChoice(choices, said) {
  const names = choices.map(normalize);
  const exact = names.indexOf(said);
  if (exact >= 0) return exact;
  const m = said.match(/^(?:the |option |number |choice )?(\w+)(?: one| option| choice)?$/);
  if (m) {
    const i = Math.max(ORDINALS.indexOf(m[1]), NUMBERS.indexOf(m[1]), /^\d+$/.test(m[1]) ? Number(m[1]) - 1 : -1);
    if (i >= 0 && i < choices.length) return i;
  }
  // a choice named within the utterance ("the work address please"): the longest one named
  let best = -1;
  names.forEach((n, i) => {
    if (n && ` ${said} `.includes(` ${n} `) && (best < 0 || n.length > names[best].length)) best = i;
  });
  return best;
}

/**
 * What an utterance means for the task the panel shows: an answer to what it waits for (a
 * confirmation, a question, a hand-over), "stop", or a new request. While a confirmation or a
 * hand-over waits, an utterance that answers neither never starts a task: the prompt is asked
 * again (say "stop" to give up). A question takes a free answer when no choice is named.
 * @param {ConverseTask|null} task
 * @param {string} transcript
 * @returns {Decision}
 */
export function route(task, transcript) {
  const text = String(transcript || '').trim();
  const said = normalize(text);
  const active = !!task?.id && !isDone(task.status);
  if (!task || !active) {
    if (isAll(said, STOP) || said === 'cancel') return { kind: 'quiet' };
    return { kind: 'command', text };
  }
  const id = task.id;
  if (isAll(said, STOP)) return { kind: 'stop', taskId: id };
  switch (task.status) {
    case 'waiting_confirmation': {
      const step = waitingStep(task);
      const ask = `Say yes to approve or no to refuse${step?.confirmation?.prompt ? `: ${speakable(step.confirmation.prompt)}` : ''}.`;
      if (!step) return { kind: 'again', taskId: id, say: ask };
      if (isAll(said, APPROVE)) return { kind: 'confirm', taskId: id, stepId: step.id, approve: true };
      if (isAll(said, DECLINE)) return { kind: 'confirm', taskId: id, stepId: step.id, approve: false };
      return { kind: 'again', taskId: id, say: ask };
    }
    case 'waiting_input': {
      const q = task.question;
      if (!q?.id) return { kind: 'again', taskId: id, say: 'The question has not arrived yet: say it again in a moment.' };
      const choices = q.choices || [];
      const i = choices.length ? matchChoice(choices, said) : -1;
      if (i >= 0) return { kind: 'answer', taskId: id, questionId: q.id, answer: choices[i] };
      if (said === 'cancel') return { kind: 'stop', taskId: id };
      if (!said) return { kind: 'again', taskId: id, say: promptText(task) || q.text };
      return { kind: 'answer', taskId: id, questionId: q.id, answer: text };
    }
    case 'waiting_user': {
      const h = task.handover;
      if (said === 'cancel') return { kind: 'stop', taskId: id };
      if (h?.id && isAll(said, CONTINUE)) return { kind: 'continue', taskId: id, handoverId: h.id };
      return { kind: 'again', taskId: id, say: 'Say continue when you are done, or stop.' };
    }
    default:
      if (said === 'cancel') return { kind: 'stop', taskId: id };
      return { kind: 'command', text };
  }
}

/**
 * Text without the quotes and markup that sound odd when spoken.
 * @param {string} s
 */
function speakable(s) {
  return String(s || '').replace(/["“”`*_#]/g, '').replace(/\s+/g, ' ').trim();
}

/**
 * "A, B or C".
 * @param {string[]} list
 */
function orList(list) {
  return list.length < 2 ? list.join('') : `${list.slice(0, -1).join(', ')} or ${list[list.length - 1]}`;
}

/**
 * The spoken prompt of what the task waits for.
 * @param {ConverseTask} t
 * @returns {string}
 */
function promptText(t) {
  if (t.status === 'waiting_confirmation') {
    const s = waitingStep(t);
    if (!s) return '';
    return `Should I ${speakable(s.confirmation?.prompt || s.tool || 'do this step')}? Say yes or no.`;
  }
  if (t.status === 'waiting_input' && t.question?.id) {
    const q = t.question;
    const text = speakable(q.text);
    const choices = (q.choices || []).map(speakable);
    return choices.length ? `${text} ${orList(choices)}?` : text;
  }
  if (t.status === 'waiting_user' && t.handover?.id) {
    const text = speakable(t.handover.instruction);
    return /\bsay (continue|done)\b/i.test(text) ? text : `${text} Say continue when you are done.`;
  }
  return '';
}

/**
 * What the panel says once for a waiting task: the key names the one confirmation, question or
 * hand-over (said once), the text is spoken.
 * @param {ConverseTask|null} t
 * @returns {{key: string, text: string}|null}
 */
export function promptFor(t) {
  if (!t?.id) return null;
  const text = promptText(t);
  if (!text) return null;
  if (t.status === 'waiting_confirmation') return { key: `confirm:${t.id}:${waitingStep(t)?.id}`, text };
  if (t.status === 'waiting_input') return { key: `question:${t.id}:${t.question?.id}`, text };
  return { key: `handover:${t.id}:${t.handover?.id}`, text };
}

/** Longest spoken prose, in characters, before it is cut to its first sentences. */
export const MAX_SPOKEN = 160;

/**
 * Splits a line into cells: by tabs, by |, or by commas (CSV, quotes respected).
 * @param {string} line
 * @param {'tab'|'pipe'|'comma'} sep
 */
function cells(line, sep) {
  if (sep === 'tab') return line.split('\t').map((c) => c.trim());
  if (sep === 'pipe') return line.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
  /** @type {string[]} */
  const out = [];
  let cur = '';
  let q = false;
  for (const ch of line) {
    if (ch === '"') q = !q;
    else if (ch === ',' && !q) { out.push(cur.trim()); cur = ''; } else cur += ch;
  }
  out.push(cur.trim());
  return out;
}

/**
 * Finds a table (Markdown, CSV or tab-separated) or a long list in the lines: its first and
 * last line and what it is.
 * @param {string[]} lines
 * @returns {{from: number, to: number, what: string}|null}
 */
function findBlock(lines) {
  // Markdown table: | a | b | lines, with a |---| rule
  for (let i = 0; i < lines.length; i++) {
    if (!/^\s*\|.*\|\s*$/.test(lines[i])) continue;
    let j = i;
    while (j + 1 < lines.length && /^\s*\|.*\|\s*$/.test(lines[j + 1])) j++;
    const body = lines.slice(i, j + 1).filter((l) => !/^\s*\|[\s:|-]+\|\s*$/.test(l));
    if (body.length >= 2) return { from: i, to: j, what: tableWords(cells(body[0], 'pipe'), body.length - 1) };
  }
  // CSV or TSV: three or more lines with the same number (2+) of cells
  for (const sep of /** @type {const} */ (['tab', 'comma'])) {
    for (let i = 0; i < lines.length; i++) {
      const n = cells(lines[i], sep).length;
      if (n < 2 || (sep === 'comma' && /[.!?:]\s*$/.test(lines[i]) && !lines[i].includes('"'))) continue;
      let j = i;
      while (j + 1 < lines.length && lines[j + 1].trim() && cells(lines[j + 1], sep).length === n) j++;
      if (j - i + 1 >= 3) return { from: i, to: j, what: tableWords(cells(lines[i], sep), j - i) };
    }
  }
  // a list of five or more items
  for (let i = 0; i < lines.length; i++) {
    const item = /^\s*(?:[-*•]|\d+[.)])\s+/;
    if (!item.test(lines[i])) continue;
    let j = i;
    while (j + 1 < lines.length && item.test(lines[j + 1])) j++;
    if (j - i + 1 >= 5) return { from: i, to: j, what: `a list of ${j - i + 1} items` };
  }
  return null;
}

/**
 * @param {string[]} header
 * @param {number} rows
 */
function tableWords(header, rows) {
  const cols = header.filter(Boolean);
  const named = cols.length > 5 ? `${cols.slice(0, 4).join(', ')} and ${cols.length - 4} more` : cols.join(', ');
  return `a table of ${rows} ${rows === 1 ? 'row' : 'rows'} with columns ${named}`;
}

/**
 * The first sentences of prose, up to max characters (at least one sentence, cut at a word).
 * @param {string} text
 * @param {number} max
 */
export function firstSentences(text, max = MAX_SPOKEN) {
  const t = text.replace(/\s+/g, ' ').trim();
  if (t.length <= max) return t;
  // a sentence ends at . ! or ? before a space (so "19.99" and "1.5" stay whole)
  const sentences = t.split(/(?<=[.!?])\s+/);
  let out = '';
  for (const s of sentences) {
    if (out && (`${out} ${s}`).length > max) break;
    out = out ? `${out} ${s}` : s;
  }
  out = out.trim();
  if (out.length > max * 1.5) out = `${out.slice(0, max).replace(/\s+\S*$/, '')}…`;
  return out;
}

/**
 * What to say for an answer: short text as it is; a table, a CSV or a long list described
 * ("a table of 12 rows with columns name, price, shown in the panel"), never read; long prose
 * cut to its first sentences.
 * @param {string} text
 * @returns {string}
 */
export function spokenSummary(text) {
  const t = String(text || '').trim();
  if (!t) return '';
  if (/^[[{]/.test(t)) {
    try {
      const v = JSON.parse(t);
      if (Array.isArray(v)) return `A list of ${v.length} ${v.length === 1 ? 'item' : 'items'}, shown in the panel.`;
      return 'The answer is data, shown in the panel.';
    } catch { /* not JSON */ }
  }
  const lines = t.split(/\r?\n/);
  const block = findBlock(lines);
  if (block) {
    const before = firstSentences(lines.slice(0, block.from).join(' ').replace(/```\w*/g, ''), 160).replace(/[:,;]\s*$/, '');
    const what = `${block.what}, shown in the panel.`;
    return before ? `${before.replace(/[.!?]$/, '')}: ${what}` : `${what[0].toUpperCase()}${what.slice(1)}`;
  }
  // a short list is said as words, without its bullets
  const plain = lines.map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, '')).join('\n').replace(/```\w*/g, '').replace(/[*_#`]/g, '');
  const short = firstSentences(plain);
  if (short.length >= plain.replace(/\s+/g, ' ').trim().length) return short;
  const body = short.replace(/…$/, '');
  return `${body}${/[.!?]$/.test(body) ? '' : '…'} More in the panel.`;
}
