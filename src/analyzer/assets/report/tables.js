/*
 * tables.js - the tables of the selected snapshot: by call stack (the
 * stacks' rows), function, file:line and module (the data's "tables",
 * over every stack), and by type,
 * context, thread and heap when the capture has attribution (the data's
 * "groups"); sortable by any column, filtered by a regular expression.
 * A click on a row of the first four selects it as the site
 * (histograms.js).
 */

function buildTables() {
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
	$.table = el('table', {id: 'hp-table', cls: 'hp-table'}, [$.thead, $.tbody]);
	return [el('div', {cls: 'hp-bar'}, [$.tabs, $.filter, $.tcount]), $.table];
}

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
			return {name: g[0], where: g[1], v: v, flat: v, frames: null, stack: -1, site: ''};
		});
		cache.rowsKey = key;
		cache.rows = rows;
		return rows;
	}
	var row = function (k, where, frames) {
		var r = map[k];
		if (!r) {
			r = map[k] = {name: k, where: where, v: [0, 0, 0, 0, 0, 0, 0, 0],
				flat: [0, 0, 0, 0, 0, 0, 0, 0], frames: frames, stack: -1,
				site: S.table + ':' + k};
			rows.push(r);
		}
		return r;
	};
	if (S.table !== 'stack' && s.tables) {
		/* html.c "tables": every stack counted, the keys past --top one
		 * row saying how many it holds; the flat figures add up to the
		 * total. */
		var t = s.tables[S.table], names = {function: 'functions', line: 'lines',
			module: 'modules'};
		rows = t.rows.map(function (d) {
			var f = d[0], k = f < 0 ? '(no stack)' : keyOf(S.table, f);
			return {name: k, where: f < 0 ? '' : S.table === 'function' ? fline(f) :
				S.table === 'line' ? fname(f) : '', v: [0].concat(d.slice(8, 15)),
				flat: [0].concat(d.slice(1, 8)), frames: null, stack: -1,
				site: f < 0 ? '' : S.table + ':' + k};
		});
		if (t.other[0])
			rows.push({name: '(' + commas(t.other[0]) + ' other ' + names[S.table] + ')',
				where: '', v: [0].concat(t.other.slice(8, 15)),
				flat: [0].concat(t.other.slice(1, 8)), frames: null, stack: -1,
				site: '', other: true});
		cache.rowsKey = key;
		cache.rows = rows;
		return rows;
	}
	s.rows.forEach(function (d) {
		var st = D.stacks[d[0]], seen = {}, c, r;
		if (S.table === 'stack') {
			/* Named by its site (siteAt), then its callers of the
			 * program's own code, as report names a stack. */
			/* A recursion's repeated frames once, with how many
			 * ("store::build \u00d75 \u2190 main"). */
			var at = siteAt(st), names = [], reps = [];
			for (var j = at; j < st.length && names.length < 4; j++) {
				if (j !== at && D.frames[st[j]][5] !== 0)
					continue;
				if (names.length && names[names.length - 1] === fname(st[j]))
					reps[names.length - 1]++;
				else
					reps[names.push(fname(st[j])) - 1] = 1;
			}
			r = row('#' + d[0], st.length ? fline(st[at]) : '', st);
			r.name = (names.map(function (x, k) {
				return reps[k] > 1 ? x + ' \u00d7' + reps[k] : x;
			}).join(' \u2190 ') || '(no stack)') + (st.length > j ? ' \u2190 ...' : '');
			r.stack = d[0];
			r.site = 'stack:' + d[0];
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
		other.site = '';
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
/* The columns left out under 1000 px (report.css .hp-minor), unless
 * sorted by or the metric's. */
var MINOR = {objects: 1, allocations: 1, temporary: 1};
function cellCls(c, sorted, m, cls) {
	if (!c.num)
		return c.id === 'where' ? 'hp-where' : '';
	return cls + (MINOR[c.id] && c !== sorted && c.id !== m.id ? ' hp-minor' : '');
}
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
		if (!a.other !== !b.other) /* the row of the rest stays last */
			return a.other ? 1 : -1;
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
			'data-col': c.id, cls: cellCls(c, col, m, 'num' + (c.id === m.id ? ' hp-wide' : '')),
			title: name, onclick: function () {
				set({sort: c.id, desc: c === col ? !desc : !!c.num});
			}});
		if (noFlat && c.id === 'flat')
			th.hidden = true;
		return th;
	})));
	$.tbody.textContent = '';
	var total = s.total;
	rows.slice(0, MAX_ROWS).forEach(function (r) {
		/* A row of a stack, function, line or module selects its site
		 * (when the capture has histograms to show for it). */
		var tr = el('tr', r.other ? {cls: 'hp-other'} : r.site && D.histograms ? {cls: 'hp-pick' +
			(r.site === S.site ? ' on' : ''), 'data-site': r.site, onclick: function () {
				selectSite(r.site);
			}} : {});
		COLS.forEach(function (c) {
			var v = c.get(r), td;
			if (!c.num) {
				var title = r.frames ? r.frames.map(function (f) {
					return fname(f) + '  ' + fline(f);
				}).join('\n') : v;
				/* A file:line is cut at its start (the line stays). */
				if (c.id === 'name' && S.table === 'line')
					td = el('td', {cls: 'hp-tail', title: title}, [el('bdi', {text: v})]);
				else
					td = el('td', {cls: cellCls(c, col, m, ''), text: v, title: title});
			} else {
				var isBytes = c.num === 'bytes' || (c.num === 'metric' && m.bytes);
				td = el('td', {cls: cellCls(c, col, m, 'num'), 'data-v': v,
					text: isBytes ? bytes(v) : commas(v)});
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

