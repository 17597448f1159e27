// @ts-check
// Site permissions CDP clients set (Browser.grantPermissions, setPermission, resetPermissions):
// the relay sends the whole set its connected clients hold (setPermissions) and this module makes
// the extension's content settings exactly that set. Content settings an extension sets take
// precedence over the user's own site settings while they exist, and clearing them removes only
// the extension's (chrome.contentSettings' clear), so the user's settings come back as they were.
// Nothing may stay behind: the extension clears them when it starts, before each hello, and when
// it loses the relay (a relay that crashed cannot ask). Every change goes through one queue, in
// the order asked.

import * as P from './protocol.js';

/** @typedef {chrome.contentSettings.ContentSetting<string>} AnySetting */

/** The content types this module manages, by name (P.ContentType). */
const SETTINGS = /** @type {Record<string, AnySetting>} */ ({
  [P.ContentType.LOCATION]: chrome.contentSettings.location,
  [P.ContentType.NOTIFICATIONS]: chrome.contentSettings.notifications,
  [P.ContentType.MICROPHONE]: chrome.contentSettings.microphone,
  [P.ContentType.CAMERA]: chrome.contentSettings.camera,
  [P.ContentType.CLIPBOARD]: chrome.contentSettings.clipboard,
});

/** @type {Set<string>} */
const VALUES = new Set(Object.values(P.Setting));

/** @type {Promise<void>} */
let queue = Promise.resolve();

/**
 * Makes the extension's content settings exactly settings (after the changes asked before).
 * @param {P.WireContentSetting[]} settings
 * @returns {Promise<void>}
 */
export function applyPermissions(settings) {
  for (const s of settings) {
    if (!SETTINGS[s.contentType]) throw new Error(`tabrelay extension: unknown content type "${s.contentType}"`);
    if (!VALUES.has(s.setting)) throw new Error(`tabrelay extension: unknown content setting "${s.setting}"`);
  }
  const run = queue.then(() => apply(settings));
  queue = run.catch(() => {});
  return run;
}

/** Clears every content setting the extension set (start, new connection, relay lost). */
export function clearPermissions() {
  applyPermissions([]).catch((e) => console.warn('tabrelay: clearing site permissions failed', e));
}

/** @param {P.WireContentSetting[]} settings */
async function apply(settings) {
  for (const setting of Object.values(SETTINGS)) await setting.clear({ scope: 'regular' });
  for (const s of settings) {
    await SETTINGS[s.contentType].set({ primaryPattern: s.pattern, setting: s.setting, scope: 'regular' });
  }
}
