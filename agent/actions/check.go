package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/chromedp/cdproto/runtime"

	"github.com/tabrelay/tabrelay/agent/actions/gate"
	"github.com/tabrelay/tabrelay/snapshot"
	"github.com/tabrelay/tabrelay/snapshot/describe"
)

// This file is the action service's side of the safety gate (package gate): for every action
// on a tab it reads the live elements the action will touch and asks the gate, before the
// action's handler sends anything to the page.

// checkAction asks the gate about action a on tab ts for the request ctx carries. It returns a
// *gate.ConfirmError or *gate.BlockedError when the action may not run now, else the decision
// an approval the requester held allowed (nil if none needed one).
func (s *Service) checkAction(ctx context.Context, ts *tabState, a Action) (*gate.Decision, error) {
	ts.judged = nil
	req := gate.From(ctx)
	if req.Who == gate.Caller {
		s.opts.Log.Debug().Str("kind", a.Kind).Msg("caller's own action: recorded, not judged")
		return nil, nil
	}
	props, err := s.proposals(ctx, ts, a)
	if err != nil {
		return nil, err
	}
	approved, err := s.opts.Gate.CheckAll(ctx, props, req, s.logDecision(a.Kind))
	if err == nil && len(props) == 1 && commits(props[0].Action) {
		ts.judged = &props[0] // read again as the input lands (see commitInput)
	}
	return approved, err
}

// commits reports whether the input of action a may commit what its element's form or link
// says as it lands: a click, a key press, typing that ends in Enter.
func commits(a gate.Action) bool {
	return a.Kind == "click" || a.Kind == "press" || (a.Kind == "type" && a.Submit)
}

// logDecision logs the gate's decisions on an action of kind: the alignment check's cost at
// debug level, a decision that is not None at info level.
func (s *Service) logDecision(kind string) func(gate.Decision) {
	return func(d gate.Decision) {
		if v := d.Reviewed; v != nil {
			s.opts.Log.Debug().Str("kind", kind).Bool("ask", v.Ask).Dur("took", v.Took).
				Int("inputTokens", v.InputTokens).Int("outputTokens", v.OutputTokens).Msg("alignment check")
		}
		if d.Level != gate.None {
			s.opts.Log.Info().Str("kind", kind).Str("verdict", d.Verdict.String()).Str("level", d.Level.String()).
				Str("reason", d.Reason).Bool("approved", d.Approved).Msg("safety gate")
		}
	}
}

