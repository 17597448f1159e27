// @ts-check
// The welcome page, opened once when the extension is installed (worker-firstrun.js): whether
// the extension is paired and connected (kept up to date), how to pair, and every way to share
// a tab, with the shortcuts as the browser has them now.

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** Shows the pairing and connection state as the service worker reports it. */
async function showState() {
  const box = $('pair-state');
  /** @type {any} */
  let st = null;
  try { st = await chrome.runtime.sendMessage({ type: 'status' }); } catch { /* worker asleep */ }
  const { token } = await chrome.storage.local.get('token');
  if (st?.connected) {
    box.textContent = `Paired and connected to the tabrelay server at ${st.addr}.`;
    box.className = 'state ok';
    $('pair-how').hidden = true;
  } else if (token) {
    box.textContent = `Paired with ${st?.addr || 'the tabrelay server'}, which is not answering now: start it with \`tabrelay\`; the extension connects by itself.`;
    box.className = 'state wait';
    $('pair-how').hidden = true;
  } else {
    // the first state after installing, not a fault: shown as a step to do, not as an error
    box.textContent = 'Not paired yet.';
    box.className = 'state wait';
    $('pair-how').hidden = false;
  }
}

/** Writes the shortcuts the browser has now (the person may have changed or removed them). */
async function showShortcuts() {
  const cmds = await chrome.commands.getAll();
  for (const [name, id] of [['toggle-share', 'share-key'], ['open-panel', 'panel-key']]) {
    const key = cmds.find((c) => c.name === name)?.shortcut;
    $(id).textContent = key || 'no shortcut (set one at chrome://extensions/shortcuts)';
  }
  const { tabGroup, chooseTab } = await chrome.storage.local.get(['tabGroup', 'chooseTab']);
  $('way-group').hidden = tabGroup === false;
  $('way-chooser').hidden = chooseTab === false;
}

$('open-options').addEventListener('click', () => { void chrome.runtime.openOptionsPage(); });
chrome.storage.onChanged.addListener((_, area) => { if (area === 'local') void Promise.all([showState(), showShortcuts()]); });

// The end-to-end tests read the page through this.
Object.assign(globalThis, { tabrelayWelcome: { showState } });

await showShortcuts();
await showState();
setInterval(() => { void showState(); }, 2000);

export {};
