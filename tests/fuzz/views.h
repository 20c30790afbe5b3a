/*
 * views.h - every view of the analyzer on a loaded capture, as the
 * commands run them, into /dev/null.
 *
 * exercise_views builds the models `heapprof report` and the others build
 * (the last snapshot, the first, and the last with a filter), and runs on
 * them:
 *   report    text (two option sets: the defaults, and narrow with every
 *             frame and full names) and JSON; --by each dimension, text
 *             and JSON; --timeline by each dimension, text and JSON;
 *             --histograms, text and JSON; --map, text and JSON; --heap
 *             (the first custom heap a bucket names) by function and type;
 *             on the model with the runtime's suppressions (as report);
 *   html      the page (one model per snapshot, hp_html_write);
 *   diff      the first snapshot against the last, each metric, and each
 *             side at its peak: text, pprof, and --by each dimension (text
 *             and JSON);
 *   export    pprof and gperftools (at the snapshot and at the peak),
 *             folded (each metric, and under a type or context root);
 *   flamegraph the SVG by stack, type and context, and as an icicle;
 *   filters   --focus, --ignore and --hide (hp_model_filter) on a model
 *             of the last snapshot, with report, folded and the flame graph.
 *
 * Symbols come from the capture's SYMBOLS record only
 * (hp_model_options.embedded_only): nothing is opened but /dev/null, so a
 * capture's module paths reach no file of this machine.
 *
 * A view that returns an error on what the reader loaded (they write to
 * /dev/null, which cannot fail) is a finding: broken() names it (abort()).
 * So is JSON that is not (RFC 8259: a script must be able to read report
 * --json, diff --by --json and the page's data whatever the capture said):
 * the JSON views, and the HTML page's data element, are written into
 * memory and checked (json_check).
 * Memory errors, undefined behaviour, leaks and hangs are the sanitizers'
 * and the fuzzer's to report, as for exercise.h.
 *
 * exercise_lean loads the same bytes lean, as report, export and diff
 * do, and checks that they read the same.
 *
 * Shared by fuzz_capture.c (what the reader loads), fuzz_core.c (the
 * capture made from a core) and tests/fault/test_fuzz_corpus.c (the
 * replay, gcc-built). Header-only, static functions, like exercise.h
 * (which it needs, for broken()). Allocates (the views do); single-threaded.
 */
#ifndef HP_TESTS_FUZZ_VIEWS_H
#define HP_TESTS_FUZZ_VIEWS_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/analyzer/diff.h"
#include "../../src/analyzer/flame.h"
#include "../../src/analyzer/folded.h"
#include "../../src/analyzer/group.h"
#include "../../src/analyzer/html.h"
#include "../../src/analyzer/legacy.h"
#include "../../src/analyzer/memmap.h"
#include "../../src/analyzer/model/model.h"
#include "../../src/analyzer/pprof.h"
#include "../../src/analyzer/report.h"
#include "exercise.h"

/* /dev/null, opened once (the one thread that runs views writes it). */
static FILE *views_sink(void)
{
	static FILE *f;

	if (!f && !(f = fopen("/dev/null", "w")))
		broken("cannot open /dev/null for the views' output");
	return f;
}

/* A view's result: 0, else a finding. */
static void view_ok(int ret, const char *what, int arg)
{
	if (ret)
		broken("%s (%d) returned %d: %s", what, arg, ret, strerror(ret < 0 ? -ret : ret));
}

/* An error message a view gave: one line, not empty. */
static void view_one_line(const char *err, const char *what)
{
	if (!err[0] || strchr(err, '\n'))
		broken("%s said \"%s\": not one line", what, err);
}

/* --- JSON as RFC 8259 has it --------------------------------------------
 *
 * What a script reading report --json (or the page's data) needs: one
 * value, objects with string keys, strings of valid UTF-8 with no control
 * character and only JSON's escapes, numbers without NaN, infinity, a
 * leading '+' or leading zeros. Nesting is bounded (JSON_MAX_DEPTH), as a
 * reader's stack is. */
