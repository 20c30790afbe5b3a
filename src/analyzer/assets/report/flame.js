/*
 * flame.js - the flame graph of the selected snapshot and metric, as an
 * icicle (root on top) drawn on a canvas: frames merged by function name
 * along each path, hover for details, click to zoom (and select the
 * frame's path as the site, histograms.js), a search that colours the
 * matching frames and says their share.
 */

function buildFlame() {
	$.search = el('input', {id: 'hp-search', type: 'search',
		placeholder: 'Search functions (regular expression)', oninput: function () {
			set({search: this.value});
		}});
	$.reset = el('button', {id: 'hp-reset', text: 'Reset zoom', onclick: function () {
		set({zoom: ''});
	}});
	$.matched = el('span', {id: 'hp-matched'});
	/* Contexts as frames (the data's "flame_context", when the capture
	 * names contexts): by=context, as the timeline's grouping. */
	$.byContext = el('button', {id: 'hp-flame-contexts', onclick: function () {
		set({by: S.by === 'context' ? '' : 'context', zoom: ''});
	}});
	$.flameTitle = el('h2', {id: 'hp-flame-title'});
	$.canvas = el('canvas', {id: 'hp-flame'});
	$.details = el('div', {id: 'hp-details', text: ' '});
	$.canvas.addEventListener('mousemove', flameHover);
	$.canvas.addEventListener('click', flameClick);
	return [
		$.flameTitle,
		el('div', {cls: 'hp-bar'}, [$.search, $.reset, $.byContext, $.matched]),
		el('p', {cls: 'hp-hint', text: 'The root at the top, callees below; each frame as ' +
			'wide as its share. Click a frame to zoom to it and see its sizes and ' +
			'lifetimes, Escape to go back.'}),
		el('div', {cls: 'hp-canvas'}, [$.canvas]), $.details
	];
}

/* The tree of the selected snapshot and metric, from the snapshot's
 * "flame" (html.c write_flame: every stack merged by function name along
 * each path, cut by node size, so the root holds every stack's figures
 * whatever --top is); each node {name, frame, v, x (offset from the
 * root's left, in the metric), depth, kids, parent}. A node's kids may
 * hold less than it: the rest is its own and its cut callees'. */
function byContext() { return S.by === 'context' && !!snap().flame_context; }
function tree() {
	var key = S.snapshot + '/' + S.metric + '/' + byContext();
	if (cache.treeKey === key)
		return cache.tree;
	var s = snap(), col = metric().col, fl = byContext() ? s.flame_context : s.flame;
	var node = function (name, frame, parent, v) {
		return {name: name, frame: frame, v: v, x: 0, depth: parent ? parent.depth + 1 : 0,
			kids: [], parent: parent, other: false};
	};
	var root = node('all', -1, null, fl.v[col]), maxDepth = 0, made = [];
	fl.n.forEach(function (d, i) {
		var p = d[0] < 0 ? root : made[d[0]], k;
		if (!p || !(d[1 + col] > 0))
			return;
		k = made[i] = node(fname(d[1]), d[1], p, d[1 + col]);
		p.kids.push(k);
		if (k.depth > maxDepth)
			maxDepth = k.depth;
	});
	var place = function (n) {
		var x = n.x;
		n.kids.sort(function (a, b) { return b.v - a.v || (a.name < b.name ? -1 : 1); });
		n.kids.forEach(function (k) {
			k.x = x;
			x += k.v;
			place(k);
		});
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
	$.byContext.hidden = !snap().flame_context;
	$.byContext.textContent = byContext() ? 'Call stacks only' : 'Contexts as frames';
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
	var mark = siteMark();
	var box = function (n, x, bw, faded) {
		var y = n.depth * ROW;
		ctx.fillStyle = color(n);
		ctx.globalAlpha = faded ? 0.45 : 1;
		ctx.fillRect(x, y, Math.max(bw - 1, 0.5), ROW - 1);
		ctx.globalAlpha = 1;
		if (mark && mark(n)) {
			ctx.strokeStyle = '#000';
			ctx.lineWidth = 2;
			ctx.strokeRect(x + 1, y + 1, Math.max(bw - 3, 0.5), ROW - 3);
		}
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
/* Which frames the selected site (histograms.js) outlines: a function's
 * frames, a call stack's path, a flame graph frame; null for none (a
 * line or a module: frames are merged by function name). */
function siteMark() {
	var i = S.site.indexOf(':'), kind = S.site.slice(0, i), key = S.site.slice(i + 1);
	var on = new Set(), n = tree().root, names;
	if (kind === 'function')
		return function (x) { return x.name === key; };
	if (kind === 'stack' && D.stacks[+key])
		names = D.stacks[+key].map(fname).reverse();
	else if (kind === 'flame')
		names = key.split(';');
	else
		return null;
	for (var k = 0; k < names.length && n; k++) {
		n = n.kids.filter(function (c) { return c.name === names[k]; })[0];
		if (n && (kind === 'stack' || k === names.length - 1))
			on.add(n);
	}
	return function (x) { return on.has(x); };
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
	var n = nodeAt(e), path;
	if (!n)
		return;
	path = pathOf(n);
	/* The frame is the site too: the call stacks through its path. */
	set({zoom: path, site: path && !n.other ? 'flame:' + path : ''});
}
