/*
 * test_flame.c - heapprof flamegraph checked by its real readers: the SVG
 * is parsed as XML (xmllint, else python3's minidom) and driven in headless
 * Chromium.
 *
 * The browser checks run the SVG inlined into an HTML page written here:
 * window.onerror records script errors before the SVG's own script runs,
 * then a driver script (below) measures frames, hovers, searches, clicks
 * and presses Escape, and writes "key=value" lines into <pre
 * id="hp-result">, which `chromium --dump-dom` prints. Widths are the
 * rendered ones (getBoundingClientRect). Expected shares come from
 * known.h and the capture's raw totals, never from the flame graph.
 *
 * Chromium is required: without it the browser tests fail and say how to
 * install it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"
#include "../programs/known.h"

#define WIDTH_PX 1600 /* wide enough for leak_leaf's label in the leaked graph */

static const char chromium_flags[] =
	"--headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
	"--disable-background-networking --disable-component-update --disable-sync";

/* Stops at the first failure of a test: reported, and the test returns. */
#define require(c, why)                                                                    \
	do {                                                                               \
		if (!expect_true(c, why))                                                  \
			return;                                                            \
	} while (0)

/* The driver: T names the frames to look at (set by the page). */
static const char driver[] =
	"(function () {\n"
	"var out = [];\n"
	"function put(k, v) { out.push(k + '=' + v); }\n"
	"try {\n"
	"\tvar svg = document.querySelector('svg.hp-flame');\n"
	"\tvar gs = Array.prototype.slice.call(svg.querySelectorAll('g.f'));\n"
	"\tvar frame = function (n) {\n"
	"\t\treturn gs.filter(function (g) { return g.getAttribute('data-n') === n; })[0];\n"
	"\t};\n"
	"\tvar rect = function (g) { return g.querySelector('rect').getBoundingClientRect(); };\n"
	"\tvar fire = function (g, type) {\n"
	"\t\tg.querySelector('rect').dispatchEvent(new MouseEvent(type, {bubbles: true}));\n"
	"\t};\n"
	"\tvar root = gs[0], leaf = frame(T.leaf), path = frame(T.path);\n"
	"\tvar other = frame(T.other), labelled = frame(T.label);\n"
	"\tvar reset = svg.querySelector('.hp-reset');\n"
	"\tput('ready', svg.getAttribute('data-ready'));\n"
	"\twindow.prompt = function () { hpErrors.push('window.prompt called'); return null; };\n"
	"\tvar sr = svg.getBoundingClientRect(), over = 0, lines = 0;\n"
	"\tgs.forEach(function (g) {\n"
	"\t\tif (getComputedStyle(g).display === 'none') return;\n"
	"\t\tfire(g, 'mouseover');\n"
	"\t\tvar d = svg.querySelector('.hp-details'), r = d.getBoundingClientRect();\n"
	"\t\tif (r.left < sr.left || r.right > sr.right + 0.5 || r.bottom > sr.bottom) over++;\n"
	"\t\tlines = Math.max(lines, d.querySelectorAll('tspan').length);\n"
	"\t});\n"
	"\tput('details_overflow', over);\n"
	"\tput('details_lines', lines);\n"
	"\tvar box = svg.querySelector('.hp-q');\n"
	"\tput('box', box ? box.tagName.toLowerCase() + ':' + box.type : 'none');\n"
	"\tdocument.dispatchEvent(new KeyboardEvent('keydown', {key: 'f', ctrlKey: true, bubbles: true}));\n"
	"\tput('box_focused', document.activeElement === box);\n"
	"\tbox.value = 'leak_';\n"
	"\tbox.dispatchEvent(new Event('input', {bubbles: true}));\n"
	"\tput('box_matched', gs.filter(function (g) { return g.classList.contains('m'); })\n"
	"\t\t.map(function (g) { return g.getAttribute('data-n'); }).join(','));\n"
	"\tput('box_text', svg.querySelector('.hp-matched').textContent);\n"
	"\tbox.value = '';\n"
	"\tbox.dispatchEvent(new Event('input', {bubbles: true}));\n"
	"\tput('box_cleared', svg.querySelectorAll('g.m').length);\n"
	"\tvar br = box.getBoundingClientRect();\n"
	"\tput('box_inside', br.width > 100 && br.right <= sr.right && br.top >= sr.top);\n"
	"\tput('frames', gs.length);\n"
	"\tput('root', root.getAttribute('data-n'));\n"
	"\tput('root_px', rect(root).width);\n"
	"\tput('leaf_share', rect(leaf).width / rect(root).width);\n"
	"\tput('label', labelled.querySelector('text').textContent);\n"
	"\tput('label_share', rect(labelled).width / rect(root).width);\n"
	"\tput('reset_before', getComputedStyle(reset).display);\n"
	"\tfire(leaf, 'mouseover');\n"
	"\tput('details', svg.querySelector('.hp-details').textContent);\n"
	"\tvar r = hpFlame.search('leak_');\n"
	"\tput('matched', gs.filter(function (g) { return g.classList.contains('m'); })\n"
	"\t\t.map(function (g) { return g.getAttribute('data-n'); }).join(','));\n"
	"\tput('matched_fill', leaf.querySelector('rect').getAttribute('fill'));\n"
	"\tput('matched_share', r.share);\n"
	"\tput('matched_text', svg.querySelector('.hp-matched').textContent);\n"
	"\tfire(path, 'click');\n"
	"\tput('zoom_path', rect(path).width / rect(root).width);\n"
	"\tput('zoom_left', rect(path).left - rect(root).left);\n"
	"\tput('zoom_leaf', rect(leaf).width / rect(root).width);\n"
	"\tput('zoom_other_shown', getComputedStyle(other).display !== 'none');\n"
	"\tput('zoom_root_faded', root.classList.contains('a'));\n"
	"\tput('reset_after', getComputedStyle(reset).display);\n"
	"\tdocument.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));\n"
	"\tput('unzoom_leaf_share', rect(leaf).width / rect(root).width);\n"
	"\tput('unzoom_other_shown', getComputedStyle(other).display !== 'none');\n"
	"\tput('unmatched', svg.querySelectorAll('g.m').length);\n"
	"} catch (e) {\n"
	"\thpErrors.push('driver: ' + e);\n"
	"}\n"
	"put('errors', hpErrors.length ? hpErrors.join(' | ') : 'none');\n"
	"document.getElementById('hp-result').textContent = '\\n' + out.join('\\n') + '\\n';\n"
	"})();\n";

