// evidence.js: what an element and its descendants say of themselves beyond their accessible
// name. One function, evaluated in the page by both the snapshot walker (snapshot/inpage.js,
// for controls with no name) and the safety gate's element reader (agent/actions/check.go), so
// the model, the gate and the person read the same words (package describe names them).
//
// icons: ::before/::after content of descendants, background and mask image file names,
// unnamed <img> file names, SVG <use href> and <title>, icon-font classes.
// data: the element's and descendants' ids, a button's name and value, inline handlers,
// javascript: links and data-* attributes ("name value").
// classes: the plain class names of the element and its descendants (a last resort for a
// control nothing else names: <span class="trash">).
function (el) {
	const clean = s => String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
	const icons = [], data = [], classes = [];
	const addTo = (arr, v) => { v = clean(v); if (v && arr.length < 24 && !arr.includes(v)) arr.push(v.slice(0, 160)); };
	const fileName = u => { u = String(u || ''); if (!u || u.startsWith('data:')) return ''; return u.split(/[?#]/)[0].split('/').pop(); };
	const iconClass = /^(fa|fas|far|fal|fad|fab|bi|mdi|glyphicon|icon|icons|ti|ri|la|las|lar|octicon|lucide|feather|ion|gg|ph|codicon|material|ms|symbol)[-_]|[-_](icon|ico)$|^icon/i;
	const tagOf = n => (n && n.tagName ? n.tagName.toLowerCase() : '');
	const urls = bg => (bg && bg !== 'none') ? Array.from(bg.matchAll(/url\(["']?([^"')]+)["']?\)/g), m => fileName(m[1])) : [];
	const kids = el && el.querySelectorAll ? Array.from(el.querySelectorAll('*')).slice(0, 40) : [];
	for (const d of [el, ...kids]) {
		if (!d || !d.getAttribute) continue;
		// each pseudo-element's style is read once (its content, then its background below): a
		// style read is most of what this function costs
		let before = null, after = null;
		try { before = getComputedStyle(d, '::before'); after = getComputedStyle(d, '::after'); } catch (e) {}
		for (const ps of [before, after]) {
			try { const c = ps && ps.content; if (c && c !== 'none' && c !== 'normal' && !c.startsWith('url(')) addTo(icons, c.replace(/^["']|["']$/g, '')); } catch (e) {}
		}
		// an image drawn in the element's place (content: url(star.png)) or behind it
		try { const cs = getComputedStyle(d); for (const bg of [cs.content, cs.backgroundImage, cs.maskImage, cs.webkitMaskImage]) for (const f of urls(bg)) addTo(icons, f); } catch (e) {}
		for (const ps of [before, after]) {
			try { if (ps) for (const f of urls(ps.content)) addTo(icons, f); if (ps) for (const f of urls(ps.backgroundImage)) addTo(icons, f); } catch (e) {}
		}
		const t = tagOf(d);
		if (t === 'img' && !d.getAttribute('alt')) addTo(icons, fileName(d.getAttribute('src')));
		if (t === 'use') addTo(icons, d.getAttribute('href') || d.getAttribute('xlink:href'));
		if (t === 'svg') { const ti = d.querySelector('title'); if (ti) addTo(icons, ti.textContent); }
		const cls = typeof d.className === 'string' ? d.className : (d.getAttribute('class') || '');
		for (const c of cls.split(/\s+/)) if (c && iconClass.test(c)) addTo(icons, c); else if (c && c.length <= 40) addTo(classes, c);
		// what the page's own code calls it: its id, a button's name and value (sent with the
		// form), an inline handler, a javascript: link
		if (d.id && d.id.length <= 80) addTo(data, 'id ' + d.id);
		if ((t === 'button' || t === 'input') && d.getAttribute('name')) addTo(data, d.getAttribute('name') + ' ' + (d.getAttribute('value') || ''));
		const handler = d.getAttribute('onclick') || '';
		if (handler && handler.length <= 160) addTo(data, 'onclick ' + handler);
		const href = d.getAttribute('href') || '';
		if (/^\s*javascript:/i.test(href) && href.length <= 160) addTo(data, 'href ' + href);
		if (d.attributes) for (const a of d.attributes) {
			if (a.name.startsWith('data-') && a.value.length <= 80 && !/^[\d\s.,-]*$/.test(a.value)) addTo(data, a.name.slice(5) + ' ' + a.value);
		}
	}
	return { icons, data, classes };
}
