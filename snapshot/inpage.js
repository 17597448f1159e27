// In-page outline walker (see inpage.go). It is evaluated in an isolated world of each frame
// (Page.createIsolatedWorld), so the page's scripts can neither see nor change it, and it
// defines globalThis.__tabrelay with:
//   walk(root, opts)  the rendered elements and text under root (a Document or ShadowRoot) as a
//                     compact JSON string: what the accessibility tree would show, computed
//                     here instead of moving the whole tree over chrome.debugger;
//   el(id)            the element with an id the walker gave (undefined once it is gone);
//   id(el)            the id of an element (given on first sight, stable while it lives; 0 for
//                     other nodes);
//   check(id)         [connected, role, name] of an element, to re-resolve a ref;
//   adopt(id, root)   hands over the closed shadow root of an element (found by inpage.go
//                     through the DOM domain): walks enter it from then on;
//   page(boxes)       a frame's snapshot in one evaluation: [title, URL, epoch, outline,
//                     readyState, fold] as JSON (the outline as walk gives it; boxes for the
//                     main frame, whose readyState and fold the header tells).
// Element ids live in a WeakMap of this world: the page cannot read or forge them. Click
// listeners added by script are invisible here: inpage.go finds them with the DOMDebugger
// domain and sets the listener flag on the output. It does so again only when the epoch moved:
// a counter of what may come with new listeners (a DOM mutation in the document or a shadow
// root the walker saw, a load, user input), so that a page left alone costs one evaluation.
//
// A node of the output is an object: t a run of text, or an element with r role (the
// accessibility tree's role names), n name, v value, u url, s states, f flags, i id, y/b top
// and bottom in document coordinates, o options (native select), k children; for an element
// with no name, l the text just before a field and e a control's evidence ([icons, data]: see
// package describe).
(() => {
  if (globalThis.__tabrelay) return;
  /**
   * what an element and its descendants say of themselves beyond a name (package describe's
   * evidence.js, put here by inpage.go): read for controls that have no name
   * @type {(el: Element) => {icons: string[], data: string[]}}
   */
  const evidence = /*evidence*/null;
  /** @type {WeakMap<Element, number>} */
  const ids = new WeakMap();
  /** @type {Map<number, WeakRef<Element>>} */
  const byId = new Map();
  let next = 0;
  let seenLive = 0; // byId's size after its last pruning
  const idOf = (el) => {
    let i = ids.get(el);
    if (i === undefined) {
      i = ++next;
      ids.set(el, i);
      byId.set(i, new WeakRef(el));
    }
    return i;
  };

  // epoch counts what may come with new listeners; the observer disconnects at its first
  // record (a page that mutates all the time pays for one record per walk) and page() arms it
  // again, with every shadow root the walk enters
  let epoch = 0;
  let armed = false;
  /** @type {WeakSet<Node>} */
  let observed = new WeakSet();
  const observer = new MutationObserver(() => {
    epoch++;
    armed = false;
    observer.disconnect();
  });
  const observe = (root) => {
    if (!armed || observed.has(root)) return;
    observed.add(root);
    observer.observe(root, { subtree: true, childList: true, attributes: true, characterData: true });
  };
  const arm = () => {
    if (armed) return;
    armed = true;
    observed = new WeakSet();
    observe(document);
  };
  const bump = () => {
    epoch++;
  };
  for (const type of ['load', 'DOMContentLoaded', 'pageshow', 'popstate', 'hashchange', 'message', 'scroll', 'click', 'mousedown',
    'mouseup', 'pointerdown', 'pointerup', 'pointerover', 'keydown', 'keyup', 'input', 'change', 'focusin', 'submit']) {
    addEventListener(type, bump, { capture: true, passive: true });
  }
  document.addEventListener('readystatechange', bump, { capture: true, passive: true });

  // flags
  const FOCUSED = 1, MODAL = 2, PASSWORD = 4, FOCUSABLE = 8, EDITABLE = 16, POINTER = 32, LISTENER = 64, SHADOWHOST = 128, NOLISTEN = 256,
    UNDEFINED = 512, ARIAHIDDEN = 1024;

  /** @type {WeakMap<Element, ShadowRoot>} closed shadow roots inpage.go found (adopt) */
  const closedRoots = new WeakMap();
  /** @returns {ShadowRoot | null | undefined} el's shadow root, open or handed over */
  const shadowOf = (el) => el.shadowRoot || closedRoots.get(el);

  const skipTags = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE']);
  const landmarkScope = 'article,aside,main,nav,section,[role=article],[role=complementary],[role=main],[role=navigation],[role=region]';
  const validRoles = new Set(('alert alertdialog application article banner blockquote button caption cell checkbox code columnheader combobox ' +
    'complementary contentinfo definition deletion dialog directory document emphasis feed figure form generic grid gridcell group heading img image ' +
    'insertion link list listbox listitem log main mark marquee math menu menubar menuitem menuitemcheckbox menuitemradio meter navigation none note ' +
    'option paragraph presentation progressbar radio radiogroup region row rowgroup rowheader scrollbar search searchbox separator slider spinbutton ' +
    'status strong subscript superscript switch tab table tablist tabpanel term textbox time timer toolbar tooltip tree treegrid treeitem').split(' '));
  // roles whose name comes from their content
  const fromContent = new Set(['button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading', 'link', 'menuitem', 'menuitemcheckbox',
    'menuitemradio', 'option', 'radio', 'rowheader', 'switch', 'tab', 'tooltip', 'treeitem', 'DisclosureTriangle', 'ToggleButton']);
  const inlineDisplay = new Set(['inline', 'inline-block', 'inline-flex', 'inline-grid', 'contents']);
  const inputRoles = {
    button: 'button', submit: 'button', reset: 'button', image: 'button', checkbox: 'checkbox', radio: 'radio', range: 'slider',
    number: 'spinbutton', search: 'searchbox', color: 'ColorWell', date: 'date', 'datetime-local': 'DateTime', time: 'InputTime',
    month: 'DateTime', week: 'DateTime', file: 'button',
  };

  /** @type {Map<Element, CSSStyleDeclaration>} */
  let styles = new Map();
  const style = (el) => {
    let s = styles.get(el);
    if (!s) {
      s = getComputedStyle(el);
      styles.set(el, s);
    }
    return s;
  };
  const collapse = (s) => s.replace(/\s+/g, ' ').trim();

  const explicitRole = (el) => {
    const r = el.getAttribute('role');
    if (!r) return '';
    for (const t of r.trim().toLowerCase().split(/\s+/)) if (validRoles.has(t)) return t;
    return '';
  };

  const nativeFocusable = (el) => {
    switch (el.tagName) {
      case 'A': case 'AREA': return el.hasAttribute('href');
      case 'BUTTON': case 'SELECT': case 'TEXTAREA': return !el.disabled;
      case 'INPUT': return !el.disabled && el.type !== 'hidden';
      case 'SUMMARY': return el.parentElement?.tagName === 'DETAILS' && el.parentElement.querySelector('summary') === el;
      case 'IFRAME': return true;
    }
    return el.hasAttribute('tabindex') || el.isContentEditable && el.contentEditable !== 'inherit';
  };

  const implicitRole = (el) => {
    switch (el.tagName) {
      case 'A': case 'AREA': return el.hasAttribute('href') ? 'link' : 'generic';
      case 'BUTTON': return 'button';
      case 'INPUT': {
        const t = el.type;
        if (inputRoles[t]) return inputRoles[t];
        if (el.hasAttribute('list')) return 'combobox';
        return 'textbox';
      }
      case 'SELECT': return el.multiple || el.size > 1 ? 'listbox' : 'combobox';
      case 'OPTION': return 'option';
      case 'OPTGROUP': return 'group';
      case 'TEXTAREA': return 'textbox';
      case 'H1': case 'H2': case 'H3': case 'H4': case 'H5': case 'H6': return 'heading';
      case 'IMG': return el.getAttribute('alt') === '' && !el.title ? 'none' : 'image';
      case 'UL': case 'OL': case 'MENU': return 'list';
      case 'LI': return 'listitem';
      case 'NAV': return 'navigation';
      case 'MAIN': return 'main';
      case 'ASIDE': return 'complementary';
      case 'HEADER': return el.parentElement?.closest(landmarkScope) ? 'generic' : 'banner';
      case 'FOOTER': return el.parentElement?.closest(landmarkScope) ? 'generic' : 'contentinfo';
      case 'FORM': return 'form';
      case 'SEARCH': return 'search';
      case 'SECTION': return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') || el.hasAttribute('title') ? 'region' : 'Section';
      case 'ARTICLE': return 'article';
      case 'TABLE': return 'table';
      case 'CAPTION': return 'Caption';
      case 'TR': return 'row';
      case 'TD': return el.closest('table')?.getAttribute('role') === 'grid' ? 'gridcell' : 'cell';
      case 'TH': return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
      case 'THEAD': case 'TBODY': case 'TFOOT': return 'rowgroup';
      case 'DIALOG': return 'dialog';
      case 'DETAILS': return 'Details';
      case 'SUMMARY': return 'DisclosureTriangle';
      case 'LABEL': return 'LabelText';
      case 'P': return 'paragraph';
      case 'FIELDSET': return 'group';
      case 'LEGEND': return 'Legend';
      case 'HR': return 'separator';
      case 'PROGRESS': return 'progressbar';
      case 'METER': return 'meter';
      case 'OUTPUT': return 'status';
      case 'FIGURE': return 'figure';
      case 'FIGCAPTION': return 'Figcaption';
      case 'DL': return 'list';
      case 'DT': return 'DescriptionListTerm';
      case 'DD': return 'DescriptionListDetail';
      case 'BLOCKQUOTE': return 'blockquote';
      case 'CODE': return 'code';
      case 'STRONG': return 'strong';
      case 'EM': return 'emphasis';
      case 'PRE': return 'Pre';
      case 'IFRAME': case 'FRAME': return 'Iframe';
      case 'CANVAS': return 'Canvas';
      case 'TIME': return 'time';
      case 'MARK': return 'mark';
      case 'SVG': case 'svg': return 'image';
    }
    return 'generic';
  };

  const roleOf = (el) => {
    const r = explicitRole(el);
    if (r === 'none' || r === 'presentation') return nativeFocusable(el) ? implicitRole(el) : 'none';
    if (r === 'img') return 'image';
    if (r) return r;
    if (el.isContentEditable && el.contentEditable !== 'inherit' && el.tagName !== 'INPUT' && el.tagName !== 'TEXTAREA') return 'generic';
    return implicitRole(el);
  };

  const hidden = (el) => {
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return true;
    return style(el).display === 'none';
  };

  // text of an element for a name from content (aria-labelledby, labels, content): what a
  // person sees of it (visibility hidden or collapse is not), all of it for aria-labelledby,
  // which may name an element by hidden text
  const textFrom = (node, top, seen, all = false) => {
    if (node.nodeType === 3) return node.data;
    if (node.nodeType !== 1 && node.nodeType !== 11) return '';
    /** @type {Element} */
    const el = node;
    if (node.nodeType === 1) {
      if (seen.has(el)) return '';
      seen.add(el);
      if (skipTags.has(el.tagName)) return '';
      if (!top && hidden(el)) return '';
      if (!top && !all && style(el).visibility !== 'visible') return '';
      if (!top) {
        const role = roleOf(el);
        if (role === 'textbox' || role === 'searchbox') return el.value ?? el.textContent ?? '';
        if (el.tagName === 'SELECT') return [...el.selectedOptions].map((o) => o.label).join(' ');
        if (role === 'slider' || role === 'spinbutton') return el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow') ?? el.value ?? '';
        const label = el.getAttribute('aria-label');
        if (label && label.trim()) return label;
        if (el.tagName === 'IMG' || el.tagName === 'AREA' || (el.tagName === 'INPUT' && el.type === 'image')) return el.getAttribute('alt') ?? '';
        if (el.tagName === 'INPUT' && (el.type === 'submit' || el.type === 'reset' || el.type === 'button')) return el.value || (el.type === 'submit' ? 'Submit' : el.type === 'reset' ? 'Reset' : '');
      }
    }
    let out = '';
    const kids = node.nodeType === 1 && shadowOf(el) ? shadowOf(el).childNodes : el.tagName === 'SLOT' ? el.assignedNodes({ flatten: true }) : node.childNodes;
    const list = kids.length === 0 && el.tagName === 'SLOT' ? node.childNodes : kids;
    for (const k of list) {
      const t = textFrom(k, false, seen, all);
      if (!t) continue;
      const block = k.nodeType === 1 && !inlineDisplay.has(style(k).display);
      out += block ? ' ' + t + ' ' : t;
    }
    if (node.nodeType === 1 && !collapse(out) && !top && el.title) return el.title;
    return out;
  };

  const byIds = (el, attr) => {
    const v = el.getAttribute(attr);
    if (!v) return null;
    const root = el.getRootNode();
    const out = [];
    for (const id of v.trim().split(/\s+/)) {
      const t = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      if (t) out.push(t);
    }
    return out.length ? out : null;
  };

  /** @type {Map<Node, Map<string, Element[]>>} labels with a for attribute, by tree scope and id (per walk) */
  let forLabels = new Map();
  // labelsOf is el.labels without its cost: that live list scans the whole document once per
  // control, which makes a page of thousands of fields quadratic
  const labelsOf = (el) => {
    const out = [];
    const anc = el.closest('label');
    if (anc && anc.control === el) out.push(anc);
    if (el.id) {
      const root = el.getRootNode();
      let m = forLabels.get(root);
      if (!m) {
        m = new Map();
        for (const l of root.querySelectorAll('label[for]')) {
          const f = l.htmlFor;
          m.set(f, [...(m.get(f) || []), l]);
        }
        forLabels.set(root, m);
      }
      for (const l of m.get(el.id) || []) if (l !== anc && l.control === el) out.push(l);
    }
    if (out.length > 1) out.sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    return out;
  };

  const nameOf = (el, role) => {
    const lb = byIds(el, 'aria-labelledby');
    if (lb) {
      const n = collapse(lb.map((t) => textFrom(t, true, new Set([el]), true)).join(' '));
      if (n) return n;
    }
    const al = el.getAttribute('aria-label');
    if (al && al.trim()) return collapse(al);
    const tag = el.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA' || tag === 'BUTTON' || tag === 'METER' || tag === 'PROGRESS' || tag === 'OUTPUT') {
      const t = el.type;
      if (tag === 'INPUT' && (t === 'submit' || t === 'reset' || t === 'button')) {
        return collapse(el.value || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : ''));
      }
      if (tag === 'INPUT' && t === 'image') return collapse(el.getAttribute('alt') || el.value || 'Submit');
      const labels = labelsOf(el);
      if (labels.length) {
        const n = collapse(labels.map((l) => textFrom(l, true, new Set([el]))).join(' '));
        if (n) return n;
      }
      if (tag === 'INPUT' && t === 'file') return 'Choose File';
    }
    if (tag === 'IMG' || tag === 'AREA') {
      const a = el.getAttribute('alt');
      if (a && a.trim()) return collapse(a);
    }
    if (tag === 'FIELDSET') {
      const lg = [...el.children].find((c) => c.tagName === 'LEGEND');
      if (lg) return collapse(textFrom(lg, true, new Set()));
    }
    if (tag === 'TABLE' && el.caption) return collapse(textFrom(el.caption, true, new Set()));
    if (tag === 'FIGURE') {
      const fc = [...el.children].find((c) => c.tagName === 'FIGCAPTION');
      if (fc) return collapse(textFrom(fc, true, new Set()));
    }
    if (fromContent.has(role)) {
      const n = collapse(textFrom(el, true, new Set()));
      if (n) return n;
    }
    const title = el.getAttribute('title');
    if (title && title.trim()) return collapse(title);
    const ph = el.getAttribute('placeholder') || el.getAttribute('aria-placeholder');
    if (ph && (role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton')) return collapse(ph);
    return '';
  };

  // fields whose name the text just before them may give ("Time: <input>")
  const fieldRoles = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'listbox', 'ColorWell', 'date', 'DateTime', 'InputTime']);
  // controls whose icons or data may say what an unnamed one does
  const iconRoles = new Set(['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'checkbox', 'radio',
    'option', 'treeitem', 'DisclosureTriangle', 'ToggleButton', 'generic', 'listitem', 'image']);
  const controlSel = 'input:not([type=hidden]),select,textarea,button,a[href],[role=button],[role=link],[role=textbox],[role=slider],[role=combobox],[contenteditable=true]';
  // textBefore is the text just before an unnamed field in its container, as a person reads a
  // form laid out as "Time: <input>": a text node or an element without controls right before
  // it, or before the wrapper (a cell, a span) that holds nothing but the field; '' when there
  // is none or it is long (then it is prose, not a label)
  const textBefore = (el) => {
    let cur = el;
    for (let up = 0; up < 3 && cur; up++) {
      let p = cur.previousSibling;
      while (p && ((p.nodeType === 3 && !p.data.trim()) || p.nodeType === 8 || (p.nodeType === 1 && (p.tagName === 'BR' || skipTags.has(p.tagName))))) p = p.previousSibling;
      if (p) {
        let t = '';
        if (p.nodeType === 3) t = p.data;
        else if (p.nodeType === 1) {
          // a heading titles a section, not the field after it
          if (hidden(p) || p.matches(controlSel) || p.querySelector(controlSel) || p.matches('h1,h2,h3,h4,h5,h6,[role=heading],legend')) return '';
          t = p.innerText ?? p.textContent ?? '';
        }
        t = collapse(t).replace(/\s*:$/, '');
        return t.length <= 60 ? t : '';
      }
      const pe = cur.parentElement;
      // climb only out of a wrapper that holds nothing but this field
      if (!pe || pe.tagName === 'BODY' || pe.tagName === 'FORM' || pe.tagName === 'LABEL' || collapse(pe.textContent || '') !== collapse(cur.textContent || '')) return '';
      cur = pe;
    }
    return '';
  };

  const ariaState = (el, attr) => {
    const v = el.getAttribute(attr);
    return v === null ? '' : v.trim().toLowerCase();
  };

  const checkable = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);

  /** states in the order the accessibility tree lists them */
  const statesOf = (el, role) => {
    const s = [];
    const tag = el.tagName;
    const disabled = el.matches(':disabled') || ariaState(el, 'aria-disabled') === 'true' || !!el.parentElement?.closest('[aria-disabled=true]');
    if (disabled) s.push('disabled');
    const exp = ariaState(el, 'aria-expanded');
    if (exp === 'true' || (role === 'DisclosureTriangle' && el.parentElement?.open)) s.push('expanded');
    if (role === 'heading') {
      const lv = parseInt(el.getAttribute('aria-level') || '', 10) || (/^H[1-6]$/.test(tag) ? +tag[1] : 2);
      s.push('level=' + lv);
    }
    if (ariaState(el, 'aria-multiselectable') === 'true' || (tag === 'SELECT' && el.multiple)) s.push('multiselectable');
    if (tag === 'TEXTAREA' || (role === 'textbox' && ariaState(el, 'aria-multiline') === 'true')) s.push('multiline');
    if (ariaState(el, 'aria-readonly') === 'true' || ((tag === 'INPUT' || tag === 'TEXTAREA') && el.readOnly)) s.push('readonly');
    if (ariaState(el, 'aria-required') === 'true' || ((tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') && el.required)) s.push('required');
    if (checkable.has(role)) {
      const a = ariaState(el, 'aria-checked');
      if (tag === 'INPUT' && (el.type === 'checkbox' || el.type === 'radio')) {
        if (el.indeterminate) s.push('checked=mixed');
        else if (el.checked) s.push('checked');
      } else if (a === 'true') s.push('checked');
      else if (a === 'mixed') s.push('checked=mixed');
    }
    const pr = ariaState(el, 'aria-pressed');
    if (pr === 'true') s.push('pressed');
    else if (pr === 'mixed') s.push('pressed=mixed');
    if (ariaState(el, 'aria-selected') === 'true' || (tag === 'OPTION' && el.selected)) s.push('selected');
    return s;
  };

  const deepActive = () => {
    let a = document.activeElement;
    while (a && shadowOf(a)?.activeElement) a = shadowOf(a).activeElement;
    return a;
  };

  const valueOf = (el, role) => {
    const tag = el.tagName;
    if (role === 'slider' || role === 'spinbutton' || role === 'progressbar' || role === 'meter' || role === 'scrollbar') {
      const vt = el.getAttribute('aria-valuetext');
      if (vt) return vt;
      const vn = el.getAttribute('aria-valuenow');
      if (vn !== null) return vn;
    }
    if (tag === 'INPUT') {
      if (el.type === 'password') return el.value ? '•'.repeat(el.value.length) : '';
      if (el.type === 'file') return el.files?.length ? [...el.files].map((f) => f.name).join(', ') : 'No file chosen';
      if (el.type === 'checkbox' || el.type === 'radio' || el.type === 'button' || el.type === 'submit' || el.type === 'reset' || el.type === 'image') return '';
      return el.value;
    }
    if (tag === 'TEXTAREA') return el.value;
    if (tag === 'SELECT') return el.selectedOptions[0]?.label ?? '';
    return '';
  };

  /**
   * @param {Node} root
   * @param {{boxes?: boolean}} opts
   */
  const walk = (root, opts) => {
    styles = new Map();
    forLabels = new Map();
    const active = deepActive();
    const focusedPage = document.hasFocus();
    const sy = window.scrollY;

    // What a person sees, as Playwright's AI snapshot shows it: an element is out when it is
    // not rendered (display:none, inside a content-visibility:hidden element or a closed
    // <details>) or not visible (visibility hidden or collapse); its children are visited
    // still (a visibility:visible child shows), but its text is not. aria-hidden hides
    // nothing a person sees: an element under aria-hidden is in when it has a box (a menu
    // hidden from screen readers but shown), and the element carrying aria-hidden=true is
    // marked. opacity does not hide (Playwright lists opacity:0 elements too). Unlike
    // Playwright's, an inert subtree stays out: nothing in it takes a click or a key.
    /**
     * @param {Node} node
     * @param {any[]} out
     * @param {boolean} parentPointer the parent has cursor:pointer
     * @param {boolean} shown the parent element is in the outline (its text shows)
     * @param {boolean} skipped inside an element whose content is not rendered
     * @param {boolean} ariaHidden inside an aria-hidden subtree
     */
    const visit = (node, out, parentPointer, shown, skipped, ariaHidden) => {
      if (node.nodeType === 3) {
        if (!shown || skipped) return;
        const tp = node.parentElement;
        if (tp && tp.tagName === 'DETAILS' && !tp.open) return; // in the closed part of a <details>
        const t = collapse(node.data);
        if (t) out.push({ t });
        return;
      }
      if (node.nodeType !== 1) return;
      /** @type {any} */
      const el = node;
      if (skipTags.has(el.tagName)) return;
      if (el.tagName === 'INPUT' && el.type === 'hidden') return;
      const st = style(el);
      if (st.display === 'none') return;
      const pr = el.parentElement;
      if (skipped || (pr && pr.tagName === 'DETAILS' && !pr.open && el.tagName !== 'SUMMARY')) return; // nothing in it is rendered
      if (el.hasAttribute('inert')) return; // a person sees it, but nothing in it takes a click or a key
      const hiddenHere = el.getAttribute('aria-hidden') === 'true';
      const ah = ariaHidden || hiddenHere;
      const styleShown = st.visibility === 'visible';
      let visible = styleShown && !ah;
      if (styleShown && ah) {
        // under aria-hidden: shown when it has a box, as a person sees it
        const r = el.getBoundingClientRect();
        visible = r.width > 0 && r.height > 0;
      }
      const kidSkipped = st.contentVisibility === 'hidden';
      const cursorPointer = st.cursor === 'pointer';
      const kidsOf = (shownKids) => {
        const k = [];
        if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') return k; // fallback content: never rendered
        if (el.tagName === 'SLOT') {
          const as = el.assignedNodes({ flatten: true });
          for (const c of as.length ? as : el.childNodes) visit(c, k, cursorPointer, shownKids, kidSkipped, ah);
          return k;
        }
        const sr = shadowOf(el);
        if (sr) observe(sr);
        for (const c of (sr || el).childNodes) visit(c, k, cursorPointer, shownKids, kidSkipped, ah);
        return k;
      };
      if (st.display === 'contents' && el.tagName !== 'SLOT' && !el.hasAttribute('role')) {
        const sr = shadowOf(el);
        if (sr) observe(sr);
        for (const c of (sr || el).childNodes) visit(c, out, parentPointer, styleShown && (shown || !ah), kidSkipped, ah);
        return;
      }
      if (el.tagName === 'SLOT') {
        out.push(...kidsOf(styleShown && (shown || !ah)));
        return;
      }
      if (!visible) {
        out.push(...kidsOf(false));
        return;
      }
      const role = roleOf(el);
      /** @type {any} */
      const n = { r: role };
      let f = 0;
      const tag = el.tagName;
      if (el === active && focusedPage) f |= FOCUSED;
      if (nativeFocusable(el) && !el.matches(':disabled')) f |= FOCUSABLE;
      if (el.isContentEditable && (el.contentEditable === 'true' || el.contentEditable === 'plaintext-only')) f |= EDITABLE | FOCUSABLE;
      if (tag === 'INPUT' && el.type === 'password') f |= PASSWORD;
      if ((role === 'dialog' || role === 'alertdialog') && (ariaState(el, 'aria-modal') === 'true' || (tag === 'DIALOG' && el.matches(':modal')))) f |= MODAL;
      if (cursorPointer && !parentPointer && tag !== 'BODY' && tag !== 'HTML' && tag !== 'IFRAME' && tag !== 'LABEL') f |= POINTER;
      if (tag !== 'BODY' && tag !== 'HTML' && tag !== 'IFRAME' && tag !== 'LABEL' && el.hasAttribute('onclick')) f |= LISTENER;
      if (!shadowOf(el) && tag.includes('-')) f |= el.matches(':defined') ? SHADOWHOST : SHADOWHOST | UNDEFINED;
      if (role === 'none' && !(f & (POINTER | LISTENER | FOCUSABLE))) {
        out.push(...kidsOf(true));
        return;
      }
      const name = nameOf(el, role);
      if (name) n.n = name;
      else if (fieldRoles.has(role) || f & EDITABLE) {
        const l = textBefore(el);
        if (l) n.l = l;
      } else if ((iconRoles.has(role) && (role !== 'generic' && role !== 'listitem' && role !== 'image' || f & (POINTER | LISTENER | FOCUSABLE))) &&
        !collapse(el.textContent || '')) {
        const e = evidence(el);
        if (e.icons.length || e.data.length) n.e = [e.icons, e.data];
      }
      const v = valueOf(el, role);
      // a field's value as it is typed (a trailing space is part of it); other values as shown
      if (v) n.v = tag === 'INPUT' || tag === 'TEXTAREA' ? v : collapse(v);
      const s = statesOf(el, role);
      if (s.length) n.s = s;
      if (role === 'link' && el.href) n.u = String(el.href);
      const box = () => {
        const r = el.getBoundingClientRect();
        if (r.width || r.height) {
          n.y = r.top + sy;
          n.b = r.bottom + sy;
        }
      };
      if (tag === 'BODY' || tag === 'HTML' || tag === 'IFRAME' || tag === 'FRAME' || tag === 'LABEL') f |= NOLISTEN;
      if (hiddenHere) f |= ARIAHIDDEN;
      if (f) n.f = f;
      // every element gets its id: script-added click listeners are matched to ids afterwards
      n.i = idOf(el);
      if (tag === 'IFRAME' || tag === 'FRAME') {
        if (opts.boxes) box();
        out.push(n);
        return;
      }
      if (tag === 'SELECT' && role === 'combobox') {
        n.o = [...el.options].map((o) => collapse(o.label));
      } else if (role === 'textbox' || role === 'searchbox' || role === 'combobox' || role === 'spinbutton' || role === 'slider' || role === 'ColorWell' ||
        role === 'date' || role === 'DateTime' || role === 'InputTime') {
        if (!n.v && (f & EDITABLE)) {
          const t = collapse(el.innerText || '');
          if (t) n.v = t;
        }
      } else {
        const k = kidsOf(true);
        if (k.length) n.k = k;
      }
      // the box places the element above or below the fold; a plain container (which the
      // outline leaves out) places only the text it holds itself: what it holds places itself,
      // and measuring every <div> of a large page is a good part of a walk
      if (opts.boxes && (role !== 'generic' || name || s.length || (f & ~(NOLISTEN | SHADOWHOST | UNDEFINED)) || n.k?.some((c) => c.t !== undefined))) box();
      out.push(n);
    };
    const out = [];
    if (root.nodeType === 11) observe(root); // a closed shadow root inpage.go hands over
    const start = root.nodeType === 9 ? root.documentElement : root;
    // a shadow root handed over is walked as its host is: the host was seen rendered
    if (start && start.nodeType === 11) {
      for (const c of start.childNodes) visit(c, out, false, true, false, false);
    } else if (start) {
      visit(start, out, false, true, false, false);
    }
    styles = new Map();
    forLabels = new Map();
    // forget the ids of elements that were collected (their WeakRefs stay in byId otherwise)
    if (root.nodeType === 9 && byId.size > 2 * seenLive + 5000) {
      for (const [i, r] of byId) if (!r.deref()) byId.delete(i);
      seenLive = byId.size;
    }
    return JSON.stringify(out);
  };

  /** @param {boolean} boxes */
  const page = (boxes) => {
    const e = epoch;
    arm();
    const outline = walk(document, { boxes });
    const fold = boxes ? (window.visualViewport ? visualViewport.pageTop + visualViewport.height : scrollY + innerHeight) : 0;
    return '[' + JSON.stringify(document.title) + ',' + JSON.stringify(location.href) + ',' + e + ',' + outline + ',' +
      JSON.stringify(document.readyState) + ',' + fold + ']';
  };

  const check = (id) => {
    styles = new Map();
    forLabels = new Map();
    const el = byId.get(id)?.deref();
    if (!el || !el.isConnected) return [false, '', ''];
    const role = roleOf(el);
    return [true, role, nameOf(el, role)];
  };

  Object.defineProperty(globalThis, '__tabrelay', {
    value: Object.freeze({ walk, page, adopt: (host, root) => { const el = byId.get(host)?.deref(); if (el) closedRoots.set(el, root); }, id: (el) => (el && el.nodeType === 1 ? idOf(el) : 0), el: (id) => byId.get(id)?.deref(), check }),
  });
  // the epoch as it is now, for the change check (changes.js)
  Object.defineProperty(globalThis, '__tabrelayEpoch', { value: () => epoch });
})();
