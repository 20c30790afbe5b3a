/*
 * overview.js - the summary of the selected snapshot and the list of
 * snapshots (click a row to select it), first and last on the overview.
 */

function buildSummary() {
	$.summary = el('dl', {id: 'hp-summary'});
	return [el('h2', {text: 'Summary'}), $.summary];
}
/* The snapshot's bytes and blocks in use, as heapprof report says them
 * (html.c leaves the suppressed runtime allocations out of them). */
function inUse(s) {
	return [s.total[1], s.total[2]];
}
function renderSummary() {
	var s = snap(), last = D.snapshots[D.snapshots.length - 1], tot = s.total;
	var rssPeak = 0, i, items, use = inUse(s), sup = s.suppressed || [0, 0, 0];
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
		['Peak heap', bytes(s.peak_bytes) + ' in ' + blocks(s.peak_count) + ' at ' +
			secs(s.peak_time_ns)],
		['Peak RSS', rssPeak ? bytes(rssPeak) : 'not recorded'],
		[s.reason === 'exit' ? 'Leaked at exit' : 'In use', bytes(use[0]) + ' in ' +
			blocks(use[1])],
		['Call stacks', commas(s.nstacks) + (s.other[0] ? ' (the top ' + commas(s.rows.length) +
			' kept; the rest summed in one row)' : '')],
		['Recording', D.sampled ? 'sampled, one byte in ' + bytes(D.sample_rate_bytes) +
			' (figures are estimates)' : 'every allocation'],
		['Lost', s.lost_count ? commas(s.lost_count) + ' allocations not recorded' : 'nothing'],
		['Duration', secs(last.time_ns)]
	];
	if (D.heap) /* html --heap: one custom heap's blocks */
		items.splice(1, 0, ['Heap', D.heap + ' alone (--heap): its blocks and its own peak; ' +
			'the timeline is malloc\'s heap']);
	if (sup[2] > 0)
		items.splice(8, 0, ['Suppressed', blocks(sup[2]) + ' of runtime allocations (' +
			bytes(sup[1]) + '), left out of what is in use (the line above, the flame graph, the ' +
			'tables)']);
	if (s.cut && s.cut[0] > 0) /* [count, figures as total's]; after the call stacks */
		items.splice(items.findIndex(function (kv) { return kv[0] === 'Call stacks'; }) + 1, 0,
			['Deep stacks', commas(s.cut[0]) + ' deeper than --max-depth ' + D.max_depth +
			': their middle frames are cut (' + pct(s.cut[3], s.peak_bytes) +
			' of the peak)']);
	if (D.damaged)
		items.push(['Damage', D.damaged + ' damaged records: showing what is readable']);
	$.summary.textContent = '';
	items.forEach(function (kv) {
		$.summary.appendChild(el('dt', {text: kv[0]}));
		$.summary.appendChild(el('dd', {text: kv[1]}));
	});
}

function buildSnaps() {
	$.snaps = el('tbody');
	return [el('h2', {text: 'Snapshots'}),
		el('table', {id: 'hp-snaps', cls: 'hp-table'}, [
			el('thead', {}, [el('tr', {}, ['#', 'Time', 'Reason', 'In use', 'Peak so far',
				'Allocations', 'Call stacks'].map(function (h) {
				return el('th', {text: h});
			}))]), $.snaps])];
}
function renderSnaps() {
	$.snaps.textContent = '';
	D.snapshots.forEach(function (s, i) {
		var tr = el('tr', {cls: 'hp-snap' + (i === S.snapshot ? ' on' : ''), 'data-i': i + 1,
			onclick: function () { set({snapshot: i, zoom: ''}); }},
		[i + 1, secs(s.time_ns), s.reason, bytes(inUse(s)[0]), bytes(s.peak_bytes),
			commas(s.total[5]), commas(s.nstacks)].map(function (v) {
			return el('td', {text: v});
		}));
		$.snaps.appendChild(tr);
	});
}
