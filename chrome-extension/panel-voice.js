// @ts-check
// Voice for the side panel: push-to-talk capture (Chrome's SpeechRecognition when it runs on the
// device, otherwise the microphone recorded and sent to the server's /api/transcribe), and
// speaking answers (the browser's voices when it has any, otherwise audio from /api/speak).

import { api, ApiError } from './panel-api.js';

/** @typedef {{engine: string, available: boolean, detail: string, advice?: string}} EngineStatus */
/** @typedef {{stt: EngineStatus, tts: EngineStatus, offline: boolean, accepts: string[], ffmpeg: boolean}} VoiceStatus */
/** @typedef {{text: string, via: 'browser'|'server', engine?: string, grammar?: boolean, warm?: boolean, elapsedMs?: number, timings: Record<string, number>}} Heard */

/** Constraints that keep the captured level undistorted (no processing meant for calls). */
const AUDIO = { echoCancellation: false, autoGainControl: false, noiseSuppression: false };

/** Thrown when the microphone is not allowed (the panel links to mic.html). */
export class MicNotAllowed extends Error {}

/**
 * @returns {any} the SpeechRecognition constructor, if the browser has one
 */
function recognitionClass() {
  return /** @type {any} */ (globalThis).SpeechRecognition || /** @type {any} */ (globalThis).webkitSpeechRecognition;
}

/**
 * Chooses how to listen: 'browser' when Chrome can recognise speech on the device, else 'server'
 * when the server has an engine, else 'browser-cloud' when Chrome has (network) recognition.
 * @param {VoiceStatus|null} server
 * @param {string} lang
 * @returns {Promise<'browser'|'server'|'browser-cloud'|'none'>}
 */
export async function chooseListener(server, lang) {
  const SR = recognitionClass();
  if (SR && typeof SR.available === 'function') {
    try {
      const a = await SR.available({ langs: [lang], processLocally: true });
      if (a === 'available') return 'browser';
    } catch { /* older API */ }
  }
  if (server?.stt?.available) return 'server';
  if (SR) return 'browser-cloud';
  return 'none';
}

/** One push-to-talk capture. */
export class Capture {
  /**
   * @param {{mode: 'browser'|'server'|'browser-cloud', lang: string, tab: () => string, accepts: string[],
   *   wait?: () => {state: string, choices: string[]}, onText?: (text: string) => void}} opts
   * wait: what the task waits for (the offline grammar then hears its answers); onText: the
   * transcript so far, while the browser recognises (interim results)
   */
  constructor(opts) {
    this.opts = opts;
    /** @type {Record<string, number>} */
    this.timings = { pressAt: Date.now() };
    /** @type {MediaStream|null} */
    this.stream = null;
    /** @type {MediaRecorder|null} */
    this.recorder = null;
    /** @type {Blob[]} */
    this.chunks = [];
    /** @type {any} */
    this.rec = null;
    /** @type {string[]} */
    this.finals = [];
    this.interim = '';
    /** @type {{ctx: AudioContext, node: ScriptProcessorNode, src: MediaStreamAudioSourceNode, data: Float32Array[]}|null} */
    this.pcm = null;
  }

  /** Starts listening; rejects with MicNotAllowed when the microphone is refused. */
  async start() {
    if (this.opts.mode === 'server') return this.startRecording();
    const SR = recognitionClass();
    const rec = new SR();
    rec.lang = this.opts.lang;
    rec.interimResults = true;
    rec.continuous = true;
    if (this.opts.mode === 'browser') rec.processLocally = true;
    this.ended = new Promise((resolve, reject) => {
      rec.onresult = (/** @type {any} */ ev) => {
        this.interim = '';
        for (let i = ev.resultIndex; i < ev.results.length; i++) {
          const r = ev.results[i];
          if (r.isFinal) this.finals.push(r[0].transcript.trim());
          else this.interim += r[0].transcript;
        }
        this.timings.firstTextAt ||= Date.now();
        this.opts.onText?.(this.text());
      };
      rec.onerror = (/** @type {any} */ ev) => {
        if (ev.error === 'not-allowed' || ev.error === 'service-not-allowed') reject(new MicNotAllowed(ev.error));
        else if (ev.error !== 'no-speech' && ev.error !== 'aborted') reject(new Error(`speech recognition: ${ev.error}`));
      };
      rec.onend = () => resolve(undefined);
    });
    this.ended.catch(() => {});
    this.rec = rec;
    rec.start();
    this.timings.captureStartAt = Date.now();
  }