#define JSON_MAX_DEPTH 64

struct json {
	const unsigned char *p, *end;
	const char *bad;         /* the first thing wrong, or NULL */
	const unsigned char *at; /* where */
};

static void json_value(struct json *j, unsigned depth);

static void json_ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

static int json_eat(struct json *j, char c)
{
	json_ws(j);
	if (j->p < j->end && *j->p == (unsigned char)c) {
		j->p++;
		return 1;
	}
	return 0;
}

static void json_fail(struct json *j, const char *why)
{
	if (!j->bad) {
		j->bad = why;
		j->at = j->p;
	}
	j->p = j->end;
}

/* One UTF-8 sequence at j->p (its first byte >= 0x80), as Unicode has them:
 * no overlong form, no surrogate, nothing past U+10FFFF. */
static void json_utf8(struct json *j)
{
	const unsigned char *p = j->p;
	unsigned n = *p >= 0xF0 ? 3 : *p >= 0xE0 ? 2 : *p >= 0xC0 ? 1 : 0;
	uint32_t cp = *p & (0x3F >> n);

	if (!n || *p > 0xF4 || (size_t)(j->end - p) <= n)
		return json_fail(j, "a string that is not UTF-8");
	for (unsigned k = 1; k <= n; k++) {
		if ((p[k] & 0xC0) != 0x80)
			return json_fail(j, "a string that is not UTF-8");
		cp = cp << 6 | (p[k] & 0x3F);
	}
	if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) ||
	    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return json_fail(j, "a string that is not UTF-8");
	j->p += n + 1;
}

static void json_string(struct json *j)
{
	j->p++; /* the quote */
	while (j->p < j->end && *j->p != '"') {
		if (*j->p < 0x20)
			return json_fail(j, "a control character in a string");
		if (*j->p >= 0x80) {
			json_utf8(j);
			continue;
		}
		if (*j->p++ != '\\')
			continue;
		if (j->p >= j->end || !strchr("\"\\/bfnrtu", *j->p))
			return json_fail(j, "an escape JSON does not have");
		if (*j->p++ == 'u') {
			for (int k = 0; k < 4; k++, j->p++)
				if (j->p >= j->end || !strchr("0123456789abcdefABCDEF", *j->p))
					return json_fail(j, "a \\u escape without 4 hex digits");
		}
	}
	if (j->p >= j->end)
		return json_fail(j, "a string without its end");
	j->p++;
}

static int json_digits(struct json *j)
{
	const unsigned char *start = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > start;
}

static void json_number(struct json *j)
{
	if (*j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!json_digits(j))
		return json_fail(j, "a number JSON does not have (nan, inf?)");
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!json_digits(j))
			return json_fail(j, "a number with a bare '.'");
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!json_digits(j))
			return json_fail(j, "a number with a bare exponent");
	}
}

static void json_word(struct json *j, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, w, n) != 0)
		return json_fail(j, "a word JSON does not have (nan, inf, a bare name?)");
	j->p += n;
}

static void json_value(struct json *j, unsigned depth)
{
	json_ws(j);
	if (j->p >= j->end)
		return json_fail(j, "a value missing");
	if (depth > JSON_MAX_DEPTH)
		return json_fail(j, "nested too deep");
	switch (*j->p) {
	case '{':
		j->p++;
		if (json_eat(j, '}'))
			return;
		do {
			json_ws(j);
			if (j->p >= j->end || *j->p != '"')
				return json_fail(j, "an object key that is not a string");
			json_string(j);
			if (!json_eat(j, ':'))
				return json_fail(j, "an object key without ':'");
			json_value(j, depth + 1);
		} while (json_eat(j, ','));
		if (!json_eat(j, '}'))
			json_fail(j, "an object without its '}' (or a ',' missing)");
		return;
	case '[':
		j->p++;
		if (json_eat(j, ']'))
			return;
		do
			json_value(j, depth + 1);
		while (json_eat(j, ','));
		if (!json_eat(j, ']'))
			json_fail(j, "an array without its ']' (or a ',' missing)");
		return;
	case '"': return json_string(j);
	case 't': return json_word(j, "true");
	case 'f': return json_word(j, "false");
	case 'n': return json_word(j, "null");
	default:
		if (*j->p == '-' || (*j->p >= '0' && *j->p <= '9'))
			return json_number(j);
		return json_fail(j, "a character that starts no JSON value");
	}
}

