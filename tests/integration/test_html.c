/*
 * test_html.c - heapprof html checked in its real reader, headless
 * Chromium.
 *
 * Each check copies the page and adds two scripts of the test's own: one
 * first in <head> that records script errors and Content-Security-Policy
 * violations (a blocked fetch), one last in <body> that drives the page
 * through its handle (window.hpReport, report.js), the URL's hash and
 * DOM events, and writes "key=value" lines into <pre id="hp-result">,
 * which `chromium --dump-dom` prints. Expected figures come from
 * tests/programs/known.h and triggers.c's constants, never from the page.
 *
 * `make check` also leaves screenshots of each view in build/html-*.png
 * for a person to look at.
 *
 * Chromium is required: without it the browser tests fail and say how to
 * install it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/png.h"
#include "../harness/tools.h"
#include "../programs/known.h"
#include "../programs/lifetimes.h"
#include "../programs/phases.h"

/* triggers.c: phase N allocates 10 N blocks of 100 N bytes, a snapshot
 * after phases 1, 2 and at exit. */
#define PHASE_BYTES(n) (10 * (n)*100 * (n))

static const char chromium_flags[] =
	"--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
	"--disable-background-networking --disable-component-update --disable-sync "
	"--hide-scrollbars --window-size=1400,1000";

#define require(c, why)                   \
	do {                              \
		if (!expect_true(c, why)) \
			return;           \
	} while (0)

/* Before the page's scripts: errors and blocked requests. */
static const char prologue[] =
	"<script>\nwindow.hpErrors = [];\nwindow.hpBlocked = [];\n"
	"window.onerror = function (msg, src, line, col) {\n"
	"\thpErrors.push(msg + ' at ' + line + ':' + col);\n};\n"
	"document.addEventListener('securitypolicyviolation', function (e) {\n"
	"\thpBlocked.push(e.blockedURI);\n});\n</script>\n";

/* After them: the helpers every driver uses. */
static const char helpers[] =
	"var out = [];\n"
	"function put(k, v) { out.push(k + '=' + v); }\n"
	"function byName(n, name) {\n"
	"\tif (n.name === name) return n;\n"
	"\tfor (var i = 0; i < n.kids.length; i++) {\n"
	"\t\tvar f = byName(n.kids[i], name);\n"
	"\t\tif (f) return f;\n\t}\n\treturn null;\n}\n"
	"function value(name) {\n"
	"\tvar n = byName(hpReport.tree().root, name);\n\treturn n ? n.v : -1;\n}\n"
	"function rows() {\n"
	"\treturn Array.prototype.map.call(hpReport.rows(), function (tr) { return tr; });\n}\n"
	"function cell(tr, col) {\n"
	"\tvar i = Array.prototype.map.call(document.querySelectorAll('#hp-table th'),\n"
	"\t\tfunction (th) { return th.getAttribute('data-col'); }).indexOf(col);\n"
	"\treturn tr.cells[i];\n}\n"
	"function rowOf(name) {\n"
	"\treturn rows().filter(function (tr) { return tr.cells[0].textContent === name; })[0];\n}\n"
	"function num(tr, col) { return +cell(tr, col).getAttribute('data-v'); }\n"
	/* The headers of the tables sel matches, for headers_shown:
	 * "text@left,top,width,height|..." in CSS pixels (the screenshots are
	 * at device pixel ratio 1). */
	"function heads(sel) {\n"
	"\treturn Array.prototype.map.call(document.querySelectorAll(sel + ' thead th'),\n"
	"\t\tfunction (th) { var r = th.getBoundingClientRect();\n"
	"\t\t\treturn th.textContent + '@' + [r.left, r.top, r.width, r.height].map(Math.round)\n"
	"\t\t\t\t.join(','); }).join('|');\n}\n";

static const char epilogue[] =
	"put('ready', document.body.getAttribute('data-ready'));\n"
	"put('resources', performance.getEntriesByType('resource').length);\n"
	"put('blocked', hpBlocked.length);\n"
	"put('load_ms', Math.round(performance.now()));\n"
	"put('errors', hpErrors.length ? hpErrors.join(' | ') : 'none');\n"
	"document.getElementById('hp-result').textContent = '\\n' + out.join('\\n') + '\\n';\n";

/* The driver for known: the summary, the flame graph by metric, search,
 * zoom, the tables, a sort and a filter. */
static const char known_driver[] =
	"put('summary', document.getElementById('hp-summary').textContent);\n"
	"put('timeline', document.querySelectorAll('#hp-timeline canvas').length);\n"
	"hpReport.set({view: 'flame', metric: 'peak'});\n"
	"put('peak_root', hpReport.tree().root.v);\n"
	"put('peak_leaf', value('peak_leaf'));\n"
	"put('flame_px', document.getElementById('hp-flame').getBoundingClientRect().width);\n"
	"hpReport.set({metric: 'inuse'});\n"
	"put('leak_leaf', value('leak_leaf'));\n"
	"put('inuse_root', hpReport.tree().root.v);\n"
	"var r = hpReport.search('leak_');\n"
	"put('matched_value', r.value);\n"
	"put('matched_text', document.getElementById('hp-matched').textContent);\n"
	"hpReport.set({metric: 'allocations', search: ''});\n"
	"put('churn_allocs', value('churn_leaf'));\n"
	"hpReport.set({metric: 'temporary'});\n"
	"put('churn_temp', value('churn_leaf'));\n"
	"hpReport.set({metric: 'allocated'});\n"
	"put('peak_allocated', value('peak_leaf'));\n"
	"var lp = byName(hpReport.tree().root, 'leak_path');\n"
	"var path = []; for (var n = lp; n.parent; n = n.parent) path.unshift(n.name);\n"
	"hpReport.set({metric: 'inuse', zoom: path.join(';')});\n"
	"put('zoom', hpReport.node(hpReport.state.zoom).name);\n"
	"put('reset_shown', !document.getElementById('hp-reset').hidden);\n"
	"document.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));\n"
	"put('unzoomed', hpReport.state.zoom === '' ? 'yes' : 'no');\n"
	"hpReport.set({view: 'tables', table: 'function', metric: 'allocations', sort: ''});\n"
	"var first = rows()[0];\n"
	"put('top_function_allocs', num(first, 'allocations'));\n"
	"put('churn_row_allocs', num(rowOf('churn_leaf'), 'allocations'));\n"
	"put('leak_row_inuse', num(rowOf('leak_leaf'), 'inuse'));\n"
	"put('leak_row_where', cell(rowOf('leak_leaf'), 'where').textContent);\n"
	"document.querySelector('#hp-table th[data-col=\"allocated\"]').click();\n"
	"var v = rows().map(function (tr) { return num(tr, 'allocated'); });\n"
	"put('sorted_desc', v.every(function (x, i) { return !i || v[i - 1] >= x; }));\n"
	"put('sort_first', num(rows()[0], 'allocated') + '/' + hpReport.data.snapshots[0].total[4]);\n"
	"document.querySelector('#hp-table th[data-col=\"allocated\"]').click();\n"
	"v = rows().map(function (tr) { return num(tr, 'allocated'); });\n"
	"put('sorted_asc', v.every(function (x, i) { return !i || v[i - 1] <= x; }));\n"
	"put('sort_hash', location.hash);\n"
	"var f = document.getElementById('hp-filter');\n"
	"f.value = 'leak_'; f.dispatchEvent(new Event('input'));\n"
	"put('filtered', rows().map(function (tr) { return tr.cells[0].textContent; }).sort().join(','));\n"
	"hpReport.set({filter: '', table: 'module'});\n"
	"put('module_known', num(rowOf('known'), 'allocations'));\n"
	"hpReport.set({table: 'stack'});\n"
	"put('stack_rows', rows().length);\n"
	"hpReport.set({table: 'line', filter: 'known.c'});\n"
	"put('line_rows', rows().length > 0 && rows().every(function (tr) {\n"
	"\treturn tr.cells[0].textContent.indexOf('known.c:') >= 0; }));\n";

/* The driver for triggers: three snapshots, chosen by the hash, a click
 * on the snapshot list, a click on the timeline. */
static const char triggers_driver[] =
	"put('start', document.body.getAttribute('data-snapshot'));\n"
	"put('start_root', hpReport.tree().root.v);\n"
	"put('start_phase2', value('phase2'));\n"
	"hpReport.apply('#snapshot=3&metric=inuse&view=flame');\n"
	"put('hash_snapshot', document.body.getAttribute('data-snapshot'));\n"
	"put('hash_root', hpReport.tree().root.v);\n"
	"put('hash_phase3', value('phase3'));\n"
	"put('flame_title', document.getElementById('hp-flame-title').textContent);\n"
	"hpReport.set({view: 'overview'});\n"
	"document.querySelector('#hp-snaps tr[data-i=\"2\"]').click();\n"
	"put('row_snapshot', document.body.getAttribute('data-snapshot'));\n"
	"put('row_root', hpReport.tree().root.v);\n"
	"put('row_phase3', value('phase3'));\n"
	"var p = hpReport.plot(), over = p.over, box = over.getBoundingClientRect();\n"
	"var t1 = hpReport.data.snapshots[0].time_ns / 1e9;\n"
	"over.dispatchEvent(new MouseEvent('click', {bubbles: true,\n"
	"\tclientX: box.left + p.valToPos(t1, 'x'), clientY: box.top + 10}));\n"
	"put('click_snapshot', document.body.getAttribute('data-snapshot'));\n"
	"put('click_root', hpReport.tree().root.v);\n"
	"put('click_hash', location.hash);\n"
	"put('summary', document.getElementById('hp-summary').textContent);\n";

static const char *hp(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/heapprof", hp_test_build());
	return path;
}

/* Records a test program once per name; the capture's path, or NULL. */
static const char *record(const char *prog)
{
	static char paths[8][4400];
	static const char *names[8];

	for (int i = 0; i < 8; i++) {
		if (names[i] && strcmp(names[i], prog) == 0)
			return paths[i][0] ? paths[i] : NULL;
		if (!names[i]) {
			names[i] = prog;
			snprintf(paths[i], sizeof paths[i], "%s/%s.hpf", hp_test_tmp(), prog);
			if (hp_test_sh("%s run -q -o %s -- %s/tests/programs/%s", hp(), paths[i],
				       hp_test_build(), prog) != 0)
				paths[i][0] = '\0';
			return paths[i][0] ? paths[i] : NULL;
		}
	}
	return NULL;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1))) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			buf[n] = '\0';
			if (len)
				*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

static int have_chromium(void)
{
	if (hp_test_sh("command -v chromium >/dev/null") == 0)
		return 1;
	expect_true(0, "headless Chromium is needed to check the page: apt-get install chromium");
	return 0;
}

/* Writes a copy of page with the prologue, the helpers, driver and the
 * epilogue added. */
static int write_driven(const char *page, const char *out, const char *driver)
{
	char *html = slurp(page, NULL);
	char *head = html ? strstr(html, "<head>\n") : NULL;
	char *end = html ? strstr(html, "</body>") : NULL;
	FILE *f;
	int ok;

	if (!head || !end || !(f = fopen(out, "w"))) {
		free(html);
		return -1;
	}
	head += strlen("<head>\n");
	fwrite(html, 1, (size_t)(head - html), f);
	fputs(prologue, f);
	fwrite(head, 1, (size_t)(end - head), f);
	fprintf(f,
		"<pre id=\"hp-result\"></pre>\n<script>\n(function () {\n%stry {\n%s} catch (e) "
		"{\n\thpErrors.push('driver: ' + e);\n}\n%s})();\n</script>\n",
		helpers, driver, epilogue);
	fputs(end, f);
	ok = !ferror(f);
	ok &= fclose(f) == 0;
	free(html);
	return ok ? 0 : -1;
}

/* Chromium's --dump-dom of file#hash in a window of size ("W,H"; NULL:
 * the flags' 1400x1000); the DOM in a malloc'd string. */
static char *dump_dom_at(const char *file, const char *hash, const char *name, const char *size)
{
	char out[4600], profile[4600];

	snprintf(out, sizeof out, "%s/%s.dom", hp_test_tmp(), name);
	snprintf(profile, sizeof profile, "%s/%s.profile", hp_test_tmp(), name);
	if (hp_test_sh(
		    "rm -rf '%s' && mkdir -p '%s' && timeout 60 chromium %s%s%s --user-data-dir='%s' "
		    "--dump-dom 'file://%s%s' > '%s' 2> '%s.err'",
		    profile, profile, chromium_flags, size ? " --window-size=" : "", size ? size : "",
		    profile, file, hash, out, out) != 0) {
		hp_test_sh("tail -5 '%s.err'", out);
		return NULL;
	}
	hp_test_sh("rm -rf '%s'", profile);
	return slurp(out, NULL);
}

