/*
 * timeline.js - the charts over time (uPlot, vendored): the heap in use
 * and the RSS (the data's "series"), and under it the bytes in use of the
 * top lines of one grouping (the data's "sites" by call stack, and any
 * grouping of "timelines": timelineGroups), with a selector of the
 * grouping. Both mark the snapshots; a click selects the nearest one, a
 * drag over the heap's chart (the brush) shows what grew in the range
 * (grew.js). With an event log (the data's "events"), a third chart:
 * every block's bytes from its allocation to its free, per millisecond
 * (or coarser), stacked by type, thread, context or call stack.
 */

var plot = null, plotWidth = 0;
var SITE_COLOURS = ['#c0392b', '#2c6fbb', '#27ae60', '#8e44ad', '#e67e00', '#16a085',
	'#7f8c8d', '#d35400', '#2c3e50', '#b7950b'];

function axisBytes(u, vals) { return vals.map(function (v) { return bytes(v); }); }
/* Seconds with as many decimals as the ticks' increment has: 0.025 s
 * apart reads 0.025, 0.050, 0.075 (not 0.03, 0.05, 0.08). */
function axisSecs(u, vals, ax, space, incr) {
	var dec = Math.max(0, Math.min(9, -Math.floor(Math.log10(incr || 1))));
	while (dec < 9 && Math.abs(incr * Math.pow(10, dec) - Math.round(incr * Math.pow(10, dec))) >
		1e-6 * incr * Math.pow(10, dec))
		dec++;
	return vals.map(function (v) { return v.toFixed(dec); });
}
function fmtB(u, v) { return v == null ? '-' : bytes(v); }
function fmtT(u, v) { return v == null ? '-' : v.toFixed(4) + ' s'; }
/* The end of the time axis: the last point or the last snapshot. */
function timeEnd(x) {
	var end = x.length ? x[x.length - 1] : 0;
	D.snapshots.forEach(function (s) { end = Math.max(end, s.time_ns / 1e9); });
	return end;
}

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
	heap = heap.slice();
	rss = rss.map(function (v) { return v || null; });
	/* The peak is known exactly, the samples are not: a peak between two
	 * samples (a program that allocates seldom samples seldom) would be
	 * marked by its dashed line over a curve far lower. It is a point of
	 * the heap's curve (no RSS there: the RSS line spans it). */
	var last = D.snapshots[D.snapshots.length - 1], pt = last.peak_time_ns / 1e9;
	if (last.peak_bytes > 0) {
		for (i = 0; i < x.length && x[i] < pt; i++)
			;
		if (i < x.length && x[i] === pt) {
			heap[i] = Math.max(heap[i], last.peak_bytes);
		} else {
			x.splice(i, 0, pt);
			heap.splice(i, 0, last.peak_bytes);
			rss.splice(i, 0, null);
		}
	}
	return [x, heap, rss];
}

function buildTimeline() {
	$.chart = el('div', {id: 'hp-timeline'});
	$.grew = el('div', {id: 'hp-grew'});
	return [
		el('h2', {text: 'Heap and RSS over time'}),
		el('p', {cls: 'hp-hint', text: 'Click near a snapshot (the vertical lines) to select ' +
			'it; drag over a range to zoom to it and see what grew in it, double-click to ' +
			'unzoom.'}),
		$.chart, $.grew
	].concat(buildEvents(), buildGroups());
}

/* Draws the heap's chart when it is new or the page's width changed, and
 * the grouping's chart under it. */
