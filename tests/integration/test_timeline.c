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
 *   - --timeline 0 writes none;
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
#include "../harness/tools.h"
#include "../programs/churn.h"
#include "../programs/lifetimes.h"
#include "../programs/phases.h"

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
	if (!expect_eq_u64(ss->n, 3,
			   "three sites held memory: B, A and C (the pauses' "
			   "temporary blocks never live at a tick)")) {
		free(ss);
		return;
	}
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
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
