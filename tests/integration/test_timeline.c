/*
 * test_timeline.c - the per-site timeline (format.h, HP_REC_TIMELINE), on
 * tests/programs/phases.c, a run of known phases (phases.h): build A,
 * snapshot 1, pause, build B while freeing A, snapshot 2, pause, free B
 * and leak C, exit (snapshot 3); and on tests/programs/churn.c, 1024
 * stacks that all change all the time (churn.h).
 *
 *   - `report --json`'s "sites", read by python3's json: the top sites in
 *     order (B, A, C), each with its highest bytes in use, and its bytes
 *     and objects at each snapshot exactly (A at 1, B at 2, C at exit,
 *     nothing before or after), A still whole until one timeline period
 *     before B begins;
 *   - report --json's "timeline" by stack: --top 2 gives B, A and other
 *     (C), exact at the snapshots;
 *   - --timeline 0 writes none;
 *   - by type, context, thread and heap, on tests/programs/tlphases.cpp
 *     (tlphases.h: Circles in context "load", then Squares in context
 *     "serve" on a named thread, a custom heap filled then reset): `report
 *     --by X --json`'s "timeline", exact bytes and objects per group at
 *     each snapshot, Circles whole through the pause and gone when the
 *     Squares come, within one period; --top's "other"; the text lines of
 *     `report --timeline`; the same lines in the page's data ("timelines");
 *   - the size and lifetime histograms of tests/programs/lifetimes.c
 *     (lifetimes.h), exact per site in `report --json` (python3's json)
 *     and in `report --histograms`;
 *   - the memory map (run --live-blocks, report --map) of
 *     tests/programs/mapprog.c lists exactly the live blocks the program
 *     printed the addresses and sizes of;
 *   - the cost: on churn, whose every bucket changes between two ticks,
 *     the timeline adds at most TIMELINE_MAX_BYTES_PER_S to the capture
 *     (it measured 11 KB/s, 6.6 MB for 10 minutes, against 32 KB/s
 *     with every tick taken at the period).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"
#include "../programs/churn.h"
#include "../programs/lifetimes.h"
#include "../programs/phases.h"
#include "../programs/tlphases.h"

#define PERIOD_NS 10000000ull /* --timeline 10 */
#define TICK_SLACK_NS 5000000ull
#define PAUSE_NS (PHASE_PAUSE_MS * 1000000ull)
#define A_BYTES ((uint64_t)PHASE_A_N * PHASE_A_SIZE)
#define B_BYTES ((uint64_t)PHASE_B_N * PHASE_B_SIZE)
#define C_BYTES ((uint64_t)PHASE_C_N * PHASE_C_SIZE)
#define TIMELINE_MAX_BYTES_PER_S (16u << 10)

#define MAX_SITES 8
#define MAX_POINTS 1024

struct point {
	uint64_t t, bytes, objects;
};

struct site {
	char function[64];
	uint64_t max_bytes;
	size_t n;
	struct point p[MAX_POINTS];
};

struct sites {
	uint64_t snap[3];
	size_t n;
	struct site s[MAX_SITES];
};

/* Runs phases with timeline option opt into NAME.hpf; its path. */
static const char *capture(const char *name, const char *opt)
{
	static char path[4200];

	snprintf(path, sizeof path, "%s/%s.hpf", hp_test_tmp(), name);
	if (!expect_true(hp_test_sh("%s/heapprof run -q %s -o %s -- %s/tests/programs/phases",
				    hp_test_build(), opt, path, hp_test_build()) == 0,
			 "phases runs under heapprof"))
		return NULL;
	return path;
}

/* `report --json --top 4`'s sites as python3's json reads them: the
 * snapshots' times, then per site "S function max_bytes" and one
 * "P time bytes objects" line per point. */
static int load_sites(const char *path, struct sites *ss)
{
	char *out = hp_test_sh_out(
		"%s/heapprof report --json --top 4 %s | python3 -c '"
		"import json,sys; r=json.load(sys.stdin)\n"
		"print(*[s[\"time_ns\"] for s in r[\"snapshots\"]])\n"
		"for s in r[\"sites\"]:\n"
		"  print(\"S\", s[\"stack\"][0][\"function\"], s[\"max_inuse_bytes\"])\n"
		"  for p in s[\"series\"]: print(\"P\", *p)'",
		hp_test_build(), path);
	char *line;
	int ok;

	memset(ss, 0, sizeof *ss);
	if (!out)
		return 0;
	ok = sscanf(out, "%" SCNu64 " %" SCNu64 " %" SCNu64, &ss->snap[0], &ss->snap[1],
		    &ss->snap[2]) == 3;
	for (line = strchr(out, '\n'); ok && line && line[1]; line = strchr(line + 1, '\n')) {
		struct site *s = ss->n ? &ss->s[ss->n - 1] : NULL;
		struct point pt;
		if (line[1] == 'S' && ss->n < MAX_SITES) {
			s = &ss->s[ss->n++];
			ok = sscanf(line + 1, "S %63s %" SCNu64, s->function, &s->max_bytes) == 2;
		} else if (line[1] == 'P' && s && s->n < MAX_POINTS) {
			ok = sscanf(line + 1, "P %" SCNu64 " %" SCNu64 " %" SCNu64, &pt.t,
				    &pt.bytes, &pt.objects) == 3;
			s->p[s->n++] = pt;
		}
	}
	free(out);
	return expect_true(ok, "report --json has three snapshots and the sites");
}