// proposals are what the gate judges of action a: one proposal, or for fill one per field
// (as a type, select or check of that field). Kinds that touch no element's content (reads,
// scrolling, waiting, hovering, navigation, whose URLs the URL policy checks) have none.
func (s *Service) proposals(ctx context.Context, ts *tabState, a Action) ([]gate.Proposal, error) {
	var refs []string // elements to read, in order
	var act gate.Action
	switch p := a.Params.(type) {
	case *Click:
		act, refs = gate.Action{Kind: "click"}, []string{p.Ref}
	case *Type:
		act, refs = gate.Action{Kind: "type", Text: p.Text, Submit: p.Submit}, []string{p.Ref}
	case *Press:
		c, err := ParseKeys(p.Key)
		if err != nil {
			return nil, err
		}
		act = gate.Action{Kind: "press", Key: c.Key.Key, Modifiers: modifierNames(c.Modifiers)}
		if c.Key.Code == "Space" {
			act.Key = "Space"
		}
		refs = []string{p.Ref} // "" reads the focused element
	case *Select:
		act, refs = gate.Action{Kind: "select", Values: p.Values}, []string{p.Ref}
	case *Check:
		act, refs = gate.Action{Kind: "check", Checked: p.Checked}, []string{p.Ref}
	case *Drag:
		act, refs = gate.Action{Kind: "drag"}, []string{p.Ref, p.To}
	case *Upload:
		act, refs = gate.Action{Kind: "upload", Files: p.Files}, []string{p.Ref}
	case *Evaluate:
		act = gate.Action{Kind: "evaluate", Text: p.Expression}
		if p.Ref != "" {
			refs = []string{p.Ref}
		}
	case *Dialog:
		prop := gate.Proposal{Action: gate.Action{Kind: "dialog", Accept: p.Accept == nil || *p.Accept, Text: p.PromptText}}
		if d := ts.tab.Dialog(); d != nil {
			prop.DialogType, prop.DialogMessage = d.Type, d.Message
		}
		prop.URL = s.targetInfo(ctx, ts.id).URL
		return []gate.Proposal{prop}, nil
	case *Fill:
		pageURL := s.targetInfo(ctx, ts.id).URL
		out := make([]gate.Proposal, 0, len(p.Fields))
		for _, f := range p.Fields {
			el, err := s.readElement(ctx, ts, f.Ref)
			if err != nil {
				return nil, err
			}
			fa := gate.Action{Kind: "type", Text: string(f.Value)}
			switch el.Role {
			case "checkbox", "radio", "switch", "menuitemcheckbox", "menuitemradio":
				want, _ := parseBool(string(f.Value))
				fa = gate.Action{Kind: "check", Checked: want}
			case "combobox", "listbox":
				if el.Tag == "select" || len(el.Options) > 0 {
					fa = gate.Action{Kind: "select", Values: []string{string(f.Value)}}
				}
			}
			out = append(out, gate.Proposal{Action: fa, Element: el, URL: pageURL})
		}
		return out, nil
	default:
		return nil, nil
	}
	prop := gate.Proposal{Action: act, URL: s.targetInfo(ctx, ts.id).URL}
	for i, ref := range refs {
		el, err := s.readElement(ctx, ts, ref)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			prop.Element = el
		} else {
			prop.Target = el
		}
	}
	switch act.Kind {
	case "click", "press", "type", "check", "select", "drag":
		// a key's event reaches the page's own handlers whatever has the focus: for a press,
		// and typing that ends in Enter or holds control characters, read the page's open box
		keys := act.Kind == "press" || (act.Kind == "type" && (act.Submit || strings.ContainsFunc(act.Text, unicode.IsControl)))
		pg, err := s.readPage(ctx, ts, act.Kind == "press", keys)
		if err != nil {
			return nil, err
		}
		prop.Page = pg
	}
	s.keyReceiver(ctx, ts, &prop)
	return []gate.Proposal{prop}, nil
}

// modifierNames names the modifier bits of a key combination as the gate reads them.
func modifierNames(bits int) []string {
	var out []string
	for _, m := range []struct {
		bit  int
		name string
	}{{modCtrl, "Control"}, {modAlt, "Alt"}, {modMeta, "Meta"}, {modShift, "Shift"}} {
		if bits&m.bit != 0 {
			out = append(out, m.name)
		}
	}
	return out
}

// readPage reads what the gate judges of the tab's page (see gate.Page): its title and top
// headings; with selected, what is selected; with all, the open dialog or box and the page's
// words too (for a key pressed with nothing focused).
func (s *Service) readPage(ctx context.Context, ts *tabState, selected, all bool) (*gate.Page, error) {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *runtime.ExceptionDetails `json:"exceptionDetails"`
	}
	expr := fmt.Sprintf("(%s)(%v, %v)", pageJS, selected, all)
	if err := s.c.Call(ctx, ts.tab.Session(), runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: expr, ReturnByValue: new(true)}, &r); err != nil {
		return nil, fmt.Errorf("read the page before acting: %w", err)
	}
	if r.ExceptionDetails != nil {
		return nil, fmt.Errorf("read the page before acting: %w: %s", ErrScript, r.ExceptionDetails.Text)
	}
	var pg gate.Page
	if err := json.Unmarshal(r.Result.Value, &pg); err != nil {
		return nil, fmt.Errorf("read the page before acting: %w", err)
	}
	return &pg, nil
}

