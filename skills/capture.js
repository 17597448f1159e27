// tabrelay skill recorder: reports the user's clicks, typing (debounced, final value),
// selections and checkbox toggles through the CDP binding BINDING. Installed per document; never
// sends the value of a password field. After a click it watches the page's status, alert and
// live regions for EFFECT_MS milliseconds: the first short text that appears there is reported as the click's
// effect (an "effect" event naming the click), for the step to check on replay.
(() => {
  if (window.__tabrelayRec) return;
  const B = "BINDING";
  const DEBOUNCE = DEBOUNCE_MS;
  const els = [];
  const handlers = [];
  const pending = new Map();
  const on = (t, f) => { window.addEventListener(t, f, true); handlers.push([t, f]); };
  const clean = s => (s || "").replace(/\s+/g, " ").trim();
  const send = o => {
    try {
      o.i = els.push(o.el) - 1;
      delete o.el;
      o.url = location.href;
      window[B](JSON.stringify(o));
    } catch (e) { /* binding gone: recording stopped */ }
  };
  const nameOf = el => {
    const al = el.getAttribute("aria-label");
    if (al) return clean(al);
    const lb = el.getAttribute("aria-labelledby");
    if (lb) return clean(lb.split(/\s+/).map(id => (document.getElementById(id) || {}).textContent || "").join(" "));
    if (el.labels && el.labels.length) return clean(Array.from(el.labels).map(l => l.innerText).join(" "));
    if (el.tagName === "INPUT" && ["submit", "button", "reset"].includes(el.type)) return clean(el.value);
    if (["INPUT", "TEXTAREA", "SELECT"].includes(el.tagName)) return clean(el.getAttribute("placeholder") || el.title || "");
    if (el.tagName === "IMG") return clean(el.alt);
    return clean(el.innerText || el.textContent || el.title);
  };
  const roleOf = el => {
    const r = el.getAttribute("role");
    if (r) return r.split(/\s+/)[0];
    const t = el.tagName;
    if (t === "A" && el.hasAttribute("href")) return "link";
    if (t === "BUTTON" || t === "SUMMARY") return "button";
    if (t === "SELECT") return el.multiple || el.size > 1 ? "listbox" : "combobox";
    if (t === "TEXTAREA") return "textbox";
    if (t === "INPUT") {
      const ty = (el.type || "text").toLowerCase();
      return ({ checkbox: "checkbox", radio: "radio", submit: "button", button: "button", reset: "button", image: "button",
        search: "searchbox", range: "slider", number: "spinbutton" })[ty] || "textbox";
    }
    if (el.isContentEditable) return "textbox";
    return "generic";
  };
  const interactive = 'a[href],button,input,select,textarea,summary,[role=button],[role=link],[role=checkbox],[role=radio],[role=switch],[role=tab],[role=menuitem],[role=menuitemcheckbox],[role=menuitemradio],[role=option],[role=treeitem],[role=combobox]';
  const noText = ["checkbox", "radio", "submit", "button", "reset", "image", "file", "range", "color"];
  const isText = el => (el.tagName === "INPUT" && !noText.includes((el.type || "text").toLowerCase())) || el.tagName === "TEXTAREA" || el.isContentEditable;
  const first = e => { const p = e.composedPath ? e.composedPath() : [e.target]; return p[0]; };
  const emitType = (el, submit) => {
    const pw = el.tagName === "INPUT" && el.type === "password";
    send({ t: "type", el, role: roleOf(el), name: nameOf(el), value: pw ? "" : (el.isContentEditable ? el.innerText : el.value), password: pw, submit: !!submit });
  };
  const flush = (el, submit) => {
    if (!pending.has(el)) return false;
    clearTimeout(pending.get(el));
    pending.delete(el);
    emitType(el, submit);
    return true;
  };
  const flushAll = () => { for (const el of Array.from(pending.keys())) flush(el, false); };
  on("input", e => {
    const el = first(e);
    if (!(el instanceof Element) || !isText(el)) return;
    clearTimeout(pending.get(el));
    pending.set(el, setTimeout(() => flush(el, false), DEBOUNCE));
  });
  on("keydown", e => {
    const el = first(e);
    if (e.key !== "Enter" || !(el instanceof Element) || !isText(el) || el.tagName === "TEXTAREA") return;
    lastEnter = { form: el.form || null, at: performance.now() };
    if (!flush(el, true)) send({ t: "press", el, role: roleOf(el), name: nameOf(el), key: "Enter" });
  });
  let lastEnter = null;
  // The effect of a click: text announced in a status, alert or live region (never inside a form
  // field), cut to MAX_EFFECT characters at a word.
  const LIVE = '[role=status],[role=alert],[aria-live]:not([aria-live=off]),output';
  const MAX_EFFECT = 80;
  let watching = null;
  const unwatch = () => { if (watching) { watching.mo.disconnect(); clearTimeout(watching.timer); watching = null; } };
  const regionOf = n => {
    const e = n && (n.nodeType === 1 ? n : n.parentElement);
    const r = e && e.closest ? e.closest(LIVE) : null;
    if (!r || r.closest('input,textarea,select,[contenteditable=""],[contenteditable=true]') || r.querySelector('input,textarea')) return null;
    return r;
  };
  const effectText = r => {
    let t = clean(r.innerText);
    if (t.length > MAX_EFFECT) {
      t = t.slice(0, MAX_EFFECT + 1);
      const sp = t.lastIndexOf(" ");
      t = sp > 0 ? t.slice(0, sp) : t.slice(0, MAX_EFFECT);
    }
    return t;
  };
  const watchEffect = of => {
    unwatch();
    const mo = new MutationObserver(muts => {
      for (const m of muts) {
        for (const n of [m.target, ...Array.from(m.addedNodes || [])]) {
          const r = regionOf(n);
          const text = r ? effectText(r) : "";
          if (!text) continue;
          unwatch();
          send({ t: "effect", of, text });
          return;
        }
      }
    });
    mo.observe(document.documentElement, { childList: true, subtree: true, characterData: true });
    watching = { mo, timer: setTimeout(unwatch, EFFECT_MS) };
  };
  const isSubmit = el => (el.tagName === "BUTTON" && (el.type || "submit") === "submit") || (el.tagName === "INPUT" && (el.type === "submit" || el.type === "image"));
  on("click", e => {
    // Enter in a form field makes the browser click the form's default button: that click is
    // part of the submit already recorded, not a step of its own.
    if (e.detail === 0 && lastEnter && performance.now() - lastEnter.at < 1000) {
      const b = e.composedPath ? e.composedPath()[0] : e.target;
      if (b instanceof Element && isSubmit(b) && b.form === lastEnter.form) { lastEnter = null; return; }
    }
    flushAll();
    const p = e.composedPath ? e.composedPath() : [e.target];
    let el = null;
    for (const n of p) if (n instanceof Element && n.matches(interactive)) { el = n; break; }
    if (!el) return;
    if (el.tagName === "SELECT" || el.tagName === "OPTION" || isText(el)) return;
    if (el.tagName === "INPUT" && (el.type === "checkbox" || el.type === "radio")) return; // change reports it
    const ev = { t: "click", el, role: roleOf(el), name: nameOf(el) };
    send(ev);
    if (typeof ev.i === "number") watchEffect(ev.i);
  });
  on("change", e => {
    const el = first(e);
    if (!(el instanceof Element)) return;
    if (el.tagName === "SELECT") {
      flushAll();
      send({ t: "select", el, role: roleOf(el), name: nameOf(el), values: Array.from(el.selectedOptions).map(o => clean(o.label || o.textContent)) });
    } else if (el.tagName === "INPUT" && (el.type === "checkbox" || el.type === "radio")) {
      flushAll();
      send({ t: "check", el, role: roleOf(el), name: nameOf(el), checked: el.checked });
    } else if (isText(el)) {
      flush(el, false);
    }
  });
  on("focusout", e => { const el = first(e); if (el instanceof Element) flush(el, false); });
  on("pagehide", flushAll);
  window.__tabrelayRec = {
    els,
    flush: flushAll,
    stop() {
      flushAll();
      unwatch();
      for (const [t, f] of handlers) window.removeEventListener(t, f, true);
      delete window.__tabrelayRec;
    },
  };
})();