/* Site s's value at t: its last point at or before t (0 before its
 * first). */
static struct point at(const struct site *s, uint64_t t)
{
	struct point v = {t, 0, 0};
	for (size_t i = 0; i < s->n && s->p[i].t <= t; i++)
		v = s->p[i];
	return v;
}

HP_TEST(sites_show_the_phases)
{
	struct sites *ss = malloc(sizeof *ss);
	const char *path = capture("timeline", "--timeline 10");
	const struct site *a, *b, *c;
	uint64_t a_drops = 0;
	size_t wrong_a = 0;

	if (!ss || !path || !load_sites(path, ss)) {
		free(ss);
		return;
	}
	/* Each site has a point at the peak (B whole, and the first of the
	 * second pause's temporary blocks after it): a pause's site comes
	 * fourth, holding one block at the peak, or at a tick that fell
	 * between one's malloc and its free (which do depends on timing). */
	if (!expect_eq_u64(ss->n, 4,
			   "four sites held memory: B, A, C, and a pause's temporary block")) {
		free(ss);
		return;
	}
	expect_str(ss->s[3].function, "pause_busy", "the fourth: a pause's");
	expect_eq_u64(ss->s[3].max_bytes, PHASE_TEMP_SIZE, "one temporary block at most");
	b = &ss->s[0], a = &ss->s[1], c = &ss->s[2];
	expect_str(b->function, "build_b", "the top site is B's");
	expect_str(a->function, "build_a", "then A's");
	expect_str(c->function, "leak_c", "then C's");
	expect_eq_u64(b->max_bytes, B_BYTES, "B's highest: all of B");
	expect_eq_u64(a->max_bytes, A_BYTES, "A's highest: all of A");
	expect_eq_u64(c->max_bytes, C_BYTES, "C's highest: all of C");

	expect_eq_u64(at(a, ss->snap[0]).bytes, A_BYTES, "A at snapshot 1: bytes");
	expect_eq_u64(at(a, ss->snap[0]).objects, PHASE_A_N, "A at snapshot 1: objects");
	expect_eq_u64(at(b, ss->snap[0]).bytes, 0, "no B at snapshot 1");
	expect_eq_u64(at(a, ss->snap[1]).bytes, 0, "no A at snapshot 2");
	expect_eq_u64(at(b, ss->snap[1]).bytes, B_BYTES, "B at snapshot 2: bytes");
	expect_eq_u64(at(b, ss->snap[1]).objects, PHASE_B_N, "B at snapshot 2: objects");
	expect_eq_u64(at(c, ss->snap[1]).bytes, 0, "no C at snapshot 2");
	expect_eq_u64(at(b, ss->snap[2]).bytes, 0, "no B at exit");
	expect_eq_u64(at(c, ss->snap[2]).bytes, C_BYTES, "C at exit: bytes");
	expect_eq_u64(at(c, ss->snap[2]).objects, PHASE_C_N, "C at exit: objects");
	expect_eq_u64(at(a, ss->snap[2]).objects, 0, "no A at exit");

	/* A whole through the pause, until B's build begins it freeing. */
	for (size_t i = 0; i < a->n; i++) {
		if (a->p[i].t >= ss->snap[0] && a->p[i].bytes != A_BYTES && !a_drops)
			a_drops = a->p[i].t;
		if (a->p[i].t >= ss->snap[0] && a->p[i].t < ss->snap[0] + PAUSE_NS)
			wrong_a += a->p[i].bytes != A_BYTES;
	}
	expect_eq_u64(wrong_a, 0, "the pause after A: A holds exactly A");
	expect_true(a_drops >= ss->snap[0] + PAUSE_NS - PERIOD_NS - TICK_SLACK_NS &&
			    a_drops <= ss->snap[1],
		    "A shrinks when B's build begins, within one timeline period");
	expect_true(b->n && b->p[0].t >= ss->snap[0] + PAUSE_NS - PERIOD_NS - TICK_SLACK_NS &&
			    b->p[0].t <= ss->snap[1],
		    "B first shows when its build begins, within one timeline period");
	free(ss);
}

