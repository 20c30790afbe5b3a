/*
 * histograms.js - the sizes and lifetimes of the selected site (the
 * data's "histograms", html.c: the last snapshot's, the whole program's
 * and each carried call stack's): allocations by size class (powers of
 * two) and frees by lifetime class (allocations the block lived through,
 * powers of two: docs/internals/lifetimes.md), a bar per class.
 *
 * A site is selected by a click on a table row (a call stack, function,
 * file:line or module), a flame graph frame (its path from the root) or
 * a block of the memory map, and kept in the hash as site=KIND:KEY
 * (stack:12, function:parse, line:a.c:10, module:libc.so.6,
 * flame:main;parse). Its histograms are the sums of those of the call
 * stacks it covers, each counted once (as the tables count a stack once
 * per function). With no site, the whole program's. One panel shows them,
 * moved under whichever view is shown; the overview also lists the call
 * stacks with the most allocations, a click on one selects it.
 */

var SIZE_UNITS = ['B', 'KiB', 'MiB', 'GiB'];
var HIST_TOP = 10; /* the overview's list of call stacks */

function pow2(e, units) {
	var u = 0;
	while (e >= 10 && u + 1 < units.length) {
		e -= 10;
		u++;
	}
	return Math.pow(2, e) + (units.length > 1 ? ' ' + units[u] : '');
}
/* Size class c is [2^(c-1), 2^c) bytes, 0 for 0 bytes; the last takes
 * all above. Lifetime class c >= 1 is [2^(c+5), 2^(c+6)) allocations, 0
 * under 64 (histo.h). */
function sizeClass(c) {
	if (!c)
		return '0 B';
	return c >= 23 ? '>= ' + pow2(22, SIZE_UNITS) : pow2(c - 1, SIZE_UNITS);
}
function lifeClass(c) {
	if (!c)
		return '< 64';
	return c >= 16 ? '>= ' + commas(Math.pow(2, 21)) : commas(Math.pow(2, c + 5));
}
function histBars(v, total, label, kind) {
	var first = -1, last = -1;
	v.forEach(function (x, i) {
		if (x > 0) {
			if (first < 0)
				first = i;
			last = i;
		}
	});
	if (first < 0)
		return el('div', {cls: 'hp-hist hp-none', 'data-kind': kind, text: 'none'});
	var bars = [];
	for (var i = first; i <= last; i++) {
		var share = total > 0 ? v[i] / total : 0;
		bars.push(el('div', {cls: 'hp-bar-col', 'data-kind': kind, 'data-class': i,
			'data-v': v[i], title: label(i) + ': ' + commas(v[i]) + ' (' + pct(v[i], total) + ')'}, [
			el('div', {cls: 'hp-bar-fill', style: 'height:' + Math.round(60 * share) + 'px'}),
			el('div', {cls: 'hp-bar-label', text: label(i)})]));
	}
	return el('div', {cls: 'hp-hist', 'data-kind': kind}, bars);
}

/* --- sites ------------------------------------------------------------ */

function selectSite(key) { set({site: key || ''}); }

/* The call stacks (indexes of D.stacks) a site covers. */
function siteStacks(site) {
	var i = site.indexOf(':'), kind = site.slice(0, i), key = site.slice(i + 1), out = [];
	if (kind === 'stack')
		return D.stacks[+key] ? [+key] : [];
	if (cache.siteKey === site)
		return cache.siteStacks;
	var path = kind === 'flame' ? key.split(';') : null;
	D.stacks.forEach(function (st, s) {
		if (path) {
			/* The frames from the root: the path is a prefix of them. */
			if (st.length < path.length)
				return;
			for (var k = 0; k < path.length; k++)
				if (fname(st[st.length - 1 - k]) !== path[k])
					return;
			out.push(s);
		} else if (st.some(function (f) { return keyOf(kind, f) === key; })) {
			out.push(s);
		}
	});
	cache.siteKey = site;
	cache.siteStacks = out;
	return out;
}
/* What the panel says a site is. */
function siteName(site) {
	var i = site.indexOf(':'), kind = site.slice(0, i), key = site.slice(i + 1);
	if (kind === 'stack')
		return 'call stack ' + stackLabel(+key);
	if (kind === 'flame') {
		var p = key.split(';');
		return p[p.length - 1] + (p.length > 1 ? ' (called from ' + p.slice(0, -1).reverse()
			.slice(0, 3).join(' \u2190 ') + (p.length > 4 ? ' \u2190 ...' : '') + ')' : '');
	}
	return (kind === 'line' ? 'file:line ' : kind + ' ') + key;
}
/* The histograms of a site, or of the whole program when site is '':
 * {allocs, frees, size: [per class], life: [per class], stacks}. */
function siteHist(site) {
	var H = D.histograms, t = H.total;
	if (!site)
		return {allocs: t.allocs, frees: t.frees, size: t.size, life: t.life, stacks: -1};
	var out = {allocs: 0, frees: 0, size: t.size.map(function () { return 0; }),
		life: t.life.map(function () { return 0; }), stacks: 0};
	siteStacks(site).forEach(function (s) {
		var h = H.stacks[s], k;
		if (!h)
			return;
		out.stacks++;
		out.allocs += h[0];
		out.frees += h[1];
		for (k = 0; k < h[2].length; k += 2)
			out.size[h[2][k]] += h[2][k + 1];
		for (k = 0; k < h[3].length; k += 2)
			out.life[h[3][k]] += h[3][k + 1];
	});
	return out;
}

