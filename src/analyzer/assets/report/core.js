/*
 * core.js - the state of the page of `heapprof html` and what every view
 * shares: the data, the metrics, formatting, the DOM helper, the URL's
 * hash.
 *
 * The page's script is the files of src/analyzer/assets/report/, in the
 * Makefile's order (REPORT_JS: this one first, main.js last), in one
 * function scope: the build wraps them in (function () { 'use strict';
 * ... })() and embeds the result as report.js (scripts/embed.sh). Each
 * view has a file of its own (overview, timeline, grew, flame, tables,
 * histograms, memmap) with a build function that makes its elements and
 * a render function that draws the state; main.js puts them on the page
 * and calls them when the state changes. src/analyzer/html.c writes the
 * data (docs/html.md describes both).
 *
 * One state (snapshot, metric, view, table, sort, filter, search, zoom,
 * grew, the selected site, the timelines' groupings), kept in the URL's
 * hash (#snapshot=2&metric=peak&view=flame), drives every view; changing
 * it redraws what depends on it. Nothing is fetched; every string of the
 * capture reaches the page through textContent, never as markup.
 */
var D = JSON.parse(document.getElementById('hp-data').textContent);
var t0 = performance.now();

/* Row layout: [stack, in use B, in use objects, peak B, allocated B,
 * allocations, temporary objects, temporary B]. */
var METRICS = [
	{id: 'inuse', col: 1, bytes: true, name: 'In use'},
	{id: 'peak', col: 3, bytes: true, name: 'At peak'},
	{id: 'allocated', col: 4, bytes: true, name: 'Allocated'},
	{id: 'allocations', col: 5, bytes: false, name: 'Allocations'},
	{id: 'temporary', col: 6, bytes: false, name: 'Temporary'}
];
var TABLES = [
	{id: 'stack', name: 'Call stacks'},
	{id: 'function', name: 'Functions'},
	{id: 'line', name: 'File:line'},
	{id: 'module', name: 'Modules'},
	/* From the capture's attribution (html.c "groups"), when it has one:
	 * the figures summed by type (its source as where), context, thread,
	 * heap, as report --by X sums them. */
	{id: 'type', name: 'Types', group: true},
	{id: 'context', name: 'Contexts', group: true},
	{id: 'thread', name: 'Threads', group: true},
	{id: 'heap', name: 'Heaps', group: true}
].filter(function (t) { return !t.group || !!D.snapshots[0].groups; });
var VIEWS = [
	{id: 'overview', name: 'Overview'},
	{id: 'flame', name: 'Flame graph'},
	{id: 'tables', name: 'Tables'}
];

var S = {snapshot: D.snapshots.length - 1, metric: 'inuse', view: 'overview', table: 'function',
	sort: '', desc: true, filter: '', search: '', zoom: '', grew: '', site: '', by: '', evby: ''};

/* --- formatting ------------------------------------------------------ */