static int load_groups(const char *path, const char *dim, unsigned top, struct sites *ss);
static const struct site *group(const struct sites *ss, const char *key);

/* By stack (report --json's "timeline"): --top 2 gives B, A and other,
 * which is C. */
HP_TEST(timeline_by_stack_has_other)
{
	struct sites *ss = malloc(sizeof *ss);
	const char *path = capture("timeline-other", "--timeline 10");
	const struct site *g;

	if (!ss || !path || !load_groups(path, "stack", 2, ss)) {
		free(ss);
		return;
	}
	if (expect_eq_u64(ss->n, 3, "two stacks and other")) {
		expect_str(ss->s[0].function, "build_b", "B first");
		expect_str(ss->s[1].function, "build_a", "then A");
		g = group(ss, "other");
		expect_eq_u64(g->max_bytes, C_BYTES, "other's highest: C");
		expect_eq_u64(at(g, ss->snap[2]).bytes, C_BYTES, "other at exit: C's bytes");
		expect_eq_u64(at(g, ss->snap[2]).objects, PHASE_C_N, "and objects");
		expect_eq_u64(at(&ss->s[0], ss->snap[1]).bytes, B_BYTES, "B at snapshot 2");
	}
	free(ss);
}

/* Issue 23, item 1: the heap over time follows a program that allocates
 * rarely. slowgrow: 60 blocks of 1 MiB, 50 ms apart: the time series has
 * a point at each, holding exactly the blocks allocated by then (before:
 * the clock was read every 64th allocation, so one point at the end); and
 * --interval 250 on 20 allocations over a second writes interval
 * snapshots (before: none). */
HP_TEST(series_follows_a_slowly_growing_heap)
{
	char path[4200];
	struct hp_capture *cap;
	uint64_t base = 0, seen = 0;
	size_t intervals = 0;

	snprintf(path, sizeof path, "%s/slowgrow.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/slowgrow "
				      "> /dev/null", hp_test_build(), path, hp_test_build()), 0,
			   "slowgrow runs under heapprof"))
		return;
	if (!(cap = hpq_load(path)))
		return;
	/* the heap before the first block: stdout's buffer */
	for (size_t i = 0; i < cap->nsamples; i++)
		if (cap->samples[i].heap_bytes < (1u << 20) && cap->samples[i].heap_bytes > base)
			base = cap->samples[i].heap_bytes;
	for (size_t i = 0; i < cap->nsamples; i++) {
		uint64_t b = cap->samples[i].heap_bytes;
		if (b >= base + (1u << 20) && (b - base) % (1u << 20) == 0 &&
		    (b - base) >> 20 <= 60)
			seen |= 1ull << (((b - base) >> 20) - 1);
	}
	expect_eq_u64(__builtin_popcountll(seen), 60,
		      "a point at each of the 60 blocks, exactly 1 to 60 MiB above the start");
	hpq_free(cap);

	snprintf(path, sizeof path, "%s/slowgrow-interval.hpf", hp_test_tmp());
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q --interval 250 -o %s -- "
				      "%s/tests/programs/slowgrow 20 64 50 > /dev/null",
				      hp_test_build(), path, hp_test_build()), 0,
			   "slowgrow 20 64 50 runs with --interval 250"))
		return;
	if (!(cap = hpq_load(path)))
		return;
	for (size_t i = 0; i < cap->nsnapshots; i++)
		intervals += cap->snapshots[i].reason == HP_SNAP_INTERVAL;
	expect_true(intervals >= 2, "interval snapshots in a second of 20 allocations");
	printf("  %zu interval snapshots\n", intervals);
	hpq_free(cap);
}

/* Issue 23, item 2: every line of the timeline, by any dimension, has
 * its value at the peak: the lines' values at the peak's time add up to
 * the peak exactly (B whole and the pause's one temporary block, which no
 * tick need see). */
