(function () {
'use strict';
var cs = document.currentScript;
var svg = (cs && cs.ownerSVGElement) || document.querySelector('svg.hp-flame') ||
	document.documentElement;
var FX = +svg.getAttribute('data-fx'), FW = +svg.getAttribute('data-fw');
var CW = +svg.getAttribute('data-cw'), unit = svg.getAttribute('data-unit');
var SW = +svg.getAttribute('data-sw') || CW * 12 / 11;
var approx = svg.getAttribute('data-sampled') === '1' ? '~' : '';
var HIT = 'rgb(225,0,225)', DOT = ' \u00b7 ';
function q(c) { return svg.getElementsByClassName(c)[0]; }
var details = q('hp-details'), matched = q('hp-matched');
var resetBtn = q('hp-reset'), box = q('hp-q'), hint = details.textContent;
var NS = 'http://www.w3.org/2000/svg', LINES = 3;
/* Shows text in the details lines under the frames: wrapped at the
   width (at ' · ' when it can), up to LINES lines, the last one cut
   in the middle if it must: nothing goes past the edge. */
function show(text) {
	var c = Math.max(20, Math.floor(FW / SW)), lines = [], rest = text;
	while (rest.length > c && lines.length < LINES - 1) {
		var at = rest.lastIndexOf(DOT, c);
		if (at <= 0) at = rest.lastIndexOf(' ', c);
		if (at <= 0) at = c;
		lines.push(rest.slice(0, at));
		rest = rest.slice(at).replace(/^( · | )/, '');
	}
	if (rest.length > c) {
		var h = Math.floor((c - 3) / 2);
		rest = rest.slice(0, h) + '...' + rest.slice(rest.length - (c - 3 - h));
	}
	lines.push(rest);
	while (details.firstChild) details.removeChild(details.firstChild);
	lines.forEach(function (l, k) {
		var t = document.createElementNS(NS, 'tspan');
		t.setAttribute('x', FX);
		if (k) t.setAttribute('dy', '15');
		t.textContent = l;
		details.appendChild(t);
	});
}
var frames = [], root = null, zoomed = null, term = '';
var gs = svg.querySelectorAll('g.f');
for (var i = 0; i < gs.length; i++) {
	var g = gs[i], p = g.getAttribute('data-p'), r = g.querySelector('rect');
	var f = {g: g, r: r, t: g.querySelector('text'), n: g.getAttribute('data-n'),
		l: g.getAttribute('data-l') || g.getAttribute('data-n'),
		d: +g.getAttribute('data-d'), x: +g.getAttribute('data-x'),
		v: +g.getAttribute('data-v'), p: p === null ? null : frames[+p],
		fill: r.getAttribute('fill'), a: false,
		info: g.querySelector('title').textContent.split('\n').join(DOT)};
	g.setAttribute('data-i', i);
	frames.push(f);
	if (!f.p && !root) root = f;
}
function group(v) {
	return Math.round(v).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
function fmt(v) {
	var u = ['KiB', 'MiB', 'GiB', 'TiB'], k = -1;
	if (unit !== 'B' || v < 1024) return approx + group(v) + ' ' + unit;
	while (v >= 1024 && k < 3) { v /= 1024; k++; }
	return approx + v.toFixed(1) + ' ' + u[k];
}
function pct(v, of) { return (of > 0 ? v / of * 100 : 0).toFixed(2) + '%'; }
function label(n, w) {
	var c = Math.floor((w - 6) / CW);
	if (n.length <= c) return n;
	return c >= 4 ? n.slice(0, c - 2) + '..' : '';
}
function place(f, x, w) {
	f.r.setAttribute('x', x.toFixed(2));
	f.r.setAttribute('width', w.toFixed(2));
	f.t.setAttribute('x', (x + 3).toFixed(2));
	f.t.textContent = label(f.l, w);
}
function under(f, z) { while (f && f.d > z.d) f = f.p; return f === z; }
/* Lays the frames out with z as the full width: its ancestors stay,
   faded, at full width; what is not under z is hidden. */
function zoom(z) {
	var k = z.v > 0 ? FW / z.v : 0, a;
	frames.forEach(function (f) { f.a = false; });
	for (a = z.p; a; a = a.p) a.a = true;
	zoomed = z === root ? null : z;
	frames.forEach(function (f) {
		var full = f.a || f === z, show = f.a || under(f, z);
		f.g.style.display = show ? '' : 'none';
		f.g.classList.toggle('a', f.a);
		if (show) place(f, full ? FX : FX + (f.x - z.x) * k, full ? FW : f.v * k);
	});
	resetBtn.style.display = zoomed ? '' : 'none';
}
/* Colours the frames whose function matches re (a regular expression,
   or the literal text when it is not one) and shows the share of the
   total they cover, nested matches counted once. */
function search(t) {
	var re = null, hits = [], sum = 0, end = -Infinity;
	term = t ? String(t) : '';
	if (term) {
		try { re = new RegExp(term); }
		catch (e) { re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')); }
	}
	frames.forEach(function (f) {
		var m = re !== null && re.test(f.n);
		f.g.classList.toggle('m', m);
		f.r.setAttribute('fill', m ? HIT : f.fill);
		if (m) hits.push(f);
	});
	hits.slice().sort(function (a, b) { return a.x - b.x || b.v - a.v; })
		.forEach(function (h) {
			if (h.x + h.v > end) { sum += h.x + h.v - Math.max(h.x, end); end = h.x + h.v; }
		});
	matched.textContent = term ? 'Matched ' + pct(sum, root.v) + ' (' + fmt(sum) + ', ' +
		hits.length + (hits.length === 1 ? ' frame)' : ' frames)') : '';
	if (box && box.value !== term) box.value = term;
	return {frames: hits.length, value: sum, share: root.v > 0 ? sum / root.v : 0};
}
/* The search box: each keystroke searches; Escape in it clears. */
function ask() {
	if (!box) return;
	box.focus();
	box.select();
}
if (box) {
	box.addEventListener('input', function () { search(box.value); });
	box.addEventListener('keydown', function (e) {
		e.stopPropagation(); /* typing is not a command */
		if (e.key === 'Escape') { search(''); box.blur(); }
	});
}
function frameOf(e) {
	var g = e.target && e.target.closest ? e.target.closest('g.f') : null;
	return g ? frames[+g.getAttribute('data-i')] : null;
}
svg.addEventListener('click', function (e) {
	var f = frameOf(e);
	if (f) zoom(f);
	else if (e.target === resetBtn) zoom(root);
});
svg.addEventListener('mouseover', function (e) {
	var f = frameOf(e);
	if (f) show(f.info + (zoomed && !f.a && f !== zoomed ?
		DOT + pct(f.v, zoomed.v) + ' of ' + zoomed.n : ''));
});
svg.addEventListener('mouseout', function () { show(hint); });
document.addEventListener('keydown', function (e) {
	if ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F')) {
		e.preventDefault();
		ask();
	} else if (e.key === 'Escape') {
		search('');
		zoom(root);
	}
});
window.hpFlame = {search: search, zoom: function (i) { zoom(frames[i]); },
	reset: function () { zoom(root); }};
zoom(root);
svg.setAttribute('data-ready', '1');
})();