static char *dump_dom(const char *file, const char *hash, const char *name)
{
	return dump_dom_at(file, hash, name, NULL);
}

/* A screenshot of file#hash into build/html-NAME.png in a window of size
 * ("W,H"; NULL: 1400x1000); 0 when written. */
static int screenshot_at(const char *file, const char *hash, const char *name, const char *size)
{
	char png[4600], profile[4600];
	struct stat st;

	snprintf(png, sizeof png, "%s/html-%s.png", hp_test_build(), name);
	snprintf(profile, sizeof profile, "%s/shot-%s.profile", hp_test_tmp(), name);
	unlink(png);
	if (hp_test_sh(
		    "rm -rf '%s' && mkdir -p '%s' && timeout 60 chromium %s%s%s --user-data-dir='%s' "
		    "--virtual-time-budget=3000 --screenshot='%s' 'file://%s%s' >/dev/null 2>&1",
		    profile, profile, chromium_flags, size ? " --window-size=" : "", size ? size : "",
		    profile, png, file, hash) != 0)
		return -1;
	hp_test_sh("rm -rf '%s'", profile);
	/* A blank 1400x1000 PNG compresses to a few KB; a drawn view does not. */
	return stat(png, &st) == 0 && st.st_size > 12000 ? 0 : -1;
}

static int screenshot(const char *file, const char *hash, const char *name)
{
	return screenshot_at(file, hash, name, NULL);
}

static const char *result(const char *dom, const char *key, char *buf, size_t cap)
{
	const char *p = dom ? strstr(dom, "<pre id=\"hp-result\">") : NULL;
	size_t klen = strlen(key), n;

	while (p && (p = strchr(p, '\n'))) {
		p++;
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			p += klen + 1;
			n = strcspn(p, "\n");
			if (n >= cap)
				n = cap - 1;
			memcpy(buf, p, n);
			buf[n] = '\0';
			return buf;
		}
		if (strncmp(p, "</pre>", 6) == 0)
			break;
	}
	return NULL;
}

/* key's value in dom (a static buffer; "" when missing). */
static const char *buf_of(const char *dom, const char *key)
{
	static char buf[4096];
	return result(dom, key, buf, sizeof buf) ? buf : "";
}

static double num(const char *dom, const char *key)
{
	char buf[128];
	return result(dom, key, buf, sizeof buf) ? strtod(buf, NULL) : -1;
}

static int is(const char *dom, const char *key, const char *want)
{
	char buf[4096];
	const char *got = result(dom, key, buf, sizeof buf);

	if (got && strcmp(got, want) == 0)
		return 1;
	printf("  %s: expected \"%s\", got \"%s\"\n", key, want, got ? got : "(missing)");
	return 0;
}

static int has(const char *dom, const char *key, const char *part)
{
	char buf[4096];
	const char *got = result(dom, key, buf, sizeof buf);

	if (got && strstr(got, part))
		return 1;
	printf("  %s: expected to contain \"%s\", got \"%s\"\n", key, part,
	       got ? got : "(missing)");
	return 0;
}

/* Whether every header of key's list (heads() of the helpers) is painted in the
 * screenshot png: over its box (2 px in from each side), at least half
 * the pixels the headers' background (#f3f3f3, report.css .hp-table th)
 * and some dark ones (its text, #222). A header the DOM has but Chromium
 * did not paint (a white box) fails; says which. Returns how many are
 * shown, -1 when the list or the image cannot be read. */
static int headers_shown(const char *dom, const char *key, const char *png)
{
	char buf[4096];
	const char *list = result(dom, key, buf, sizeof buf);
	struct hp_png img;
	int shown = 0;

	if (!list || !*list || hp_png_read(png, &img))
		return -1;
	for (char *h = buf; h && *h;) {
		char *next = strchr(h, '|'), *at;
		int x, y, w, ht;
		unsigned long bg = 0, dark = 0, all = 0;
		if (next)
			*next++ = '\0';
		at = strrchr(h, '@');
		if (!at || sscanf(at + 1, "%d,%d,%d,%d", &x, &y, &w, &ht) != 4) {
			hp_png_free(&img);
			return -1;
		}
		*at = '\0';
		for (int j = y + 2; j < y + ht - 2; j++)
			for (int i = x + 2; i < x + w - 2; i++) {
				uint32_t c = hp_png_at(&img, (uint32_t)i, (uint32_t)j);
				int lum = ((c >> 16) + (c >> 8 & 0xff) + (c & 0xff)) / 3;
				all++;
				bg += c == 0xf3f3f3;
				dark += lum < 110;
			}
		if (all && 2 * bg >= all && dark >= 10)
			shown++;
		else
			printf("  header \"%s\" at %d,%d %dx%d not painted: %lu of %lu pixels its "
			       "background, %lu dark\n",
			       h, x, y, w, ht, bg, all, dark);
		h = next;
	}
	hp_png_free(&img);
	return shown;
}

/* Writes the page of capture into DIR/name.html with args; 0 on success. */
static int render(const char *capture, const char *args, const char *name, char *page, size_t cap)
{
	snprintf(page, cap, "%s/%s.html", hp_test_tmp(), name);
	return hp_test_sh("%s html %s %s -o %s", hp(), args, capture, page) == 0 ? 0 : -1;
}

/* The page ran: no script error, no request, the driver to its end. */
static void expect_clean(const char *dom)
{
	char buf[4096];

	require(result(dom, "errors", buf, sizeof buf), "the driver ran to the end");
	expect_true(is(dom, "errors", "none"), "no script error");
	expect_true(is(dom, "ready", "1"), "the page's script ran to the end");
	expect_true(is(dom, "resources", "0"), "the page fetched nothing");
	expect_true(is(dom, "blocked", "0"), "and tried to fetch nothing");
}