HP_TEST(timeline_lines_add_up_to_the_peak)
{
	const char *path = capture("timeline-peak", "--timeline 10");
	const char *dims[] = {"stack", "type", "thread"};

	if (!path)
		return;
	for (size_t d = 0; d < sizeof dims / sizeof *dims; d++) {
		char *out = hp_test_sh_out(
			"cd %s && %s/heapprof report --json %s > totals.json && "
			"%s/heapprof report --json --top 0 --by %s %s | python3 -c '"
			"import json,sys; r=json.load(sys.stdin); t=json.load(open(\"totals.json\"))\n"
			"p=t[\"peak_time_ns\"]\n"
			"def at(s):\n"
			"  v=0\n"
			"  for q in s:\n"
			"    if q[0] <= p: v=q[1]\n"
			"  return v\n"
			"print(int(sum(at(g[\"series\"]) for g in r[\"timeline\"])), "
			"int(t[\"totals\"][\"peak_bytes\"]), int(t[\"suppressed\"][\"peak_bytes\"]))'",
			hp_test_tmp(), hp_test_build(), path, hp_test_build(), dims[d], path);
		unsigned long long sum = 0, peak = 1, runtime = 0;
		/* by stack, every stack; by the others, the runtime's blocks left
		 * out (report's "suppressed") */
		if (expect_true(out && sscanf(out, "%llu %llu %llu", &sum, &peak, &runtime) == 3,
				"report --json reads"))
			expect_eq_u64(sum, d ? peak - runtime : peak,
				      "the lines at the peak's time add up to the peak");
		printf("  by %s: %llu at the peak of %llu\n", dims[d], sum, peak);
		free(out);
	}
}

HP_TEST(timeline_off_writes_none)
{
	struct sites *ss = malloc(sizeof *ss);
	const char *path = capture("timeline-off", "--timeline 0");

	if (ss && path && load_sites(path, ss))
		expect_eq_u64(ss->n, 0, "--timeline 0: no sites");
	free(ss);
}

/* Site function's histograms in report --json: "sizes=lo-hi:n,...
 * lifetimes=lo-hi:n,... allocations frees". */
static char *hist_of(const char *capture, const char *function)
{
	return hp_test_sh_out(
		"%s/heapprof report --json --top 20 %s | python3 -c '"
		"import json,sys; r=json.load(sys.stdin)\n"
		"for h in r[\"histograms\"]:\n"
		"  if h[\"function\"] == \"%s\":\n"
		"    c = lambda v: \",\".join(\"%%d-%%d:%%d\" %% tuple(x) for x in v)\n"
		"    print(\"sizes=\" + c(h[\"sizes\"]), \"lifetimes=\" + c(h[\"lifetimes\"]),"
		" h[\"allocations\"], h[\"frees\"], end=\"\")'",
		hp_test_build(), capture, function);
}

HP_TEST(histograms_are_exact)
{
	char path[4200], want[256], *got;
	static const struct {
		const char *function;
		unsigned size_lo, n, life_lo, life_hi, freed;
	} sites[] = {
		{"short_lived", 16, LIFE_SHORT_N, 0, 63, LIFE_SHORT_N},
		{"filler", 8, LIFE_FILLER_N, 0, 63, LIFE_FILLER_N},
		{"long_lived", 2048, LIFE_LONG_N, 1024, 2047, LIFE_LONG_N},
		{"leak", 65536, LIFE_LEAK_N, 0, 0, 0},
	};

	snprintf(path, sizeof path, "%s/lifetimes.hpf", hp_test_tmp());
	if (!expect_true(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/lifetimes",
				    hp_test_build(), path, hp_test_build()) == 0,
			 "lifetimes runs under heapprof"))
		return;
	for (size_t i = 0; i < sizeof sites / sizeof *sites; i++) {
		if (sites[i].freed)
			snprintf(want, sizeof want, "sizes=%u-%u:%u lifetimes=%u-%u:%u %u %u",
				 sites[i].size_lo, 2 * sites[i].size_lo - 1, sites[i].n,
				 sites[i].life_lo, sites[i].life_hi, sites[i].freed, sites[i].n,
				 sites[i].freed);
		else
			snprintf(want, sizeof want, "sizes=%u-%u:%u lifetimes= %u 0",
				 sites[i].size_lo, 2 * sites[i].size_lo - 1, sites[i].n,
				 sites[i].n);
		got = hist_of(path, sites[i].function);
		expect_str(got ? got : "", want, sites[i].function);
		free(got);
	}
	got = hp_test_sh_out(
		"%s/heapprof report --histograms %s | grep -A2 '^  #[0-9]* long_lived '",
		hp_test_build(), path);
	expect_true(got && strstr(got, "10 allocations, 10 freed, 0 live") &&
			    strstr(got, "sizes     [2.0 KiB, 4.0 KiB): 10 (100%)") &&
			    strstr(got, "lifetimes 1,024-2,047: 10 (100%)"),
		    "report --histograms: long_lived's sizes and lifetimes");
	if (got)
		printf("%s", got);
	free(got);
}