  async startRecording() {
    try {
      this.stream = await navigator.mediaDevices.getUserMedia({ audio: AUDIO });
    } catch (e) {
      const name = /** @type {Error} */ (e).name;
      if (name === 'NotAllowedError' || name === 'SecurityError' || name === 'PermissionDeniedError') throw new MicNotAllowed(name);
      throw new Error(`no microphone: ${/** @type {Error} */ (e).message || name}`);
    }
    const webm = 'audio/webm;codecs=opus';
    const serverTakesWebm = this.opts.accepts.some((t) => t.startsWith('audio/webm'));
    if (serverTakesWebm && typeof MediaRecorder !== 'undefined' && MediaRecorder.isTypeSupported(webm)) {
      this.recorder = new MediaRecorder(this.stream, { mimeType: webm });
      this.recorder.ondataavailable = (ev) => { if (ev.data.size) this.chunks.push(ev.data); };
      this.recorder.start();
    } else {
      // The server cannot decode WebM (no ffmpeg): record PCM and send WAV.
      const ctx = new AudioContext();
      const src = ctx.createMediaStreamSource(this.stream);
      const node = ctx.createScriptProcessor(4096, 1, 1);
      /** @type {Float32Array[]} */
      const data = [];
      node.onaudioprocess = (ev) => { data.push(new Float32Array(ev.inputBuffer.getChannelData(0))); };
      src.connect(node);
      node.connect(ctx.destination);
      this.pcm = { ctx, node, src, data };
    }
    this.timings.captureStartAt = Date.now();
  }

  /** The transcript so far (browser recognition). */
  text() {
    return [...this.finals, this.interim].join(' ').replace(/\s+/g, ' ').trim();
  }

  /**
   * Stops listening and returns what was said.
   * @returns {Promise<Heard>}
   */
  async stop() {
    this.timings.releaseAt = Date.now();
    if (this.rec) {
      this.rec.stop();
      await this.ended;
      const text = this.text();
      this.timings.transcribedAt = Date.now();
      return { text, via: 'browser', engine: this.opts.mode === 'browser' ? 'chrome-on-device' : 'chrome', timings: this.timings };
    }
    /** @type {Blob} */
    let blob;
    if (this.recorder) {
      const rec = this.recorder;
      const stopped = new Promise((r) => { rec.onstop = r; });
      rec.stop();
      await stopped;
      blob = new Blob(this.chunks, { type: rec.mimeType || 'audio/webm' });
    } else if (this.pcm) {
      const { ctx, node, src, data } = this.pcm;
      src.disconnect();
      node.disconnect();
      const rate = ctx.sampleRate;
      await ctx.close();
      blob = encodeWAV(data, rate);
    } else {
      throw new Error('not recording');
    }
    this.release();
    this.timings.recordedAt = Date.now();
    const q = new URLSearchParams();
    const tab = this.opts.tab();
    if (tab) q.set('tab', tab);
    // what the task waits for: the offline grammar then hears "yes", a choice's name, "done"
    const wait = this.opts.wait?.();
    if (wait?.state) q.set('state', wait.state);
    if (wait?.choices.length) q.set('choices', JSON.stringify(wait.choices));
    const qs = q.toString();
    const r = await api('POST', `/api/transcribe${qs ? `?${qs}` : ''}`, { body: blob, type: blob.type, timeout: 60000 });
    this.timings.transcribedAt = Date.now();
    return { text: r.text || '', via: 'server', engine: r.engine, grammar: !!r.grammar, warm: !!r.warm, elapsedMs: r.elapsedMs, timings: this.timings };
  }

  /** Releases the microphone. */
  release() {
    this.stream?.getTracks().forEach((t) => t.stop());
    this.stream = null;
  }

