/*
 * main.js - the page put together: the header (views, snapshot, metric),
 * the three views made of the parts the other files build, the events
 * that change the state, render() that draws it, and the start.
 *
 * window.hpReport is the page's handle for tests and for the console:
 * its data and state, apply(hash), set(changes), the icicle's nodes,
 * search, the charts, the memory map's regions, a site's histograms.
 */

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

	/* Overview: the summary, the timelines, what grew, the sizes and
	 * lifetimes, the memory map, the snapshots. */
	$.overview = el('section', {id: 'hp-overview'}, [].concat(buildSummary(), buildTimeline(),
		buildHists(), buildMap(), buildSnaps()));
	$.flame = el('section', {id: 'hp-flame-view'}, buildFlame());
	$.tables = el('section', {id: 'hp-tables'}, buildTables());
	document.body.appendChild($.overview);
	document.body.appendChild($.flame);
	document.body.appendChild($.tables);
	$.overview.setAttribute('data-view', 'overview');
	$.flame.setAttribute('data-view', 'flame');
	$.tables.setAttribute('data-view', 'tables');

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
	renderSiteHist();
	/* The flame graph and the tables of 100,000 stacks take a while:
	 * each is made when shown. */
	if (S.view === 'flame')
		renderFlame();
	if (S.view === 'tables')
		renderTable();
	dirty = {};
}

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
		eventsPlot: function () { return evPlot; },
		eventGroups: function () { return eventGroups(); },
		eventsAt: eventsAt,
		groups: function () { return timelineGroups(); },
		groupLabel: groupLabel,
		stackLabels: stackLabels,
		mapRegions: function () { return mapRegions; },
		mapRegionText: mapRegionText,
		mapZoom: mapZoom,
		mapDescribe: function (k, a) { return mapDescribe(mapRegions[k], a); },
		axisSecs: axisSecs,
		siteHist: function (site) { return D.histograms ? siteHist(site || '') : null; },
		renderMs: performance.now() - t0
	};
	document.body.setAttribute('data-render-ms', Math.round(window.hpReport.renderMs));
	document.body.setAttribute('data-ready', '1');
}
start();