HP_TEST(memory_map_lists_the_live_blocks)
{
	char path[4200], *printed, *mapped, *text;

	snprintf(path, sizeof path, "%s/mapprog.hpf", hp_test_tmp());
	printed = hp_test_sh_out("%s/heapprof run -q --live-blocks -o %s -- "
				 "%s/tests/programs/mapprog | sort",
				 hp_test_build(), path, hp_test_build());
	mapped = hp_test_sh_out(
		"%s/heapprof report --map --json %s | python3 -c '"
		"import json,sys; r=json.load(sys.stdin)\n"
		"for b in r[\"blocks\"]:\n"
		"  if b[\"function\"] == \"make_blocks\": print(b[\"address\"], b[\"size\"])' | sort",
		hp_test_build(), path);
	expect_true(printed && strlen(printed) > 32 * 8, "mapprog printed its 32 blocks");
	expect_str(
		mapped ? mapped : "", printed ? printed : "-",
		"report --map --json: make_blocks' live blocks, exactly those the program printed");
	text = hp_test_sh_out("%s/heapprof report --map %s", hp_test_build(), path);
	expect_true(text && strstr(text, "make_blocks") && strstr(text, "live blocks"),
		    "report --map: the regions and who holds them");
	if (text)
		printf("%s", text);
	free(printed);
	free(mapped);
	free(text);
	snprintf(path, sizeof path, "%s/mapprog-nolist.hpf", hp_test_tmp());
	text = hp_test_sh_out("%s/heapprof run -q -o %s -- %s/tests/programs/mapprog >/dev/null && "
			      "%s/heapprof report --map %s",
			      hp_test_build(), path, hp_test_build(), hp_test_build(), path);
	expect_true(text && strstr(text, "--live-blocks"), "without --live-blocks: says how");
	free(text);
}

/* mapregions.c's blocks in the brk heap, two mmap'd chunks and a second
 * thread's arena: report --map lists the regions holding them, each of
 * the kind and at the place the program's /proc/self/maps and its printed
 * addresses say, with exact block counts and bytes, and RSS as the
 * program wrote its pages (tests/integration/mapregions.py checks the
 * JSON against the program's output). */
HP_TEST(memory_map_regions_are_the_programs_mappings)
{
	char path[4200], out[4200], *got, *text;

	snprintf(path, sizeof path, "%s/mapregions.hpf", hp_test_tmp());
	snprintf(out, sizeof out, "%s/mapregions.out", hp_test_tmp());
	got = hp_test_sh_out("%s/heapprof run -q --live-blocks -o %s -- "
			     "%s/tests/programs/mapregions >%s && "
			     "%s/heapprof report --map --json %s >%s.json && "
			     "python3 tests/integration/mapregions.py %s %s.json",
			     hp_test_build(), path, hp_test_build(), out, hp_test_build(), path,
			     out, out, out);
	expect_str(
		got ? got : "",
		"small: 32 blocks in 1 region, brk, the [heap] mapping: yes\n"
		"small: make_small holds 32 blocks, 14336 bytes; they are the printed ones: yes\n"
		"small: RSS within the region, at least the pages holding blocks: yes\n"
		"big A: mmap region at the block - 16, 1052672 bytes, 1 block, 1048576 in use, "
		"largest gap 4080\n"
		"big B: mmap region at the block - 16, 528384 bytes, 1 block, 524288 in use, "
		"largest gap 4080\n"
		"big A: RSS 64 KiB + a page, within a page: yes (69632); big B: RSS 528384\n"
		"thread: 20 blocks in 1 region, arena, 64 MiB aligned: yes, the mapping's rw "
		"part: yes, reserved to 64 MiB: yes\n"
		"thread: make_threaded holds 20 blocks, 20000 bytes; they are the printed "
		"ones: yes\n"
		"thread: RSS within the region, at least the pages holding blocks: yes\n"
		"regions: inside a mapping: yes, in order: yes, blocks counted: yes, "
		"fragmentation = 1 - in use / RSS: yes, blocks outside: 0\n",
		"report --map --json: mapregions' regions, blocks, bytes and RSS");
	free(got);
	/* The text: a line per region, its kind, its holders, in 80 columns. */
	text = hp_test_sh_out("%s/heapprof report --map %s", hp_test_build(), path);
	expect_true(text && strstr(text, "frag = 1 - in use / RSS") && strstr(text, "  brk ") &&
			    strstr(text, "  arena ") && strstr(text, "  mmap ") &&
			    strstr(text, "14.0 KiB in 32  make_small") &&
			    strstr(text, "19.5 KiB in 20  make_threaded") &&
			    strstr(text, "1.0 MiB in 1  make_big") &&
			    strstr(text, "512.0 KiB in 1  make_big"),
		    "report --map: the regions by kind, with their holders");
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		expect_true(len <= 80, "report --map fits 80 columns");
		l = nl ? nl + 1 : l + len;
	}
	if (text)
		printf("%s", text);
	free(text);
}