  /** Stops without transcribing. */
  cancel() {
    try { this.rec?.abort(); } catch { /* ended */ }
    try { if (this.recorder?.state === 'recording') this.recorder.stop(); } catch { /* ended */ }
    if (this.pcm) void this.pcm.ctx.close();
    this.release();
  }
}

/**
 * Encodes mono float chunks as a 16-bit PCM WAV blob.
 * @param {Float32Array[]} chunks
 * @param {number} rate
 */
export function encodeWAV(chunks, rate) {
  const n = chunks.reduce((a, c) => a + c.length, 0);
  const buf = new ArrayBuffer(44 + n * 2);
  const v = new DataView(buf);
  const str = (/** @type {number} */ o, /** @type {string} */ s) => { for (let i = 0; i < s.length; i++) v.setUint8(o + i, s.charCodeAt(i)); };
  str(0, 'RIFF'); v.setUint32(4, 36 + n * 2, true); str(8, 'WAVE'); str(12, 'fmt ');
  v.setUint32(16, 16, true); v.setUint16(20, 1, true); v.setUint16(22, 1, true);
  v.setUint32(24, rate, true); v.setUint32(28, rate * 2, true); v.setUint16(32, 2, true); v.setUint16(34, 16, true);
  str(36, 'data'); v.setUint32(40, n * 2, true);
  let o = 44;
  for (const c of chunks) {
    for (let i = 0; i < c.length; i++, o += 2) v.setInt16(o, Math.max(-1, Math.min(1, c[i])) * 0x7fff, true);
  }
  return new Blob([buf], { type: 'audio/wav' });
}

/** Speaks answers; remembers the mute setting; stops at once when interrupted. */
export class Speaker {
  constructor() {
    this.muted = false;
    /** @type {{text: string, via: string, at: number, error?: string, playingAt?: number}|null} */
    this.last = null;
    /** @type {HTMLAudioElement|null} */
    this.audio = null;
    /** counts speak and stop calls: a server voice that arrives after a newer one is dropped */
    this.turn = 0;
    /** a server voice is being fetched */
    this.fetching = false;
  }

  /** @returns {boolean} whether something is being said (or about to be: its audio is on the way) */
  get speaking() {
    if (typeof speechSynthesis !== 'undefined' && (speechSynthesis.speaking || speechSynthesis.pending)) return true;
    return this.fetching || (!!this.audio && !this.audio.paused && !this.audio.ended);
  }

  /** @returns {boolean} whether the browser has voices of its own */
  static browserVoices() {
    return typeof speechSynthesis !== 'undefined' && speechSynthesis.getVoices().length > 0;
  }

  /** @param {string} text */
  async speak(text) {
    text = text.trim();
    if (this.muted || !text) return;
    this.stop();
    const turn = this.turn;
    if (Speaker.browserVoices()) {
      const u = new SpeechSynthesisUtterance(text);
      speechSynthesis.speak(u);
      this.last = { text, via: 'browser', at: Date.now() };
      return;
    }
    this.fetching = true;
    try {
      const res = /** @type {Response} */ (await api('POST', '/api/speak', { body: { text }, raw: true }));
      const blob = await res.blob();
      if (turn !== this.turn) return; // interrupted (or something newer to say) meanwhile
      this.fetching = false;
      const audio = new Audio(URL.createObjectURL(blob));
      this.audio = audio;
      const last = { text, via: `server:${res.headers.get('X-Tabrelay-Voice') || 'unknown'}`, at: Date.now(), playingAt: 0, error: '' };
      this.last = last;
      audio.addEventListener('playing', () => { last.playingAt ||= Date.now(); }, { once: true });
      await audio.play().catch((e) => { if (turn === this.turn) last.error = String(e?.message || e); });
    } catch (e) {
      if (turn === this.turn) this.last = { text, via: 'none', at: Date.now(), error: e instanceof ApiError ? e.message : String(e) };
    } finally {
      if (turn === this.turn) this.fetching = false;
    }
  }

  /** Stops speaking at once, including a voice still on its way from the server. */
  stop() {
    this.turn++;
    this.fetching = false;
    if (typeof speechSynthesis !== 'undefined') speechSynthesis.cancel();
    if (this.audio) { this.audio.pause(); this.audio = null; }
  }
}
