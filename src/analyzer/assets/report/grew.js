/*
 * grew.js - what grew in a range of the timeline (the brush, timeline.js;
 * grew=N-M in the hash): the snapshots nearest to its ends compared as
 * `heapprof diff FILE@N FILE@M` compares them, a row per changed stack,
 * drawn into $.grew under the heap's chart.
 */

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
