// tabrelay skill recorder: reports the user's clicks, typing (debounced, final value),
// selections and checkbox toggles through the CDP binding BINDING. Installed per document; never
// sends the value of a password field.
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
    send({ t: "click", el, role: roleOf(el), name: nameOf(el) });
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
      for (const [t, f] of handlers) window.removeEventListener(t, f, true);
      delete window.__tabrelayRec;
    },
  };
})();