static long long file_bytes(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

HP_TEST(timeline_cost_is_bounded)
{
	char with[4200], without[4200];
	long long grown;

	snprintf(with, sizeof with, "%s/churn.hpf", hp_test_tmp());
	snprintf(without, sizeof without, "%s/churn-off.hpf", hp_test_tmp());
	if (!expect_true(hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- "
				    "%s/tests/programs/churn && "
				    "%s/heapprof run -q --no-symbols --timeline 0 -o %s -- "
				    "%s/tests/programs/churn",
				    hp_test_build(), with, hp_test_build(), hp_test_build(),
				    without, hp_test_build()) == 0,
			 "churn runs under heapprof, with and without the timeline"))
		return;
	grown = file_bytes(with) - file_bytes(without);
	printf("# timeline on churn (%u stacks changing): %lld bytes in %d ms, %lld bytes/s\n",
	       CHURN_PATHS, grown, CHURN_MS, grown * 1000 / CHURN_MS);
	expect_true(grown > 0, "the timeline is written by default");
	expect_true(grown * 1000 / CHURN_MS <= TIMELINE_MAX_BYTES_PER_S,
		    "the timeline of a program whose every site churns stays small");
	/* Its stacks all end in churn_leaf at one line: the text names them
	 * apart by the callers where they part, as the page does. */
	expect_eq_u64(hp_test_sh("%s/heapprof report --timeline --width 200 %s > %s.tl && "
				 "[ $(grep -c ' churn_leaf <- churn_' %s.tl) = 10 ] && "
				 "[ $(grep -o 'churn_leaf <- .*' %s.tl | sort -u | wc -l) = 10 ]",
				 hp_test_build(), with, with, with, with),
		      0, "report --timeline: 10 stacks ending in churn_leaf, 10 names told apart");
}

/* --- by type, context, thread and heap (tlphases.h) -------------------- */

#define TL_CIRCLE_BYTES ((uint64_t)TL_CIRCLE_N * TL_CIRCLE_SIZE)
#define TL_SQUARE_BYTES ((uint64_t)TL_SQUARE_N * TL_SQUARE_SIZE)
#define TL_ARENA_BYTES ((uint64_t)TL_ARENA_N * TL_ARENA_SIZE)
#define TL_PAUSE_NS (TL_PAUSE_MS * 1000000ull)

/* `report --by DIM --json --top TOP`'s "timeline" (python3's json), into
 * ss: the snapshots' times (from report --json), then per group "S key
 * max_bytes" (spaces in the key as '_') and its points. */
static int load_groups(const char *path, const char *dim, unsigned top, struct sites *ss)
{
	char *out = hp_test_sh_out(
		"%s/heapprof report --json %s | python3 -c '"
		"import json,sys; r=json.load(sys.stdin)\n"
		"print(*[s[\"time_ns\"] for s in r[\"snapshots\"]])' && "
		"%s/heapprof report --by %s --json --top %u %s | python3 -c '"
		"import json,sys; r=json.load(sys.stdin)\n"
		"for g in r[\"timeline\"]:\n"
		"  print(\"S\", g[\"key\"].replace(\" \", \"_\"), g[\"max_inuse_bytes\"])\n"
		"  for p in g[\"series\"]: print(\"P\", *p)'",
		hp_test_build(), path, hp_test_build(), dim, top, path);
	char *line;
	int ok;

	memset(ss, 0, sizeof *ss);
	if (!out)
		return 0;
	ok = sscanf(out, "%" SCNu64 " %" SCNu64 " %" SCNu64, &ss->snap[0], &ss->snap[1],
		    &ss->snap[2]) == 3;
	for (line = strchr(out, '\n'); ok && line && line[1]; line = strchr(line + 1, '\n')) {
		struct site *s = ss->n ? &ss->s[ss->n - 1] : NULL;
		struct point pt;
		if (line[1] == 'S' && ss->n < MAX_SITES) {
			s = &ss->s[ss->n++];
			ok = sscanf(line + 1, "S %63s %" SCNu64, s->function, &s->max_bytes) == 2;
		} else if (line[1] == 'P' && s && s->n < MAX_POINTS) {
			ok = sscanf(line + 1, "P %" SCNu64 " %" SCNu64 " %" SCNu64, &pt.t,
				    &pt.bytes, &pt.objects) == 3;
			s->p[s->n++] = pt;
		}
	}
	free(out);
	return expect_true(ok, "report --by --json: three snapshots and the timeline");
}

/* The group named key, or an empty one (nothing at any time). */
static const struct site *group(const struct sites *ss, const char *key)
{
	static const struct site none;

	for (size_t i = 0; i < ss->n; i++)
		if (strcmp(ss->s[i].function, key) == 0)
			return &ss->s[i];
	printf("  no group %s\n", key);
	return &none;
}

