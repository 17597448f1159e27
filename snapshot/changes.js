// Change check of the in-page walker (see inpage.go). Evaluated in the walker's isolated world
// right after inpage.js, it defines globalThis.__tabrelayChanges with:
//   page(main, last, undefinedIDs)
//                     [serial] when nothing that can change the frame's outline happened since
//                     the walk numbered last (the caller still has it), else [serial, page(main)]:
//                     a new walk (inpage.js's page) and its new number. undefinedIDs are the
//                     walker ids of the custom elements the walk found not defined yet: one
//                     defined since (its upgrade may attach a shadow root) is a change.
// What counts as a change: the walker's epoch moved (a DOM mutation in the document or a shadow
// root the walker saw, which includes class and style toggles; a load; user input: clicks, keys,
// typing, scrolling, the pointer moving over something), or one of the events below fired (a
// resize, a media or font load, a <details> or popover toggled, a transition or animation
// started or ended, focus left), or the frame's URL, title, ready state, scroll offsets,
// viewport, focused element or the values of its form controls differ from the walk's (a
// script may set a value or scroll without an event), or an animation that may change the
// outline (anything but colours, shadows, filters and rotations) was running at the walk or runs
// now. The check walks no tree: an unchanged frame answers in well under a millisecond.
(() => {
  if (globalThis.__tabrelayChanges) return;
  const walker = globalThis.__tabrelay;
  const epochOf = globalThis.__tabrelayEpoch;
  if (!walker || !epochOf) return;

  let serial = 0;
  let dirty = true;
  let lastMain = false;
  let epoch = -1;
  let state = '';
  /** @type {Element | null} */
  let active = null;
  /** @type {unknown[]} */
  let values = [];
  let moving = false;

  const touch = () => {
    dirty = true;
  };
  for (const type of ['resize', 'focusout', 'visibilitychange', 'fullscreenchange', 'pagehide', 'beforeprint', 'afterprint']) {
    addEventListener(type, touch, { capture: true, passive: true });
  }
  // events that do not reach the window (a load or error of an element) or do not bubble
  for (const type of ['load', 'error', 'beforetoggle', 'toggle', 'beforematch', 'transitionrun', 'transitionend', 'transitioncancel',
    'animationstart', 'animationend', 'animationcancel', 'cuechange']) {
    document.addEventListener(type, touch, { capture: true, passive: true });
  }
  if (document.fonts) document.fonts.addEventListener('loadingdone', touch);

  const inputs = document.getElementsByTagName('input');
  const areas = document.getElementsByTagName('textarea');
  const selects = document.getElementsByTagName('select');

  const stateOf = () => {
    const vv = window.visualViewport;
    return [location.href, document.title, document.readyState, document.visibilityState, scrollX, scrollY, innerWidth, innerHeight,
      devicePixelRatio, vv ? [vv.pageLeft, vv.pageTop, vv.width, vv.height, vv.scale].join(',') : ''].join('\n');
  };
  const valuesOf = () => {
    const out = [];
    for (const el of inputs) out.push(el.value, el.checked, el.indeterminate);
    for (const el of areas) out.push(el.value);
    for (const el of selects) out.push(el.selectedIndex);
    return out;
  };
  const sameValues = () => {
    let i = 0;
    for (const el of inputs) {
      if (values[i++] !== el.value || values[i++] !== el.checked || values[i++] !== el.indeterminate) return false;
    }
    for (const el of areas) if (values[i++] !== el.value) return false;
    for (const el of selects) if (values[i++] !== el.selectedIndex) return false;
    return i === values.length;
  };
  // properties an animation may change without changing the outline: colours, shadows, filters
  // and rotations (a spinner turning forever leaves the page's snapshot as it was)
  const harmless = new Set(['color', 'backgroundColor', 'backgroundPosition', 'borderColor', 'borderTopColor', 'borderRightColor',
    'borderBottomColor', 'borderLeftColor', 'outlineColor', 'boxShadow', 'textShadow', 'filter', 'fill', 'stroke', 'strokeDashoffset',
    'strokeDasharray', 'rotate']);
  const keyframeKeys = new Set(['offset', 'computedOffset', 'easing', 'composite']);
  const rotation = /^(none|(rotate[XYZ]?\([^)]*\)\s*)+)$/;
  /** @param {Animation} a */
  const matters = (a) => {
    const effect = /** @type {KeyframeEffect | null} */ (a.effect);
    if (!effect || typeof effect.getKeyframes !== 'function') return true;
    for (const kf of effect.getKeyframes()) {
      for (const [prop, value] of Object.entries(kf)) {
        if (keyframeKeys.has(prop) || harmless.has(prop)) continue;
        if (prop === 'transform' && rotation.test(String(value).trim())) continue;
        return true;
      }
    }
    return false;
  };
  // whether an animation that may change the outline runs
  const running = () => {
    if (!document.getAnimations) return false;
    for (const a of document.getAnimations()) if ((a.playState === 'running' || a.pending) && matters(a)) return true;
    return false;
  };

  /** @param {number[] | undefined} ids */
  const undefinedStill = (ids) => {
    for (const id of ids || []) {
      const el = walker.el(id);
      if (!el || el.matches(':defined')) return false;
    }
    return true;
  };

  /**
   * @param {boolean} main
   * @param {number} last
   * @param {number[] | undefined} undefinedIDs
   */
  const page = (main, last, undefinedIDs) => {
    if (last === serial && main === lastMain && !dirty && !moving && epochOf() === epoch && document.activeElement === active &&
      stateOf() === state && sameValues() && !running() && undefinedStill(undefinedIDs)) {
      return [serial];
    }
    const out = walker.page(main);
    serial++;
    dirty = false;
    lastMain = main;
    epoch = epochOf();
    state = stateOf();
    active = document.activeElement;
    values = valuesOf();
    moving = running();
    return [serial, out];
  };

  Object.defineProperty(globalThis, '__tabrelayChanges', { value: Object.freeze({ page }) });
})();
