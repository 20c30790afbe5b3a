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
 */

var MAP_GAP = 1048576; /* blocks closer than this share a region */
var MAP_WIDTH = 1200;  /* canvas pixels a region's row */
var mapRegions = [];

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

function buildMap() {
	if (!D.map)
		return [];
	return [el('h2', {text: 'Memory map'}),
		el('p', {cls: 'hp-hint', text: 'Where the live blocks of snapshot #' + D.map.seq +
			' lie (run --live-blocks): each region of the address space (the mappings ' +
			'that hold the heap, or blocks less than 1 MiB apart in older captures) is a row, left to right, a block a bar coloured by its call stack ' +
			'(grey: the gaps between blocks). Hover for details, click a block to see its ' +
			'call stack\'s sizes and lifetimes.'}),
		renderMap()];
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
		box.appendChild(el('div', {cls: 'hp-map-region', text: mapRegionText(g)}));
		box.appendChild(c);
	});
	box.appendChild(tip);
	return box;
}