// pageJS reads the page as the gate judges it (see gate.Page).
const pageJS = `function(selected, all) {
	const clean = s => String(s || '').replace(/\s+/g, ' ').trim();
	const visible = n => !!(n.getClientRects().length) && getComputedStyle(n).visibility !== 'hidden';
	const out = { title: clean(document.title).slice(0, 200), headings: [], dialog: '', dialogButtons: [], selected: [], text: '' };
	for (const h of Array.from(document.querySelectorAll('h1,[role=heading][aria-level="1"]')).slice(0, 4)) out.headings.push(clean(h.innerText || h.textContent).slice(0, 200));
	if (selected) {
		const add = v => { v = clean(v).slice(0, 200); if (v && out.selected.length < 6) out.selected.push(v); };
		try { add(String(getSelection())); } catch (e) {}
		let rows = [];
		try { rows = document.querySelectorAll('[aria-selected=true]:not([role=tab]),[aria-current=true],tr:has(input[type=checkbox]:checked),li:has(input[type=checkbox]:checked),[role=row]:has([aria-checked=true])'); }
		catch (e) { rows = document.querySelectorAll('[aria-selected=true]:not([role=tab]),[aria-current=true]'); }
		for (const n of rows) add(n.innerText || n.textContent);
	}
	if (all) {
		let box = Array.from(document.querySelectorAll('dialog[open],[role=dialog],[role=alertdialog],[aria-modal=true]')).find(visible);
		if (!box) {
			for (const n of Array.from(document.body ? document.body.querySelectorAll('*') : []).slice(0, 3000)) {
				const cs = getComputedStyle(n);
				if ((cs.position === 'fixed' || cs.position === 'sticky') && !n.closest('header,nav,footer,[role=banner],[role=navigation],[role=contentinfo]') && visible(n) && clean(n.innerText).length > 0) { box = n; break; }
			}
		}
		if (box) {
			out.dialog = clean(box.innerText || box.textContent).slice(0, 1000);
			out.dialogButtons = Array.from(box.querySelectorAll('button,input[type=submit],input[type=button],[role=button]')).slice(0, 12)
				.map(b => ({ text: clean(b.innerText || b.value || ''), labels: [clean(b.getAttribute('aria-label')), clean(b.getAttribute('title'))].filter(Boolean) }));
		}
		out.text = clean(document.body ? document.body.innerText : '').slice(0, 3000);
	}
	return out;
}`

// readElement resolves ref on the live page (ref "": the focused element, nil when none) and
// reads what the gate judges.
func (s *Service) readElement(ctx context.Context, ts *tabState, ref string) (*gate.Element, error) {
	var session, objectID, role, name string
	if ref != "" {
		el, err := ts.resolve(ctx, ref)
		if err != nil {
			return nil, err
		}
		ts.hold(ref, el) // the action's handler takes it on (resolve)
		session, objectID, role, name = el.Frame.Session, el.ObjectID, el.Role, el.Name
	} else {
		var r struct {
			Result struct {
				ObjectID string `json:"objectId"`
				Subtype  string `json:"subtype"`
			} `json:"result"`
		}
		session = ts.tab.Session()
		if err := s.c.Call(ctx, session, runtime.CommandEvaluate, &runtime.EvaluateParams{Expression: focusedJS}, &r); err != nil {
			return nil, fmt.Errorf("read the focused element: %w", err)
		}
		if r.Result.ObjectID == "" || r.Result.Subtype == "null" {
			return nil, nil
		}
		objectID = r.Result.ObjectID
		defer ts.tab.Release(ctx, &snapshot.Element{ObjectID: objectID, Frame: snapshot.Frame{Session: session}})
	}
	raw, err := s.callFn(ctx, session, objectID, probeJS)
	if err != nil {
		return nil, fmt.Errorf("read %s before acting: %w", ref, err)
	}
	return probed(raw, ref, role, name)
}

