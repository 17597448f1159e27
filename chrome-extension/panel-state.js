// @ts-check
// The side panel's state, in one place: what it knows of the server, pairing and this tab, the
// live task, voice, skills and recording. Every panel-*.js module reads and changes this one
// object; the end-to-end tests read it too (globalThis.tabrelayPanel.state).

import { Speaker } from './panel-voice.js';

/** @typedef {import('./panel-voice.js').Capture} Capture */

/** @typedef {{text: string, status: 'pending'|'active'|'done'|'failed'}} PlanItem */
/** @typedef {{fields: string[], items: Record<string, string>[], pages: number, omitted?: number}} StepRecords what an extract step read (agent/task.StepRecords) */
/** @typedef {{id: string, index: number, tool: string, args?: any, status: string, result?: string, error?: string, thought?: string, confirmation?: {reason: string, prompt: string, approved?: boolean}, records?: StepRecords}} Step */
/** @typedef {{id: string, text: string, choices?: string[], askedAt?: string, deadline?: string}} Question */
/** @typedef {{id: string, instruction: string, askedAt?: string, deadline?: string}} Handover */
/** @typedef {{modelCalls?: number, promptTokens?: number, completionTokens?: number}} Usage */
/**
 * The task as the server sends it (agent/task.Task). status adds waiting_input (question set)
 * and waiting_user (handover set) to the others; request is what the user asked, goal what the
 * model was asked.
 * needsModel: the request needed a language model and none was in use.
 * @typedef {{id: string, goal: string, request?: string, needsModel?: boolean, conversation?: string, status: string, plan: PlanItem[], steps: Step[], answer?: string, error?: string, model?: string, createdAt?: string, prose?: string, spoken?: boolean, question?: Question, handover?: Handover, usage?: Usage, notSaved?: string}} Task
 */
export const state = {
  /** @type {'unknown'|'down'|'up'} */ server: 'unknown',
  /** @type {'unknown'|'unpaired'|'rejected'|'ok'} */ pairing: 'unknown',
  /** @type {number|undefined} */ tabId: undefined,
  /** the shared tab's target id, '' when this tab is not shared */ targetId: '',
  addr: '',
  /** the model requests use ('' none, null unknown; see panel-model.js) @type {string|null} */ model: null,
  /** the tab the task shown was asked in (see panel-task.js) @type {number|undefined} */ taskTab: undefined,
  /** @type {Task|null} */ task: null,
  /** @type {AbortController|null} */ follow: null,
  /** @type {import('./panel-voice.js').VoiceStatus|null} */ voice: null,
  /** @type {Capture|null} */ capture: null,
  /** @type {any[]} */ skills: [],
  /** @type {any} */ selectedSkill: null,
  /** the task whose healed skill draft was last offered */ draftFor: '',
  /** how many tasks the last "new conversation" cleared (-1 before any) */ conversationCleared: -1,
  recording: false,
  /** @type {any[]} */ voiceLog: [],
  /** @type {any[]} */ downloads: [],
  /** @type {string} */ notice: '',
  /** the notice the status refresh showed (it clears only that one) @type {string} */ statusNotice: '',
  /** a request sent while this tab was not shared, kept until the tab is shared or another is
   * sent: its text and how to send it (see panel-status.js ready) @type {{text: string, send: () => Promise<unknown>}|null} */ pendingSend: null,
  /** when things first showed (Date.now()), for latency measurements: confirmShown; sharingChanged and sharingShown: the worker's shared tabs changed, and the panel showed it */
  /** @type {Record<string, number>} */ marks: {},
  /** the waiting task's prompt last said aloud (see panel-converse.js announce) */ announced: '',
  /** @type {Promise<void> | null} the reading under way (see refresh) */ reading: null,
  /** @type {Promise<void> | null} the reading that starts when it ends, shared by all who asked meanwhile */ nextReading: null,
  /** how the panel listens (see loadVoice) @type {'browser'|'server'|'browser-cloud'|'none'} */ listenMode: 'none',
  /** when the mic button was pressed (Date.now()); 0 for the keyboard */ pressStarted: 0,
  /** a short click on the mic: keep listening until the next click */ toggleMode: false,
  /** the skills search's debounce @type {ReturnType<typeof setTimeout>|undefined} */ skillTimer: undefined,
};

export const speaker = new Speaker();