function drawTimeline() {
	var w = Math.max(400, $.chart.clientWidth || 1000);
	if (typeof uPlot === 'undefined')
		return;
	if (!plot || plotWidth !== w) {
		if (plot)
			plot.destroy();
		plotWidth = w;
		var data = seriesData(), end = timeEnd(data[0]);
		/* Heap and RSS on scales of their own (the heap is often a sliver
		 * of the RSS): heap on the left, RSS on the right, each in its
		 * colour. */
		plot = new uPlot({
			width: w, height: 300,
			scales: {x: {time: false, range: function (u, min, max) {
				return [0, Math.max(end, max)];
			}},
			heap: {range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; }},
			rss: {range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; }}},
			axes: [{label: 'seconds', values: axisSecs},
				{scale: 'heap', values: axisBytes, size: 80, stroke: '#c0392b',
					label: 'heap in use'},
				{scale: 'rss', values: axisBytes, size: 80, side: 1, stroke: '#2c6fbb',
					label: 'RSS', grid: {show: false}}],
			series: [
				{label: 'time', value: fmtT},
				/* steps: the heap changes only at allocations and
				 * frees, and a point holds until the next */
				{label: 'heap in use', scale: 'heap', stroke: '#c0392b',
					fill: 'rgba(192,57,43,0.12)', width: 1.5, value: fmtB,
					paths: uPlot.paths && uPlot.paths.stepped ?
						uPlot.paths.stepped({align: 1}) : undefined},
				{label: 'RSS', scale: 'rss', stroke: '#2c6fbb', width: 1.5, value: fmtB,
					spanGaps: true}
			],
			hooks: {draw: [drawMarks]}
		}, data, $.chart);
		/* uPlot stops the click at its overlay (its drag-to-zoom): listen
		 * on the way down, once per chart element. */
		if (!$.chart.hpClick) {
			$.chart.hpClick = true;
			$.chart.addEventListener('click', function (e) { timelineClick(e, plot); }, true);
			$.chart.addEventListener('mousedown', function (e) { brushStart(e, plot); }, true);
			/* On the window, on the way down: before uPlot's own mouseup
			 * on the document zooms, so the scale still reads as at the
			 * start. */
			window.addEventListener('mouseup', function (e) { brushEnd(e, plot); }, true);
		}
	}
	drawEvents(w);
	drawGroup(w);
}
function timelineClick(e, p) {
	if (!p || !p.over.contains(e.target) || (p.select && p.select.width > 2))
		return;
	var r = p.over.getBoundingClientRect();
	var x = p.posToVal(e.clientX - r.left, 'x');
	set({snapshot: nearest(x * 1e9), zoom: ''});
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
/* The snapshots as vertical lines, the selected one bold, and the peak,
 * each labelled at its top. A label goes right of its line, or left of it
 * at the plot's right edge, on the first row where it overlaps no other
 * (the peak is often a moment after a snapshot: "#2" and "peak" would be
 * drawn over each other). u.hpLabels keeps where each went (for tests). */
function drawMarks(u) {
	var ctx = u.ctx, top = u.bbox.top, h = u.bbox.height, dpr = window.devicePixelRatio || 1;
	var last = D.snapshots[D.snapshots.length - 1], rows = [], right = u.bbox.left + u.bbox.width;
	ctx.save();
	ctx.font = (11 * dpr) + 'px sans-serif';
	ctx.textBaseline = 'top';
	u.hpLabels = [];
	var place = function (x, w) {
		var x0 = x + 3 * dpr + w > right ? x - 3 * dpr - w : x + 3 * dpr, r;
		for (r = 0; ; r++) {
			rows[r] = rows[r] || [];
			if (!rows[r].some(function (b) { return x0 < b[1] + 2 * dpr && b[0] < x0 + w + 2 * dpr; }))
				break;
		}
		rows[r].push([x0, x0 + w]);
		return [x0, top + (2 + 13 * r) * dpr];
	};
	var line = function (ns, color, width, dash, label) {
		var x = u.valToPos(ns / 1e9, 'x', true), w, at;
		if (x < u.bbox.left - 1 || x > right + 1)
			return;
		ctx.strokeStyle = color;
		ctx.fillStyle = color;
		ctx.lineWidth = width * dpr;
		ctx.setLineDash(dash);
		ctx.beginPath();
		ctx.moveTo(x, top);
		ctx.lineTo(x, top + h);
		ctx.stroke();
		w = ctx.measureText(label).width;
		at = place(x, w);
		ctx.fillText(label, at[0], at[1]);
		u.hpLabels.push({text: label, x: at[0] / dpr, y: at[1] / dpr, w: w / dpr});
	};
	D.snapshots.forEach(function (s, i) {
		var on = i === S.snapshot;
		line(s.time_ns, on ? '#e67e00' : '#555', on ? 3 : 1, [], '#' + (i + 1));
	});
	line(last.peak_time_ns, '#888', 1, [4 * dpr, 4 * dpr], 'peak');
	ctx.restore();
}
function markTimeline() {
	if (plot && dirty.snapshot)
		plot.redraw(false, false);
	if (evPlot && dirty.snapshot)
		evPlot.redraw(false, false);
	if (sitesPlot && dirty.snapshot)
		sitesPlot.redraw(false, false);
}

/* --- the groupings over time ----------------------------------------- */

/* A line of a grouping as report --timeline --by X names it: a type with
 * its source ("Big [vtable]", "Big [template]": two lines of one name),
 * the last line "(N others)". */
function groupLabel(l) {
	if (l.other)
		return '(' + commas(l.groups) + ' other' + (l.groups === 1 ? ')' : 's)');
	return shortType(l.key, 60) + (l.source ? ' [' + l.source + ']' : '');
}

/* The names of the groupings the data may carry, in the selector's
 * order; a grouping the page does not know is shown by its key. */
var GROUPINGS = [
	{id: 'stack', name: 'call stack'},
	{id: 'type', name: 'type'},
	{id: 'context', name: 'context'},
	{id: 'thread', name: 'thread'},
	{id: 'heap', name: 'heap'}
];

/* The groupings the data has, each {id, name, t: [times, ns], lines:
 * [{label, stack (index in D.stacks, or -1), max, v: [bytes at each
 * time]}]}: "sites" (html.c) as the grouping by call stack, then each
 * member of "timelines" ({dimension: {t, lines: [{key or stack, max,
 * v}]}}), the known ones in GROUPINGS' order. Only those with a line. */
function timelineGroups() {
	if (cache.groups)
		return cache.groups;
	var out = [], srcs = {stack: D.sites}, ids = GROUPINGS.map(function (g) { return g.id; });
	for (var k in D.timelines || {}) {
		srcs[k] = D.timelines[k];
		if (ids.indexOf(k) < 0)
			ids.push(k);
	}
	ids.forEach(function (id) {
		var src = srcs[id], known = GROUPINGS.filter(function (g) { return g.id === id; })[0];
		if (!src || !src.lines || !src.lines.length)
			return;
		var sts = src.lines.map(function (l) {
			return l.stack != null && l.stack >= 0 ? l.stack : -1;
		}), names = stackLabels(sts);
		out.push({id: id, name: known ? known.name : id, t: src.t, lines: src.lines.map(function (l, k) {
			var st = sts[k];
			return {label: st >= 0 ? names[k] : groupLabel(l), stack: st, max: l.max, v: l.v};
		})});
	});
	cache.groups = out;
	return out;
}
/* The grouping S.by names, or the first. */
function timelineGroup() {
	var g = timelineGroups();
	return g.filter(function (x) { return x.id === S.by; })[0] || g[0] || null;
}
/* A stack by its site (siteAt: its first frame of the program's own
 * code, as report names it): "function file:line". */
function stackLabel(i) {
	var st = D.stacks[i];
	return st && st.length ? fname(st[siteAt(st)]) + ' ' + fline(st[siteAt(st)]) : '(no stack)';
}
/* The labels of the stacks ids, told apart: stacks whose innermost frame
 * reads the same (sqlite's allocator wrapper, python's _PyObject_Malloc)
 * get " <- CALLER", the first caller where they part, again while some
 * still read the same (up to 8 callers), then "(2)", "(3)"... */
function stackLabels(ids) {
	var labels = ids.map(stackLabel), depth = ids.map(function (i) {
		return D.stacks[i] ? siteAt(D.stacks[i]) : 0;
	});
	/* a caller: its function and file:line (two calls from one
	 * function part at their lines); shown by name when names part */
	var at = function (k, d, name) {
		var st = D.stacks[ids[k]] || [];
		return d >= st.length ? '' : name ? fname(st[d]) : fname(st[d]) + ' ' + fline(st[d]);
	};
	for (var round = 0; round < 8; round++) {
		var seen = {}, more = false;
		labels.forEach(function (l, k) { (seen[l] = seen[l] || []).push(k); });
		Object.keys(seen).forEach(function (l) {
			var g = seen[l];
			if (g.length < 2)
				return;
			/* the first depth past the last one used where any two part */
			var d = depth[g[0]] + 1, len = 0;
			g.forEach(function (k) { len = Math.max(len, (D.stacks[ids[k]] || []).length); });
			for (; d < len; d++)
				if (g.some(function (k) { return at(k, d) !== at(g[0], d); }))
					break;
			if (d >= len)
				return;
			var byName = g.some(function (k) { return at(k, d, 1) !== at(g[0], d, 1); });
			g.forEach(function (k) {
				labels[k] += ' \u2190 ' + (at(k, d, byName) || '(end)');
				depth[k] = d;
			});
			more = true;
		});
		if (!more)
			break;
	}
	var n = {};
	return labels.map(function (l) {
		n[l] = (n[l] || 0) + 1;
		return n[l] > 1 ? l + ' (' + n[l] + ')' : l;
	});
}

var sitesPlot = null, sitesKey = '';
function buildGroups() {
	var groups = timelineGroups();
	if (!groups.length)
		return [];
	$.sites = el('div', {id: 'hp-sites'});
	$.bySel = el('select', {id: 'hp-by', onchange: function () { set({by: this.value}); }});
	groups.forEach(function (g) { $.bySel.appendChild(el('option', {value: g.id, text: g.name})); });
	$.sitesHint = el('p', {cls: 'hp-hint'});
	return [el('h2', {text: 'In use over time, by '}, [$.bySel]), $.sitesHint, $.sites];
}
/* The chart of the selected grouping: a line per group (the top ones:
 * html.c keeps the 10 that held the most at any moment), stepped, on the
 * heap chart's time axis, with the same snapshot marks. */
function drawGroup(w) {
	var g = timelineGroup();
	if (!g || typeof uPlot === 'undefined' || (sitesPlot && sitesKey === w + '/' + g.id))
		return;
	if (sitesPlot)
		sitesPlot.destroy();
	sitesKey = w + '/' + g.id;
	$.bySel.value = g.id;
	$.sitesHint.textContent = 'The bytes in use of the ' + g.lines.length + ' ' + g.name +
		(g.lines.length > 1 ? 's' : '') + ' that held the most at any moment' +
		(g.id === 'stack' ? ' (innermost function and line)' : '') +
		'. Click near a snapshot to select it.';
	var x = g.t.map(function (t) { return t / 1e9; }), end = timeEnd(x);
	var series = [{label: 'time', value: fmtT}], data = [x];
	g.lines.forEach(function (l, i) {
		series.push({label: l.label, stroke: SITE_COLOURS[i % SITE_COLOURS.length],
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

/* --- the event log, stacked ------------------------------------------ */

var EV_GROUPINGS = [
	{id: 'type', name: 'type'},
	{id: 'thread', name: 'thread'},
	{id: 'context', name: 'context'},
	{id: 'stack', name: 'call stack'}
];
var evPlot = null, evKey = '';

/* An opaque colour halfway from #rrggbb to white (areas stacked one over
 * another must not show through). */
function lighten(c) {
	var n = parseInt(c.slice(1), 16);
	return 'rgb(' + [n >> 16, (n >> 8) & 255, n & 255].map(function (v) {
		return Math.round(v + (255 - v) * 0.5);
	}).join(',') + ')';
}

/* The log's groupings that have a line, each {id, name, lines: [{label,
 * v}]} (labels as the ticks' chart names them). */
function eventGroups() {
	if (cache.evGroups)
		return cache.evGroups;
	var out = [];
	EV_GROUPINGS.forEach(function (g) {
		var src = D.events && D.events.by[g.id];
		if (!src || !src.lines.length)
			return;
		var sts = src.lines.map(function (l) { return l.stack != null ? l.stack : -1; });
		var names = stackLabels(sts);
		out.push({id: g.id, name: g.name, lines: src.lines.map(function (l, k) {
			return {label: sts[k] >= 0 ? names[k] : groupLabel(l), max: l.max, v: l.v};
		})});
	});
	cache.evGroups = out;
	return out;
}
function eventGroup() {
	var g = eventGroups();
	return g.filter(function (x) { return x.id === S.evby; })[0] || g[0] || null;
}
/* The bytes of the line labelled label of grouping id at s seconds: its
 * value at the last time at or before it (for tests and the console). */
function eventsAt(id, label, s) {
	var g = eventGroups().filter(function (x) { return x.id === id; })[0], t = D.events.t, i;
	var l = g && g.lines.filter(function (x) { return x.label === label; })[0];
	if (!l)
		return null;
	for (i = t.length - 1; i >= 0 && t[i] > Math.round(s * 1e9); i--)
		;
	return i < 0 ? 0 : l.v[i];
}

function buildEvents() {
	if (!D.events || !eventGroups().length)
		return [];
	$.events = el('div', {id: 'hp-events'});
	$.evSel = el('select', {id: 'hp-evby', onchange: function () { set({evby: this.value}); }});
	eventGroups().forEach(function (g) {
		$.evSel.appendChild(el('option', {value: g.id, text: g.name}));
	});
	$.evHint = el('p', {cls: 'hp-hint'});
	return [el('h2', {text: 'In use over time from the event log, stacked by '}, [$.evSel]),
		$.evHint, $.events];
}
/* The stacked chart: each line's area on those before it (the group that
 * held the most at the bottom, "other" on top), so the top edge is the
 * log's bytes in use; at each time a bucket holds the moment of its
 * bucket when that sum was highest (html.c, events_timeline.h). The
 * legend says each group's own bytes. */
function drawEvents(w) {
	var g = eventGroup();
	if (!g || typeof uPlot === 'undefined' || (evPlot && evKey === w + '/' + g.id))
		return;
	if (evPlot)
		evPlot.destroy();
	evKey = w + '/' + g.id;
	$.evSel.value = g.id;
	var ms = D.events.bucket_ns / 1e6;
	$.evHint.textContent = (D.events.selected ?
		'The blocks of the selection (--between, --thread, --lived-under, --lived-over) ' +
		'from the event log, per ' :
		'Every allocation and free of the run (heapprof run --events), per ') +
		ms + ' ms: each time shows its ' + (ms === 1 ? 'millisecond' : ms + ' ms') +
		' at the moment its total was highest. The ' + g.lines.length + ' ' + g.name +
		(g.lines.length > 1 ? 's' : '') + ' that held the most, stacked.';
	var x = D.events.t.map(function (t) { return t / 1e9; }), end = timeEnd(x);
	/* Each line holds its last value to the end of the run (a selection's
	 * last block may come long before it). */
	var more = x.length && end > x[x.length - 1];
	var vals = g.lines.map(function (l) {
		return more ? l.v.concat([l.v[l.v.length - 1]]) : l.v;
	});
	if (more)
		x = x.concat([end]);
	var sums = [], acc = x.map(function () { return 0; });
	vals.forEach(function (v) {
		acc = acc.map(function (a, i) { return a + v[i]; });
		sums.push(acc);
	});
	/* drawn top first: each lower area paints over the one above it */
	var series = [{label: 'time', value: fmtT}], data = [x];
	for (var k = g.lines.length - 1; k >= 0; k--) {
		(function (l, v, colour) {
			series.push({label: l.label, stroke: colour, fill: lighten(colour), width: 1,
				paths: uPlot.paths && uPlot.paths.stepped ?
					uPlot.paths.stepped({align: 1}) : undefined,
				value: function (u, val, si, di) {
					return di == null ? '-' : bytes(v[di]);
				}});
		})(g.lines[k], vals[k], SITE_COLOURS[k % SITE_COLOURS.length]);
		data.push(sums[k]);
	}
	evPlot = new uPlot({
		width: w, height: 300,
		scales: {x: {time: false, range: function (u, min, max) { return [0, Math.max(end, max)]; }},
			y: {range: function (u, min, max) { return [0, max > 0 ? max * 1.05 : 1]; }}},
		axes: [{label: 'seconds', values: axisSecs},
			{values: axisBytes, size: 80, label: 'bytes in use'}],
		series: series,
		hooks: {draw: [drawMarks]}
	}, data, $.events);
	if (!$.events.hpClick) {
		$.events.hpClick = true;
		$.events.addEventListener('click', function (e) { timelineClick(e, evPlot); }, true);
	}
}