// probed is the gate's Element from probeJS's answer raw for the element ref, whose role and
// accessible name the page model gave.
func probed(raw json.RawMessage, ref, role, name string) (*gate.Element, error) {
	var el gate.Element
	var probe struct {
		gate.Element
		Role string `json:"role"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("read %s before acting: %w", ref, err)
	}
	el = probe.Element
	el.Ref, el.Role, el.Name = ref, role, name
	if el.Role == "" {
		el.Role = probe.Role
	}
	if strings.TrimSpace(el.Name) == "" && strings.TrimSpace(el.Text) == "" {
		el.Inferred = describe.Infer(el.Icons, el.Data, el.Classes)
	}
	return &el, nil
}

// focusedJS finds the focused element, inside open shadow roots and same-origin frames (null
// when the page's body has the focus).
const focusedJS = `(() => {
	let a = document.activeElement;
	for (;;) {
		if (a && a.shadowRoot && a.shadowRoot.activeElement) { a = a.shadowRoot.activeElement; continue; }
		if (a && a.tagName === 'IFRAME') { try { if (a.contentDocument && a.contentDocument.activeElement) { a = a.contentDocument.activeElement; continue; } } catch (e) {} }
		break;
	}
	return a && a !== document.body && a !== document.documentElement ? a : null;
})()`

// probeJS reads an element as the gate judges it (see gate.Element): what it shows, all its
// other names, its form's or dialog's buttons and words.
var probeJS = `function() {
	const el = this, doc = el.ownerDocument;
	const clean = s => String(s || '').replace(/\s+/g, ' ').trim();
	const txt = n => n ? clean(n.innerText || n.textContent).slice(0, 300) : '';
	const ids = v => clean(String(v || '').split(/\s+/).filter(Boolean).map(id => { const n = doc.getElementById(id); return n ? (n.innerText || n.textContent) : ''; }).join(' ')).slice(0, 300);
	const tagOf = n => (n.tagName || '').toLowerCase();
	const typeOf = n => { const t = tagOf(n); return (t === 'input' || t === 'button') ? (n.getAttribute('type') || (t === 'button' ? 'submit' : 'text')).toLowerCase() : ''; };
	const tag = tagOf(el), type = typeOf(el);
	const implicit = () => {
		if (tag === 'button' || tag === 'summary' || (tag === 'input' && ['submit', 'button', 'reset', 'image'].includes(type))) return 'button';
		if (tag === 'a' && el.hasAttribute('href')) return 'link';
		if (tag === 'input' && (type === 'checkbox' || type === 'radio')) return type;
		if (tag === 'select') return 'combobox';
		if (tag === 'textarea' || tag === 'input') return 'textbox';
		if (tag === 'option') return 'option';
		return '';
	};
	const role = clean(el.getAttribute && el.getAttribute('role')).split(' ')[0] || implicit();
	const names = n => {
		const out = [];
		const push = v => { v = clean(v); if (v && out.length < 16) out.push(v.slice(0, 300)); };
		if (!n.getAttribute) return out;
		push(n.getAttribute('aria-label')); push(ids(n.getAttribute('aria-labelledby'))); push(n.getAttribute('title'));
		push(n.getAttribute('alt')); push(ids(n.getAttribute('aria-describedby'))); push(n.getAttribute('placeholder'));
		if (n.labels) for (const l of n.labels) push(txt(l));
		if (tagOf(n) === 'input' && ['submit', 'button', 'reset'].includes(typeOf(n))) push(n.value);
		for (const i of n.querySelectorAll('img[alt],svg[aria-label],[aria-label],[title]')) { push(i.getAttribute('alt')); push(i.getAttribute('aria-label')); push(i.getAttribute('title')); }
		for (const p of ['::before', '::after']) {
			try { const c = getComputedStyle(n, p).content; if (c && c !== 'none' && c !== 'normal') push(c.replace(/^["']|["']$/g, '')); } catch (e) {}
		}
		return out;
	};
	const shown = n => {
		const t = tagOf(n), ty = typeOf(n);
		if (t === 'input') { if (['submit', 'button', 'reset'].includes(ty)) return clean(n.value); if (ty === 'image') return clean(n.alt); return ''; }
		if (t === 'select') return clean(n.selectedOptions && n.selectedOptions[0] ? n.selectedOptions[0].label : '');
		if (t === 'textarea') return '';
		return txt(n);
	};
	const control = 'button,a[href],input,select,textarea,[role=button],[role=link],[role=menuitem],[role=tab],[role=checkbox],[role=radio],[role=switch],[role=option]';
	const words = (root, max) => {
		let out = '';
		const w = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT, { acceptNode: t => {
			for (let p = t.parentElement; p && p !== root.parentElement; p = p.parentElement) {
				if (p.tagName === 'SCRIPT' || p.tagName === 'STYLE' || (p !== root && p.matches(control))) return NodeFilter.FILTER_REJECT;
			}
			return NodeFilter.FILTER_ACCEPT;
		} });
		while (out.length < max && w.nextNode()) out += ' ' + w.currentNode.data;
		for (const f of root.querySelectorAll('input,select,textarea')) { if (out.length >= max) break; for (const v of names(f)) out += ' ' + v; }
		return clean(out).slice(0, max);
	};
	const buttonsOf = root => Array.from(root.querySelectorAll('button,input[type=submit],input[type=button],input[type=image],[role=button]'))
		.filter(b => !b.disabled && b.getAttribute('aria-disabled') !== 'true').slice(0, 24).map(b => ({ text: shown(b), labels: names(b) }));
	const form = el.form || el.closest('form');
	const scopeEl = el.closest('dialog,[role=dialog],[role=alertdialog]') || form;
	let scope = '', scopeText = '', buttons = [];
	if (scopeEl) {
		scope = tagOf(scopeEl) === 'form' ? 'form' : 'dialog';
		scopeText = words(scopeEl, 2000);
		buttons = buttonsOf(scopeEl);
	} else {
		for (let p = el.parentElement, i = 0; p && i < 6; p = p.parentElement, i++) {
			if (!buttons.length && p.querySelector('button,input[type=submit],[role=button]')) buttons = buttonsOf(p);
			if (scopeText.length < 40) scopeText = words(p, 600);
			if (buttons.length && scopeText.length >= 40) break;
		}
	}
	const submits = !!form && !!form.querySelector('button:not([type]),button[type=submit],input[type=submit],input[type=image]');
	// headings: the dialog's name or first heading, the nearest heading before the element,
	// its region's or fieldset's name
	const headings = [];
	const addHeading = v => { v = clean(v).slice(0, 200); if (v && !headings.includes(v)) headings.push(v); };
	const isHeading = n => /^H[1-6]$/.test(n.tagName) || (n.getAttribute && n.getAttribute('role') === 'heading');
	const headingIn = n => { const hs = n.querySelectorAll ? n.querySelectorAll('h1,h2,h3,h4,h5,h6,[role=heading]') : []; return hs.length ? hs[hs.length - 1] : null; };
	const dlg = el.closest('dialog,[role=dialog],[role=alertdialog]');
	if (dlg) {
		addHeading(dlg.getAttribute('aria-label') || ids(dlg.getAttribute('aria-labelledby')));
		const h = dlg.querySelector('h1,h2,h3,h4,h5,h6,[role=heading]');
		if (h) addHeading(txt(h));
	}
	found: for (let n = el, i = 0; n && n !== doc.body && i < 8; n = n.parentElement, i++) {
		for (let sib = n.previousElementSibling; sib; sib = sib.previousElementSibling) {
			if (isHeading(sib)) { addHeading(txt(sib)); break found; }
			const h = headingIn(sib);
			if (h) { addHeading(txt(h)); break found; }
		}
		if (n.parentElement && isHeading(n.parentElement)) { addHeading(txt(n.parentElement)); break; }
	}
	const region = el.closest('section[aria-label],section[aria-labelledby],[role=region],[role=group][aria-label],fieldset');
	if (region) addHeading(region.tagName === 'FIELDSET' ? txt(region.querySelector('legend')) : (region.getAttribute('aria-label') || ids(region.getAttribute('aria-labelledby'))));
	// icons and data-* attributes of the element and its descendants (describe.EvidenceJS)
	const { icons, data, classes } = (` + describe.EvidenceJS + `)(el);
	// the state of its form now: what a commit sends (see gate.Form)
	// (an element in no form: the lists, boxes and fields beside it, method "", for a bulk action
	// chosen in a toolbar's list and carried out by its Apply)
	const formState = f => {
		let controls = f ? Array.from(f.elements || []) : null;
		if (!f && (role === 'button' || tag === 'button')) {
			for (let p = el.parentElement, i = 0; p && p !== doc.body && i < 4; p = p.parentElement, i++) {
				if (p.querySelector('select')) { controls = Array.from(p.querySelectorAll('input,select,textarea')); break; }
			}
		}
		if (!controls) return null;
		const fields = [];
		for (const c of controls.slice(0, 80)) {
			if (fields.length >= 60) break;
			const t = tagOf(c);
			if (t !== 'input' && t !== 'select' && t !== 'textarea') continue;
			const kind = t === 'input' ? String(c.type || 'text').toLowerCase() : t;
			if (['submit', 'button', 'reset', 'image', 'file'].includes(kind)) continue;
			const label = clean((c.labels && c.labels.length ? Array.from(c.labels).map(l => l.innerText || l.textContent).join(' ') : '') ||
				c.getAttribute('aria-label') || ids(c.getAttribute('aria-labelledby')) || c.getAttribute('title') || '').slice(0, 200);
			const ac = String(c.getAttribute('autocomplete') || '').toLowerCase();
			const fd = { name: clean(c.getAttribute('name')).slice(0, 100), kind, label, value: '', chosen: [], checked: false, self: c === el,
				secret: kind === 'password' || /(^|\s)(cc-|one-time-code|current-password|new-password)/.test(ac) };
			if (t === 'select') {
				for (const o of Array.from(c.selectedOptions || []).slice(0, 20)) fd.chosen.push(clean(o.label).slice(0, 120));
				fd.value = Array.from(c.selectedOptions || []).slice(0, 20).map(o => o.value).join(', ').slice(0, 200);
			} else if (kind === 'checkbox' || kind === 'radio') {
				fd.checked = !!c.checked; fd.value = String(c.value || '').slice(0, 200);
			} else if (!fd.secret) {
				fd.value = String(c.value || '').slice(0, 200);
			}
			fields.push(fd);
		}
		const method = f ? clean((el.getAttribute && el.getAttribute('formmethod')) || f.getAttribute('method') || 'get').toLowerCase() : '';
		return { method, fields };
	};
	const formAction = clean((el.getAttribute && el.getAttribute('formaction')) || (form && form.getAttribute('action')) || '');
	// a click on a link (or inside one) goes to its href, resolved as the browser follows it
	let href = '';
	const link = el.closest && el.closest('a[href],area[href]');
	if (link) { try { const u = new URL(link.getAttribute('href'), doc.baseURI); if (u.protocol === 'http:' || u.protocol === 'https:') href = u.href.slice(0, 2000); } catch (e) {} }
	const opens = !!(el.getAttribute && (el.hasAttribute('aria-haspopup') && el.getAttribute('aria-haspopup') !== 'false' || el.hasAttribute('aria-expanded')));
	return {
		role, tag, type, text: shown(el), labels: names(el), password: type === 'password',
		autocomplete: clean(el.getAttribute && el.getAttribute('autocomplete')).toLowerCase(),
		options: tag === 'select' ? Array.from(el.options).slice(0, 100).map(o => clean(o.label)) : [],
		scope, scopeText, buttons, submits, url: doc.URL, headings, formAction, href, form: formState(form), icons, data, classes, opens,
		multiline: tag === 'textarea' || !!el.isContentEditable,
	};
}`