function commas(n) {
	return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
/* Bytes as heapprof report says them (src/common/units.c hp_units_bytes):
 * under 1 KiB in bytes, else one decimal of the largest unit that keeps
 * it at least 1 ("400.7 KiB", "256.6 MiB"), so a figure reads the same on
 * the page and in the terminal. */
function bytes(n) {
	var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
	while (Math.abs(n) >= 1024 && i < u.length - 1) {
		n /= 1024;
		i++;
	}
	return i ? n.toFixed(1) + ' ' + u[i] : Math.round(n) + ' B';
}
/* "1 block", "2 blocks": n grouped, then the word, plural unless one. */
function blocks(n) { return commas(n) + (Math.round(n) === 1 ? ' block' : ' blocks'); }
function fmt(m, v) { return m.bytes ? bytes(v) : commas(v); }
function secs(ns) {
	return ns < 1e8 ? (ns / 1e6).toFixed(3) + ' ms' : (ns / 1e9).toFixed(3) + ' s';
}
function pct(v, total) { return total > 0 ? (100 * v / total).toFixed(1) + '%' : '-'; }
function metric() {
	for (var i = 0; i < METRICS.length; i++)
		if (METRICS[i].id === S.metric)
			return METRICS[i];
	return METRICS[0];
}
function metricName(m, snap) {
	if (m.id === 'inuse' && snap.reason === 'exit')
		return 'Leaked at exit';
	return m.name;
}

/* --- the DOM --------------------------------------------------------- */

function el(tag, attrs, kids) {
	var e = document.createElement(tag);
	for (var k in attrs || {}) {
		if (k === 'text')
			e.textContent = attrs[k];
		else if (k === 'cls')
			e.className = attrs[k];
		else if (k.slice(0, 2) === 'on')
			e.addEventListener(k.slice(2), attrs[k]);
		else
			e.setAttribute(k, attrs[k]);
	}
	(kids || []).forEach(function (c) { if (c) e.appendChild(c); });
	return e;
}
function str(i) { return i >= 0 ? D.strings[i] : ''; }
function fname(f) { return str(D.frames[f][0]) || '??'; }
/* The site of a stack (frame indexes, innermost first): the index of its
 * first frame of the program's own code (html.c frames' class 0), as
 * report names a stack; 0 when it has none. */
function siteAt(st) {
	for (var i = 0; i < st.length; i++)
		if (D.frames[st[i]][5] === 0)
			return i;
	return 0;
}
/* A long name cut in the middle, never at its end: "abc…xyz". */
function cut(s, max) {
	s = String(s);
	if (s.length <= max)
		return s;
	var h = Math.floor((max - 1) / 2);
	return s.slice(0, max - 1 - h) + '\u2026' + s.slice(s.length - h);
}
/* A type's name for a legend or a row: template arguments elided
 * ("std::map<...>"), then cut in the middle past max characters. */
function shortType(s, max) {
	var out = '', depth = 0;
	s = String(s);
	for (var i = 0; i < s.length; i++) {
		var c = s[i];
		if (c === '<' && !/operator<*$/.test(s.slice(0, i))) {
			if (!depth++)
				out += '<...';
		} else if (c === '>' && depth) {
			if (!--depth)
				out += '>';
		} else if (!depth) {
			out += c;
		}
	}
	return cut(out, max || 60);
}
function fline(f) {
	var fr = D.frames[f];
	if (str(fr[1]))
		return str(fr[1]).replace(/^.*\//, '') + ':' + fr[2];
	return str(fr[3]) || '??';
}

/* --- state and the hash --------------------------------------------- */

function parse(hash) {
	var st = {};
	(hash || '').replace(/^#/, '').split('&').forEach(function (kv) {
		var i = kv.indexOf('='), k, v;
		if (i < 0)
			return;
		k = decodeURIComponent(kv.slice(0, i));
		v = decodeURIComponent(kv.slice(i + 1).replace(/\+/g, ' '));
		if (k === 'snapshot') {
			var n = parseInt(v, 10);
			if (n >= 1 && n <= D.snapshots.length)
				st.snapshot = n - 1;
		} else if (k === 'desc') {
			st.desc = v !== '0';
		} else if (k in S) {
			st[k] = v;
		}
	});
	return st;
}
function hashOf() {
	var parts = ['snapshot=' + (S.snapshot + 1), 'metric=' + S.metric, 'view=' + S.view];
	if (S.view === 'tables')
		parts.push('table=' + S.table);
	['sort', 'filter', 'search', 'zoom', 'grew', 'site', 'by', 'evby'].forEach(function (k) {
		if (S[k])
			parts.push(k + '=' + encodeURIComponent(S[k]));
	});
	if (S.sort && !S.desc)
		parts.push('desc=0');
	return '#' + parts.join('&');
}

var dirty = {};
function set(ch) {
	for (var k in ch) {
		if (S[k] !== ch[k])
			dirty[k] = true;
		S[k] = ch[k];
	}
	if (history.replaceState)
		history.replaceState(null, '', hashOf());
	render();
}
function apply(hash) { set(parse(hash)); }

/* --- per snapshot: what the views draw from ------------------------- */

var cache = {};
function snap() { return D.snapshots[S.snapshot]; }