static const char *hp(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/heapprof", hp_test_build());
	return path;
}

/* Records known once per test binary; the path of its capture, or NULL. */
static const char *known_capture(void)
{
	static char path[4400];
	static int done;

	if (!done) {
		done = 1;
		snprintf(path, sizeof path, "%s/known.hpf", hp_test_tmp());
		if (hp_test_sh("%s run -q -o %s -- %s/tests/programs/known", hp(), path,
			       hp_test_build()) != 0)
			path[0] = '\0';
	}
	return path[0] ? path : NULL;
}

/* Whether file parses as XML, with the parser at hand. */
static int well_formed(const char *file)
{
	if (hp_test_sh("command -v xmllint >/dev/null") == 0)
		return hp_test_sh("xmllint --noout '%s'", file) == 0;
	return hp_test_sh("python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' '%s'",
			  file) == 0;
}

static char *slurp(const char *path)
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
		}
	}
	fclose(f);
	return buf;
}

/* Renders capture with args into DIR/name.svg; 0 when heapprof succeeded
 * and the result is well-formed XML. */
static int render(const char *capture, const char *args, const char *name, char *svg, size_t cap)
{
	snprintf(svg, cap, "%s/%s.svg", hp_test_tmp(), name);
	if (hp_test_sh("%s flamegraph %s %s -o %s", hp(), args, capture, svg) != 0)
		return -1;
	return well_formed(svg) ? 0 : -1;
}