HP_TEST(html_known_figures_in_browser)
{
	const char *capture = record("known");
	char page[4600], driven[4600], buf[256], png[4600];
	char *dom;

	require(capture, "heapprof run records known");
	require(render(capture, "", "known", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/known-driven.html", hp_test_tmp());
	require(write_driven(page, driven, known_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "known");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(has(dom, "summary", "Leaked at exit"), "the summary names the leaks at exit");
	expect_true(has(dom, "summary", "Peak heap49.8 KiB in 60 blocks"),
		    "the summary shows the peak: 51,000 B in 60 blocks");
	expect_true(num(dom, "timeline") >= 1, "the timeline is drawn");
	expect_eq_u64((uint64_t)num(dom, "peak_root"), KNOWN_PEAK_BYTES,
		      "the peak graph's root is the peak");
	expect_eq_u64((uint64_t)num(dom, "peak_leaf"), PEAK_N * PEAK_SIZE,
		      "peak_leaf holds its blocks at the peak");
	expect_true(num(dom, "flame_px") > 1000, "the flame graph spans the page");
	expect_eq_u64((uint64_t)num(dom, "leak_leaf"), LEAK_N * LEAK_SIZE,
		      "leak_leaf's leaks at exit");
	expect_eq_u64((uint64_t)num(dom, "matched_value"), LEAK_N * LEAK_SIZE,
		      "searching leak_ matches leak_path and leak_leaf, counted once");
	expect_true(has(dom, "matched_text", "Matched: 1000 B"),
		    "the match is shown (in bytes as report says them)");
	expect_eq_u64((uint64_t)num(dom, "churn_allocs"), CHURN_N, "churn_leaf's allocations");
	expect_eq_u64((uint64_t)num(dom, "churn_temp"), CHURN_N,
		      "each of them a temporary allocation");
	expect_eq_u64((uint64_t)num(dom, "peak_allocated"), PEAK_N * PEAK_SIZE,
		      "peak_leaf's bytes allocated");
	expect_true(is(dom, "zoom", "leak_path"), "a zoom path selects leak_path");
	expect_true(is(dom, "reset_shown", "true"), "the reset button shows when zoomed");
	expect_true(is(dom, "unzoomed", "yes"), "Escape unzooms");
	expect_eq_u64((uint64_t)num(dom, "churn_row_allocs"), CHURN_N,
		      "the function table shows churn_leaf's allocations");
	expect_eq_u64((uint64_t)num(dom, "leak_row_inuse"), LEAK_N * LEAK_SIZE,
		      "and leak_leaf's bytes in use");
	expect_true(has(dom, "leak_row_where", "known.c:"), "with its file:line");
	expect_true(is(dom, "sorted_desc", "true"), "a click on a header sorts, largest first");
	/* main and its callers hold everything but the threads' allocations. */
	expect_true(result(dom, "sort_first", buf, sizeof buf) && strchr(buf, '/') &&
			    atof(buf) ==
				    atof(strchr(buf, '/') + 1) - THREADS * THREAD_N * THREAD_SIZE,
		    "the first row has allocated all but the threads' bytes");
	expect_true(is(dom, "sorted_asc", "true"), "a second click sorts the other way");
	expect_true(has(dom, "sort_hash", "sort=allocated&") && has(dom, "sort_hash", "desc=0"),
		    "the sort is kept in the URL");
	expect_true(is(dom, "filtered", "leak_leaf,leak_path"),
		    "the filter keeps the functions that match");
	expect_true(num(dom, "module_known") >= CHURN_N + PEAK_N + LEAK_N,
		    "the program's module counts its allocations");
	expect_true(num(dom, "stack_rows") >= 10, "the stack table lists the stacks");
	expect_true(is(dom, "line_rows", "true"), "file:line rows filtered to known.c");
	free(dom);

	expect_eq_u64(screenshot(page, "#view=overview", "known-overview"), 0,
		      "a screenshot of the overview in build/html-known-overview.png");
	expect_eq_u64(screenshot(page, "#view=flame&metric=peak", "known-flame"), 0,
		      "of the flame graph");
	expect_eq_u64(screenshot(page, "#view=flame&metric=peak&search=leak_|peak_",
				 "known-search"),
		      0, "of a search");
	expect_eq_u64(screenshot(page, "#view=tables&table=function&metric=allocations",
				 "known-tables"),
		      0, "of the tables");
	/* What that screenshot shows: every header of the table, painted. */
	snprintf(driven, sizeof driven, "%s/known-heads.html", hp_test_tmp());
	require(write_driven(page, driven, "put('heads', heads('#hp-table'));\n") == 0,
		"the driven copy is written");
	dom = dump_dom(driven, "#view=tables&table=function&metric=allocations", "known-heads");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	snprintf(png, sizeof png, "%s/html-known-tables.png", hp_test_build());
	expect_eq_u64((uint64_t)headers_shown(dom, "heads", png), 9,
		      "the screenshot shows the 9 headers of the function table");
	free(dom);
}

/* Issue 24, item 7 (the tables): the tables by function, file:line and
 * module count every stack, not only the --top ones: with --top 2, each
 * table's flat figures add up to the snapshot's total (the keys past the
 * top summed into one row that says how many it holds), and main's
 * cumulative figure is what the page with every stack (--top 0) says. */
static const char tables_driver[] =
	"['function', 'line', 'module'].forEach(function (t) {\n"
	"\thpReport.set({view: 'tables', table: t, metric: 'allocations', sort: ''});\n"
	"\tvar sum = 0;\n"
	"\trows().forEach(function (tr) { sum += num(tr, 'flat'); });\n"
	"\tput(t + '_sum', sum);\n"
	"\tvar o = rows().filter(function (tr) { return tr.className === 'hp-other'; });\n"
	"\tput(t + '_other', o.length ? o[0].cells[0].textContent : '');\n"
	"\tput(t + '_rows', rows().length);\n"
	"});\n"
	"hpReport.set({view: 'tables', table: 'function', metric: 'allocations', sort: ''});\n"
	"put('main_cum', num(rowOf('main'), 'allocations'));\n"
	"put('total', hpReport.data.snapshots[hpReport.state.snapshot].total[5]);\n";

HP_TEST(html_tables_add_up)
{
	const char *capture = record("known");
	char page[4600], all[4600], driven[4600], total[64], main_all[64], want[64];
	char *dom;

	if (!have_chromium())
		return;
	require(capture, "heapprof run records known");
	require(render(capture, "--top 2", "tables-top2", page, sizeof page) == 0 &&
			render(capture, "--top 0", "tables-all", all, sizeof all) == 0,
		"heapprof html writes the pages");
	snprintf(driven, sizeof driven, "%s/tables-all-driven.html", hp_test_tmp());
	require(write_driven(all, driven, tables_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "tables-all");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	require(result(dom, "main_cum", main_all, sizeof main_all), "main's row, every stack kept");
	free(dom);
	snprintf(driven, sizeof driven, "%s/tables-top2-driven.html", hp_test_tmp());
	require(write_driven(page, driven, tables_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "tables-top2");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	require(result(dom, "total", total, sizeof total), "the snapshot's total");
	expect_true(atoll(total) > 100, "known makes allocations");
	expect_true(is(dom, "function_sum", total), "functions: the flat figures add up");
	expect_true(is(dom, "line_sum", total), "file:line: the flat figures add up");
	expect_true(is(dom, "module_sum", total), "modules: the flat figures add up");
	expect_true(is(dom, "main_cum", main_all), "main's allocations as with every stack");
	expect_true(is(dom, "function_rows", "3"), "2 functions and the other row");
	result(dom, "function_other", want, sizeof want);
	expect_true(strncmp(want, "(", 1) == 0 && strstr(want, " other functions)") != NULL,
		    "the other row says how many functions it holds");
	result(dom, "line_other", want, sizeof want);
	expect_true(strstr(want, " other lines)") != NULL, "and how many lines");
	free(dom);
	expect_eq_u64(screenshot_at(page, "#view=tables&table=function&metric=allocations",
				    "tables-top2", "800,600"),
		      0, "a screenshot at 800x600 in build/html-tables-top2.png");
	expect_eq_u64(screenshot_at(page, "#view=tables&table=line&metric=allocations",
				    "tables-top2-line", "1400,900"),
		      0, "and of file:line at 1400x900");
}

HP_TEST(html_snapshots_switch_views)
{
	const char *capture = record("triggers");
	char page[4600], driven[4600];
	char *dom;

	require(capture, "heapprof run records triggers");
	require(render(capture, "", "triggers", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/triggers-driven.html", hp_test_tmp());
	require(write_driven(page, driven, triggers_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "#snapshot=2&metric=inuse", "triggers");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(is(dom, "start", "2"), "the URL's #snapshot=2 selects snapshot 2");
	expect_eq_u64((uint64_t)num(dom, "start_root"), PHASE_BYTES(1) + PHASE_BYTES(2),
		      "its flame graph holds phases 1 and 2");
	expect_eq_u64((uint64_t)num(dom, "start_phase2"), PHASE_BYTES(2), "phase 2's bytes");
	expect_true(is(dom, "hash_snapshot", "3"), "a new hash selects snapshot 3");
	expect_eq_u64((uint64_t)num(dom, "hash_root"),
		      PHASE_BYTES(1) + PHASE_BYTES(2) + PHASE_BYTES(3),
		      "the flame graph changes to it");
	expect_eq_u64((uint64_t)num(dom, "hash_phase3"), PHASE_BYTES(3), "phase 3 appears");
	expect_true(has(dom, "flame_title", "snapshot #3 (exit"), "the title names the snapshot");
	expect_true(is(dom, "row_snapshot", "2"), "a click on the snapshot list selects it");
	expect_eq_u64((uint64_t)num(dom, "row_root"), PHASE_BYTES(1) + PHASE_BYTES(2),
		      "and the flame graph follows");
	expect_eq_u64((uint64_t)num(dom, "row_phase3"), (uint64_t)-1, "phase 3 is not there yet");
	expect_true(is(dom, "click_snapshot", "1"),
		    "a click on the timeline at snapshot 1 selects it");
	expect_eq_u64((uint64_t)num(dom, "click_root"), PHASE_BYTES(1), "its figures");
	expect_true(has(dom, "click_hash", "snapshot=1&"), "the URL follows");
	expect_true(has(dom, "summary", "#1 of 3, heapprof_dump()"), "and the summary");
	free(dom);
	expect_eq_u64(screenshot(page, "#snapshot=2", "triggers-overview"), 0,
		      "a screenshot of the timeline with 3 snapshots");
}

/* The driver for phases: the per-site timeline's lines, their values at
 * each snapshot, a click on it. */
static const char phases_driver[] =
	"var sp = hpReport.sitesPlot(), d = sp ? sp.data : [[]], s = hpReport.data.snapshots;\n"
	"put('sites_canvas', document.querySelectorAll('#hp-sites canvas').length);\n"
	"put('sites_lines', sp ? sp.series.length - 1 : 0);\n"
	"put('sites_labels', sp.series.slice(1).map(function (x) {\n"
	"\treturn x.label.split(' ')[0]; }).join(','));\n"
	"function at(i, ns) {\n"
	"\tvar v = 0;\n"
	"\tfor (var k = 0; k < d[0].length && d[0][k] <= ns / 1e9; k++) v = d[i][k];\n"
	"\treturn v;\n}\n"
	"put('b_at', [at(1, s[0].time_ns), at(1, s[1].time_ns), at(1, s[2].time_ns)].join(','));\n"
	"put('a_at', [at(2, s[0].time_ns), at(2, s[1].time_ns), at(2, s[2].time_ns)].join(','));\n"
	"put('c_at', [at(3, s[0].time_ns), at(3, s[1].time_ns), at(3, s[2].time_ns)].join(','));\n"
	"var over = sp.over, box = over.getBoundingClientRect();\n"
	"over.dispatchEvent(new MouseEvent('click', {bubbles: true,\n"
	"\tclientX: box.left + sp.valToPos(s[0].time_ns / 1e9, 'x'), clientY: box.top + 10}));\n"
	"put('click_snapshot', document.body.getAttribute('data-snapshot'));\n"
	"put('by', Array.prototype.map.call(document.querySelectorAll('#hp-by option'),\n"
	"\tfunction (o) { return o.value; }).join(','));\n"
	/* The heap chart's labels: phases' peak is a moment after snapshot 2. */
	"var hp = hpReport.plot(), L = hp.hpLabels || [], bad = [];\n"
	"var left = hp.bbox.left / devicePixelRatio, right = left + hp.bbox.width / devicePixelRatio;\n"
	"L.forEach(function (a, i) {\n"
	"\tif (a.x < left || a.x + a.w > right) bad.push(a.text + ' out');\n"
	"\tL.slice(i + 1).forEach(function (b) {\n"
	"\t\tif (a.y === b.y && a.x < b.x + b.w && b.x < a.x + a.w) bad.push(a.text + '/' + b.text);\n"
	"\t}); });\n"
	"put('labels', L.map(function (a) { return a.text; }).join(','));\n"
	"put('labels_apart', bad.length ? bad.join(' ') : 'yes');\n"
	/* The time axis's ticks: as many decimals as their step has, so
	 * equal steps read equal. */
	"put('secs', hpReport.axisSecs(null, [0, 0.025, 0.05, 0.075], null, null, 0.025).join(' ') +\n"
	"\t'|' + hpReport.axisSecs(null, [0, 0.1, 0.2], null, null, 0.1).join(' ') +\n"
	"\t'|' + hpReport.axisSecs(null, [0, 2, 4], null, null, 2).join(' '));\n"
	"function steps(u) {\n"
	"\tvar v = (u.axes[0]._values || []).map(Number), d = [];\n"
	"\tfor (var i = 1; i < v.length; i++) d.push(Math.round((v[i] - v[i - 1]) * 1e9));\n"
	"\treturn v.length > 2 && d.every(function (x) { return x === d[0]; }) ? 'equal' : v.join(' ');\n}\n"
	"put('ticks', steps(hp) + ',' + steps(sp));\n"
	/* The two pauses' stacks read the same innermost frame: their rows
	 * are told apart by the line of main that calls each. */
	"put('pauses', Array.prototype.map.call(\n"
	"\tdocument.querySelectorAll('#hp-hists tr[data-function=\"pause_busy\"]'),\n"
	"\tfunction (tr) { return tr.cells[0].textContent; }).sort().join('|'));\n";

/* The driver for phases' page with a grouping the data does not have yet
 * (a "timelines" member, added by the test): the selector offers it, and
 * choosing it draws its lines. */
static const char groups_driver[] =
	"function labels() {\n"
	"\treturn hpReport.sitesPlot().series.slice(1).map(function (x) {\n"
	"\t\treturn x.label.split(' ')[0]; }).join(',');\n}\n"
	"put('by', Array.prototype.map.call(document.querySelectorAll('#hp-by option'),\n"
	"\tfunction (o) { return o.value + ':' + o.textContent; }).join(','));\n"
	"put('first', labels());\n"
	"var sel = document.getElementById('hp-by');\n"
	"sel.value = 'thread'; sel.dispatchEvent(new Event('change'));\n"
	"put('thread', labels());\n"
	"put('thread_v', hpReport.sitesPlot().data.slice(1).map(function (v) {\n"
	"\treturn v.join(':'); }).join(','));\n"
	"put('thread_hash', location.hash);\n"
	"hpReport.apply('#view=overview&by=stack');\n"
	"put('back', labels());\n";

/* Copies page to out with text inserted before the first marker. */
static int inject(const char *page, const char *out, const char *marker, const char *text)
{
	char *html = slurp(page, NULL), *at = html ? strstr(html, marker) : NULL;
	FILE *f;
	int ok;

	if (!at || !(f = fopen(out, "w"))) {
		free(html);
		return -1;
	}
	fwrite(html, 1, (size_t)(at - html), f);
	fputs(text, f);
	fputs(at, f);
	ok = !ferror(f);
	ok &= fclose(f) == 0;
	free(html);
	return ok ? 0 : -1;
}

/* Whether the DOM dump's value of key is want, followed by rest repeated
 * one or more times. */
static int prefix_then(const char *dom, const char *key, const char *want, const char *rest)
{
	char buf[4096];
	size_t n = strlen(want), r = strlen(rest);
	const char *v = result(dom, key, buf, sizeof buf), *p;
	int ok = v && strncmp(v, want, n) == 0 && v[n];

	for (p = ok ? v + n : ""; ok && *p; p += r)
		ok = strncmp(p, rest, r) == 0;
	if (!ok)
		printf("  %s: expected \"%s\" then \"%s\" once or more, got \"%s\"\n", key, want,
		       rest, v ? v : "(missing)");
	return ok;
}

HP_TEST(html_sites_over_time)
{
	const char *capture = record("phases");
	char page[4600], driven[4600], grouped[4600], want[128];
	char *dom;

	require(capture, "heapprof run records phases");
	require(render(capture, "", "phases", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/phases-driven.html", hp_test_tmp());
	require(write_driven(page, driven, phases_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "#snapshot=3", "phases");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(num(dom, "sites_canvas") >= 1, "the sites' timeline is drawn");
	/* then the pauses' temporary blocks, each live at the peak or at a
	 * tick that fell between its malloc and its free (which ticks do
	 * depends on the run's timing) */
	expect_true(num(dom, "sites_lines") >= 4 && num(dom, "sites_lines") <= 5,
		    "a line per site that held memory: B, A, C and one or two of the pauses'");
	expect_true(prefix_then(dom, "sites_labels", "build_b,build_a,leak_c", ",pause_busy"),
		    "named by function, the largest first");
	snprintf(want, sizeof want, "0,%d,0", PHASE_B_N * PHASE_B_SIZE);
	expect_true(is(dom, "b_at", want), "B's line: all of B at snapshot 2 only");
	snprintf(want, sizeof want, "%d,0,0", PHASE_A_N * PHASE_A_SIZE);
	expect_true(is(dom, "a_at", want), "A's line: all of A at snapshot 1 only");
	snprintf(want, sizeof want, "0,0,%d", PHASE_C_N * PHASE_C_SIZE);
	expect_true(is(dom, "c_at", want), "C's line: all of C at exit only");
	expect_true(is(dom, "click_snapshot", "1"),
		    "a click on the sites' timeline at snapshot 1 selects it");
	expect_true(is(dom, "by", "stack"), "one grouping over time: by call stack");
	expect_true(is(dom, "labels", "#1,#2,#3,peak"), "the heap chart labels its marks");
	expect_true(is(dom, "secs", "0.000 0.025 0.050 0.075|0.0 0.1 0.2|0 2 4"),
		    "seconds with the decimals of the ticks' step");
	expect_true(is(dom, "ticks", "equal,equal"), "both charts' time ticks read equally apart");
	expect_true(is(dom, "pauses", "pause_busy phases.c:35 \u2190 main phases.c:70|"
				      "pause_busy phases.c:35 \u2190 main phases.c:74"),
		    "two stacks of one innermost frame: told apart by their caller's line");
	expect_true(is(dom, "labels_apart", "yes"),
		    "no label over another (the peak just after #2), none past the plot");
	free(dom);
	expect_eq_u64(screenshot(page, "#view=overview", "phases-sites"), 0,
		      "a screenshot of the overview with the sites' timeline");

	/* A grouping by thread, as html.c may write one (docs/html.md
	 * "timelines"): two threads, their bytes at two times. */
	snprintf(grouped, sizeof grouped, "%s/phases-groups.html", hp_test_tmp());
	require(inject(page, grouped, ",\"sites\":{",
		       ",\"timelines\":{\"thread\":{\"t\":[0,100000000],\"lines\":["
		       "{\"key\":\"worker\",\"max\":7000,\"v\":[7000,0]},"
		       "{\"key\":\"main\",\"max\":300,\"v\":[100,300]}]}}") == 0,
		"the page with a grouping by thread is written");
	snprintf(driven, sizeof driven, "%s/phases-groups-driven.html", hp_test_tmp());
	require(write_driven(grouped, driven, groups_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "phases-groups");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(is(dom, "by", "stack:call stack,thread:thread"),
		    "the selector offers every grouping the data has");
	expect_true(prefix_then(dom, "first", "build_b,build_a,leak_c", ",pause_busy"),
		    "by call stack first");
	expect_true(is(dom, "thread", "worker,main"), "choosing thread draws a line per thread");
	expect_true(is(dom, "thread_v", "7000:0,100:300"), "with its figures");
	expect_true(has(dom, "thread_hash", "by=thread"), "the grouping is kept in the hash");
	expect_true(prefix_then(dom, "back", "build_b,build_a,leak_c", ",pause_busy"),
		    "by=stack in the hash goes back");
	free(dom);
}

/* The driver for phases recorded with a sample a second: the heap's
 * chart, its highest sample, its highest point and its point at the
 * peak's time. */
static const char peak_driver[] =
	"var p = hpReport.plot(), s = hpReport.data.snapshots, last = s[s.length - 1];\n"
	"put('samples_max', Math.max.apply(null, hpReport.data.series.heap));\n"
	"put('chart_max', Math.max.apply(null, p.data[1]));\n"
	"var k = p.data[0].indexOf(last.peak_time_ns / 1e9);\n"
	"put('at_peak', k < 0 ? 'none' : p.data[1][k]);\n"
	"put('rss_spans', p.series[2].spanGaps ? 'yes' : 'no');\n";

/* The heap's chart reaches the peak (the summary's Peak heap, its dashed
 * line) when no sample caught it: phases sampled once a second has
 * samples at its snapshots only, before B's peak (B and a temporary block
 * of the pause after it). */
HP_TEST(html_heap_chart_reaches_the_peak)
{
	char capture[4600], page[4600], driven[4600], want[64];
	char *dom;

	snprintf(capture, sizeof capture, "%s/phases-1s.hpf", hp_test_tmp());
	require(hp_test_sh("%s run -q --timeseries 1000 -o %s -- %s/tests/programs/phases", hp(),
			   capture, hp_test_build()) == 0,
		"heapprof run records phases with a sample a second");
	require(render(capture, "", "phases-1s", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/phases-1s-driven.html", hp_test_tmp());
	require(write_driven(page, driven, peak_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "phases-1s");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	snprintf(want, sizeof want, "%d", PHASE_B_N * PHASE_B_SIZE);
	expect_true(is(dom, "samples_max", want), "no sample caught the peak: B alone at most");
	snprintf(want, sizeof want, "%d", PHASE_B_N * PHASE_B_SIZE + PHASE_TEMP_SIZE);
	expect_true(is(dom, "chart_max", want), "the chart reaches the peak: B and a temporary");
	expect_true(is(dom, "at_peak", want), "at the peak's time");
	expect_true(is(dom, "rss_spans", "yes"), "the RSS line spans the point it has no RSS for");
	free(dom);
}

/* A sampled capture's page says its figures as report does: unbiased
 * estimates (its frees and peak were the record's raw samples: "Frees 47
 * (28.7 MiB)" beside "Allocations 3,809 (46.1 MiB)"). */
HP_TEST(html_sampled_summary_is_reports)
{
	char capture[4600], page[4600], driven[4600], want[256];
	char *dom, *frees, *peak;

	snprintf(capture, sizeof capture, "%s/sampling.hpf", hp_test_tmp());
	require(hp_test_sh("%s run -q --sample-rate 64K --seed 7 -o %s -- %s/tests/programs/sampling"
			   " > /dev/null",
			   hp(), capture, hp_test_build()) == 0,
		"heapprof run records sampling, sampled");
	require(render(capture, "", "sampling", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	frees = hp_test_sh_out("%s report --json %s | python3 -c 'import json, sys; "
			       "print(\"{:,}\".format(json.load(sys.stdin)[\"totals\"][\"free_objects\"]))'",
			       hp(), capture);
	peak = hp_test_sh_out("%s report %s | sed -n 's/^  peak heap  *\\(.* in .*\\) at .*/\\1/p'",
			      hp(), capture);
	require(frees && *frees && peak && *peak, "report says the frees and the peak");
	frees[strcspn(frees, "\n")] = '\0';
	peak[strcspn(peak, "\n")] = '\0';
	snprintf(driven, sizeof driven, "%s/sampling-driven.html", hp_test_tmp());
	require(write_driven(page, driven,
			     "put('summary', document.getElementById('hp-summary').textContent);\n") ==
			0,
		"the driven copy is written");
	dom = dump_dom(driven, "", "sampling");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	snprintf(want, sizeof want, "Frees%s (", frees);
	expect_true(has(dom, "summary", want), "the frees: report's estimate");
	snprintf(want, sizeof want, "Peak heap%s at ", peak);
	expect_true(has(dom, "summary", want), "the peak: report's estimate");
	{
		/* bytes as report writes them ("256.6 MiB", not "257 MiB") */
		char *alloc = hp_test_sh_out("%s report %s | sed -n 's/^  allocated  *//p'", hp(),
					     capture);
		require(alloc && *alloc, "report says the bytes allocated");
		alloc[strcspn(alloc, "\n")] = '\0';
		snprintf(want, sizeof want, " (%s)Frees", alloc);
		expect_true(has(dom, "summary", want), "the bytes allocated: report's figure");
		free(alloc);
	}
	free(frees);
	free(peak);
	free(dom);
}

/* The driver for a brush on phases' timeline: a drag from snapshot 1 to
 * snapshot 2 (mouse events as a person's), then the hash's grew=2-3; each
 * changed stack "innermost function:change:blocks:before:after". */
static const char brush_driver[] =
	"function grew() {\n"
	"\treturn Array.prototype.map.call(document.querySelectorAll('#hp-grew-table tbody tr'),\n"
	"\t\tfunction (tr) { var c = tr.cells;\n"
	"\t\t\treturn c[0].textContent.split(' ')[0] + ':' + [2, 3, 4, 5].map(function (i) {\n"
	"\t\t\t\treturn c[i].getAttribute('data-v'); }).join(':'); }).join(' ');\n}\n"
	"put('tabs', Array.prototype.map.call(document.querySelectorAll('.hp-tabs button'),\n"
	"\tfunction (b) { return b.getAttribute('data-table'); }).join(','));\n"
	"var p = hpReport.plot(), over = p.over, box = over.getBoundingClientRect();\n"
	"var s = hpReport.data.snapshots;\n"
	"function mouse(type, target, ns) {\n"
	"\ttarget.dispatchEvent(new MouseEvent(type, {bubbles: true, button: 0, buttons: 1,\n"
	"\t\tclientX: box.left + p.valToPos(ns / 1e9, 'x'), clientY: box.top + 20}));\n}\n"
	"mouse('mousedown', over, s[0].time_ns + 1e6);\n"
	"mouse('mousemove', document, (s[0].time_ns + s[1].time_ns) / 2);\n"
	"mouse('mouseup', document, s[1].time_ns - 1e6);\n"
	"put('brush_hash', location.hash);\n"
	"put('brush_title', document.getElementById('hp-grew-title').textContent.split(' (')[0]);\n"
	"put('brush_rows', grew());\n"
	"put('brush_snapshot', document.body.getAttribute('data-snapshot'));\n"
	"hpReport.apply('#view=overview&grew=2-3');\n"
	"put('hash_rows', grew());\n"
	"p = hpReport.plot(); over = p.over; box = over.getBoundingClientRect();\n"
	"over.dispatchEvent(new MouseEvent('click', {bubbles: true,\n"
	"\tclientX: box.left + p.valToPos(s[1].time_ns / 1e9, 'x'), clientY: box.top + 10}));\n"
	"put('click_snapshot', document.body.getAttribute('data-snapshot'));\n"
	"put('click_rows', grew());\n"
	"hpReport.apply('#view=overview&grew=3-3');\n"
	"put('same_rows', document.querySelectorAll('#hp-grew-table').length);\n"
	"document.getElementById('hp-grew-clear').click();\n"
	"put('cleared', document.getElementById('hp-grew').textContent === '' ? 'yes' : 'no');\n";

/* A brush on the timeline: what grew between the snapshots nearest to
 * its ends, per stack, as `heapprof diff FILE@1 FILE@2` says (phases.h's
 * figures); a click still selects a moment. */
HP_TEST(html_brush_what_grew)
{
	const char *capture = record("phases");
	char page[4600], driven[4600], want[256], png[4600];
	char *dom, *diff;

	require(capture, "heapprof run records phases");
	require(render(capture, "", "phases", page, sizeof page) == 0,
		"heapprof html writes a page");
	/* The CLI's figures, which the page's must equal. */
	diff = hp_test_sh_out("%s diff %s@1 %s@2", hp(), capture, capture);
	require(diff, "heapprof diff FILE@1 FILE@2 runs");
	snprintf(want, sizeof want, "+%d bytes, +%d objects", PHASE_B_N * PHASE_B_SIZE, PHASE_B_N);
	expect_true(strstr(diff, want) != NULL, "diff: B grew");
	snprintf(want, sizeof want, "-%d bytes, -%d objects", PHASE_A_N * PHASE_A_SIZE, PHASE_A_N);
	expect_true(strstr(diff, want) != NULL, "diff: A shrank");
	free(diff);
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/phases-brush.html", hp_test_tmp());
	require(write_driven(page, driven, brush_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "#snapshot=3", "phases-brush");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(is(dom, "tabs", "stack,function,line,module"),
		    "no attribution in phases: no tables by type, context, thread or heap");
	expect_true(has(dom, "brush_hash", "grew=1-2"), "the brush is kept in the hash");
	expect_true(is(dom, "brush_title", "What grew from snapshot #1"),
		    "the range's ends are nearest to snapshots 1 and 2");
	snprintf(want, sizeof want, "build_b:%d:%d:0:%d build_a:%d:%d:%d:0",
		 PHASE_B_N * PHASE_B_SIZE, PHASE_B_N, PHASE_B_N * PHASE_B_SIZE,
		 -PHASE_A_N * PHASE_A_SIZE, -PHASE_A_N, PHASE_A_N * PHASE_A_SIZE);
	expect_true(is(dom, "brush_rows", want),
		    "B grew, A shrank, largest change first, as heapprof diff says");
	expect_true(is(dom, "brush_snapshot", "3"), "a brush does not select a snapshot");
	snprintf(want, sizeof want, "build_b:%d:%d:%d:0 leak_c:%d:%d:0:%d",
		 -PHASE_B_N * PHASE_B_SIZE, -PHASE_B_N, PHASE_B_N * PHASE_B_SIZE,
		 PHASE_C_N * PHASE_C_SIZE, PHASE_C_N, PHASE_C_N * PHASE_C_SIZE);
	expect_true(is(dom, "hash_rows", want), "grew=2-3: B freed, C leaked");
	expect_true(is(dom, "click_snapshot", "2"), "a click still selects a moment");
	expect_true(is(dom, "click_rows", want), "and leaves the range's table as it was");
	expect_true(is(dom, "same_rows", "0"), "two ends nearest to one snapshot: no table");
	expect_true(is(dom, "cleared", "yes"), "Clear removes the range's view");
	free(dom);
	expect_eq_u64(screenshot(page, "#view=overview&grew=1-2", "phases-grew"), 0,
		      "a screenshot of what grew from snapshot 1 to 2");
	/* What the screenshot shows: every header of the table, painted. */
	snprintf(driven, sizeof driven, "%s/phases-heads.html", hp_test_tmp());
	require(write_driven(page, driven,
			     "put('grew_heads', heads('#hp-grew-table'));\n"
			     "put('grew_bottom', Math.round(document.querySelector("
			     "'#hp-grew-table thead').getBoundingClientRect().bottom));\n") == 0,
		"the driven copy is written");
	dom = dump_dom(driven, "#view=overview&grew=1-2", "phases-heads");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(num(dom, "grew_bottom") > 0 && num(dom, "grew_bottom") <= 1000,
		    "the table's headers are inside the screenshot's 1000 px");
	snprintf(png, sizeof png, "%s/html-phases-grew.png", hp_test_build());
	expect_eq_u64((uint64_t)headers_shown(dom, "grew_heads", png), 6,
		      "the screenshot shows all 6 headers of what grew, not only the first");
	free(dom);
}

/* The driver for attrib: the tables by type, context, thread and heap;
 * each row "allocations,allocated,blocks in use,in use,at peak/where". */
static const char attrib_driver[] =
	"function fig(name) {\n"
	"\tvar tr = rowOf(name);\n"
	"\tif (!tr) return 'missing';\n"
	"\treturn [num(tr, 'allocations'), num(tr, 'allocated'), num(tr, 'objects'),\n"
	"\t\tnum(tr, 'inuse'), num(tr, 'peak')].join(',') + '/' + cell(tr, 'where').textContent;\n"
	"}\n"
	"put('tabs', Array.prototype.map.call(document.querySelectorAll('.hp-tabs button'),\n"
	"\tfunction (b) { return b.getAttribute('data-table'); }).join(','));\n"
	"hpReport.set({view: 'tables', table: 'type', sort: '', filter: ''});\n"
	"put('where_header', document.querySelector('#hp-table th[data-col=\"where\"]').textContent);\n"
	"['Circle', 'Triangle', 'Point', 'Widget', 'Record'].forEach(function (t) {\n"
	"\tput('type_' + t, fig(t)); });\n"
	"document.querySelector('#hp-table th[data-col=\"allocated\"]').click();\n"
	"var v = rows().map(function (tr) { return num(tr, 'allocated'); });\n"
	"put('type_sorted', v.length > 5 && v.every(function (x, i) { return !i || v[i - 1] >= x; }));\n"
	"var f = document.getElementById('hp-filter');\n"
	"f.value = '^(Tri|Cir)'; f.dispatchEvent(new Event('input'));\n"
	"put('type_filtered', rows().map(function (tr) { return tr.cells[0].textContent; }).join(','));\n"
	"put('type_hash', location.hash);\n"
	"hpReport.set({table: 'context', filter: '', sort: ''});\n"
	"['request > parse', 'request', 'produce', 'consume'].forEach(function (t) {\n"
	"\tput('context_' + t.replace(/\\W+/g, '_'), fig(t)); });\n"
	"hpReport.set({table: 'thread'});\n"
	"['producer', 'consumer'].forEach(function (t) { put('thread_' + t, fig(t)); });\n"
	"hpReport.set({table: 'heap'});\n"
	"put('heap_arena', fig('arena'));\n"
	"hpReport.set({table: 'context'});\n"
	"put('context_none', fig('(no context)'));\n"
	/* The timeline by type: its lines named as report --timeline --by type
	 * names them (a type and its source; the rest "(N others)"). */
	"hpReport.set({view: 'overview', by: 'type'});\n"
	"put('tl_type', hpReport.sitesPlot().series.slice(1).map(function (x) {\n"
	"\treturn x.label; }).join('|'));\n"
	"put('summary', document.getElementById('hp-summary').textContent);\n"
	"hpReport.set({view: 'flame', metric: 'inuse', zoom: '', search: ''});\n"
	"put('flame_inuse', hpReport.tree().root.v);\n";

/* report --by context --json's row KEY as the attrib driver's fig() says
 * it: "allocations,allocated,objects in use,in use,peak/"; NULL when
 * report has no such row. */
static char *report_row(const char *capture, const char *key, char *buf, size_t cap)
{
	char *out = hp_test_sh_out("%s report --by context --json %s", hp(), capture);
	char pat[256];
	const char *p;
	unsigned long long v[5];

	snprintf(pat, sizeof pat, "{\"key\": \"%s\", \"values\": ", key);
	p = out ? strstr(out, pat) : NULL;
	if (!p || sscanf(p + strlen(pat),
			 "{\"alloc_objects\": %llu, \"alloc_bytes\": %llu, \"free_objects\": %*u, "
			 "\"free_bytes\": %*u, \"inuse_objects\": %llu, \"inuse_bytes\": %llu, "
			 "\"peak_objects\": %*u, \"peak_bytes\": %llu",
			 &v[0], &v[1], &v[2], &v[3], &v[4]) != 5) {
		free(out);
		return NULL;
	}
	snprintf(buf, cap, "%llu,%llu,%llu,%llu,%llu/", v[0], v[1], v[2], v[3], v[4]);
	free(out);
	return buf;
}

/* Tables by type, context, thread and heap for a capture with attribution
 * (tests/programs/attrib.cpp: test_attrib.c's figures, report --by X's). */
HP_TEST(html_attribution_tables)
{
	const char *capture = record("attrib");
	char page[4600], driven[4600], want[512];
	char *dom, *out;

	require(capture, "heapprof run records attrib");
	require(render(capture, "", "attrib", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/attrib-driven.html", hp_test_tmp());
	require(write_driven(page, driven, attrib_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "attrib");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(is(dom, "tabs", "stack,function,line,module,type,context,thread,heap"),
		    "the tables by type, context, thread and heap are there");
	expect_true(is(dom, "where_header", "Source"), "a type's where is its source");
	expect_true(is(dom, "type_Circle", "3,48,3,48,48/vtable"), "Circle, by its vtable");
	expect_true(is(dom, "type_Triangle", "7,224,7,224,224/vtable"), "Triangle, by its vtable");
	expect_true(is(dom, "type_Point", "8,3060,1,1536,1536/template"),
		    "Point, from the allocator's template frames");
	expect_true(is(dom, "type_Widget", "1,152,1,152,152/explicit"), "Widget, named");
	expect_true(is(dom, "type_Record", "5,240,3,144,144/explicit"), "Record, named");
	expect_true(is(dom, "type_sorted", "true"), "the type table sorts");
	expect_true(is(dom, "type_filtered", "Triangle,Circle"), "and filters");
	expect_true(has(dom, "type_hash", "table=type"), "the table is kept in the hash");
	expect_true(is(dom, "context_request_parse", "7,2100,7,2100,2100/"), "request > parse");
	expect_true(is(dom, "context_request", "7,2100,7,2100,2100/"),
		    "request: its own and its children's");
	expect_true(is(dom, "context_produce", "20,2000,0,0,0/"), "produce");
	expect_true(is(dom, "context_consume", "30,6000,0,0,0/"), "consume");
	expect_true(is(dom, "thread_producer", "20,2000,0,0,0/"), "the producer thread");
	expect_true(is(dom, "thread_consumer", "30,6000,0,0,0/"), "the consumer thread");
	expect_true(is(dom, "heap_arena", "60,3040,8,512,2400/"), "the arena: its own peak");
	/* The runtime's own allocations (libstdc++'s emergency pool...) are
	 * left out of the groups as report --by leaves them out, and out of
	 * the summary's figure in use as report's summary leaves them. */
	require(report_row(capture, "(no context)", want, sizeof want),
		"report --by context --json has the (no context) row");
	expect_true(is(dom, "context_none", want), "(no context): report --by context's figures");
	{
		/* the flame graph of what is in use at exit: report's leaked bytes */
		char *leaked = hp_test_sh_out("%s report --json %s | python3 -c 'import json, sys; "
					      "d = json.load(sys.stdin); print(d[\"totals\"][\"inuse_bytes\"]"
					      " - d[\"suppressed\"][\"inuse_bytes\"])'",
					      hp(), capture);
		require(leaked && atoll(leaked) > 0, "report says what leaked");
		leaked[strcspn(leaked, "\n")] = '\0';
		expect_true(is(dom, "flame_inuse", leaked),
			    "the flame graph in use: report's, the runtime's blocks left out");
		free(leaked);
	}
	{
		/* report's names of the lines (its long names are cut, the
		 * page's are not): types with their source, then the rest */
		char *names = hp_test_sh_out(
			"%s report --timeline --by type --width 0 %s | sed -n "
			"'/^bytes in use over time/,$s/^ *[0-9.]* [KMG]*i*B  *[0-9.]* s |[^|]*| //p' | "
			"tr '\\n' '|'",
			hp(), capture);
		/* (Big's blocks read [template] only at a tick between their
		 * allocation and the snapshot that reads their vtables, which
		 * the timing of the run decides: Point keeps its template.) */
		char *others = names ? strstr(names, "|(") : NULL;
		require(names && strstr(names, "|Big [vtable]|Triangle [vtable]|") &&
				strstr(names, "|Point [template]|") && others,
			"report --timeline --by type names its lines by their source");
		expect_true(has(dom, "tl_type", "|Big [vtable]|Triangle [vtable]|") &&
				    has(dom, "tl_type", "|Point [template]|"),
			    "the page names them so too");
		others[strlen(others) - 1] = '\0'; /* "|(N others)" */
		snprintf(want, sizeof want, "%s", others);
		expect_true(strlen(buf_of(dom, "tl_type")) > strlen(want) &&
				    strcmp(buf_of(dom, "tl_type") + strlen(buf_of(dom, "tl_type")) -
						   strlen(want), want) == 0,
			    "and its last line as report does, \"(N others)\"");
		free(names);
	}
	out = hp_test_sh_out("%s report %s | sed -n 's/^  in use *\\([^ ]*\\) \\([^ ]*\\) in "
			     "\\([0-9,]*\\) blocks\\{0,1\\} (leaked.*/\\1 \\2 in \\3 blocks/p; "
			     "s/^  suppressed *\\([0-9,]*\\) blocks\\{0,1\\} of runtime "
			     "allocations suppressed.*/\\1 blocks of runtime/p'",
			     hp(), capture);
	require(out && strchr(out, '\n') && strchr(out, '\n')[1], "report says in use and suppressed");
	*strchr(out, '\n') = '\0';
	*strchr(out + strlen(out) + 1, '\n') = '\0';
	snprintf(want, sizeof want, "Leaked at exit%s", out);
	expect_true(has(dom, "summary", want), "the summary's leaked figure is report's");
	snprintf(want, sizeof want, "Suppressed%s", out + strlen(out) + 1);
	expect_true(has(dom, "summary", want), "and it says what it left out, as report does");
	free(out);
	free(dom);
	expect_eq_u64(screenshot(page, "#view=tables&table=type", "attrib-types"), 0,
		      "a screenshot of the table by type");
}

/* The driver for lifetimes: each site's bars, "kind:class=count ...". */
static const char lifetimes_driver[] =
	"function bars(fn) {\n"
	"\tvar r = document.querySelector('#hp-hists tr[data-function=\"' + fn + '\"]');\n"
	"\tif (!r) return 'missing';\n"
	"\treturn Array.prototype.map.call(r.querySelectorAll('.hp-bar-col'), function (b) {\n"
	"\t\treturn b.getAttribute('data-kind') + ':' + b.getAttribute('data-class') + '=' +\n"
	"\t\t\tb.getAttribute('data-v'); }).join(' ');\n}\n"
	"put('rows', document.querySelectorAll('#hp-hists tbody tr').length);\n"
	"['short_lived', 'filler', 'long_lived', 'leak'].forEach(function (f) { put(f, bars(f)); });\n";

/* The driver for the selected site on lifetimes: the panel's bars
 * ("kind:class=count ...") with no site, after a click on a function's
 * row, a stack's row, a flame graph frame, from the hash, and cleared. */
static const char site_driver[] =
	"function panel() {\n"
	"\tvar b = document.querySelectorAll('#hp-site-bars .hp-bar-col');\n"
	"\treturn Array.prototype.map.call(b, function (x) {\n"
	"\t\treturn x.getAttribute('data-kind') + ':' + x.getAttribute('data-class') + '=' +\n"
	"\t\t\tx.getAttribute('data-v'); }).join(' ');\n}\n"
	"function shown() {\n"
	"\tvar p = document.getElementById('hp-site-hist');\n"
	"\treturn p && p.offsetParent !== null && p.closest('section').getAttribute('data-view');\n}\n"
	"put('none_title', document.getElementById('hp-site-title').textContent);\n"
	"put('none_bars', panel());\n"
	"put('none_shown', shown());\n"
	"hpReport.set({view: 'tables', table: 'function', filter: '', sort: ''});\n"
	"rowOf('long_lived').click();\n"
	"put('fn_site', hpReport.state.site);\n"
	"put('fn_hash', location.hash);\n"
	"put('fn_title', document.getElementById('hp-site-title').textContent);\n"
	"put('fn_bars', panel());\n"
	"put('fn_shown', shown());\n"
	"put('fn_on', document.querySelectorAll('#hp-table tr.on').length);\n"
	"hpReport.set({table: 'stack'});\n"
	"rows().filter(function (tr) { return /^short_lived /.test(tr.cells[0].textContent); })[0]"
	".click();\n"
	"put('stack_site', hpReport.state.site.replace(/[0-9]+$/, 'N'));\n"
	"put('stack_bars', panel());\n"
	"hpReport.set({view: 'flame', metric: 'allocations'});\n"
	"function clickFrame(name) {\n"
	"\tvar n = byName(hpReport.tree().root, name), c = document.getElementById('hp-flame');\n"
	"\tvar r = c.getBoundingClientRect(), w = r.width / hpReport.tree().root.v;\n"
	"\tc.dispatchEvent(new MouseEvent('click', {bubbles: true,\n"
	"\t\tclientX: r.left + (n.x + n.v / 2) * w, clientY: r.top + n.depth * 18 + 9}));\n}\n"
	"clickFrame('leak');\n"
	"put('leak_site', hpReport.state.site.replace(/^flame:.*;/, 'flame:...;'));\n"
	"put('leak_bars', panel());\n"
	"put('leak_life', document.querySelector('#hp-site-bars .hp-none[data-kind=\"life\"]') ?\n"
	"\t'none' : 'some');\n"
	"put('leak_shown', shown());\n"
	"hpReport.set({zoom: ''});\n"
	"clickFrame('main');\n"
	"put('main_bars', panel());\n"
	"hpReport.apply('#view=overview&site=function%3Afiller');\n"
	"put('hash_bars', panel());\n"
	"put('hash_shown', shown());\n"
	"document.getElementById('hp-site-clear').click();\n"
	"put('cleared_site', hpReport.state.site === '' ? 'none' : hpReport.state.site);\n"
	"put('cleared_bars', panel());\n"
	"document.querySelector('#hp-hists tr[data-function=\"long_lived\"]').click();\n"
	"put('list_bars', panel());\n";

/* The panel's bars as the page draws them (histograms.js histBars): for
 * sizes then lifetimes, each class from the first nonzero to the last,
 * "kind:class=count" (class c's count in size[c], life[c]). */
static const char *bars(char *buf, size_t cap, const int size[24], const int life[17])
{
	size_t n = 0;

	buf[0] = '\0';
	for (int k = 0; k < 2; k++) {
		const int *v = k ? life : size;
		int len = k ? 17 : 24, first = -1, last = -1;
		for (int c = 0; c < len; c++)
			if (v[c]) {
				if (first < 0)
					first = c;
				last = c;
			}
		for (int c = first; first >= 0 && c <= last && n < cap; c++)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s:%d=%d", n ? " " : "",
					      k ? "life" : "size", c, v[c]);
	}
	return buf;
}

/* The sizes and lifetimes of the selected site (tests/programs/
 * lifetimes.c: four sites of known sizes and lifetimes): the whole
 * program's with none, each site's exactly when a table row, a flame
 * graph frame, the hash or the overview's list selects it. */
HP_TEST(html_selected_site_histograms)
{
	const char *capture = record("lifetimes");
	char page[4600], driven[4600], want[256], all[256], png[4600];
	char *dom;

	require(capture, "heapprof run records lifetimes");
	require(render(capture, "", "lifetimes", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/lifetimes-site.html", hp_test_tmp());
	require(write_driven(page, driven, site_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "lifetimes-site");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	/* Size class c is [2^(c-1), 2^c); lifetime class c >= 1 is
	 * [2^(c+5), 2^(c+6)) allocations, 0 below 64 (histo.h): short_lived
	 * 24 B (5), filler 8 B (4), long_lived 3000 B (12), living through
	 * filler's 1,500 allocations (5), leak 100,000 B (17), never freed. */
	int short_s[24] = {[5] = LIFE_SHORT_N}, short_l[17] = {[0] = LIFE_SHORT_N};
	int filler_s[24] = {[4] = LIFE_FILLER_N}, filler_l[17] = {[0] = LIFE_FILLER_N};
	int leak_s[24] = {[17] = LIFE_LEAK_N}, none_l[17] = {0};
	/* long_lived's function: its own blocks and filler's, which it calls. */
	int long_s[24] = {[4] = LIFE_FILLER_N, [12] = LIFE_LONG_N};
	int long_l[17] = {[0] = LIFE_FILLER_N, [5] = LIFE_LONG_N};
	int all_s[24] = {[4] = LIFE_FILLER_N, [5] = LIFE_SHORT_N, [12] = LIFE_LONG_N,
			 [17] = LIFE_LEAK_N};
	int all_l[17] = {[0] = LIFE_FILLER_N + LIFE_SHORT_N, [5] = LIFE_LONG_N};

	bars(all, sizeof all, all_s, all_l);
	expect_true(is(dom, "none_title", "Sizes and lifetimes: the whole program"),
		    "no site selected: the whole program's");
	expect_true(is(dom, "none_bars", all), "every site's allocations by size, frees by lifetime");
	expect_true(is(dom, "none_shown", "overview"), "on the overview");
	expect_true(is(dom, "fn_site", "function:long_lived"), "a function's row selects it");
	expect_true(has(dom, "fn_hash", "site=function%3Along_lived"), "kept in the hash");
	expect_true(has(dom, "fn_title", "function long_lived"), "the panel names it");
	expect_true(is(dom, "fn_bars", bars(want, sizeof want, long_s, long_l)),
		    "long_lived: its 3000 B blocks that lived through 1,500 allocations, and the "
		    "8 B ones of filler, which it calls");
	expect_true(is(dom, "fn_shown", "tables"), "shown with the tables");
	expect_true(is(dom, "fn_on", "1"), "its row marked");
	expect_true(is(dom, "stack_site", "stack:N"), "a call stack's row selects it");
	expect_true(is(dom, "stack_bars", bars(want, sizeof want, short_s, short_l)),
		    "short_lived's stack: [16, 32) B, < 64");
	expect_true(is(dom, "leak_site", "flame:...;leak"), "a flame graph frame selects its path");
	expect_true(is(dom, "leak_bars", bars(want, sizeof want, leak_s, none_l)),
		    "leak: [64 KiB, 128 KiB)");
	expect_true(is(dom, "leak_life", "none"), "never freed: no lifetime");
	expect_true(is(dom, "leak_shown", "flame"), "shown under the flame graph");
	expect_true(is(dom, "main_bars", all), "main's frame: every stack through it, once each");
	expect_true(is(dom, "hash_bars", bars(want, sizeof want, filler_s, filler_l)),
		    "site=function:filler in the hash: filler's");
	expect_true(is(dom, "hash_shown", "overview"), "on the overview");
	expect_true(is(dom, "cleared_site", "none"), "'Whole program' clears the site");
	expect_true(is(dom, "cleared_bars", all), "and shows the whole program's again");
	long_s[4] = long_l[0] = 0;
	expect_true(is(dom, "list_bars", bars(want, sizeof want, long_s, long_l)),
		    "a click on the overview's list selects long_lived's own stack");
	free(dom);
	expect_eq_u64(screenshot(page, "#view=tables&table=function&site=function%3Along_lived",
				 "lifetimes-site"),
		      0, "a screenshot of a site's histograms in build/html-lifetimes-site.png");
	expect_eq_u64(screenshot(page, "#view=flame&metric=allocations&site=function%3Ashort_lived",
				 "lifetimes-flame-site"),
		      0, "and under the flame graph");
	/* In that screenshot the selected function's frame is outlined in
	 * black (flame.js siteMark), another is not: the black pixels along
	 * the top of each frame (a label's glyphs never reach it). */
	snprintf(driven, sizeof driven, "%s/lifetimes-frames.html", hp_test_tmp());
	require(write_driven(page, driven,
			     "function rect(name) {\n"
			     "\tvar n = byName(hpReport.tree().root, name);\n"
			     "\tvar r = document.getElementById('hp-flame').getBoundingClientRect();\n"
			     "\tvar k = r.width / hpReport.tree().root.v;\n"
			     "\treturn [r.left + n.x * k, r.top + n.depth * 18, n.v * k].map(Math.round)"
			     ".join(',');\n}\n"
			     "put('short_lived', rect('short_lived'));\n"
			     "put('long_lived', rect('long_lived'));\n") == 0,
		"the driven copy is written");
	dom = dump_dom(driven, "#view=flame&metric=allocations&site=function%3Ashort_lived",
		       "lifetimes-frames");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	snprintf(png, sizeof png, "%s/html-lifetimes-flame-site.png", hp_test_build());
	{
		static const char *const names[] = {"short_lived", "long_lived"};
		struct hp_png img;
		require(hp_png_read(png, &img) == 0, "the screenshot reads back");
		for (int i = 0; i < 2; i++) {
			char buf[128];
			int x, y, w, black = 0;
			if (!expect_true(result(dom, names[i], buf, sizeof buf) &&
						 sscanf(buf, "%d,%d,%d", &x, &y, &w) == 3 && w > 20,
					 "the frame's box"))
				continue;
			for (int j = x + 4; j < x + w - 4; j++)
				black += hp_png_at(&img, (uint32_t)j, (uint32_t)y + 1) == 0;
			if (i == 0)
				expect_true(black >= (w - 8) * 9 / 10,
					    "short_lived's frame is outlined: its top edge black");
			else
				expect_eq_u64((uint64_t)black, 0, "long_lived's is not");
		}
		hp_png_free(&img);
	}
	free(dom);
}

HP_TEST(html_sizes_and_lifetimes)
{
	const char *capture = record("lifetimes");
	char page[4600], driven[4600], want[128];
	char *dom;

	require(capture, "heapprof run records lifetimes");
	require(render(capture, "", "lifetimes", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/lifetimes-driven.html", hp_test_tmp());
	require(write_driven(page, driven, lifetimes_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "lifetimes");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(num(dom, "rows") >= 4, "a row per site that allocated");
	/* Size class c is [2^(c-1), 2^c); lifetime class c >= 1 is
	 * [2^(c+5), 2^(c+6)) allocations, 0 below 64. */
	snprintf(want, sizeof want, "size:5=%d life:0=%d", LIFE_SHORT_N, LIFE_SHORT_N);
	expect_true(is(dom, "short_lived", want), "short_lived: [16, 32) B, < 64");
	snprintf(want, sizeof want, "size:4=%d life:0=%d", LIFE_FILLER_N, LIFE_FILLER_N);
	expect_true(is(dom, "filler", want), "filler: [8, 16) B, < 64");
	snprintf(want, sizeof want, "size:12=%d life:5=%d", LIFE_LONG_N, LIFE_LONG_N);
	expect_true(is(dom, "long_lived", want), "long_lived: [2 KiB, 4 KiB), [1,024, 2,048)");
	snprintf(want, sizeof want, "size:17=%d", LIFE_LEAK_N);
	expect_true(is(dom, "leak", want), "leak: [64 KiB, 128 KiB), never freed");
	free(dom);
	expect_eq_u64(screenshot(page, "#view=overview", "lifetimes-overview"), 0,
		      "a screenshot of the overview with the histograms");
}

/* The driver for mapprog's memory map: its regions and blocks. */
static const char map_driver[] =
	"var g = hpReport.mapRegions(), b = hpReport.data.map.blocks, mine = 0, bytes = 0;\n"
	"b.forEach(function (x) {\n"
	"\tvar st = x[2] >= 0 ? hpReport.data.stacks[x[2]] : null;\n"
	"\tif (st && hpReport.data.strings[hpReport.data.frames[st[0]][0]] === 'make_blocks') {\n"
	"\t\tmine++; bytes += x[1]; }\n});\n"
	"put('canvases', document.querySelectorAll('#hp-map canvas').length);\n"
	"put('regions', g.length);\n"
	"put('mine', mine + '/' + bytes);\n"
	/* The regions the page embeds (format 1.5): the brk heap's top holder
	 * is make_blocks, with every one of its blocks, and its RSS. */
	"var R = hpReport.data.map.regions.filter(function (r) { return r.kind === 'brk'; });\n"
	"var h = R.length ? R[0].holders[0] : null, D = hpReport.data;\n"
	"put('brk', R.length + ':' + (h ? D.strings[D.frames[D.stacks[h[0]][0]][0]] + ':' + h[1] +\n"
	"\t'/' + h[2] + ':' + (R[0].rss > 0 && R[0].rss <= R[0].end - R[0].start &&\n"
	"\tR[0].count >= h[1] && R[0].name === '[heap]') : 'none'));\n"
	/* A region with more in use than resident (untouched pages): no share
	 * of its RSS above 100%; one with less: its share. */
	"put('summary', document.getElementById('hp-summary').textContent);\n"
	"put('untouched', hpReport.mapRegionText({start: 4096, end: 8192, kind: 'brk', count: 1,\n"
	"\tbytes: 3000, rss: 1024}));\n"
	"put('touched', hpReport.mapRegionText({start: 4096, end: 8192, kind: 'brk', count: 2,\n"
	"\tbytes: 1024, rss: 4096}));\n";

HP_TEST(html_memory_map)
{
	char capture[4600], page[4600], driven[4600], want[64], *out;
	unsigned long long sum = 0;
	unsigned n = 0;
	char *dom;

	snprintf(capture, sizeof capture, "%s/mapprog.hpf", hp_test_tmp());
	out = hp_test_sh_out("%s run -q --live-blocks -o %s -- %s/tests/programs/mapprog", hp(),
			     capture, hp_test_build());
	require(out, "heapprof run --live-blocks records mapprog");
	for (char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long a, s;
		if (sscanf(l, "%llu %llu", &a, &s) == 2) {
			n++;
			sum += s;
		}
	}
	free(out);
	require(render(capture, "", "mapprog", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/mapprog-driven.html", hp_test_tmp());
	require(write_driven(page, driven, map_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "mapprog");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(num(dom, "regions") >= 1 && num(dom, "canvases") == num(dom, "regions"),
		    "a canvas per region");
	snprintf(want, sizeof want, "%u/%llu", n, sum);
	expect_true(is(dom, "mine", want),
		    "the map holds make_blocks' live blocks, as many and as large as printed");
	snprintf(want, sizeof want, "1:make_blocks:%u/%llu:true", n, sum);
	expect_true(is(dom, "brk", want),
		    "its regions: the brk heap, make_blocks its top holder, with its RSS");
	expect_true(is(dom, "untouched", "0x1000 - 0x2000: brk, 1 block, 2.9 KiB in 4.0 KiB "
					 "(73.2% in use), RSS 1.0 KiB (less than in use: pages not "
					 "touched yet)"),
		    "more in use than resident: no share of the RSS over 100%");
	expect_true(is(dom, "touched", "0x1000 - 0x2000: brk, 2 blocks, 1.0 KiB in 4.0 KiB "
				       "(25.0% in use), RSS 4.0 KiB (25.0% of it in use)"),
		    "less: its share (and one block, two blocks)");
	/* mapprog's stdout buffer is the runtime's one block it suppresses. */
	out = hp_test_sh_out("%s report %s | grep -c '^  suppressed *1 block of runtime'", hp(),
			     capture);
	require(out, "report says mapprog's one suppressed block");
	free(out);
	expect_true(has(dom, "summary", "Suppressed1 block of runtime allocations ("),
		    "the summary says it as report does: one block");
	free(dom);
	expect_eq_u64(screenshot(page, "#view=overview", "mapprog-overview"), 0,
		      "a screenshot of the overview with the memory map");
}

/* The page of a capture with 100,000 stacks (bench/analyzer/gen_stacks.c)
 * opens quickly, whole or with the default top 1000. */
HP_TEST(html_100k_stacks_open_quickly)
{
	char gen[4600], capture[4600], page[4600], driven[4600], buf[64];
	static const char *const tops[] = {"", "--top 100000"};
	struct stat st;
	char *dom;

	snprintf(gen, sizeof gen, "%s/tests/gen_stacks", hp_test_build());
	snprintf(capture, sizeof capture, "%s/stacks100k.hpf", hp_test_tmp());
	/* a generator, not the product: its memory at exit is not ours to check */
	require(hp_test_sh("ASAN_OPTIONS=detect_leaks=0 %s %s %s 100000", gen, capture, hp()) == 0,
		"gen_stacks (built by make tests) writes a capture of 100,000 stacks");
	if (!have_chromium())
		return;
	for (size_t i = 0; i < 2; i++) {
		snprintf(buf, sizeof buf, "stacks100k-%zu", i);
		require(render(capture, tops[i], buf, page, sizeof page) == 0,
			"heapprof html writes the page");
		require(stat(page, &st) == 0, "the page exists");
		printf("  100,000 stacks %s: page %lld bytes\n", i ? "all kept" : "top 1000",
		       (long long)st.st_size);
		if (i == 0)
			expect_true(st.st_size < 2 * 1024 * 1024,
				    "with the default top 1000, the page stays under 2 MiB");
		snprintf(driven, sizeof driven, "%s/%s-driven.html", hp_test_tmp(), buf);
		require(write_driven(page, driven,
				     "put('stacks', hpReport.data.snapshots[0].nstacks);\n"
				     "put('render_ms', Math.round(hpReport.renderMs));\n") == 0,
			"the driven copy is written");
		dom = dump_dom(driven, "#view=flame", buf);
		require(dom, "chromium opens the page");
		expect_clean(dom);
		expect_true(is(dom, "stacks", "100000"), "the page knows every stack");
		printf("  loaded in %.0f ms (the page's script: %.0f ms)\n", num(dom, "load_ms"),
		       num(dom, "render_ms"));
		/* The goal is 3 s; the bound is generous for a loaded machine. */
		expect_true(num(dom, "load_ms") > 0 && num(dom, "load_ms") < 15000,
			    "the page opens in seconds");
		free(dom);
	}
	expect_eq_u64(screenshot(page, "#view=flame", "stacks100k-flame"), 0,
		      "a screenshot of 100,000 stacks' flame graph");
}

/* Issue 24, item 7: the flame graph of a capture of more stacks than
 * --top keeps every stack: merged into a tree, cut by node size, never
 * "(N other call stacks)" as one box. */
static const char every_stack_driver[] =
	"hpReport.set({view: 'flame', metric: 'inuse'});\n"
	"var t = hpReport.tree().root, others = 0, n = 0;\n"
	"(function walk(x) { n++; if (/other call stacks/.test(x.name)) others++;\n"
	"\tx.kids.forEach(walk); })(t);\n"
	"put('root', t.v);\n"
	"put('kids', t.kids.reduce(function (a, k) { return a + k.v; }, 0));\n"
	"put('others', others);\n"
	"put('nodes', n);\n"
	"put('rows', hpReport.data.snapshots[0].rows.length);\n"
	"put('total', hpReport.data.snapshots[0].total[1]);\n";

HP_TEST(html_flame_keeps_every_stack)
{
	char gen[4600], capture[4600], page[4600], driven[4600];
	char *dom;

	snprintf(gen, sizeof gen, "%s/tests/gen_stacks", hp_test_build());
	snprintf(capture, sizeof capture, "%s/stacks5k.hpf", hp_test_tmp());
	/* 5,000 stacks of 100 B in use each, drawn from 50 addresses: the
	 * tree's first level holds a few dozen functions, each far above the
	 * cut. A generator, not the product: its leaks are not ours. */
	require(hp_test_sh("ASAN_OPTIONS=detect_leaks=0 %s %s %s 5000 50", gen, capture, hp()) == 0,
		"gen_stacks writes a capture of 5,000 stacks");
	require(render(capture, "--top 10", "stacks5k", page, sizeof page) == 0,
		"heapprof html --top 10 writes the page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/stacks5k-driven.html", hp_test_tmp());
	require(write_driven(page, driven, every_stack_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "stacks5k");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_eq_u64((uint64_t)num(dom, "rows"), 10, "the tables keep the top 10 stacks");
	expect_eq_u64((uint64_t)num(dom, "total"), 5000 * 100, "5,000 stacks of 100 B in use");
	expect_eq_u64((uint64_t)num(dom, "root"), 5000 * 100,
		      "the flame graph's root is every byte in use");
	expect_eq_u64((uint64_t)num(dom, "kids"), 5000 * 100,
		      "and its first level holds them all: no byte lost to --top");
	expect_eq_u64((uint64_t)num(dom, "others"), 0, "no \"(N other call stacks)\" box");
	printf("  %.0f nodes drawn from 5,000 stacks\n", num(dom, "nodes"));
	free(dom);
	expect_eq_u64(screenshot(page, "#view=flame", "stacks5k-flame"), 0,
		      "a screenshot of the flame graph of 5,000 stacks at --top 10");
}

/* Issue 24, item 8: the runtime's frames below main and a thread's way
 * to its function are hidden in the flame graph and the tables, as
 * report hides them. */
static const char runtime_driver[] =
	"var RT = /^(_start|__libc_start_main|__libc_start_call_main|start_thread|clone3?|__clone3?)$/;\n"
	"hpReport.set({view: 'flame', metric: 'allocations'});\n"
	"var t = hpReport.tree().root, rt = [];\n"
	"(function walk(x) { if (RT.test(x.name)) rt.push(x.name); x.kids.forEach(walk); })(t);\n"
	"put('flame_runtime', rt.length ? rt.join(',') : 'none');\n"
	"put('flame_main', t.kids.some(function (k) { return k.name === 'main'; }));\n"
	"put('flame_thread', t.kids.some(function (k) { return k.name === 'thread_main'; }));\n"
	"hpReport.set({view: 'tables', table: 'function', filter: ''});\n"
	"put('rows_runtime', rows().filter(function (tr) {\n"
	"\treturn RT.test(tr.cells[0].textContent); }).length);\n"
	"var st = hpReport.data.stacks.filter(function (s) { return s.some(function (f) {\n"
	"\treturn RT.test(hpReport.data.strings[hpReport.data.frames[f][0]]); }); });\n"
	"put('stacks_runtime', st.length);\n";

HP_TEST(html_runtime_frames_hidden)
{
	const char *capture = record("known");
	char page[4600], driven[4600];
	char *dom;

	require(capture, "heapprof run records known");
	require(render(capture, "", "known-rt", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/known-rt-driven.html", hp_test_tmp());
	require(write_driven(page, driven, runtime_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "known-rt");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(is(dom, "flame_runtime", "none"),
		    "no _start, __libc_start_main, start_thread or clone in the flame graph");
	expect_true(is(dom, "flame_main", "true"), "main is a root frame");
	expect_true(is(dom, "flame_thread", "true"), "and each thread's function");
	expect_eq_u64((uint64_t)num(dom, "rows_runtime"), 0, "nor in the function table");
	expect_eq_u64((uint64_t)num(dom, "stacks_runtime"), 0, "nor in any call stack");
	free(dom);
}

/* Issue 24, item 5: rows, legend entries and frames named by site and
 * by short names, not by the standard library's internals or full
 * signatures. */
static const char names_driver[] =
	"var D = hpReport.data, fn = function (f) { return D.strings[D.frames[f][0]]; };\n"
	"var sig = /\\)( const)?$/, lib = /^(std::|__gnu_cxx::|void |[A-Za-z_:]+& )/;\n"
	"hpReport.set({view: 'flame', metric: 'allocations'});\n"
	"var bad = [];\n"
	"(function walk(x) { if (x.parent && sig.test(x.name) && !/operator\\(\\)$/.test(x.name))\n"
	"\tbad.push(x.name); x.kids.forEach(walk); })(hpReport.tree().root);\n"
	"put('signatures', bad.length ? bad.slice(0, 3).join(' | ') : 'none');\n"
	"var labels = hpReport.groups()[0].lines.map(function (l) { return l.label; });\n"
	"put('legend', labels.join(' | '));\n"
	"put('legend_lib', labels.filter(function (l) { return /^(std::|__gnu_cxx::)/.test(l) &&\n"
	"\t/stl_vector_of_strings|stl_leak|main/.test(l) === false; }).length);\n"
	"put('legend_vec', labels.some(function (l) { return /^stl_[a-z_]+ cxx_stl\\.cpp:/.test(l); }));\n"
	"hpReport.set({view: 'tables', table: 'stack', metric: 'allocations'});\n"
	"var names = rows().map(function (tr) { return tr.cells[0].textContent; });\n"
	"put('stack_rows_std', names.filter(function (n) { return /^std::/.test(n); }).join(' | ') || 'none');\n"
	"put('stack_vec', names.some(function (n) { return /^stl_vector_of_strings \\u2190 main/.test(n); }));\n";

HP_TEST(html_names_by_site)
{
	const char *capture = record("cxx_stl");
	char page[4600], driven[4600];
	char *dom;

	require(capture, "heapprof run records cxx_stl");
	require(render(capture, "", "cxx_stl", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/cxx_stl-driven.html", hp_test_tmp());
	require(write_driven(page, driven, names_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "cxx_stl");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(is(dom, "signatures", "none"), "no frame is named with its parameter list");
	/* (which sites the timeline shows depends on where its ticks fell:
	 * any of cxx_stl's own, named so) */
	expect_true(is(dom, "legend_vec", "true"),
		    "a line of the timeline is named by its site, stl_... cxx_stl.cpp:LINE");
	printf("  legend: %s\n", buf_of(dom, "legend"));
	expect_true(is(dom, "stack_rows_std", "none"),
		    "no call stack row is named by the standard library's internals");
	expect_true(is(dom, "stack_vec", "true"),
		    "a call stack row reads \"stl_vector_of_strings <- main\"");
	free(dom);
}

/* Issue 24, item 6: the page fits 800 px wide; at 800x600 a table of
 * types shows rows and figures; bar labels never overlap. Checked through
 * the DOM: each rectangle in CSS pixels. */
static const char fit_driver[] =
	"var W = window.innerWidth, H = window.innerHeight;\n"
	"put('window', W);\n"
	"function fits(what) {\n"
	"\tvar wide = document.documentElement.scrollWidth;\n"
	"\tput(what + '_scroll', wide <= W ? 'fits' : wide + ' px in ' + W);\n"
	"\tvar th = document.querySelector('#hp-table th[data-col=\"' +\n"
	"\t\t(hpReport.state.sort || hpReport.state.metric) + '\"]');\n"
	"\tvar r = th.getBoundingClientRect();\n"
	"\tput(what + '_sort', r.width > 0 && r.right <= W ? 'shown' :\n"
	"\t\t'at ' + Math.round(r.left) + '..' + Math.round(r.right));\n"
	"\tvar seen = rows().filter(function (tr) {\n"
	"\t\tvar b = tr.getBoundingClientRect(), c = cell(tr, hpReport.state.metric);\n"
	"\t\tvar cb = c.getBoundingClientRect();\n"
	"\t\treturn b.bottom <= H && cb.width > 0 && cb.right <= W && c.textContent.length;\n"
	"\t});\n"
	"\tput(what + '_rows', seen.length);\n}\n"
	"function overlaps(sel) {\n"
	"\tvar n = 0;\n"
	"\tArray.prototype.forEach.call(document.querySelectorAll(sel), function (h) {\n"
	"\t\tvar ls = Array.prototype.map.call(h.querySelectorAll('.hp-bar-label'),\n"
	"\t\t\tfunction (l) { return l.getBoundingClientRect(); });\n"
	"\t\tfor (var i = 1; i < ls.length; i++)\n"
	"\t\t\tif (ls[i].width && ls[i - 1].right > ls[i].left + 0.5)\n"
	"\t\t\t\tn++;\n\t});\n\treturn n;\n}\n"
	"hpReport.set({view: 'tables', table: 'type', metric: 'inuse', sort: ''});\n"
	"window.scrollTo(0, 0);\n"
	"fits('type');\n"
	"hpReport.set({table: 'line'});\n"
	"fits('line');\n"
	"hpReport.set({table: 'function', metric: 'allocations'});\n"
	"fits('function');\n"
	"put('overlaps_tables', overlaps('#hp-tables .hp-hist'));\n"
	"hpReport.set({view: 'overview'});\n"
	"put('overlaps_overview', overlaps('#hp-overview .hp-hist'));\n"
	"put('overview_scroll', document.documentElement.scrollWidth <= W ? 'fits' :\n"
	"\tdocument.documentElement.scrollWidth + ' px: ' +\n"
	"\tArray.prototype.filter.call(document.querySelectorAll('#hp-overview *'), function (e) {\n"
	"\t\treturn e.getBoundingClientRect().right > W + 1; }).slice(0, 4).map(function (e) {\n"
	"\t\treturn e.tagName + '#' + e.id + '.' + e.className; }).join(' '));\n";

HP_TEST(html_fits_800_px)
{
	static const char *const sizes[] = {"800,600", "1400,900"};
	const char *capture = record("attrib");
	char page[4600], driven[4600], name[64], want[32];
	char *dom;

	require(capture, "heapprof run records attrib");
	require(render(capture, "", "attrib-fit", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/attrib-fit-driven.html", hp_test_tmp());
	require(write_driven(page, driven, fit_driver) == 0, "the driven copy is written");
	for (size_t i = 0; i < 2; i++) {
		snprintf(name, sizeof name, "attrib-fit-%zu", i);
		dom = dump_dom_at(driven, "", name, sizes[i]);
		require(dom, "chromium runs the page");
		expect_clean(dom);
		/* Headless Chromium's page is the window's width, not its height. */
		snprintf(want, sizeof want, "%.*s", (int)strcspn(sizes[i], ","), sizes[i]);
		expect_true(is(dom, "window", want), "the page is the window's width");
		printf("  at %s:\n", want);
		expect_true(is(dom, "type_scroll", "fits"), "the types table fits the window");
		expect_true(is(dom, "type_sort", "shown"), "its sort column is on screen");
		expect_true(num(dom, "type_rows") >= (i ? 15 : 6),
			    "the first screen shows rows of types with their figures");
		expect_true(is(dom, "line_scroll", "fits"), "the file:line table fits");
		expect_true(is(dom, "line_sort", "shown"), "its sort column is on screen");
		expect_true(is(dom, "function_scroll", "fits"), "the function table fits");
		expect_true(is(dom, "function_sort", "shown"),
			    "sorted by allocations, that column is shown");
		expect_eq_u64((uint64_t)num(dom, "overlaps_tables"), 0,
			      "no two labels of the sizes and lifetimes overlap (tables)");
		expect_eq_u64((uint64_t)num(dom, "overlaps_overview"), 0,
			      "nor in the overview");
		expect_true(is(dom, "overview_scroll", "fits"), "the overview fits the window");
		printf("  %.0f rows of types on the first screen\n", num(dom, "type_rows"));
		free(dom);
	}
	expect_eq_u64(screenshot_at(page, "#view=tables&table=type", "attrib-types-800", "800,600"),
		      0, "a screenshot of the types at 800x600");
	expect_eq_u64(screenshot_at(page, "#view=tables&table=line", "attrib-lines-1400",
				    "1400,900"), 0, "and of the file:line table at 1400x900");
}

/* Issue 24, item 9: a region of the memory map opened at full
 * resolution (1 byte a pixel): each of mapprog's blocks and the holes
 * its frees left, in alternating colours, the hover naming the block
 * (address, size), its call stack by site, or the hole. */
static const char zoom_driver[] =
	"var R = hpReport.mapRegions(), k = -1, D = hpReport.data;\n"
	"R.forEach(function (r, i) { if (r.kind === 'brk') k = i; });\n"
	"var z = hpReport.mapZoom(k, 1), g = R[k];\n"
	"put('zoom', z ? z.bpp + ':' + (z.rows === Math.ceil((g.end - g.start) / 1200)) : 'none');\n"
	"var c = document.getElementById('hp-map-zoom-canvas'), ctx = c.getContext('2d');\n"
	"function px(a) { var o = a - g.start, d = ctx.getImageData(o % 1200, Math.floor(o / 1200) * 8 + 3, 1, 1).data;\n"
	"\treturn d[0] + ',' + d[1] + ',' + d[2]; }\n"
	"var mine = D.map.blocks.filter(function (b) { var st = D.stacks[b[2]];\n"
	"\treturn st && D.strings[D.frames[st[0]][0]] === 'make_blocks'; });\n"
	"var bad = [], said = [];\n"
	"for (var i = 0; i + 1 < mine.length && i < 8; i++) {\n"
	"\tvar a = mine[i], b = mine[i + 1], h = a[0] + a[1], h2 = b[0] + b[1];\n"
	"\tif (px(a[0] + (a[1] >> 1)) === px(b[0] + (b[1] >> 1))) bad.push('blocks ' + i);\n"
	"\tif (px(h) === px(a[0]) || px(h) === px(b[0])) bad.push('hole ' + i);\n"
	"\tif (i + 2 < mine.length && px(h) === px(h2)) bad.push('holes ' + i);\n"
	"\tvar d = hpReport.mapDescribe(k, a[0] + 1), e = hpReport.mapDescribe(k, h);\n"
	"\tif (d[0] !== 'block 0x' + a[0].toString(16) + ', ' + a[1] + ' B') bad.push(d[0]);\n"
	"\tif (!/^allocated by make_blocks mapprog\\.c:/.test(d[1])) bad.push(d[1]);\n"
	"\tif (e[0] !== 'hole of ' + (b[0] - h) + ' B, 0x' + h.toString(16) + ' - 0x' + b[0].toString(16))\n"
	"\t\tbad.push(e[0]);\n"
	"\tif (!i) said = d.concat(e);\n}\n"
	"put('checked', Math.min(mine.length - 1, 8));\n"
	"put('bad', bad.length ? bad.join(' | ') : 'none');\n"
	"put('said', said.join(' / '));\n"
	"put('auto', hpReport.mapZoom(k, 0).bpp);\n";

HP_TEST(html_memory_map_zoom)
{
	char capture[4600], page[4600], driven[4600], *out;
	char *dom;

	snprintf(capture, sizeof capture, "%s/mapzoom.hpf", hp_test_tmp());
	out = hp_test_sh_out("%s run -q --live-blocks -o %s -- %s/tests/programs/mapprog", hp(),
			     capture, hp_test_build());
	require(out, "heapprof run --live-blocks records mapprog");
	free(out);
	require(render(capture, "", "mapzoom", page, sizeof page) == 0,
		"heapprof html writes a page");
	if (!have_chromium())
		return;
	snprintf(driven, sizeof driven, "%s/mapzoom-driven.html", hp_test_tmp());
	require(write_driven(page, driven, zoom_driver) == 0, "the driven copy is written");
	dom = dump_dom(driven, "", "mapzoom");
	require(dom, "chromium runs the page");
	expect_clean(dom);
	expect_true(is(dom, "zoom", "1:true"),
		    "the brk region opens at 1 byte a pixel, in rows of 1,200 bytes");
	expect_eq_u64((uint64_t)num(dom, "checked"), 8, "eight of make_blocks' blocks checked");
	expect_true(is(dom, "bad", "none"),
		    "neighbour blocks and holes differ in colour; the hover names each block, "
		    "its site, and each hole with its size");
	printf("  %s\n", buf_of(dom, "said"));
	expect_true(num(dom, "auto") >= 1, "a region opens at a size of its own by default");
	free(dom);
	expect_eq_u64(screenshot(page, "#view=overview", "mapzoom"), 0,
		      "a screenshot of the overview with the map");
}

HP_TEST(html_usage_and_errors)
{
	const char *capture = record("known");
	char page[4600];

	require(capture, "heapprof run records known");
	expect_eq_u64(hp_test_sh("%s html %s 2>/dev/null", hp(), capture), 2,
		      "no -o is a usage error");
	/* --top 0 means all, in every command (issue 24, item 11). */
	expect_eq_u64(hp_test_sh("%s html --top 0 %s -o /dev/null 2>/dev/null", hp(), capture), 0,
		      "--top 0 keeps every stack");
	expect_eq_u64(hp_test_sh("%s html --top -1 %s -o /dev/null 2>/dev/null", hp(), capture), 2,
		      "--top -1 is a usage error");
	expect_eq_u64(hp_test_sh("%s html %s/missing.hpf -o /dev/null 2>/dev/null", hp(),
				 hp_test_tmp()),
		      1, "a missing capture is exit status 1");
	expect_eq_u64(hp_test_sh("%s html %s -o /dev/full 2>/dev/null", hp(), capture), 1,
		      "a failed write is exit status 1");
	expect_eq_u64(hp_test_sh("%s html %s -o %s 2>/dev/null", hp(), capture, capture), 1,
		      "the capture itself is never overwritten");
	/* --top 1 keeps one stack per snapshot and sums the rest into one row. */
	require(render(capture, "--top 1 --title 'a </script><b>'", "top1", page, sizeof page) == 0,
		"heapprof html --top 1 writes a page");
	expect_eq_u64(hp_test_sh("grep -c '</script>' %s | grep -qx 3", page), 0,
		      "a title with </script> cannot close an element (the page's 3 scripts)");
	expect_eq_u64(hp_test_sh("grep -qF '<title>a &lt;/script&gt;&lt;b&gt;</title>' %s", page),
		      0, "the title is escaped");
	expect_eq_u64(hp_test_sh("grep -qF '\"rows\":[[0,' %s && grep -q '\"other\":\\[1[0-9],' %s",
				 page, page),
		      0, "one row kept, the others summed into 'other'");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