/* The panel: the selected site's (or the program's) two histograms. */
function buildSiteHist() {
	if (!D.histograms)
		return [];
	$.siteTitle = el('h2', {id: 'hp-site-title'});
	$.siteNote = el('p', {cls: 'hp-hint', id: 'hp-site-note'});
	$.siteBars = el('div', {id: 'hp-site-bars'});
	$.siteHist = el('div', {id: 'hp-site-hist'}, [$.siteTitle, $.siteNote, $.siteBars]);
	return [$.siteHist];
}
function renderSiteHist() {
	if (!$.siteHist)
		return;
	/* In the view that is shown, where the site was clicked: under the
	 * flame graph, under the table (the table's first rows stay on the
	 * first screen, and a click moves no row: the panel is below them). */
	if (S.view === 'flame' && $.siteHist.parentNode !== $.flame)
		$.flame.appendChild($.siteHist);
	else if (S.view === 'tables' && $.siteHist.parentNode !== $.tables)
		$.tables.appendChild($.siteHist);
	else if (S.view === 'overview' && $.siteHist.parentNode !== $.histHome)
		$.histHome.appendChild($.siteHist);
	if (cache.siteHistKey === S.site)
		return;
	cache.siteHistKey = S.site;
	Array.prototype.forEach.call(document.querySelectorAll('#hp-hists tr[data-stack]'),
		function (tr) {
			tr.classList.toggle('on', 'stack:' + tr.getAttribute('data-stack') === S.site);
		});
	var h = siteHist(S.site);
	$.siteTitle.textContent = 'Sizes and lifetimes: ' + (S.site ? siteName(S.site) :
		'the whole program');
	$.siteNote.textContent = '';
	$.siteNote.appendChild(document.createTextNode((S.site ?
		(h.stacks ? 'Its ' + commas(h.stacks) + ' call stack' + (h.stacks > 1 ? 's' : '') +
			' (of those the page carries), ' : 'No call stack the page carries: ') :
		'Every call stack, ') + commas(h.allocs) + ' allocations by size and ' +
		commas(h.frees) + ' frees by lifetime (allocations the block lived through), in ' +
		'snapshot #' + D.histograms.seq + '. ' + (S.site ? '' : 'Click a table row, a ' +
		'flame graph frame or a call stack below to see its own. ')));
	if (S.site)
		$.siteNote.appendChild(el('button', {id: 'hp-site-clear', text: 'Whole program',
			onclick: function () { selectSite(''); }}));
	$.siteBars.textContent = '';
	$.siteBars.appendChild(el('div', {cls: 'hp-hist-pair'}, [
		el('div', {}, [el('div', {cls: 'hp-hint', text: 'Allocations by size (from)'}),
			histBars(h.size, h.allocs, sizeClass, 'size')]),
		el('div', {}, [el('div', {cls: 'hp-hint', text: 'Frees by lifetime (allocations, from)'}),
			histBars(h.life, h.frees, lifeClass, 'life')])]));
}

/* The overview's part: the panel, then the call stacks with the most
 * allocations, a row each (a click selects it). */
function buildHists() {
	if (!D.histograms)
		return [];
	var H = D.histograms, top = [];
	H.stacks.forEach(function (h, s) {
		if (h)
			top.push(s);
	});
	top.sort(function (a, b) { return H.stacks[b][0] - H.stacks[a][0] || a - b; });
	var names = stackLabels(top.slice(0, HIST_TOP));
	var rows = top.slice(0, HIST_TOP).map(function (s, k) {
		var h = H.stacks[s], st = D.stacks[s], size = siteHist('stack:' + s);
		return el('tr', {'data-function': st && st.length ? fname(st[0]) : '',
			'data-stack': s, cls: 'hp-pick', onclick: function () {
				selectSite('stack:' + s);
			}}, [
			el('td', {text: names[k]}),
			el('td', {cls: 'hp-num', text: commas(h[0])}),
			el('td', {}, [histBars(size.size, h[0], sizeClass, 'size')]),
			el('td', {}, [histBars(size.life, h[1], lifeClass, 'life')])]);
	});
	$.histHome = el('div', {id: 'hp-hist-home'}, buildSiteHist());
	return [$.histHome,
		el('p', {cls: 'hp-hint', text: 'The call stacks with the most allocations (click ' +
			'one to select it): their allocations by size, and their frees by lifetime, ' +
			'counted in allocations the block lived through (powers of two).'}),
		el('table', {id: 'hp-hists', cls: 'hp-table'}, [
			el('thead', {}, [el('tr', {}, ['Call stack (innermost)', 'Allocations',
				'By size (from)', 'Frees by lifetime (allocations, from)'].map(function (h) {
				return el('th', {text: h});
			}))]),
			el('tbody', {}, rows)])];
}