/* Whether g holds exactly bytes and objects at t. */
static int holds(const struct site *g, uint64_t t, uint64_t bytes, uint64_t objects,
		 const char *why)
{
	struct point v = at(g, t);
	int ok = expect_eq_u64(v.bytes, bytes, why) & expect_eq_u64(v.objects, objects, why);
	return ok;
}

/* The time of g's first point after from whose bytes differ from was; 0
 * when none. */
static uint64_t change_after(const struct site *g, uint64_t from, uint64_t was)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->p[i].t > from && g->p[i].bytes != was)
			return g->p[i].t;
	return 0;
}

HP_TEST(timeline_by_type_context_thread_heap)
{
	struct sites *ss = malloc(sizeof *ss);
	char path[4200];
	const struct site *circle, *square, *load, *serve, *g;
	uint64_t drop, rise, lo;
	char *text;

	snprintf(path, sizeof path, "%s/tlphases.hpf", hp_test_tmp());
	if (!ss || !expect_true(hp_test_sh("HEAPPROF_TIMELINE_MS=10 %s/heapprof run -q -o %s -- "
					   "%s/tests/programs/tlphases",
					   hp_test_build(), path, hp_test_build()) == 0,
				"tlphases runs under heapprof")) {
		free(ss);
		return;
	}

	/* By type: Circles in phase 1, Squares in phase 2, nothing at exit. */
	if (load_groups(path, "type", 8, ss)) {
		uint64_t s1 = ss->snap[0], s2 = ss->snap[1], s3 = ss->snap[2];
		circle = group(ss, "Circle");
		square = group(ss, "Square");
		expect_eq_u64(circle->max_bytes, TL_CIRCLE_BYTES, "Circle's highest: all of them");
		expect_eq_u64(square->max_bytes, TL_SQUARE_BYTES, "Square's highest: all of them");
		holds(circle, s1, TL_CIRCLE_BYTES, TL_CIRCLE_N, "Circle at snapshot 1");
		holds(square, s1, 0, 0, "no Square at snapshot 1");
		holds(circle, s2, 0, 0, "no Circle at snapshot 2");
		holds(square, s2, TL_SQUARE_BYTES, TL_SQUARE_N, "Square at snapshot 2");
		holds(square, s3, 0, 0, "no Square at exit");
		/* Whole through the pause; freed when phase 2 begins, within a
		 * timeline period of its start (the pause's end at the
		 * earliest). */
		drop = change_after(circle, s1, TL_CIRCLE_BYTES);
		lo = s1 + TL_PAUSE_NS - PERIOD_NS - TICK_SLACK_NS;
		expect_true(drop >= lo && drop <= s2,
			    "Circles stay whole through the pause, freed when phase 2 begins");
		printf("  snapshots at %.3f %.3f %.3f s; Circles freed at %.3f s\n", s1 / 1e9,
		       s2 / 1e9, s3 / 1e9, drop / 1e9);
	}
	/* --top 1: Square, then "other" (Circle and the rest). */
	if (load_groups(path, "type", 1, ss)) {
		expect_eq_u64(ss->n, 2, "--top 1: one type and other");
		expect_str(ss->s[0].function, "Square", "the top type");
		g = group(ss, "other");
		expect_true(g->max_bytes >= TL_CIRCLE_BYTES, "other holds the Circles at its highest");
		holds(g, ss->snap[0], TL_CIRCLE_BYTES, TL_CIRCLE_N,
		      "other at snapshot 1: the Circles");
	}

	/* By context: "load" then "serve"; a free counts in the context of
	 * the allocation, whichever thread frees. */
	if (load_groups(path, "context", 8, ss)) {
		uint64_t s1 = ss->snap[0], s2 = ss->snap[1], s3 = ss->snap[2];
		load = group(ss, "load");
		serve = group(ss, "serve");
		holds(load, s1, TL_CIRCLE_BYTES, TL_CIRCLE_N, "load at snapshot 1");
		holds(serve, s1, 0, 0, "no serve at snapshot 1");
		holds(load, s2, 0, 0, "load at snapshot 2: every Circle freed");
		holds(serve, s2, TL_SQUARE_BYTES, TL_SQUARE_N, "serve at snapshot 2");
		holds(serve, s3, 0, 0, "no serve at exit");
		drop = change_after(load, s1, TL_CIRCLE_BYTES);
		rise = change_after(serve, s1, 0);
		expect_true(drop && rise && (drop > rise ? drop - rise : rise - drop) <= PERIOD_NS,
			    "load falls and serve rises within one timeline period");
	}

	/* By thread: the named thread holds the Squares. */
	if (load_groups(path, "thread", 8, ss)) {
		g = group(ss, TL_THREAD);
		expect_eq_u64(g->max_bytes, TL_SQUARE_BYTES, "the server's highest: the Squares");
		holds(g, ss->snap[1], TL_SQUARE_BYTES, TL_SQUARE_N, "the server at snapshot 2");
		holds(g, ss->snap[2], 0, 0, "the server at exit");
	}

	/* By heap: malloc's and the arena, filled in phase 2, reset at exit. */
	if (load_groups(path, "heap", 8, ss)) {
		g = group(ss, "arena");
		expect_eq_u64(g->max_bytes, TL_ARENA_BYTES, "the arena's highest");
		holds(g, ss->snap[0], 0, 0, "an empty arena at snapshot 1");
		holds(g, ss->snap[1], TL_ARENA_BYTES, TL_ARENA_N, "the arena at snapshot 2");
		holds(g, ss->snap[2], 0, 0, "the arena reset at exit");
		g = group(ss, "malloc");
		expect_true(at(g, ss->snap[1]).bytes >= TL_SQUARE_BYTES,
			    "malloc's heap holds the Squares at snapshot 2");
	}

	text = hp_test_sh_out("%s/heapprof report --by heap --timeline --width 100 %s",
			      hp_test_build(), path);
	expect_true(text && strstr(text, "bytes in use over time, by heap") &&
			    strstr(text, "2.5 KiB") && strstr(text, "| arena"),
		    "report --timeline --by heap draws the arena's line");
	if (text && strstr(text, "bytes in use over time"))
		printf("%s", strstr(text, "bytes in use over time"));
	free(text);
	free(ss);
}

