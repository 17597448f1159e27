// @ts-check
// One-time microphone grant: asks for the microphone in a normal tab (where Chrome shows its
// prompt), then releases it at once. The permission then holds for the whole extension,
// side panel included.

const result = /** @type {HTMLElement} */ (document.getElementById('result'));

/**
 * Asks for the microphone and reports the outcome in plain words.
 * @returns {Promise<{ok: boolean, text: string}>}
 */
async function allow() {
  try {
    const s = await navigator.mediaDevices.getUserMedia({ audio: true });
    s.getTracks().forEach((t) => t.stop());
    return { ok: true, text: 'Microphone allowed. You can close this tab and hold the microphone button in the tabrelay side panel.' };
  } catch (e) {
    const name = /** @type {Error} */ (e).name;
    if (name === 'NotAllowedError') {
      return { ok: false, text: 'The microphone is blocked for tabrelay. Click the icon at the right of the address bar (or open chrome://settings/content/microphone), allow it for this extension, then press the button again.' };
    }
    if (name === 'NotFoundError') return { ok: false, text: 'No microphone found: plug one in and press the button again.' };
    return { ok: false, text: `The microphone could not be opened: ${/** @type {Error} */ (e).message || name}` };
  }
}

async function run() {
  result.textContent = 'Asking…';
  const r = await allow();
  result.textContent = r.text;
  result.className = r.ok ? 'ok' : 'bad';
  return r;
}

document.getElementById('allow')?.addEventListener('click', () => { void run(); });
Object.assign(globalThis, { tabrelayMic: { allow, run } });
