/*
 * report.js - the page of `heapprof html` (src/analyzer/html.c writes the
 * data this reads; docs/html.md describes both).
 *
 * One state (snapshot, metric, view, table, sort, filter, search, zoom),
 * kept in the URL's hash (#snapshot=2&metric=peak&view=flame), drives
 * every view: the summary, the timeline (uPlot, vendored), the icicle
 * graph (a canvas, drawn here) and the tables. Changing it redraws what
 * depends on it. Nothing is fetched; every string of the capture reaches
 * the page through textContent, never as markup.
 *
 * window.hpReport is the page's handle for tests and for the console:
 * its state, apply(hash), the icicle's nodes and search.
 */
(function () {
'use strict';

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
	sort: '', desc: true, filter: '', search: '', zoom: '', grew: ''};

/* --- formatting ------------------------------------------------------ */

function commas(n) {
	return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
function bytes(n) {
	var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0, a = Math.abs(n);
	if (a < 10240)
		return commas(n) + ' B';
	while (a >= 1024 && i < u.length - 1) {
		a /= 1024;
		n /= 1024;
		i++;
	}
	return n.toFixed(n >= 100 ? 0 : 1) + ' ' + u[i];
}
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
function fline(f) {
	var fr = D.frames[f];
	if (str(fr[1]))
		return str(fr[1]).replace(/^.*\//, '') + ':' + fr[2];
	return str(fr[3]) || '??';
}

var $ = {};
function build() {
	var snapSel = el('select', {id: 'hp-snapshot', onchange: function () {
		set({snapshot: +this.value, zoom: ''});
	}});
	D.snapshots.forEach(function (s, i) {
		snapSel.appendChild(el('option', {value: i, text: '#' + (i + 1) + ' ' + s.reason +
			' at ' + secs(s.time_ns)}));
	});
	var metSel = el('select', {id: 'hp-metric', onchange: function () {
		set({metric: this.value, zoom: '', sort: ''});
	}});
	METRICS.forEach(function (m) { metSel.appendChild(el('option', {value: m.id, text: m.name})); });
	var nav = el('nav', {}, VIEWS.map(function (v) {
		return el('a', {href: '#', 'data-view': v.id, text: v.name, onclick: function (e) {
			e.preventDefault();
			set({view: v.id});
		}});
	}));
	var argv = D.argv.length ? D.argv.join(' ') : D.path;
	document.body.appendChild(el('header', {}, [
		el('h1', {text: document.title}),
		el('div', {cls: 'hp-cmd', text: argv + (D.pid ? '  (pid ' + D.pid + ')' : '')}),
		el('div', {cls: 'hp-bar'}, [nav, el('label', {text: 'Snapshot '}, [snapSel]),
			el('label', {text: 'Metric '}, [metSel])])
	]));
	$.snapSel = snapSel;
	$.metSel = metSel;
	$.nav = nav;

	/* Overview: the summary, the timeline, the snapshots. */
	$.summary = el('dl', {id: 'hp-summary'});
	$.chart = el('div', {id: 'hp-timeline'});
	$.sites = el('div', {id: 'hp-sites'});
	$.snaps = el('tbody');
	$.overview = el('section', {id: 'hp-overview'}, [
		el('h2', {text: 'Summary'}), $.summary,
		el('h2', {text: 'Heap and RSS over time'}),
		el('p', {cls: 'hp-hint', text: 'Click near a snapshot (the vertical lines) to select ' +
			'it; drag over a range to zoom to it and see what grew in it, double-click to ' +
			'unzoom.'}),
		$.chart,
		$.grew = el('div', {id: 'hp-grew'}),
		D.sites && D.sites.lines.length ? el('h2', {text: 'Top sites over time'}) : null,
		D.sites && D.sites.lines.length ? el('p', {cls: 'hp-hint', text: 'The bytes in use ' +
			'of the ' + D.sites.lines.length + ' call stacks that held the most at any ' +
			'moment (innermost function and line). Click near a snapshot to select it.'}) : null,
		D.sites && D.sites.lines.length ? $.sites : null,
		D.hists && D.hists.length ? el('h2', {text: 'Sizes and lifetimes'}) : null,
		D.hists && D.hists.length ? el('p', {cls: 'hp-hint', text: 'The call stacks with ' +
			'the most allocations (in the last snapshot): their allocations by size, and ' +
			'their frees by lifetime, counted in allocations the block lived through ' +
			'(powers of two).'}) : null,
		D.hists && D.hists.length ? renderHists() : null,
		D.map ? el('h2', {text: 'Memory map'}) : null,
		D.map ? el('p', {cls: 'hp-hint', text: 'Where the live blocks of snapshot #' + D.map.seq +
			' lie (run --live-blocks): each region of the address space (blocks less than ' +
			'1 MiB apart) is a row, left to right, a block a bar coloured by its call stack ' +
			'(grey: the gaps between blocks). Hover for details.'}) : null,
		D.map ? renderMap() : null,
		el('h2', {text: 'Snapshots'}),
		el('table', {id: 'hp-snaps', cls: 'hp-table'}, [
			el('thead', {}, [el('tr', {}, ['#', 'Time', 'Reason', 'In use', 'Peak so far',
				'Allocations', 'Call stacks'].map(function (h) {
				return el('th', {text: h});
			}))]), $.snaps])
	]);

	/* Flame graph. */
	$.search = el('input', {id: 'hp-search', type: 'search',
		placeholder: 'Search functions (regular expression)', oninput: function () {
			set({search: this.value});
		}});
	$.reset = el('button', {id: 'hp-reset', text: 'Reset zoom', onclick: function () {
		set({zoom: ''});
	}});
	$.matched = el('span', {id: 'hp-matched'});
	$.flameTitle = el('h2', {id: 'hp-flame-title'});
	$.canvas = el('canvas', {id: 'hp-flame'});
	$.details = el('div', {id: 'hp-details', text: ' '});
	$.flame = el('section', {id: 'hp-flame-view'}, [
		$.flameTitle,
		el('div', {cls: 'hp-bar'}, [$.search, $.reset, $.matched]),
		el('p', {cls: 'hp-hint', text: 'The root at the top, callees below; each frame as ' +
			'wide as its share. Click a frame to zoom, Escape to go back.'}),
		el('div', {cls: 'hp-canvas'}, [$.canvas]), $.details
	]);

	/* Tables. */
	$.tabs = el('div', {cls: 'hp-tabs'}, TABLES.map(function (t) {
		return el('button', {'data-table': t.id, text: t.name, onclick: function () {
			set({table: t.id, sort: ''});
		}});
	}));
	$.filter = el('input', {id: 'hp-filter', type: 'search',
		placeholder: 'Filter (regular expression)', oninput: function () {
			set({filter: this.value});
		}});
	$.tcount = el('span', {id: 'hp-count'});
	$.thead = el('thead');
	$.tbody = el('tbody');
	$.tables = el('section', {id: 'hp-tables'}, [
		el('div', {cls: 'hp-bar'}, [$.tabs, $.filter, $.tcount]),
		el('table', {id: 'hp-table', cls: 'hp-table'}, [$.thead, $.tbody])
	]);
	document.body.appendChild($.overview);
	document.body.appendChild($.flame);
	document.body.appendChild($.tables);
	$.overview.setAttribute('data-view', 'overview');
	$.flame.setAttribute('data-view', 'flame');
	$.tables.setAttribute('data-view', 'tables');

	$.canvas.addEventListener('mousemove', flameHover);
	$.canvas.addEventListener('click', flameClick);
	document.addEventListener('keydown', function (e) {
		if (e.key === 'Escape')
			set({zoom: '', search: ''});
	});
	window.addEventListener('hashchange', function () { apply(location.hash); });
	window.addEventListener('resize', function () {
		drawTimeline();
		drawFlame();
	});
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
	['sort', 'filter', 'search', 'zoom', 'grew'].forEach(function (k) {
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

function render() {
	var s = snap(), m = metric();
	if (!METRICS.some(function (x) { return x.id === S.metric; }))
		S.metric = 'inuse';
	if (!TABLES.some(function (x) { return x.id === S.table; }))
		S.table = 'function';
	if (!VIEWS.some(function (x) { return x.id === S.view; }))
		S.view = 'overview';
	$.snapSel.value = S.snapshot;
	$.metSel.value = S.metric;
	Array.prototype.forEach.call($.nav.children, function (a) {
		a.classList.toggle('on', a.getAttribute('data-view') === S.view);
	});
	[$.overview, $.flame, $.tables].forEach(function (sec) {
		sec.hidden = sec.getAttribute('data-view') !== S.view;
	});
	if ($.metSel.options[0])
		$.metSel.options[0].textContent = metricName(METRICS[0], s);
	document.body.setAttribute('data-snapshot', S.snapshot + 1);
	document.body.setAttribute('data-metric', m.id);
	document.body.setAttribute('data-view', S.view);
	renderSummary();
	renderSnaps();
	if (!S.view || S.view === 'overview') {
		drawTimeline();
		renderGrew();
	}
	markTimeline();
	/* The flame graph and the tables of 100,000 stacks take a while:
	 * each is made when shown. */
	if (S.view === 'flame')
		renderFlame();
	if (S.view === 'tables')
		renderTable();
	dirty = {};
}

/* --- summary --------------------------------------------------------- */

function renderSummary() {
	var s = snap(), last = D.snapshots[D.snapshots.length - 1], tot = s.total;
	var rssPeak = 0, i, items;
	for (i = 0; i < D.series.rss.length; i++)
		if (D.series.rss[i] > rssPeak)
			rssPeak = D.series.rss[i];
	items = [
		['Program', D.program],
		['Snapshot', '#' + (S.snapshot + 1) + ' of ' + D.snapshots.length + ', ' + s.reason +
			' at ' + secs(s.time_ns)],
		['Allocations', commas(tot[5]) + ' (' + bytes(tot[4]) + ')'],
		['Frees', commas(s.free_count) + ' (' + bytes(s.free_bytes) + ')'],
		['Temporary allocations', commas(tot[6]) + ' (' + bytes(tot[7]) + ')'],
		['Peak heap', bytes(s.peak_bytes) + ' in ' + commas(s.peak_count) + ' blocks at ' +
			secs(s.peak_time_ns)],
		['Peak RSS', rssPeak ? bytes(rssPeak) : 'not recorded'],
		[s.reason === 'exit' ? 'Leaked at exit' : 'In use', bytes(tot[1]) + ' in ' +
			commas(tot[2]) + ' blocks'],
		['Call stacks', commas(s.nstacks) + (s.other[0] ? ' (the top ' + commas(s.rows.length) +
			' kept; the rest summed in one row)' : '')],
		['Recording', D.sampled ? 'sampled, one byte in ' + bytes(D.sample_rate_bytes) +
			' (figures are estimates)' : 'every allocation'],
		['Lost', s.lost_count ? commas(s.lost_count) + ' allocations not recorded' : 'nothing'],
		['Duration', secs(last.time_ns)]
	];
	if (D.damaged)
		items.push(['Damage', D.damaged + ' damaged records: showing what is readable']);
	$.summary.textContent = '';
	items.forEach(function (kv) {
		$.summary.appendChild(el('dt', {text: kv[0]}));
		$.summary.appendChild(el('dd', {text: kv[1]}));
	});
}

function renderSnaps() {
	$.snaps.textContent = '';
	D.snapshots.forEach(function (s, i) {
		var tr = el('tr', {cls: 'hp-snap' + (i === S.snapshot ? ' on' : ''), 'data-i': i + 1,
			onclick: function () { set({snapshot: i, zoom: ''}); }},
		[i + 1, secs(s.time_ns), s.reason, bytes(s.total[1]), bytes(s.peak_bytes),
			commas(s.total[5]), commas(s.nstacks)].map(function (v) {
			return el('td', {text: v});
		}));
		$.snaps.appendChild(tr);
	});
}

/* --- timeline (uPlot) ----------------------------------------------- */

var plot = null, plotWidth = 0;
function seriesData() {
	var t = D.series.t, heap = D.series.heap, rss = D.series.rss, x = [], i;
	if (!t.length) {
		/* No time series: the snapshots' figures alone. */
		D.snapshots.forEach(function (s) {
			x.push(s.time_ns / 1e9);
		});
		return [x, D.snapshots.map(function (s) { return s.total[1]; }),
			D.snapshots.map(function () { return null; })];
	}
	for (i = 0; i < t.length; i++)
		x.push(t[i] / 1e9);
	return [x, heap.slice(), rss.map(function (v) { return v || null; })];
}
function drawTimeline() {
	var w = Math.max(400, $.chart.clientWidth || 1000);
	if (typeof uPlot === 'undefined' || (plot && plotWidth === w))
		return;
	if (plot)
		plot.destroy();
	plotWidth = w;
	var axisBytes = function (u, vals) { return vals.map(function (v) { return bytes(v); }); };
	var axisSecs = function (u, vals, ax, space, incr) {
		var dec = Math.max(0, Math.min(9, -Math.floor(Math.log10(incr || 1))));
		return vals.map(function (v) { return v.toFixed(dec); });
	};
	var data = seriesData(), end = data[0].length ? data[0][data[0].length - 1] : 0;
	D.snapshots.forEach(function (s) { end = Math.max(end, s.time_ns / 1e9); });
	var fmtB = function (u, v) { return v == null ? '-' : bytes(v); };
	/* Heap and RSS on scales of their own (the heap is often a sliver of
	 * the RSS): heap on the left, RSS on the right, each in its colour. */
	plot = new uPlot({
		width: w, height: 300,
		scales: {x: {time: false, range: function (u, min, max) { return [0, Math.max(end, max)]; }},
			heap: {range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; }},
			rss: {range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; }}},
		axes: [{label: 'seconds', values: axisSecs},
			{scale: 'heap', values: axisBytes, size: 80, stroke: '#c0392b', label: 'heap in use'},
			{scale: 'rss', values: axisBytes, size: 80, side: 1, stroke: '#2c6fbb', label: 'RSS',
				grid: {show: false}}],
		series: [
			{label: 'time', value: function (u, v) { return v == null ? '-' : v.toFixed(4) + ' s'; }},
			{label: 'heap in use', scale: 'heap', stroke: '#c0392b', fill: 'rgba(192,57,43,0.12)',
				width: 1.5, value: fmtB},
			{label: 'RSS', scale: 'rss', stroke: '#2c6fbb', width: 1.5, value: fmtB}
		],
		hooks: {draw: [drawMarks]}
	}, data, $.chart);
	/* uPlot stops the click at its overlay (its drag-to-zoom): listen on
	 * the way down, once per chart element. */
	if (!$.chart.hpClick) {
		$.chart.hpClick = true;
		$.chart.addEventListener('click', function (e) { timelineClick(e, plot); }, true);
		$.chart.addEventListener('mousedown', function (e) { brushStart(e, plot); }, true);
		/* On the window, on the way down: before uPlot's own mouseup on
		 * the document zooms, so the scale still reads as at the start. */
		window.addEventListener('mouseup', function (e) { brushEnd(e, plot); }, true);
	}
	drawSites(w, end, axisSecs, axisBytes);
}
function timelineClick(e, p) {
	if (!p || !p.over.contains(e.target) || (p.select && p.select.width > 2))
		return;
	{
		var r = p.over.getBoundingClientRect();
		var x = p.posToVal(e.clientX - r.left, 'x');
		set({snapshot: nearest(x * 1e9), zoom: ''});
	}
}

/* A brush: a drag over the timeline (more than 2 px) selects the
 * snapshots nearest to its ends; what grew between them is shown under
 * the chart (renderGrew). uPlot zooms to the range as well. */
var brush = null;
function brushStart(e, p) {
	brush = null;
	if (!p || !p.over.contains(e.target) || e.button)
		return;
	brush = {x: e.clientX};
}
function brushEnd(e, p) {
	var b = brush;
	brush = null;
	if (!b || !p || Math.abs(e.clientX - b.x) <= 2)
		return;
	var r = p.over.getBoundingClientRect();
	var t0 = p.posToVal(Math.min(b.x, e.clientX) - r.left, 'x');
	var t1 = p.posToVal(Math.max(b.x, e.clientX) - r.left, 'x');
	set({grew: (nearest(t0 * 1e9) + 1) + '-' + (nearest(t1 * 1e9) + 1)});
}

/* What grew from snapshot a to snapshot b (indexes), as `heapprof diff
 * FILE@a FILE@b` computes it with its default metric: the stacks matched
 * by their chain of function names (inlined frames included), each
 * chain's bytes and blocks in use summed on both sides, the chains whose
 * figures changed, the largest change in bytes first (ties: first seen,
 * b's stacks before a's). The stacks a snapshot did not keep (html.c's
 * --top) are one "other" row. */
function grewRows(a, b) {
	var key = a + '-' + b;
	if (cache.grewKey === key)
		return cache.grew;
	var chains = {}, list = [];
	var add = function (s, side) {
		s.rows.forEach(function (d) {
			var st = D.stacks[d[0]];
			var k = st.map(function (f) { return D.frames[f][0]; }).join(',');
			var r = chains[k];
			if (!r) {
				r = chains[k] = {stack: d[0], frames: st, was: [0, 0], now: [0, 0]};
				list.push(r);
			}
			var v = side ? r.now : r.was;
			v[0] += d[1];
			v[1] += d[2];
		});
	};
	add(D.snapshots[b], 1);
	add(D.snapshots[a], 0);
	var sa = D.snapshots[a], sb = D.snapshots[b];
	if (sa.other[0] || sb.other[0])
		list.push({stack: -1, frames: [], other: true, was: [sa.other[1], sa.other[2]],
			now: [sb.other[1], sb.other[2]]});
	list = list.filter(function (r) {
		r.change = r.now[0] - r.was[0];
		r.objects = r.now[1] - r.was[1];
		return r.change || r.objects;
	});
	list.sort(function (x, y) { return Math.abs(y.change) - Math.abs(x.change); });
	cache.grewKey = key;
	cache.grew = list;
	return list;
}
function signed(v, f) { return (v > 0 ? '+' : v < 0 ? '\u2212' : '') + f(Math.abs(v)); }
function renderGrew() {
	var m = /^(\d+)-(\d+)$/.exec(S.grew), n = D.snapshots.length;
	$.grew.textContent = '';
	if (!m || +m[1] < 1 || +m[2] < 1 || +m[1] > n || +m[2] > n)
		return;
	var a = Math.min(+m[1], +m[2]) - 1, b = Math.max(+m[1], +m[2]) - 1;
	var sa = D.snapshots[a], sb = D.snapshots[b];
	var clear = el('button', {id: 'hp-grew-clear', text: 'Clear', onclick: function () {
		set({grew: ''});
	}});
	$.grew.appendChild(el('h2', {id: 'hp-grew-title', text: 'What grew from snapshot #' +
		(a + 1) + ' (' + secs(sa.time_ns) + ') to #' + (b + 1) + ' (' + secs(sb.time_ns) + ')'}));
	if (a === b) {
		$.grew.appendChild(el('p', {cls: 'hp-hint', id: 'hp-grew-total', text: 'Both ends ' +
			'of the range are nearest to snapshot #' + (a + 1) + ': drag over a range ' +
			'that spans two snapshots.'}, [clear]));
		return;
	}
	var rows = grewRows(a, b), dt = sb.total[1] - sa.total[1];
	$.grew.appendChild(el('p', {cls: 'hp-hint', id: 'hp-grew-total', text: 'The snapshots ' +
		'nearest to the range\'s ends, as heapprof diff FILE@' + (a + 1) + ' FILE@' + (b + 1) +
		' compares them: heap in use ' + bytes(sa.total[1]) + ' \u2192 ' + bytes(sb.total[1]) +
		' (' + signed(dt, bytes) + ', ' + signed(sb.total[2] - sa.total[2], commas) +
		' blocks); ' + commas(rows.length) + ' call stacks changed' +
		(rows.length > MAX_ROWS ? ', the first ' + MAX_ROWS + ' shown' : '') + '. '}, [clear]));
	var body = el('tbody');
	rows.slice(0, MAX_ROWS).forEach(function (r) {
		var st = r.frames, name = r.other ? '(call stacks not kept)' :
			st.slice(0, 6).map(fname).join(' \u2190 ') + (st.length > 6 ? ' \u2190 ...' : '');
		var num = function (v, f) {
			return el('td', {cls: 'num', 'data-v': v, text: f(v)});
		};
		body.appendChild(el('tr', r.other ? {cls: 'hp-other'} : {'data-stack': r.stack}, [
			el('td', {text: name, title: st.map(function (f) {
				return fname(f) + '  ' + fline(f);
			}).join('\n')}),
			el('td', {text: st.length ? fline(st[0]) : ''}),
			num(r.change, function (v) { return signed(v, bytes); }),
			num(r.objects, function (v) { return signed(v, commas); }),
			num(r.was[0], bytes), num(r.now[0], bytes)
		]));
	});
	$.grew.appendChild(el('table', {id: 'hp-grew-table', cls: 'hp-table'}, [
		el('thead', {}, [el('tr', {}, ['Call stack', 'Where', 'Change', 'Blocks',
			'In use at #' + (a + 1), 'In use at #' + (b + 1)].map(function (h, i) {
			return el('th', {text: h, cls: i > 1 ? 'num' : ''});
		}))]), body]));
}

/* Size and lifetime histograms: a row per stack, a bar per class. */
var SIZE_UNITS = ['B', 'KiB', 'MiB', 'GiB'];
function pow2(e, units) {
	var u = 0;
	while (e >= 10 && u + 1 < units.length) {
		e -= 10;
		u++;
	}
	return Math.pow(2, e) + (units.length > 1 ? ' ' + units[u] : '');
}
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
		return el('div', {cls: 'hp-hist hp-none', text: 'none'});
	var bars = [];
	for (var i = first; i <= last; i++) {
		var share = total > 0 ? v[i] / total : 0;
		bars.push(el('div', {cls: 'hp-bar-col', 'data-kind': kind, 'data-class': i,
			'data-v': v[i], title: label(i) + ': ' + commas(v[i]) + ' (' + pct(v[i], total) + ')'}, [
			el('div', {cls: 'hp-bar-fill', style: 'height:' + Math.round(60 * share) + 'px'}),
			el('div', {cls: 'hp-bar-label', text: label(i)})]));
	}
	return el('div', {cls: 'hp-hist'}, bars);
}
function renderHists() {
	var rows = D.hists.map(function (h) {
		var st = D.stacks[h.stack];
		var name = st && st.length ? fname(st[0]) + ' ' + fline(st[0]) : '(no stack)';
		return el('tr', {'data-function': st && st.length ? fname(st[0]) : ''}, [
			el('td', {text: name}),
			el('td', {cls: 'hp-num', text: commas(h.allocs)}),
			el('td', {}, [histBars(h.size, h.allocs, sizeClass, 'size')]),
			el('td', {}, [histBars(h.life, h.frees, lifeClass, 'life')])]);
	});
	return el('table', {id: 'hp-hists', cls: 'hp-table'}, [
		el('thead', {}, [el('tr', {}, ['Call stack (innermost)', 'Allocations',
			'By size (from)', 'Frees by lifetime (allocations, from)'].map(function (h) {
			return el('th', {text: h});
		}))]),
		el('tbody', {}, rows)]);
}

/* The memory map: regions of blocks (gaps under 1 MiB), a canvas row
 * each, a block a bar coloured by its stack. */
var mapRegions = [];
function mapColour(stack) {
	return stack < 0 ? '#999' : SITE_COLOURS[stack % SITE_COLOURS.length];
}
function renderMap() {
	var b = D.map.blocks, regions = [], r = null, i;
	for (i = 0; i < b.length; i++) {
		if (!r || b[i][0] >= r.end + 1048576) {
			r = {start: b[i][0], end: b[i][0] + b[i][1], first: i, count: 0, bytes: 0};
			regions.push(r);
		}
		r.count++;
		r.bytes += b[i][1];
		r.end = Math.max(r.end, b[i][0] + b[i][1]);
	}
	mapRegions = regions;
	var box = el('div', {id: 'hp-map'});
	var tip = el('div', {id: 'hp-map-tip', cls: 'hp-hint'});
	regions.forEach(function (g, k) {
		var w = 1200, h = 28, span = Math.max(1, g.end - g.start);
		var c = el('canvas', {width: w, height: h, 'data-region': k});
		var ctx = c.getContext('2d');
		ctx.fillStyle = '#e4e4e4';
		ctx.fillRect(0, 0, w, h);
		for (var j = g.first; j < g.first + g.count; j++) {
			var x = (b[j][0] - g.start) / span * w, bw = Math.max(1, b[j][1] / span * w);
			ctx.fillStyle = mapColour(b[j][2]);
			ctx.fillRect(x, 2, bw, h - 4);
		}
		c.addEventListener('mousemove', function (e) {
			var rc = c.getBoundingClientRect();
			var a = g.start + (e.clientX - rc.left) / rc.width * span, found = null;
			for (var j = g.first; j < g.first + g.count && !found; j++)
				if (a >= b[j][0] && a < b[j][0] + b[j][1])
					found = b[j];
			var st = found && found[2] >= 0 ? D.stacks[found[2]] : null;
			tip.textContent = found ? '0x' + found[0].toString(16) + ': ' + commas(found[1]) +
				' B, ' + (st && st.length ? fname(st[0]) + ' ' + fline(st[0]) : '(no stack)') :
				'a gap';
		});
		box.appendChild(el('div', {cls: 'hp-map-region', text: '0x' + g.start.toString(16) +
			' - 0x' + g.end.toString(16) + ': ' + commas(g.count) + ' blocks, ' +
			bytes(g.bytes) + ' in ' + bytes(span) + ' (' + pct(g.bytes, span) + ' in use)'}));
		box.appendChild(c);
	});
	box.appendChild(tip);
	return box;
}

/* The per-site timeline: a line per top site, on the heap chart's time
 * axis, with the same snapshot marks. */
var sitesPlot = null;
var SITE_COLOURS = ['#c0392b', '#2c6fbb', '#27ae60', '#8e44ad', '#e67e00', '#16a085',
	'#7f8c8d', '#d35400', '#2c3e50', '#b7950b'];
function siteLabel(line) {
	var st = D.stacks[line.stack];
	return st && st.length ? fname(st[0]) + ' ' + fline(st[0]) : '(no stack)';
}
function drawSites(w, end, axisSecs, axisBytes) {
	if (!D.sites || !D.sites.lines.length)
		return;
	if (sitesPlot)
		sitesPlot.destroy();
	var x = D.sites.t.map(function (t) { return t / 1e9; });
	var fmtB = function (u, v) { return v == null ? '-' : bytes(v); };
	var series = [{label: 'time', value: function (u, v) {
		return v == null ? '-' : v.toFixed(4) + ' s';
	}}];
	var data = [x];
	D.sites.lines.forEach(function (l, i) {
		series.push({label: siteLabel(l), stroke: SITE_COLOURS[i % SITE_COLOURS.length],
			width: 1.5, paths: uPlot.paths && uPlot.paths.stepped ?
				uPlot.paths.stepped({align: 1}) : undefined, value: fmtB});
		data.push(l.v);
	});
	sitesPlot = new uPlot({
		width: w, height: 300,
		scales: {x: {time: false, range: function (u, min, max) { return [0, Math.max(end, max)]; }},
			y: {range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; }}},
		axes: [{label: 'seconds', values: axisSecs},
			{values: axisBytes, size: 80, label: 'bytes in use'}],
		series: series,
		hooks: {draw: [drawMarks]}
	}, data, $.sites);
	if (!$.sites.hpClick) {
		$.sites.hpClick = true;
		$.sites.addEventListener('click', function (e) { timelineClick(e, sitesPlot); }, true);
	}
}
function nearest(ns) {
	var best = 0, d = Infinity;
	D.snapshots.forEach(function (s, i) {
		var e = Math.abs(s.time_ns - ns);
		if (e < d) {
			d = e;
			best = i;
		}
	});
	return best;
}
/* The snapshots as vertical lines, the selected one bold, and the peak. */
function drawMarks(u) {
	var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height, dpr = window.devicePixelRatio || 1;
	var last = D.snapshots[D.snapshots.length - 1];
	ctx.save();
	ctx.font = (11 * dpr) + 'px sans-serif';
	ctx.textBaseline = 'top';
	var line = function (ns, color, width, dash, label) {
		var x = u.valToPos(ns / 1e9, 'x', true);
		if (x < u.bbox.left - 1 || x > u.bbox.left + u.bbox.width + 1)
			return;
		ctx.strokeStyle = color;
		ctx.fillStyle = color;
		ctx.lineWidth = width * dpr;
		ctx.setLineDash(dash);
		ctx.beginPath();
		ctx.moveTo(x, top);
		ctx.lineTo(x, top + h);
		ctx.stroke();
		ctx.fillText(label, x + 3 * dpr, top + 2 * dpr);
	};
	line(last.peak_time_ns, '#888', 1, [4 * dpr, 4 * dpr], 'peak');
	D.snapshots.forEach(function (s, i) {
		var on = i === S.snapshot;
		line(s.time_ns, on ? '#e67e00' : '#555', on ? 3 : 1, [], '#' + (i + 1));
	});
	ctx.restore();
}
function markTimeline() {
	if (plot && dirty.snapshot)
		plot.redraw(false, false);
	if (sitesPlot && dirty.snapshot)
		sitesPlot.redraw(false, false);
}

/* --- icicle graph ---------------------------------------------------- */

/* The tree of the selected snapshot and metric: children merged by
 * function name; each node {name, frame, v, x (offset from the root's
 * left, in the metric), depth, kids, parent}. */
function tree() {
	var key = S.snapshot + '/' + S.metric;
	if (cache.treeKey === key)
		return cache.tree;
	var s = snap(), col = metric().col;
	var root = {name: 'all', frame: -1, v: 0, x: 0, depth: 0, kids: [], map: {}, parent: null};
	var maxDepth = 0;
	var add = function (node, name, frame) {
		var k = node.map[name];
		if (!k) {
			k = {name: name, frame: frame, v: 0, x: 0, depth: node.depth + 1, kids: [], map: {},
				parent: node};
			node.map[name] = k;
			node.kids.push(k);
		}
		return k;
	};
	s.rows.forEach(function (r) {
		var v = r[col];
		if (v <= 0)
			return;
		var st = D.stacks[r[0]], node = root;
		root.v += v;
		for (var i = st.length - 1; i >= 0; i--) {
			node = add(node, fname(st[i]), st[i]);
			node.v += v;
		}
		if (node.depth > maxDepth)
			maxDepth = node.depth;
	});
	if (s.other[col] > 0) {
		var o = add(root, '(' + commas(s.other[0]) + ' other call stacks)', -1);
		o.v += s.other[col];
		o.other = true;
		root.v += s.other[col];
		if (maxDepth < 1)
			maxDepth = 1;
	}
	var place = function (n) {
		var x = n.x;
		n.kids.sort(function (a, b) { return b.v - a.v || (a.name < b.name ? -1 : 1); });
		n.kids.forEach(function (k) {
			k.x = x;
			x += k.v;
			place(k);
		});
		delete n.map;
	};
	place(root);
	cache.treeKey = key;
	cache.tree = {root: root, maxDepth: maxDepth};
	return cache.tree;
}

var ROW = 18, drawn = [], matchedSet = null;
function findNode(path) {
	/* A zoom path: function names from the root, joined by ";". */
	var node = tree().root, parts = path ? path.split(';') : [];
	for (var i = 0; i < parts.length && node; i++) {
		var next = null;
		for (var j = 0; j < node.kids.length; j++)
			if (node.kids[j].name === parts[i])
				next = node.kids[j];
		node = next;
	}
	return node || tree().root;
}
function pathOf(n) {
	var p = [];
	for (; n && n.parent; n = n.parent)
		p.unshift(n.name);
	return p.join(';');
}
function searchRe() {
	if (!S.search)
		return null;
	try {
		return new RegExp(S.search, 'i');
	} catch (e) {
		return new RegExp(S.search.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
	}
}
/* Marks the nodes whose function matches; returns the share of the root
 * they hold, nested matches counted once. */
function search() {
	var re = searchRe(), root = tree().root, sum = 0;
	matchedSet = re ? new Set() : null;
	if (!re)
		return {share: 0, value: 0};
	var walk = function (n, inside) {
		var m = n.parent && re.test(n.name);
		if (m) {
			matchedSet.add(n);
			if (!inside)
				sum += n.v;
		}
		n.kids.forEach(function (k) { walk(k, inside || m); });
	};
	walk(root, false);
	return {share: root.v > 0 ? sum / root.v : 0, value: sum};
}
function color(n) {
	if (matchedSet && matchedSet.has(n))
		return 'rgb(225,0,225)';
	if (n.other)
		return 'rgb(190,190,190)';
	if (!n.parent)
		return 'rgb(220,170,110)';
	var h = 0;
	for (var i = 0; i < n.name.length; i++)
		h = (h * 31 + n.name.charCodeAt(i)) | 0;
	h = Math.abs(h);
	return 'rgb(' + (205 + h % 50) + ',' + (80 + (h >> 8) % 130) + ',' + (40 + (h >> 16) % 40) + ')';
}
function renderFlame() {
	var s = snap(), m = metric(), r;
	$.flameTitle.textContent = metricName(m, s) + ', snapshot #' + (S.snapshot + 1) + ' (' +
		s.reason + ' at ' + secs(s.time_ns) + ')';
	if ($.search.value !== S.search)
		$.search.value = S.search;
	r = search();
	$.matched.textContent = S.search ? 'Matched: ' + fmt(m, r.value) + ' (' +
		(100 * r.share).toFixed(1) + '%)' : '';
	$.reset.hidden = !S.zoom;
	drawFlame();
}
function drawFlame() {
	if ($.flame.hidden)
		return; /* drawn when shown: a hidden canvas has no width */
	var t = tree(), root = t.root, z = findNode(S.zoom), m = metric();
	var w = Math.max(300, ($.canvas.parentNode.clientWidth || 1200));
	var h = (t.maxDepth + 1) * ROW + 2, dpr = window.devicePixelRatio || 1;
	var c = $.canvas, ctx = c.getContext('2d');
	c.width = w * dpr;
	c.height = h * dpr;
	c.style.width = w + 'px';
	c.style.height = h + 'px';
	ctx.scale(dpr, dpr);
	ctx.font = '12px sans-serif';
	ctx.textBaseline = 'middle';
	drawn = [];
	if (!root.v) {
		ctx.fillStyle = '#666';
		ctx.fillText('Nothing to draw: ' + metricName(m, snap()).toLowerCase() +
			' is 0 in this snapshot.', 8, ROW / 2);
		return;
	}
	var scale = w / z.v, left = z.x, charW = ctx.measureText('m').width * 0.8;
	var box = function (n, x, bw, faded) {
		var y = n.depth * ROW;
		ctx.fillStyle = color(n);
		ctx.globalAlpha = faded ? 0.45 : 1;
		ctx.fillRect(x, y, Math.max(bw - 1, 0.5), ROW - 1);
		ctx.globalAlpha = 1;
		if (bw > 28) {
			var label = n.name, max = Math.floor((bw - 6) / charW);
			if (label.length > max)
				label = label.slice(0, Math.max(max - 2, 1)) + '..';
			ctx.fillStyle = '#000';
			ctx.fillText(label, x + 3, y + ROW / 2);
		}
		(drawn[n.depth] = drawn[n.depth] || []).push([x, bw, n]);
	};
	/* The zoomed node's ancestors span the width, faded. */
	for (var a = z.parent; a; a = a.parent)
		box(a, 0, w, true);
	var walk = function (n) {
		var x = (n.x - left) * scale, bw = n.v * scale;
		if (bw < 0.3)
			return;
		box(n, x, bw, false);
		n.kids.forEach(walk);
	};
	walk(z);
}
function nodeAt(e) {
	var r = $.canvas.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top;
	var row = drawn[Math.floor(y / ROW)] || [];
	for (var i = 0; i < row.length; i++)
		if (x >= row[i][0] && x < row[i][0] + row[i][1])
			return row[i][2];
	return null;
}
function describe(n) {
	var m = metric(), root = tree().root, where = n.frame >= 0 ? fline(n.frame) : '';
	var mod = n.frame >= 0 ? str(D.frames[n.frame][3]) : '';
	return n.name + (where ? ' (' + where + (mod && where !== mod ? ', ' + mod : '') + ')' : '') +
		': ' + fmt(m, n.v) + ', ' + pct(n.v, root.v) + ' of all';
}
function flameHover(e) {
	var n = nodeAt(e);
	$.details.textContent = n ? describe(n) : ' ';
	$.canvas.title = n ? describe(n) : '';
}
function flameClick(e) {
	var n = nodeAt(e);
	if (n)
		set({zoom: pathOf(n)});
}

/* --- tables ---------------------------------------------------------- */

/* Columns: name, where, then the metrics; each row's v[] is indexed as
 * the data's rows (1..7). A stack counts once in each key it passes
 * through (cumulative); flat is the innermost frame's key. */
function keyOf(table, f) {
	var fr = D.frames[f];
	if (table === 'function')
		return fname(f);
	if (table === 'line')
		return str(fr[1]) ? str(fr[1]) + ':' + fr[2] : (str(fr[3]) || '??') + ' ' + fname(f);
	return str(fr[3]) || '(unknown module)';
}
function tableRows() {
	var key = S.snapshot + '/' + S.table;
	if (cache.rowsKey === key)
		return cache.rows;
	var s = snap(), rows = [], map = {}, other;
	if (TABLES.some(function (t) { return t.group && t.id === S.table; })) {
		/* [key, source, figures...]: a row each, its own figures flat. */
		rows = (s.groups[S.table] || []).map(function (g) {
			var v = [0].concat(g.slice(2));
			return {name: g[0], where: g[1], v: v, flat: v, frames: null, stack: -1};
		});
		cache.rowsKey = key;
		cache.rows = rows;
		return rows;
	}
	var row = function (k, where, frames) {
		var r = map[k];
		if (!r) {
			r = map[k] = {name: k, where: where, v: [0, 0, 0, 0, 0, 0, 0, 0],
				flat: [0, 0, 0, 0, 0, 0, 0, 0], frames: frames, stack: -1};
			rows.push(r);
		}
		return r;
	};
	s.rows.forEach(function (d) {
		var st = D.stacks[d[0]], seen = {}, c, r;
		if (S.table === 'stack') {
			var names = st.slice(0, 6).map(fname);
			r = row('#' + d[0], st.length ? fline(st[0]) : '', st);
			r.name = names.join(' \u2190 ') + (st.length > 6 ? ' \u2190 ...' : '');
			r.stack = d[0];
			for (c = 1; c < 8; c++)
				r.v[c] = r.flat[c] = d[c];
			return;
		}
		for (var i = 0; i < st.length; i++) {
			var k = keyOf(S.table, st[i]);
			r = row(k, S.table === 'function' ? fline(st[i]) :
				S.table === 'line' ? fname(st[i]) : '', null);
			if (i === 0)
				for (c = 1; c < 8; c++)
					r.flat[c] += d[c];
			if (seen[k])
				continue;
			seen[k] = 1;
			for (c = 1; c < 8; c++)
				r.v[c] += d[c];
		}
	});
	if (s.other[0]) {
		other = row('(' + commas(s.other[0]) + ' other call stacks)', '', null);
		for (var c = 1; c < 8; c++)
			other.v[c] = other.flat[c] = s.other[c];
		other.other = true;
	}
	cache.rowsKey = key;
	cache.rows = rows;
	return rows;
}
var COLS = [
	{id: 'name', name: 'Name', get: function (r) { return r.name; }},
	{id: 'where', name: 'Where', get: function (r) { return r.where; }},
	{id: 'flat', name: 'Flat', get: function (r) { return r.flat[metric().col]; }, num: 'metric'},
	{id: 'inuse', name: 'In use', get: function (r) { return r.v[1]; }, num: 'bytes'},
	{id: 'objects', name: 'Blocks', get: function (r) { return r.v[2]; }, num: 'count'},
	{id: 'peak', name: 'At peak', get: function (r) { return r.v[3]; }, num: 'bytes'},
	{id: 'allocated', name: 'Allocated', get: function (r) { return r.v[4]; }, num: 'bytes'},
	{id: 'allocations', name: 'Allocations', get: function (r) { return r.v[5]; }, num: 'count'},
	{id: 'temporary', name: 'Temporary', get: function (r) { return r.v[6]; }, num: 'count'}
];
var MAX_ROWS = 500;
function renderTable() {
	var s = snap(), m = metric(), sortId = S.sort || m.id, col = COLS[0], re = null, i;
	for (i = 0; i < COLS.length; i++)
		if (COLS[i].id === sortId)
			col = COLS[i];
	Array.prototype.forEach.call($.tabs.children, function (b) {
		b.classList.toggle('on', b.getAttribute('data-table') === S.table);
	});
	if ($.filter.value !== S.filter)
		$.filter.value = S.filter;
	if (S.filter) {
		try {
			re = new RegExp(S.filter, 'i');
		} catch (e) {
			re = new RegExp(S.filter.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
		}
	}
	var rows = tableRows().filter(function (r) {
		if (!re)
			return true;
		if (re.test(r.name) || re.test(r.where))
			return true;
		return !!r.frames && r.frames.some(function (f) {
			return re.test(fname(f)) || re.test(fline(f));
		});
	});
	var desc = S.sort ? S.desc : true, get = col.get;
	/* A stack's or a group's flat figure is its own: no column of it. */
	var noFlat = S.table === 'stack' || TABLES.some(function (t) {
		return t.group && t.id === S.table;
	});
	rows.sort(function (a, b) {
		var x = get(a), y = get(b), d;
		d = typeof x === 'number' ? x - y : (x < y ? -1 : x > y ? 1 : 0);
		if (!d)
			d = a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
		return desc ? -d : d;
	});
	$.thead.textContent = '';
	$.thead.appendChild(el('tr', {}, COLS.map(function (c) {
		var name = c.id === 'flat' ? 'Flat ' + metricName(m, s).toLowerCase() :
			c.id === 'name' ? TABLES.filter(function (t) { return t.id === S.table; })[0].name :
			c.id === 'inuse' ? metricName(METRICS[0], s) :
			c.id === 'where' && S.table === 'type' ? 'Source' : c.name;
		var th = el('th', {text: name + (c === col ? (desc ? ' \u25bc' : ' \u25b2') : ''),
			'data-col': c.id, cls: c.num ? 'num' : '', onclick: function () {
				set({sort: c.id, desc: c === col ? !desc : !!c.num});
			}});
		if (noFlat && c.id === 'flat')
			th.hidden = true;
		return th;
	})));
	$.tbody.textContent = '';
	var total = s.total;
	rows.slice(0, MAX_ROWS).forEach(function (r) {
		var tr = el('tr', r.other ? {cls: 'hp-other'} : {});
		COLS.forEach(function (c) {
			var v = c.get(r), td;
			if (!c.num) {
				td = el('td', {text: v, title: r.frames ? r.frames.map(function (f) {
					return fname(f) + '  ' + fline(f);
				}).join('\n') : v});
			} else {
				var isBytes = c.num === 'bytes' || (c.num === 'metric' && m.bytes);
				td = el('td', {cls: 'num', 'data-v': v, text: isBytes ? bytes(v) : commas(v)});
				if (c.id === m.id)
					td.appendChild(el('span', {cls: 'pct', text: ' ' + pct(v, total[m.col])}));
			}
			if (noFlat && c.id === 'flat')
				td.hidden = true;
			tr.appendChild(td);
		});
		$.tbody.appendChild(tr);
	});
	$.tcount.textContent = commas(rows.length) + ' rows' + (rows.length > MAX_ROWS ?
		', the first ' + MAX_ROWS + ' shown' : '');
}

/* --- start ----------------------------------------------------------- */

function start() {
	build();
	var st = parse(location.hash);
	for (var k in st)
		S[k] = st[k];
	dirty = {snapshot: true};
	render();
	window.hpReport = {
		data: D,
		state: S,
		apply: apply,
		set: set,
		tree: function () { return tree(); },
		node: function (path) { return findNode(path); },
		search: function (re) { set({search: re}); return search(); },
		rows: function () { return $.tbody.rows; },
		plot: function () { return plot; },
		sitesPlot: function () { return sitesPlot; },
		mapRegions: function () { return mapRegions; },
		renderMs: performance.now() - t0
	};
	document.body.setAttribute('data-render-ms', Math.round(window.hpReport.renderMs));
	document.body.setAttribute('data-ready', '1');
}
start();
})();
