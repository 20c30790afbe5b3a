/*
 * memmap.js - the memory map of the last snapshot (run --live-blocks; the
 * data's "map": {seq, total, blocks: [[address, size, stack]...]} by
 * address): a row per region of the address space, left to right, each
 * block a bar coloured by its call stack, the gaps grey; hover for a
 * block, click it to select its call stack (histograms.js).
 *
 * Made to grow: the regions come from mapRegionsOf (the blocks less than
 * MAP_GAP apart; or, when the data gives "regions": [{start, end, ...}],
 * those, each with the blocks inside it and every field it carries, an
 * RSS, a name...), and what a region's line says is MAP_FACTS, a list of
 * functions of the region, each giving a phrase or null.
 *
 * Zoom: a region is opened (its "Open" button, or hpReport.mapZoom) in
 * a canvas of its own under the rows, at a chosen number of bytes per
 * pixel (by default the fewest, a power of two, that keeps it within
 * MAP_ZOOM_ROWS rows of MAP_WIDTH pixels), the region wrapping row after
 * row; there blocks alternate between their stack's colour and a darker
 * one, the holes between them between two greys, so that 1,000-byte
 * blocks between 1,008-byte holes read as such; the hover names the
 * block (address, size), its call stack and, with attribution, its type
 * (the data's map.types), or the hole (its size and bounds).
 */

var MAP_GAP = 1048576; /* blocks closer than this share a region */
var MAP_WIDTH = 1200;  /* canvas pixels a region's row */
var mapRegions = [];
var MAP_ZOOM_ROWS = 400;  /* rows of the zoomed region at most */
var MAP_ZOOM_ROW = 8;     /* canvas pixels a row, 1 of them a gap */
var MAP_HOLES = ['#d4d4d4', '#efefef'];
var mapZoomAt = {region: -1, bpp: 0};

function mapColour(stack) {
	return stack < 0 ? '#999' : SITE_COLOURS[stack % SITE_COLOURS.length];
}
/* The regions of map: [{start, end, first (index of its first block),
 * count, bytes, and the fields of the data's region}]. */
function mapRegionsOf(map) {
	var b = map.blocks, regions = [], r = null, i;
	if (map.regions) {
		/* The recorder's regions (format 1.5, html.c): by address,
		 * each naming its first block and how many it holds. */
		return map.regions.map(function (x) {
			var g = {};
			for (var k in x)
				g[k] = x[k];
			g.first = Math.min(Math.max(0, x.first | 0), b.length);
			g.count = Math.min(Math.max(0, x.count | 0), b.length - g.first);
			g.bytes = x.inuse != null ? x.inuse : 0;
			return g;
		});
	}
	for (i = 0; i < b.length; i++) {
		if (!r || b[i][0] >= r.end + MAP_GAP) {
			r = {start: b[i][0], end: b[i][0] + b[i][1], first: i, count: 0, bytes: 0};
			regions.push(r);
		}
		r.count++;
		r.bytes += b[i][1];
		r.end = Math.max(r.end, b[i][0] + b[i][1]);
	}
	return regions;
}
/* What a region's line says after its bounds, phrase by phrase. */
var MAP_FACTS = [
	function (g) {
		var what = [g.kind, g.name, g.perms].filter(function (t) { return t; });
		return what.length ? what.map(String).join(' ') : null;
	},
	function (g) { return blocks(g.count); },
	function (g) {
		var span = Math.max(1, g.end - g.start);
		return bytes(g.bytes) + ' in ' + bytes(span) + ' (' + pct(g.bytes, span) + ' in use)';
	},
	function (g) {
		/* Blocks may hold pages never touched (a pool allocated and not
		 * yet used): more in use than resident is no share of it. */
		if (g.rss == null)
			return null;
		return 'RSS ' + bytes(g.rss) + (g.bytes > g.rss ? ' (less than in use: pages not ' +
			'touched yet)' : ' (' + pct(g.bytes, g.rss) + ' of it in use)');
	},
	function (g) { return g.gap ? 'largest gap ' + bytes(g.gap) : null; },
	function (g) {
		return g.frag != null ? 'fragmentation ' + (100 * g.frag).toFixed(0) + '%' : null;
	},
	function (g) {
		if (!g.holders || !g.holders.length)
			return null;
		var h = g.holders[0];
		return 'most held by ' + stackLabel(h[0]) + ' (' + bytes(h[2]) + ')';
	}
];
/* A region's line: its bounds, then its facts. */
function mapRegionText(g) {
	return '0x' + g.start.toString(16) + ' - 0x' + g.end.toString(16) + ': ' +
		MAP_FACTS.map(function (f) { return f(g); }).filter(function (t) {
			return t != null;
		}).join(', ');
}
function mapBlockAt(g, a) {
	var b = D.map.blocks;
	for (var j = g.first; j < g.first + g.count; j++)
		if (a >= b[j][0] && a < b[j][0] + b[j][1])
			return b[j];
	return null;
}
function mapBlockText(blk) {
	if (!blk)
		return 'a gap';
	return '0x' + blk[0].toString(16) + ': ' + commas(blk[1]) + ' B, ' +
		(blk[2] >= 0 ? stackLabel(blk[2]) : '(no stack)');
}
/* A darker shade of a colour "#rrggbb": a block next to one of its own
 * stack's stays apart. */