/* text[0..len) is one JSON value, else a finding (what, arg, where). */
static void json_check(const char *text, size_t len, const char *what, int arg)
{
	struct json j = {(const unsigned char *)text, (const unsigned char *)text + len, NULL,
			 NULL};

	json_value(&j, 0);
	json_ws(&j);
	if (!j.bad && j.p != j.end)
		json_fail(&j, "more after the value");
	if (j.bad) {
		size_t at = (size_t)((const char *)j.at - text);
		broken("%s (%d) wrote JSON that is not: %s, near byte %zu of %zu: %.60s", what, arg,
		       j.bad, at, len, text + (at > 30 ? at - 30 : 0));
	}
}

/* A view written into memory, to be checked. */
struct memout {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *mem_open(struct memout *o)
{
	o->buf = NULL;
	o->len = 0;
	if (!(o->f = open_memstream(&o->buf, &o->len)))
		broken("open_memstream failed");
	return o->f;
}

/* Closes o and checks it is JSON; frees it. */
static void mem_json(struct memout *o, const char *what, int arg)
{
	if (fclose(o->f))
		broken("%s (%d): its memory stream failed", what, arg);
	json_check(o->buf, o->len, what, arg);
	free(o->buf);
}

/* Closes o; checks the page's data element (<script type=
 * "application/json" id="hp-data">) is JSON and ends where it should;
 * frees it. */
static void mem_html(struct memout *o)
{
	static const char open[] = "<script type=\"application/json\" id=\"hp-data\">";
	const char *start, *end;

	if (fclose(o->f))
		broken("hp_html_write: its memory stream failed");
	start = o->buf ? strstr(o->buf, open) : NULL;
	end = start ? strstr(start, "</script>") : NULL;
	if (!start || !end)
		broken("hp_html_write: no data element in the page");
	start += sizeof open - 1;
	json_check(start, (size_t)(end - start), "hp_html_write's data", 0);
	free(o->buf);
}

/* report, each way, on m (suppressed already, as report does). */
static void views_report(FILE *f, struct hp_model *m)
{
	const struct hp_report_options plain = {.top = 10, .frames = 8, .width = 100};
	static const struct hp_events_select every = {.on = 1, .between = 1, .to_ns = UINT64_MAX};
	const struct hp_report_options narrow = {.top = 3,
						 .frames = 0,
						 .width = 30,
						 .all_frames = 1,
						 .full_names = 1,
						 .events = &every};
	struct memout o;

	view_ok(hp_report_text(f, m, &plain), "hp_report_text", 0);
	view_ok(hp_report_text(f, m, &narrow), "hp_report_text, narrow", 0);
	view_ok(hp_report_json(mem_open(&o), m, &plain), "hp_report_json", 0);
	mem_json(&o, "hp_report_json", 0);
	for (int d = HP_BY_STACK + 1; d < HP_BY_COUNT; d++) {
		view_ok(hp_report_by_text(f, m, d % 2 ? &plain : &narrow, d), "hp_report_by_text",
			d);
		view_ok(hp_report_by_json(mem_open(&o), m, &plain, d), "hp_report_by_json", d);
		mem_json(&o, "hp_report_by_json", d);
	}
	for (int d = HP_BY_STACK; d < HP_BY_COUNT; d++) {
		view_ok(hp_report_timeline_text(f, m, d % 2 ? &narrow : &plain, d),
			"hp_report_timeline_text", d);
		/* every other one from the event log (a capture without one:
		 * none), as report --between 0s N does */
		view_ok(hp_report_timeline_json(mem_open(&o), m, plain.top, d,
						d % 2 ? &every : NULL),
			"hp_report_timeline_json", d);
		mem_json(&o, "hp_report_timeline_json", d);
	}
	view_ok(hp_report_hist_text(f, m, &plain), "hp_report_hist_text", 0);
	view_ok(hp_report_hist_json(mem_open(&o), m, plain.top), "hp_report_hist_json", 0);
	mem_json(&o, "hp_report_hist_json", 0);
	view_ok(hp_report_map(f, m, &plain, 0), "hp_report_map, text", 0);
	view_ok(hp_report_map(mem_open(&o), m, &plain, 1), "hp_report_map, JSON", 1);
	mem_json(&o, "hp_report_map, JSON", 1);
	/* --heap NAME: the first custom heap a bucket is in. */
	for (size_t i = 0; i < m->nbuckets; i++) {
		if (!m->buckets[i].heap)
			continue;
		m->view_heap = m->buckets[i].heap;
		view_ok(hp_report_by_text(f, m, &plain, HP_BY_FUNCTION), "--heap, by function",
			(int)i);
		view_ok(hp_report_by_json(mem_open(&o), m, &plain, HP_BY_TYPE), "--heap, by type",
			(int)i);
		mem_json(&o, "--heap, by type", (int)i);
		view_ok(hp_report_timeline_text(f, m, &plain, HP_BY_TYPE), "--heap, timeline",
			(int)i);
		m->view_heap = 0;
		break;
	}
}

/* export and flamegraph on m. */
static void views_export(FILE *f, const struct hp_model *m)
{
	static const int roots[] = {HP_BY_STACK, HP_BY_TYPE, HP_BY_CONTEXT};

	for (int peak = 0; peak < 2; peak++) {
		view_ok(hp_pprof_write(f, m, &(struct hp_pprof_options){.at_peak = peak}),
			"hp_pprof_write", peak);
		view_ok(hp_legacy_write(f, m, &(struct hp_legacy_options){.at_peak = peak}),
			"hp_legacy_write", peak);
	}
	for (int k = 0; k < HP_METRIC_COUNT; k++)
		view_ok(hp_folded_write(f, m, (enum hp_metric)k), "hp_folded_write", k);
	for (size_t r = 0; r < sizeof roots / sizeof *roots; r++) {
		enum hp_metric metric = r ? HP_METRIC_PEAK : HP_METRIC_LEAKED;
		struct hp_flame_options fo = {.icicle = r == 2, .width_px = r == 1 ? 1 : 0};
		struct hp_flame *flame = NULL;
		size_t drawn;
		view_ok(hp_folded_write_by(f, m, metric, roots[r]), "hp_folded_write_by", roots[r]);
		view_ok(hp_flame_build_by(m, metric, roots[r], &flame), "hp_flame_build_by",
			roots[r]);
		view_ok(hp_flame_write_svg(f, flame, &fo, &drawn), "hp_flame_write_svg", roots[r]);
		if (!isfinite(hp_flame_total(flame)))
			broken("the flame graph's total is not finite");
		exercise_sink += drawn;
		hp_flame_free(flame);
	}
}

/* diff BASE NEW, every metric (text and pprof), with both sides at
 * their peak (FILE@peak, leaked), and --by each dimension. */
static void views_diff(FILE *f, const struct hp_model *base, const struct hp_model *new)
{
	const struct hp_diff_text_options to = {.top = 10,
						.frames = 8,
						.width = 100,
						.base_name = "base",
						.new_name = "new"};
	struct hp_diff d;

	for (int k = 0; k < HP_METRIC_COUNT; k++) {
		view_ok(hp_diff_build(&d, base, new, (enum hp_metric)k), "hp_diff_build", k);
		view_ok(hp_diff_text(f, &d, &to), "hp_diff_text", k);
		view_ok(hp_pprof_write_diff(f, &d), "hp_pprof_write_diff", k);
		hp_diff_free(&d);
	}
	view_ok(hp_diff_build_at(&d, base, 1, new, 1, HP_METRIC_LEAKED), "hp_diff_build_at", 1);
	view_ok(hp_diff_text(f, &d, &(struct hp_diff_text_options){0}), "hp_diff_text, @peak", 1);
	hp_diff_free(&d);
	for (int dim = HP_BY_STACK + 1; dim < HP_BY_COUNT; dim++) {
		unsigned at = dim % 2 ? HP_DIFF_NEW_AT_PEAK : 0;
		view_ok(hp_diff_by_text(f, base, new, dim, HP_METRIC_LEAKED, at, &to),
			"hp_diff_by_text", dim);
		struct memout o;
		view_ok(hp_diff_by_json(mem_open(&o), base, new, dim,
					(enum hp_metric)(dim % HP_METRIC_COUNT), 0),
			"hp_diff_by_json", dim);
		mem_json(&o, "hp_diff_by_json", dim);
	}
}

/* report, folded and the flame graph on a filtered model of the last
 * snapshot (--focus, --ignore, --hide). */
static void views_filtered(FILE *f, const struct hp_capture *cap)
{
	static const struct hp_model_filter filter = {.focus = "[a-z0-9]",
						      .ignore = "^_start$",
						      .hide = "^[a-f]"};
	const struct hp_model_options mo = {.snapshot = -1, .embedded_only = 1, .filter = &filter};
	const struct hp_report_options ro = {.top = 5, .frames = 8, .width = 80};
	struct hp_model m;
	struct hp_flame *flame = NULL;
	char err[512] = "";

	view_ok(hp_model_build(&m, cap, &mo, err, sizeof err), "hp_model_build, filtered", 0);
	view_ok(hp_report_text(f, &m, &ro), "hp_report_text, filtered", 0);
	struct memout o;
	view_ok(hp_report_json(mem_open(&o), &m, &ro), "hp_report_json, filtered", 0);
	mem_json(&o, "hp_report_json, filtered", 0);
	view_ok(hp_report_timeline_text(f, &m, &ro, HP_BY_STACK), "timeline, filtered", 0);
	view_ok(hp_folded_write(f, &m, HP_METRIC_PEAK), "hp_folded_write, filtered", 0);
	view_ok(hp_flame_build(&m, HP_METRIC_ALLOCATED, &flame), "hp_flame_build, filtered", 0);
	view_ok(hp_flame_write_svg(f, flame, &(struct hp_flame_options){0}, NULL),
		"hp_flame_write_svg, filtered", 0);
	hp_flame_free(flame);
	hp_model_free(&m);
}

/* Every view of cap's selected image. */
static void exercise_views(const struct hp_capture *cap)
{
	FILE *f = views_sink();
	struct hp_model_options mo = {.snapshot = -1, .embedded_only = 1};
	struct hp_html_options ho = {.embedded_only = 1};
	struct hp_suppressions sup = {0};
	struct hp_model last, first;
	struct memout o;
	char err[512] = "";
	int ret;

	ret = hp_model_build(&last, cap, &mo, err, sizeof err);
	if (ret == -ENODATA) { /* no snapshot: every command says so */
		view_one_line(err, "hp_model_build");
		err[0] = '\0';
		if (!hp_html_write(f, cap, &ho, err, sizeof err))
			broken("hp_html_write made a page of a capture without a snapshot");
		view_one_line(err, "hp_html_write");
		return;
	}
	view_ok(ret, "hp_model_build", 0);
	mo.snapshot = 0;
	view_ok(hp_model_build(&first, cap, &mo, err, sizeof err), "hp_model_build, first", 0);

	views_export(f, &last);
	views_diff(f, &first, &last);
	views_filtered(f, cap);

	view_ok(hp_suppressions_add_builtin(&sup), "hp_suppressions_add_builtin", 0);
	view_ok(hp_model_suppress(&last, &sup), "hp_model_suppress", 0);
	views_report(f, &last);
	view_ok(hp_report_text(f, &first, &(struct hp_report_options){.top = 10, .frames = 8}),
		"hp_report_text, first snapshot", 0);
	view_ok(hp_report_json(mem_open(&o), &first, &(struct hp_report_options){.top = 10}),
		"hp_report_json, first snapshot", 0);
	mem_json(&o, "hp_report_json, first snapshot", 0);

	ho.suppressions = &sup;
	ho.top_stacks = cap->nsnapshots % 2 ? 0 : 3;
	ret = hp_html_write(mem_open(&o), cap, &ho, err, sizeof err);
	if (ret)
		view_one_line(err, "hp_html_write");
	view_ok(ret, "hp_html_write", 0);
	mem_html(&o);
	if (fflush(f) || ferror(f))
		broken("writing to /dev/null failed");

	hp_suppressions_free(&sup);
	hp_model_free(&first);
	hp_model_free(&last);
}

/* The views of the image a command shows by default, and of the first
 * image when that is another (--image 1); the default is selected again
 * after. */
/* The same bytes as full, loaded lean as report, export and diff load
 * them (capture.h, HP_CAP_LOAD_*: the frames interned, no timeline, no
 * histograms): the same records load (the same charges against the
 * bound), the same damage is said, and the stacks, snapshots and buckets
 * are full's. Then the model of the default image as those commands build
 * it (release_frames, release_parts; drop_buckets as diff, for an input
 * of odd size) against full's, built without them: the same locations,
 * stacks and figures, bit for bit. */
static void exercise_lean(const uint8_t *data, size_t size, struct hp_capture *full)
{
	/* diff (drop_buckets) loads the buckets encoded too. */
	const unsigned flags = HP_CAP_LOAD_INTERN | HP_CAP_LOAD_NO_TIMELINE |
			       HP_CAP_LOAD_NO_HISTOGRAMS | (size & 1 ? HP_CAP_LOAD_BUCKETS_ENCODED : 0);
	struct hp_model_options fo = {.snapshot = -1, .embedded_only = 1, .drop_buckets = size & 1};
	struct hp_model_options lo = fo;
	struct hp_model fm, lm;
	struct hp_capture lean;
	char err[512] = "", lerr[512] = "";
	size_t shown = full->image;
	int fr, lr, ret = hp_capture_load_mem_flags(data, size, flags, &lean, err, sizeof err);

	if (ret == -ENOMEM)
		return;
	if (ret)
		broken("the lean load fails (%s), the whole one does not", err);
	if (lean.mem_bytes != full->mem_bytes || lean.nrecords != full->nrecords ||
	    lean.ndamage != full->ndamage || lean.nimages != full->nimages ||
	    lean.image != full->image)
		broken("lean load: %zu bytes charged, %zu records, %zu damage, %zu images; whole: "
		       "%zu, %zu, %zu, %zu",
		       lean.mem_bytes, lean.nrecords, lean.ndamage, lean.nimages, full->mem_bytes,
		       full->nrecords, full->ndamage, full->nimages);
	for (size_t i = 0; i < lean.ndamage && i < HP_CAP_MAX_DAMAGE; i++)
		if (strcmp(lean.damage[i], full->damage[i]) != 0)
			broken("lean load's damage %zu: \"%s\", whole: \"%s\"", i, lean.damage[i],
			       full->damage[i]);
	for (size_t i = 0; i < lean.nimages; i++) {
		hp_capture_select(&lean, i);
		hp_capture_select(full, i);
		if (lean.nstacks != full->nstacks || lean.nsnapshots != full->nsnapshots ||
		    lean.nticks || lean.nsites || lean.nsamples != full->nsamples ||
		    lean.nevents != full->nevents)
			broken("image %zu: the lean load's stacks, snapshots, timeline, samples or "
			       "events differ", i);
		for (size_t id = 0; id < lean.nstacks; id++) {
			const struct hp_cap_stack *a = &lean.stacks[id], *b = &full->stacks[id];
			if (a->depth != b->depth || a->frames)
				broken("image %zu stack %zu: depth %u lean, %u whole", i, id, a->depth,
				       b->depth);
			for (uint32_t k = 0; k < a->depth; k++)
				if (hp_cap_frame(&lean, a, k) != hp_cap_frame(full, b, k))
					broken("image %zu stack %zu frame %u differs", i, id, k);
		}
		for (size_t k = 0; k < lean.nsnapshots; k++) {
			const struct hp_cap_snapshot *a = &lean.snapshots[k], *b = &full->snapshots[k];
			int differ = 0;
			if (a->nbuckets && !a->buckets) { /* encoded: each read back as full's */
				struct hp_cursor c = {a->buckets_enc, a->buckets_enc + a->buckets_enc_len,
						      0};
				for (size_t j = 0; j < a->nbuckets && !differ; j++) {
					struct hp_rec_bucket r;
					memset(&r, 0, sizeof r);
					differ = hp_rec_bucket_get(&c, &r) ||
						 memcmp(&r, &b->buckets[j], sizeof r) != 0;
				}
				differ |= c.p != c.end;
			} else if (a->nbuckets) {
				differ = memcmp(a->buckets, b->buckets, a->nbuckets * sizeof *a->buckets);
			}
			if (a->nbuckets != b->nbuckets || a->hist_first || a->hists_read != b->hists_read ||
			    a->nblocks != b->nblocks || a->nmaps != b->nmaps || differ ||
			    (a->buckets_enc != NULL) != ((size & 1) != 0))
				broken("image %zu snapshot %zu differs in the lean load", i, k);
		}
	}
	hp_capture_select(&lean, shown);
	hp_capture_select(full, shown);
	lo.release_frames = &lean;
	lo.release_parts = HP_CAP_PART_TIMELINE | HP_CAP_PART_HISTOGRAMS;
	err[0] = '\0';
	fr = hp_model_build(&fm, full, &fo, err, sizeof err);
	lr = hp_model_build(&lm, &lean, &lo, lerr, sizeof lerr);
	if (fr != lr || strcmp(err, lerr) != 0)
		broken("model: %d (%s) from the whole load, %d (%s) from the lean one", fr, err, lr,
		       lerr);
	if (!fr) {
		if (fm.nlocations != lm.nlocations || fm.nstacks != lm.nstacks ||
		    fm.nbuckets != lm.nbuckets || memcmp(&fm.total, &lm.total, sizeof fm.total) != 0)
			broken("model: %zu locations, %zu stacks, %zu buckets lean; %zu, %zu, %zu whole",
			       lm.nlocations, lm.nstacks, lm.nbuckets, fm.nlocations, fm.nstacks,
			       fm.nbuckets);
		for (size_t l = 0; l < fm.nlocations; l++)
			if (fm.locations[l].address != lm.locations[l].address ||
			    fm.locations[l].nsyms != lm.locations[l].nsyms)
				broken("model: location %zu differs in the lean load", l);
		for (size_t id = 0; id < fm.nstacks; id++) {
			const struct hp_mstack *a = &fm.stacks[id], *b = &lm.stacks[id];
			if (a->depth != b->depth || a->nbuckets != b->nbuckets ||
			    a->inferred != b->inferred || a->freed_at_exit != b->freed_at_exit ||
			    memcmp(&a->v, &b->v, sizeof a->v) != 0)
				broken("model: stack %zu differs in the lean load", id);
			for (uint32_t i = 0; i < a->depth && a->depth == b->depth; i++)
				if (hp_mstack_location(a, i) != hp_mstack_location(b, i)) {
					broken("model: stack %zu differs in the lean load", id);
					break;
				}
		}
		hp_model_free(&fm);
		hp_model_free(&lm);
	}
	hp_capture_free(&lean);
}

static void exercise_all_views(struct hp_capture *cap)
{
	size_t shown = cap->image;

	exercise_views(cap);
	if (shown == 0 || hp_capture_select(cap, 0))
		return;
	exercise_views(cap);
	if (hp_capture_select(cap, shown))
		broken("the default image cannot be selected again");
}

#endif