/* The page's data (heapprof html): "timelines" holds the same lines by
 * type, context, thread and heap, on one time axis per dimension. */
HP_TEST(page_carries_the_timeline_by_dimension)
{
	char path[4200], *got;

	snprintf(path, sizeof path, "%s/tlphases-page.hpf", hp_test_tmp());
	if (!expect_true(hp_test_sh("HEAPPROF_TIMELINE_MS=10 %s/heapprof run -q -o %s -- "
				    "%s/tests/programs/tlphases && %s/heapprof html %s -o %s.html",
				    hp_test_build(), path, hp_test_build(), hp_test_build(), path,
				    path) == 0,
			 "tlphases runs, its page is written"))
		return;
	/* Per dimension and key: its highest, and its bytes at the time of
	 * each snapshot (the last axis time at or before it). */
	got = hp_test_sh_out(
		"python3 -c '"
		"import json,re,sys\n"
		"page = open(sys.argv[1]).read()\n"
		"d = json.loads(re.search(r\"id=.hp-data.>(.*?)</script>\", page, re.S).group(1))\n"
		"snaps = [s[\"time_ns\"] for s in d[\"snapshots\"]]\n"
		"def at(tl, l, t):\n"
		"  v = 0\n"
		"  for i, x in enumerate(tl[\"t\"]):\n"
		"    if x <= t: v = l[\"v\"][i]\n"
		"  return v\n"
		"for dim, key in ((\"type\", \"Circle\"), (\"type\", \"Square\"), (\"context\", \"load\"),"
		" (\"context\", \"serve\"), (\"thread\", \"" TL_THREAD "\"), (\"heap\", \"arena\")):\n"
		"  tl = d[\"timelines\"][dim]\n"
		"  l = [l for l in tl[\"lines\"] if l[\"key\"] == key][0]\n"
		"  print(dim, key, l[\"max\"], *[at(tl, l, t) for t in snaps])\n"
		"' %s.html",
		path);
	char want[1024];
	snprintf(want, sizeof want,
		 "type Circle %llu %llu 0 0\n"
		 "type Square %llu 0 %llu 0\n"
		 "context load %llu %llu 0 0\n"
		 "context serve %llu 0 %llu 0\n"
		 "thread " TL_THREAD " %llu 0 %llu 0\n"
		 "heap arena %llu 0 %llu 0\n",
		 (unsigned long long)TL_CIRCLE_BYTES, (unsigned long long)TL_CIRCLE_BYTES,
		 (unsigned long long)TL_SQUARE_BYTES, (unsigned long long)TL_SQUARE_BYTES,
		 (unsigned long long)TL_CIRCLE_BYTES, (unsigned long long)TL_CIRCLE_BYTES,
		 (unsigned long long)TL_SQUARE_BYTES, (unsigned long long)TL_SQUARE_BYTES,
		 (unsigned long long)TL_SQUARE_BYTES, (unsigned long long)TL_SQUARE_BYTES,
		 (unsigned long long)TL_ARENA_BYTES, (unsigned long long)TL_ARENA_BYTES);
	expect_str(got ? got : "", want,
		   "the page's timelines: each line's highest and its bytes at the snapshots");
	free(got);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