function mapDark(c) {
	var n = parseInt(c.slice(1), 16), f = function (v) { return Math.round(v * 0.6); };
	return 'rgb(' + f(n >> 16) + ',' + f(n >> 8 & 255) + ',' + f(n & 255) + ')';
}
/* The index of the block of region g at or before address a, -1 when
 * none (binary search: the blocks are sorted by address). */
function mapIndexAt(g, a) {
	var b = D.map.blocks, lo = g.first, hi = g.first + g.count - 1, k = -1;
	while (lo <= hi) {
		var mid = (lo + hi) >> 1;
		if (b[mid][0] <= a) {
			k = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return k;
}
/* What lies at address a of region g, in lines: a block (its address,
 * size, call stack by site, its frames, its type) or a hole (its size and
 * bounds). */
function mapDescribe(g, a) {
	var b = D.map.blocks, k = mapIndexAt(g, a), blk = k >= 0 ? b[k] : null;
	if (blk && a < blk[0] + blk[1]) {
		var st = blk[2] >= 0 ? D.stacks[blk[2]] : null;
		var ty = D.map.types && blk[2] >= 0 ? D.map.types[blk[2]] : '';
		return ['block 0x' + blk[0].toString(16) + ', ' + commas(blk[1]) + ' B' +
			(ty ? ', type ' + shortType(ty, 80) : ''),
			'allocated by ' + (st ? stackLabel(blk[2]) : '(no stack)'),
			st ? st.slice(siteAt(st), siteAt(st) + 6).map(fname).join(' \u2190 ') : ''];
	}
	var from = blk ? blk[0] + blk[1] : g.start;
	var to = k + 1 < g.first + g.count ? b[k + 1][0] : g.end;
	return ['hole of ' + commas(to - from) + ' B, 0x' + from.toString(16) + ' - 0x' +
		to.toString(16), '', ''];
}
/* Bytes per pixel for region g: the fewest (a power of two) that keep it
 * within MAP_ZOOM_ROWS rows. */
function mapAutoBpp(g) {
	var span = Math.max(1, g.end - g.start), bpp = 1;
	while (span / bpp > MAP_ZOOM_ROWS * MAP_WIDTH)
		bpp *= 2;
	return bpp;
}
/* Opens region k at bpp bytes per pixel (0: mapAutoBpp) in the zoom
 * panel; returns {region, bpp, rows} drawn. */
function mapZoom(k, bpp) {
	var g = mapRegions[k];
	if (!g || !$.mapZoomBox)
		return null;
	bpp = bpp > 0 ? bpp : mapAutoBpp(g);
	mapZoomAt = {region: k, bpp: bpp};
	var span = Math.max(1, g.end - g.start), W = MAP_WIDTH, perRow = W * bpp;
	var rows = Math.min(Math.ceil(span / perRow), MAP_ZOOM_ROWS * 4);
	var c = $.mapCanvas, ctx = c.getContext('2d'), R = MAP_ZOOM_ROW, b = D.map.blocks;
	c.width = W;
	c.height = rows * R;
	c.style.height = rows * R + 'px';
	/* A stretch [from, to) of addresses in one colour, row after row. */
	var paint = function (from, to, colour) {
		var x0 = (from - g.start) / bpp, x1 = (to - g.start) / bpp;
		ctx.fillStyle = colour;
		for (var r = Math.floor(x0 / W); r < rows && r * W < x1; r++) {
			var a = Math.max(x0, r * W) - r * W, e = Math.min(x1, (r + 1) * W) - r * W;
			ctx.fillRect(a, r * R, Math.max(e - a, bpp > 1 ? 1 : 0), R - 1);
		}
	};
	ctx.clearRect(0, 0, c.width, c.height);
	var at = g.start, holes = 0;
	for (var j = g.first; j < g.first + g.count; j++) {
		if (b[j][0] > at)
			paint(at, b[j][0], MAP_HOLES[holes++ % 2]);
		var col = mapColour(b[j][2]);
		paint(b[j][0], b[j][0] + b[j][1], (j - g.first) % 2 ? mapDark(col) : col);
		at = Math.max(at, b[j][0] + b[j][1]);
	}
	if (g.end > at)
		paint(at, g.end, MAP_HOLES[holes % 2]);
	$.mapBpp.value = String(bpp);
	if ($.mapBpp.value !== String(bpp)) {
		$.mapBpp.appendChild(el('option', {value: bpp, text: commas(bpp) + ' B'}));
		$.mapBpp.value = String(bpp);
	}
	$.mapZoomTitle.textContent = 'Region ' + (k + 1) + ' at ' + commas(bpp) + ' B a pixel: ' +
		mapRegionText(g) + ' (' + rows + ' rows of ' + bytes(perRow) + (rows * perRow < span ?
		'; the first ' + bytes(rows * perRow) + ' shown, choose more bytes a pixel' : '') + ')';
	$.mapZoomBox.hidden = false;
	return {region: k, bpp: bpp, rows: rows};
}
/* The address under a point of the zoomed canvas. */
function mapZoomAddr(e) {
	var g = mapRegions[mapZoomAt.region], r = $.mapCanvas.getBoundingClientRect();
	var x = (e.clientX - r.left) / r.width * MAP_WIDTH, row = Math.floor((e.clientY - r.top) /
		MAP_ZOOM_ROW);
	return g.start + (row * MAP_WIDTH + Math.floor(x)) * mapZoomAt.bpp;
}
function buildMapZoom() {
	$.mapBpp = el('select', {id: 'hp-map-bpp', onchange: function () {
		mapZoom(mapZoomAt.region, +this.value);
	}});
	[1, 2, 4, 8, 16, 64, 256, 1024, 4096, 16384, 65536].forEach(function (n) {
		$.mapBpp.appendChild(el('option', {value: n, text: commas(n) + ' B'}));
	});
	$.mapCanvas = el('canvas', {id: 'hp-map-zoom-canvas'});
	$.mapZoomTip = el('pre', {id: 'hp-map-zoom-tip', cls: 'hp-hint', text: ' '});
	$.mapZoomTitle = el('div', {cls: 'hp-map-region'});
	$.mapCanvas.addEventListener('mousemove', function (e) {
		var g = mapRegions[mapZoomAt.region];
		$.mapZoomTip.textContent = g ? mapDescribe(g, mapZoomAddr(e)).filter(function (t) {
			return t; }).join('\n') : ' ';
	});
	$.mapCanvas.addEventListener('click', function (e) {
		var g = mapRegions[mapZoomAt.region], blk = g && mapBlockAt(g, mapZoomAddr(e));
		if (blk && blk[2] >= 0)
			selectSite('stack:' + blk[2]);
	});
	$.mapZoomBox = el('div', {id: 'hp-map-zoom', hidden: ''}, [
		el('div', {cls: 'hp-bar'}, [el('label', {text: 'Bytes a pixel '}, [$.mapBpp]),
			el('button', {text: 'Close', onclick: function () {
				$.mapZoomBox.hidden = true;
				mapZoomAt.region = -1;
			}})]),
		$.mapZoomTitle, el('div', {cls: 'hp-map-scroll'}, [$.mapCanvas]), $.mapZoomTip]);
	return $.mapZoomBox;
}

function buildMap() {
	if (!D.map)
		return [];
	return [el('h2', {text: 'Memory map'}),
		el('p', {cls: 'hp-hint', text: 'Where the live blocks of snapshot #' + D.map.seq +
			' lie (run --live-blocks): each region of the address space (the mappings ' +
			'that hold the heap, or blocks less than 1 MiB apart in older captures) is a row, left to right, a block a bar coloured by its call stack ' +
			'(grey: the gaps between blocks). Hover for details, click a block to see its ' +
			'call stack\'s sizes and lifetimes; "Open" shows a region at full resolution.'}),
		renderMap(), buildMapZoom()];
}
function renderMap() {
	var b = D.map.blocks, regions = mapRegionsOf(D.map);
	mapRegions = regions;
	var box = el('div', {id: 'hp-map'});
	var tip = el('div', {id: 'hp-map-tip', cls: 'hp-hint'});
	regions.forEach(function (g, k) {
		var w = MAP_WIDTH, h = 28, span = Math.max(1, g.end - g.start);
		var c = el('canvas', {width: w, height: h, 'data-region': k});
		var ctx = c.getContext('2d');
		ctx.fillStyle = '#e4e4e4';
		ctx.fillRect(0, 0, w, h);
		for (var j = g.first; j < g.first + g.count; j++) {
			var x = (b[j][0] - g.start) / span * w, bw = Math.max(1, b[j][1] / span * w);
			ctx.fillStyle = mapColour(b[j][2]);
			ctx.fillRect(x, 2, bw, h - 4);
		}
		var at = function (e) {
			var rc = c.getBoundingClientRect();
			return mapBlockAt(g, g.start + (e.clientX - rc.left) / rc.width * span);
		};
		c.addEventListener('mousemove', function (e) { tip.textContent = mapBlockText(at(e)); });
		c.addEventListener('click', function (e) {
			var blk = at(e);
			if (blk && blk[2] >= 0)
				selectSite('stack:' + blk[2]);
		});
		box.appendChild(el('div', {cls: 'hp-map-region'}, [
			el('button', {cls: 'hp-map-open', 'data-region': k, text: 'Open',
				onclick: function () { mapZoom(k, 0); }}),
			document.createTextNode(' ' + mapRegionText(g))]));
		box.appendChild(c);
	});
	box.appendChild(tip);
	return box;
}