/* Runs Chromium's --dump-dom on file; the DOM's text in a malloc'd string. */
static char *dump_dom(const char *file, const char *name)
{
	char out[4600], profile[4600];

	snprintf(out, sizeof out, "%s/%s.dom", hp_test_tmp(), name);
	snprintf(profile, sizeof profile, "%s/%s.profile", hp_test_tmp(), name);
	if (hp_test_sh("rm -rf '%s' && mkdir -p '%s' && timeout 60 chromium %s --user-data-dir='%s' "
		       "--dump-dom 'file://%s' > '%s' 2> '%s.err'",
		       profile, profile, chromium_flags, profile, file, out, out) != 0) {
		hp_test_sh("tail -5 '%s.err'", out);
		return NULL;
	}
	hp_test_sh("rm -rf '%s'", profile);
	return slurp(out);
}

/* The value of "key=" in the driver's result lines, into buf; NULL when
 * missing. */
static const char *result(const char *dom, const char *key, char *buf, size_t cap)
{
	const char *p = strstr(dom, "<pre id=\"hp-result\">");
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

static double result_num(const char *dom, const char *key)
{
	char buf[128];
	return result(dom, key, buf, sizeof buf) ? strtod(buf, NULL) : -1;
}

static int result_is(const char *dom, const char *key, const char *want)
{
	char buf[4096];
	const char *got = result(dom, key, buf, sizeof buf);

	if (got && strcmp(got, want) == 0)
		return 1;
	printf("  %s: expected \"%s\", got \"%s\"\n", key, want, got ? got : "(missing)");
	return 0;
}

/* Writes the page that inlines the SVG and drives it. */
static int write_page(const char *svg_file, const char *page, const char *frames_js)
{
	char *svg = slurp(svg_file);
	const char *start = svg ? strstr(svg, "<svg") : NULL;
	FILE *f;
	int ok;

	if (!start || !(f = fopen(page, "w"))) {
		free(svg);
		return -1;
	}
	fprintf(f,
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>flame test</title>\n"
		"<script>\nwindow.hpErrors = [];\n"
		"window.onerror = function (msg, src, line, col) {\n"
		"\thpErrors.push(msg + ' at ' + line + ':' + col);\n"
		"\tdocument.title = 'script error';\n"
		"};\nvar T = %s;\n</script></head>\n<body style=\"margin:0\">\n",
		frames_js);
	fputs(start, f);
	fprintf(f, "<pre id=\"hp-result\"></pre>\n<script>\n%s</script>\n</body></html>\n", driver);
	ok = !ferror(f);
	ok &= fclose(f) == 0;
	free(svg);
	return ok ? 0 : -1;
}

static int have_chromium(void)
{
	if (hp_test_sh("command -v chromium >/dev/null") == 0)
		return 1;
	expect_true(0, "headless Chromium is needed to check the flame graph: apt-get install chromium");
	return 0;
}

/* What one metric's graph should show, from known.h and the capture. */
struct expect {
	const char *metric;
	const char *other; /* a frame outside main -> leak_path */
	const char *big;   /* a frame wide enough for its whole name */
	double big_value;
	double total;      /* the metric over every bucket */
};

/* Renders one metric and checks it in the browser: leak_leaf's share, the
 * label and share of e->big, hovering, the search for "leak_", a click on
 * leak_path that hides e->other, and Escape. */
static void check_in_browser(const struct expect *e)
{
	const char *capture = known_capture();
	double leaf_bytes = LEAK_N * LEAK_SIZE, total = e->total;
	char svg[4600], page[4600], args[256], name[64], buf[4096], frames_js[256];
	char *dom;

	require(capture, "heapprof run records known");
	snprintf(args, sizeof args, "--metric %s --width %d", e->metric, WIDTH_PX);
	snprintf(name, sizeof name, "known-%s", e->metric);
	snprintf(frames_js, sizeof frames_js,
		 "{leaf: 'leak_leaf', path: 'leak_path', other: '%s', label: '%s'}", e->other,
		 e->big);
	require(render(capture, args, name, svg, sizeof svg) == 0,
		"heapprof flamegraph writes a well-formed SVG");
	if (!have_chromium())
		return;

	/* The file itself, as a browser opens it: its script ran to the end. */
	dom = dump_dom(svg, name);
	require(dom, "chromium opens the SVG");
	expect_true(strstr(dom, "data-ready=\"1\""), "the standalone SVG's script ran");
	free(dom);

	snprintf(page, sizeof page, "%s/%s.html", hp_test_tmp(), name);
	require(write_page(svg, page, frames_js) == 0, "the test page is written");
	snprintf(name, sizeof name, "known-%s-page", e->metric);
	dom = dump_dom(page, name);
	require(dom, "chromium runs the test page");
	if (!result(dom, "errors", buf, sizeof buf)) {
		expect_true(0, "the driver ran to the end");
		free(dom);
		return;
	}
	expect_true(result_is(dom, "errors", "none"), "no script error");
	expect_true(!strstr(dom, "<title>script error"), "the page's title shows no error");
	expect_true(result_is(dom, "ready", "1"), "the flame graph's script ran");
	expect_true(result_is(dom, "root", "all"), "the first frame is the root");
	expect_near(result_num(dom, "root_px"), WIDTH_PX - 20, 0.01, "the root spans the width");
	expect_near(result_num(dom, "leaf_share"), leaf_bytes / total, 0.01,
		    "the frame's width is its share of the total");
	expect_true(result_is(dom, "label", e->big), "a wide frame shows its function's name");
	expect_near(result_num(dom, "label_share"), e->big_value / total, 0.01,
		    "and its share of the width");
	expect_true(result(dom, "details", buf, sizeof buf) && strstr(buf, "known.c:") &&
			    strstr(buf, "% of all") && strstr(buf, " B"),
		    "hovering shows file:line, the figure with its unit and the share");
	expect_true(result_is(dom, "box", "input:search"), "the page has a search box");
	expect_true(result_is(dom, "box_inside", "true"), "inside the image, wide enough to type in");
	expect_true(result_is(dom, "box_focused", "true"), "Ctrl-F goes to the search box");
	expect_true(result_is(dom, "box_matched", "leak_path,leak_leaf"),
		    "typing leak_ in the box marks leak_path and leak_leaf, nothing else");
	expect_true(result(dom, "box_text", buf, sizeof buf) && strstr(buf, "Matched "),
		    "and shows the share matched");
	expect_true(result_is(dom, "box_cleared", "0"), "emptying the box clears the search");
	expect_true(result_is(dom, "details_overflow", "0"),
		    "no frame's details go past the image's edge");
	expect_true(result_is(dom, "matched", "leak_path,leak_leaf"),
		    "searching leak_ marks leak_path and leak_leaf, nothing else");
	expect_true(result_is(dom, "matched_fill", "rgb(225,0,225)"), "marked frames are coloured");
	expect_near(result_num(dom, "matched_share"), (double)(LEAK_N * LEAK_SIZE) / total, 0.01,
		    "the matched share counts nested matches once");
	expect_true(result(dom, "matched_text", buf, sizeof buf) && strstr(buf, "Matched "),
		    "the matched share is shown");
	expect_true(result_is(dom, "reset_before", "none"), "no reset button before a zoom");
	expect_near(result_num(dom, "zoom_path"), 1, 0.01, "after a click leak_path spans the width");
	expect_near(result_num(dom, "zoom_left") + 1, 1, 0.01, "and starts at the left edge");
	expect_near(result_num(dom, "zoom_leaf"), 1, 0.01, "and so does its only callee");
	expect_true(result_is(dom, "zoom_other_shown", "false"), "frames outside it are hidden");
	expect_true(result_is(dom, "zoom_root_faded", "true"), "its ancestors stay, faded");
	expect_true(result(dom, "reset_after", buf, sizeof buf) && strcmp(buf, "none") != 0,
		    "the reset button appears");
	expect_near(result_num(dom, "unzoom_leaf_share"), leaf_bytes / total, 0.01,
		    "Escape goes back to the whole graph");
	expect_true(result_is(dom, "unzoom_other_shown", "true"), "with every frame");
	expect_true(result_is(dom, "unmatched", "0"), "and clears the search");
	free(dom);
}

HP_TEST(flame_leaked_in_browser)
{
	const char *capture = known_capture();
	struct hp_capture *cap = capture ? hpq_load(capture) : NULL;
	struct hpq_sum t;

	require(cap, "the capture loads");
	t = hpq_total(cap);
	hpq_free(cap);
	/* Leaked: the leaks of known plus the threads' halves (thread_leaf,
	 * under the thread start, outside leak_path) and whatever libc keeps:
	 * the total is the capture's, in use at exit. */
	check_in_browser(&(struct expect){"leaked", "thread_leaf", "leak_leaf", LEAK_N * LEAK_SIZE,
					  (double)(t.alloc_bytes - t.free_bytes)});
}

HP_TEST(flame_peak_in_browser)
{
	check_in_browser(&(struct expect){"peak", "peak_leaf", "peak_leaf", PEAK_N * PEAK_SIZE,
					  KNOWN_PEAK_BYTES});
}

/* At the narrowest width the details of a frame are longer than the
 * image: they wrap onto more lines and stay inside it (a single line was
 * cut off at the right edge). */
HP_TEST(flame_narrow_details_wrap_inside)
{
	const char *capture = known_capture();
	char svg[4600], page[4600], buf[256];
	char *dom;

	require(capture, "heapprof run records known");
	require(render(capture, "--metric leaked --width 200", "narrow", svg, sizeof svg) == 0,
		"heapprof flamegraph --width 200 writes a well-formed SVG");
	if (!have_chromium())
		return;
	snprintf(page, sizeof page, "%s/narrow.html", hp_test_tmp());
	require(write_page(svg, page,
			   "{leaf: 'leak_leaf', path: 'leak_path', other: 'main', label: 'all'}") ==
			0,
		"the test page is written");
	dom = dump_dom(page, "narrow-page");
	require(dom, "chromium runs the test page");
	expect_true(result_is(dom, "details_overflow", "0"),
		    "every frame's details stay inside a 200 px image");
	expect_true(result(dom, "details_lines", buf, sizeof buf) && atoi(buf) >= 2,
		    "by wrapping onto more lines");
	free(dom);
}

/* --icicle: the root at the top, each callee one level below its caller. */
HP_TEST(flame_icicle)
{
	const char *capture = known_capture();
	char svg[4600];
	char *out;
	int root_y, leaf_y;

	require(capture, "heapprof run records known");
	require(render(capture, "--metric leaked --icicle", "icicle", svg, sizeof svg) == 0,
		"heapprof flamegraph --icicle writes a well-formed SVG");
	out = hp_test_sh_out("python3 -c '\n"
			     "import sys, xml.dom.minidom as m\n"
			     "d = m.parse(sys.argv[1])\n"
			     "y = {}\n"
			     "for g in d.getElementsByTagName(\"g\"):\n"
			     "    n = g.getAttribute(\"data-n\")\n"
			     "    if n: y.setdefault(n, g.getElementsByTagName(\"rect\")[0].getAttribute(\"y\"))\n"
			     "print(y[\"all\"], y[\"leak_leaf\"])' %s",
			     svg);
	require(out && sscanf(out, "%d %d", &root_y, &leaf_y) == 2, "the frames have places");
	expect_eq_u64(root_y, 88, "the root is the first row under the header");
	expect_true(leaf_y > root_y, "leak_leaf is below the root");
	free(out);
	require(render(capture, "--metric leaked", "flame", svg, sizeof svg) == 0,
		"and without --icicle");
	expect_eq_u64(hp_test_sh("grep -q 'heapprof flame graph: the root at the bottom' %s", svg), 0,
		      "the default is still a flame graph");
}

HP_TEST(flame_cxx_names_are_escaped)
{
	char capture[4400], svg[4600];
	const char *b = hp_test_build();

	snprintf(capture, sizeof capture, "%s/cxx_inline.hpf", hp_test_tmp());
	require(hp_test_sh("%s run -q -o %s -- %s/tests/programs/cxx_inline", hp(), capture, b) == 0,
		"heapprof run records cxx_inline");
	require(render(capture, "--metric leaked --title 'a <b> & \"c\"'", "cxx", svg,
		       sizeof svg) == 0,
		"a flame graph of C++ names and a title with markup is well-formed XML");
	expect_eq_u64(hp_test_sh("grep -qF 'data-n=\"shapes::Factory&lt;int&gt;::build(unsigned "
				 "long)\"' %s", svg),
		      0, "a template's name is escaped");
	expect_eq_u64(hp_test_sh("grep -qF 'class=\"f i\" data-n=\"shapes::make\"' %s", svg), 0,
		      "the inlined frame is drawn apart");
	expect_eq_u64(hp_test_sh("grep -qF 'a &lt;b&gt; &amp; &quot;c&quot;</text>' %s", svg), 0,
		      "the title is escaped");
}

HP_TEST(flame_every_metric_and_usage)
{
	static const char *const metrics[] = {"peak", "leaked", "allocated", "allocations",
					      "temporary"};
	const char *capture = known_capture();
	char svg[4600], args[64], name[64];

	require(capture, "heapprof run records known");
	for (size_t i = 0; i < sizeof metrics / sizeof *metrics; i++) {
		snprintf(args, sizeof args, "--metric %s", metrics[i]);
		snprintf(name, sizeof name, "metric-%s", metrics[i]);
		expect_eq_u64(render(capture, args, name, svg, sizeof svg), 0,
			      "every metric draws a well-formed SVG");
	}
	expect_eq_u64(hp_test_sh("grep -qF 'data-n=\"churn_leaf\"' %s", svg), 0,
		      "churn_leaf is the temporary allocations");
	/* Without -o: the capture's name with .svg, here, never over a file
	 * (issue 24, item 11; it was a usage error). */
	expect_eq_u64(hp_test_sh("mkdir -p %s/no-o && cd %s/no-o && rm -f *.svg && "
				 "%s flamegraph %s 2>/dev/null && ls *.svg | wc -l | grep -qx 1 && "
				 "! %s flamegraph %s 2>/dev/null",
				 hp_test_tmp(), hp_test_tmp(), hp(), capture, hp(), capture),
		      0, "no -o: NAME.svg here, once");
	expect_eq_u64(hp_test_sh("%s flamegraph -o x.svg 2>/dev/null", hp()), 2,
		      "no capture is a usage error");
	expect_eq_u64(hp_test_sh("%s flamegraph --metric most %s -o /dev/null 2>/dev/null", hp(),
				 capture),
		      2, "an unknown metric is a usage error");
	expect_eq_u64(hp_test_sh("%s flamegraph --width 10 %s -o /dev/null 2>/dev/null", hp(),
				 capture),
		      2, "a width under 200 px is a usage error");
	expect_eq_u64(hp_test_sh("%s flamegraph --snapshot 9 %s -o %s/none.svg 2>/dev/null; "
				 "test ! -e %s/none.svg",
				 hp(), capture, hp_test_tmp(), hp_test_tmp()),
		      0, "a snapshot that does not exist writes nothing");
	expect_eq_u64(hp_test_sh("%s flamegraph %s/missing.hpf -o /dev/null 2>/dev/null", hp(),
				 hp_test_tmp()),
		      1, "a missing capture is exit status 1");
}

/* Issue 24, item 8: the runtime's frames below main and a thread's way
 * to its function (_start, __libc_start_main, start_thread, clone3) are
 * left out, as report leaves them out: main and the threads' function
 * are the root's children, and the root keeps every byte. */
HP_TEST(flame_runtime_frames_hidden)
{
	const char *capture = known_capture();
	char svg[4600];

	require(capture, "heapprof run records known");
	require(render(capture, "--metric allocations", "runtime", svg, sizeof svg) == 0,
		"the flame graph of allocations is drawn");
	expect_eq_u64(hp_test_sh("grep -qE 'data-n=\"(_start|__libc_start_main[a-z_0-9]*|"
				 "__libc_start_call_main|start_thread|clone3?|__clone3?)\"' %s",
				 svg),
		      1, "no frame of the runtime below main or a thread's start");
	expect_eq_u64(hp_test_sh("grep -qF 'data-n=\"main\" data-d=\"1\"' %s", svg), 0,
		      "main is a child of the root");
	expect_eq_u64(hp_test_sh("grep -qF 'data-n=\"thread_main\" data-d=\"1\"' %s", svg), 0,
		      "and so is each thread's function");
}

/* Issue 24, the rest of item 8: --all-frames keeps the runtime's frames
 * in the flame graph and the page, as report --all-frames does; the
 * default leaves them out of both (frames.h, one rule). */
HP_TEST(flame_and_page_all_frames)
{
	const char *capture = known_capture();
	char svg[4600], page[4600];

	require(capture, "heapprof run records known");
	require(render(capture, "--metric allocations --all-frames", "allframes", svg,
		       sizeof svg) == 0,
		"the flame graph with every frame is drawn");
	expect_eq_u64(hp_test_sh("grep -qE 'data-n=\"__libc_start_main[a-z_0-9]*\"' %s && "
				 "grep -qE 'data-n=\"(start_thread|clone3?|__clone3?)\"' %s",
				 svg, svg),
		      0, "--all-frames: __libc_start_main and a thread's start drawn");
	snprintf(page, sizeof page, "%s/allframes.html", hp_test_tmp());
	require(hp_test_sh("%s html %s -o %s && %s html --all-frames %s -o %s.all", hp(), capture,
			   page, hp(), capture, page) == 0,
		"the pages are written");
	expect_eq_u64(hp_test_sh("grep -qE '\"(__libc_start_main[a-z_0-9]*|start_thread)\"' %s",
				 page),
		      1, "the page names no runtime frame by default");
	expect_eq_u64(hp_test_sh("grep -qE '\"__libc_start_main[a-z_0-9]*\"' %s.all && "
				 "grep -qE '\"start_thread\"' %s.all",
				 page, page),
		      0, "html --all-frames: they are in the page");
}

/* Issue 24, items 4 and 5: a frame's label and hover name its function
 * shortly (no parameter list, template arguments elided), not by its
 * signature; data-n keeps the whole name for the search. */
HP_TEST(flame_short_names)
{
	char capture[4400], svg[4600];

	snprintf(capture, sizeof capture, "%s/cxx_short.hpf", hp_test_tmp());
	require(hp_test_sh("%s run -q -o %s -- %s/tests/programs/cxx_inline", hp(), capture,
			   hp_test_build()) == 0,
		"heapprof run records cxx_inline");
	require(render(capture, "--metric leaked", "short", svg, sizeof svg) == 0,
		"the flame graph is drawn");
	expect_eq_u64(hp_test_sh("grep -qF 'data-n=\"shapes::Factory&lt;int&gt;::build(unsigned "
				 "long)\" data-l=\"shapes::Factory&lt;...&gt;::build\"' %s",
				 svg),
		      0, "the whole name in data-n, the short one in data-l");
	expect_eq_u64(hp_test_sh("grep -qF '<title>shapes::Factory&lt;...&gt;::build' %s", svg), 0,
		      "the hover names it shortly");
	expect_eq_u64(hp_test_sh("grep -q '<title>[^<]*(unsigned long)' %s", svg), 1,
		      "no hover carries a parameter list");
	expect_eq_u64(hp_test_sh("grep -q '<text[^>]*>[^<]*(unsigned long)' %s", svg), 1,
		      "nor any label");
}

/* Issue 24, item 4: the SVG, the page and the folded export name a
 * function as the report does (no parameter list: shapes::solo), but two
 * overloads that would then read alike (shapes::area of a Circle and of a
 * Square, tests/programs/overloads.cpp) keep their parameter lists, so no
 * view merges them or names them the same. */
HP_TEST(views_name_overloads_apart)
{
	char capture[4400], svg[4600], out[4600];

	snprintf(capture, sizeof capture, "%s/overloads.hpf", hp_test_tmp());
	require(hp_test_sh("%s run -q -o %s -- %s/tests/programs/overloads", hp(), capture,
			   hp_test_build()) == 0,
		"heapprof run records overloads");
	require(render(capture, "--metric leaked", "overloads", svg, sizeof svg) == 0,
		"the flame graph is drawn");
	expect_eq_u64(hp_test_sh("grep -c '<title>shapes::area(shapes::Circle const&amp;)$' %s "
				 "| grep -qx 1 && "
				 "grep -c '<title>shapes::area(shapes::Square const&amp;)$' %s | "
				 "grep -qx 1",
				 svg, svg),
		      0, "SVG: each overload's hover names it with its parameters");
	expect_eq_u64(hp_test_sh("grep -q '<title>shapes::solo$' %s && "
				 "! grep -q '<title>shapes::area$' %s && "
				 "! grep -qE '(<title>|<text[^>]*>)[^<]*solo\\(int' %s",
				 svg, svg, svg),
		      0, "SVG: solo without its parameter list; no bare shapes::area");
	snprintf(out, sizeof out, "%s/overloads.folded", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s export %s --format folded -o %s && "
				 "grep -qx 'main;shapes::area(shapes::Circle const&) 3000' %s && "
				 "grep -qx 'main;shapes::area(shapes::Square const&) 1000' %s && "
				 "grep -qx 'main;shapes::solo 210' %s",
				 hp(), capture, out, out, out, out),
		      0, "folded: the overloads apart, solo's name short, the figures exact");
	expect_eq_u64(hp_test_sh("%s export %s --format folded --full-names -o %s.full && "
				 "grep -qx 'main;shapes::solo(int, char const\\*) 210' %s.full",
				 hp(), capture, out, out),
		      0, "folded --full-names: the whole name");
	/* Issue 24, item 8: folded leaves the runtime's frames out as every
	 * view does (frames.h); --all-frames keeps them. */
	expect_eq_u64(hp_test_sh("grep -qx 'main;shapes::solo 210' %s && ! grep -q _start %s && "
				 "%s export %s --format folded --all-frames -o %s.all && "
				 "grep -qx '_start;__libc_start_main[a-z_]*;.*;main;shapes::solo 210' %s.all",
				 out, out, hp(), capture, out, out),
		      0, "folded: main the outermost frame; --all-frames: _start");
	snprintf(out, sizeof out, "%s/overloads.html", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s html %s -o %s && "
				 "grep -qF '\"shapes::area(shapes::Circle const\\u0026)\"' %s && "
				 "grep -qF '\"shapes::area(shapes::Square const\\u0026)\"' %s && "
				 "grep -qF '\"shapes::solo\"' %s && ! grep -qF '\"shapes::area\"' %s",
				 hp(), capture, out, out, out, out, out),
		      0, "page: the overloads apart in its names, solo's short");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
