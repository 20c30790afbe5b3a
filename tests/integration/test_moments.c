/*
 * test_moments.c - time in the analyzer, on tests/programs/phases.c, a run
 * of known phases (phases.h): build A, snapshot 1, pause, build B while
 * freeing A, snapshot 2, pause, free B and leak C, exit (snapshot 3).
 *
 *   - `report --json`'s series, read by python3's json: heap in use is
 *     exactly A from snapshot 1 until the pause ends, exactly B from
 *     snapshot 2 for the next pause, exactly C at exit, and the change
 *     from A to B shows within one sampling period (10 ms; the pause
 *     ticks every 0.25 ms, so a sample is never more than a tick late);
 *   - the text report's chart marks the peak ('^') at the peak's column;
 *   - `diff FILE@1 FILE@2`, `FILE@2 FILE@end`, `FILE@peak FILE@end`: the
 *     exact bytes and objects that grew and shrank per stack;
 *   - wrong moments are refused.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/tools.h"
#include "../programs/phases.h"

#define PERIOD_NS 10000000ull
#define TICK_SLACK_NS 5000000ull /* a tick late on a loaded machine */
#define PAUSE_NS (PHASE_PAUSE_MS * 1000000ull)
#define A_BYTES ((uint64_t)PHASE_A_N * PHASE_A_SIZE)
#define B_BYTES ((uint64_t)PHASE_B_N * PHASE_B_SIZE)
#define C_BYTES ((uint64_t)PHASE_C_N * PHASE_C_SIZE)

static const char *capture(void)
{
	static char path[4200];
	static int state; /* 0 not run, 1 ok, -1 failed */

	if (!state) {
		snprintf(path, sizeof path, "%s/phases.hpf", hp_test_tmp());
		state = hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/phases",
				   hp_test_build(), path, hp_test_build()) == 0
				? 1
				: -1;
	}
	return expect_true(state == 1, "phases runs under heapprof") ? path : NULL;
}

struct sample {
	uint64_t t, heap;
};

struct series {
	uint64_t snap[3], peak_ns;
	size_t n;
	struct sample s[4096];
};

/* The JSON report as python3's json reads it: the snapshots' times, the
 * peak's, then one "time heap" line per sample. */
static int load_series(struct series *se)
{
	char *out = hp_test_sh_out(
		"%s/heapprof report --json %s | python3 -c '"
		"import json,sys; r=json.load(sys.stdin)\n"
		"print(*[s[\"time_ns\"] for s in r[\"snapshots\"]], r[\"peak_time_ns\"])\n"
		"for s in r[\"series\"]: print(s[\"time_ns\"], s[\"heap_bytes\"])'",
		hp_test_build(), capture());
	char *line;
	int ok;

	memset(se, 0, sizeof *se);
	if (!out)
		return 0;
	ok = sscanf(out, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64, &se->snap[0],
		    &se->snap[1], &se->snap[2], &se->peak_ns) == 4;
	for (line = strchr(out, '\n'); ok && line && line[1] && se->n < 4096;
	     line = strchr(line + 1, '\n'))
		if (sscanf(line + 1, "%" SCNu64 " %" SCNu64, &se->s[se->n].t, &se->s[se->n].heap) == 2)
			se->n++;
	free(out);
	return expect_true(ok && se->n > 0, "report --json has three snapshots and a series");
}

/* The last sample at or before t. */
static const struct sample *at(const struct series *se, uint64_t t)
{
	const struct sample *last = NULL;
	for (size_t i = 0; i < se->n && se->s[i].t <= t; i++)
		last = &se->s[i];
	return last;
}

/* Whether a sample holds x: x exactly, or x and one of the pause's
 * temporary blocks, live at the moment the sample was taken (a sample is
 * taken at the allocation or free that looks at the clock: either). */
static int holds(uint64_t heap, uint64_t x)
{
	return heap == x || heap == x + PHASE_TEMP_SIZE;
}

HP_TEST(series_shows_the_phases)
{
	struct series *se = malloc(sizeof *se);
	uint64_t last_a = 0, first_b = 0;
	size_t wrong_a = 0, wrong_b = 0, n_a = 0, n_b = 0;

	if (!capture() || !se || !load_series(se)) {
		free(se);
		return;
	}
	for (size_t i = 0; i < se->n; i++) {
		const struct sample *s = &se->s[i];
		if (s->t >= se->snap[0] && s->t < se->snap[0] + PAUSE_NS) { /* B not begun */
			wrong_a += !holds(s->heap, A_BYTES);
			n_a++;
		}
		if (s->t >= se->snap[1] && s->t < se->snap[1] + PAUSE_NS) { /* B, C not begun */
			wrong_b += !holds(s->heap, B_BYTES);
			n_b++;
		}
		if (s->t <= se->snap[1] && holds(s->heap, A_BYTES))
			last_a = s->t;
		if (!first_b && holds(s->heap, B_BYTES))
			first_b = s->t;
	}
	expect_eq_u64(wrong_a, 0, "the pause after A: every sample holds exactly A (and at most "
				  "the temporary block then live)");
	expect_eq_u64(wrong_b, 0, "the pause after B: every sample holds exactly B (and at most "
				  "the temporary block then live)");
	expect_true(n_a >= PAUSE_NS / PERIOD_NS / 2 && n_b >= PAUSE_NS / PERIOD_NS / 2,
		    "the pauses are sampled about every 10 ms");
	expect_eq_u64(at(se, se->snap[0]) ? at(se, se->snap[0])->heap : 0, A_BYTES,
		      "A at snapshot 1");
	expect_eq_u64(at(se, se->snap[1]) ? at(se, se->snap[1])->heap : 0, B_BYTES,
		      "B at snapshot 2");
	expect_eq_u64(at(se, se->snap[2]) ? at(se, se->snap[2])->heap : 0, C_BYTES,
		      "C at exit");
	expect_true(last_a >= se->snap[0] + PAUSE_NS - PERIOD_NS - TICK_SLACK_NS,
		    "A shows until B begins, within one sampling period");
	expect_true(first_b && first_b <= se->snap[1] && first_b >= last_a &&
			    first_b - last_a <= PERIOD_NS + TICK_SLACK_NS,
		    "B shows within one sampling period of the last sample of A");
	/* B, and the pause's first temporary block on top of it, just after
	 * snapshot 2: the peak (B + PHASE_TEMP_SIZE). */
	expect_true(se->peak_ns >= se->snap[0] + PAUSE_NS && se->peak_ns <= se->snap[1] + PERIOD_NS,
		    "the peak is at the end of B's build");
	free(se);
}

HP_TEST(chart_marks_the_peak_column)
{
	struct series *se = malloc(sizeof *se);
	const unsigned width = 80, cols = width - 10 - 1;
	char *out = NULL, *axis, *mark, *nl, *caret, *bar;
	uint64_t want;

	if (!capture() || !se || !load_series(se))
		goto out;
	out = hp_test_sh_out("%s/heapprof report --width %u %s", hp_test_build(), width, capture());
	if (!expect_true(out && (axis = strstr(out, "        0 +-")), "the chart's axis"))
		goto out;
	mark = strchr(axis, '\n') + 1;
	nl = strchr(mark, '\n');
	expect_eq_u64(strcspn(axis, "\n"), width, "the chart is as wide as the report");
	caret = memchr(mark, '^', (size_t)(nl - mark));
	if (!expect_true(caret, "a peak mark under the axis"))
		goto out;
	/* The column of the peak's time on a plot of cols columns spanning
	 * [0, the exit snapshot's time]. */
	want = (uint64_t)((double)se->peak_ns * cols / (double)se->snap[2]);
	expect_eq_u64((uint64_t)(caret - mark) - 11, want, "the peak mark is at the peak's column");
	expect_true(want > cols / 3 && want < 2 * cols / 3, "the peak is in the middle of the run");
	/* Snapshot 1 comes after the start-up and A's build: its column,
	 * the first on a quiet machine, is computed as the peak's (under load
	 * the start-up alone can take more than a column's time). */
	want = (uint64_t)((double)se->snap[0] * cols / (double)se->snap[2]);
	expect_true(want < cols / 3, "snapshot 1 is early in the run");
	bar = memchr(mark, '|', (size_t)(nl - mark));
	expect_eq_u64(bar ? (uint64_t)(bar - mark) - 11 : UINT64_MAX, want,
		      "snapshot 1 is marked at its column");
	expect_true(nl[-1] == '|', "the exit snapshot is marked in the last column");
out:
	free(out);
	free(se);
}

/* The change of the stack whose innermost frame is leaf in a text diff:
 * "   N. +1.2 KiB (+F bytes, +C objects)  (...)" then "      leaf  file:line". */
static int change_of(const char *text, const char *leaf, long long *bytes, long long *objects)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		int rank;
		char name[128];
		const char *next = strchr(l, '\n');
		const char *paren = next ? memchr(l, '(', (size_t)(next - l)) : NULL;
		if (sscanf(l, " %d. ", &rank) == 1 && paren &&
		    sscanf(paren, "(%lld bytes, %lld objects", bytes, objects) == 2 &&
		    sscanf(next + 1, " %127s", name) == 1 && strcmp(name, leaf) == 0)
			return 1;
	}
	return 0;
}

static void expect_change(const char *text, const char *leaf, long long bytes, long long objects)
{
	long long b = 0, o = 0;
	char why[160];

	snprintf(why, sizeof why, "%s is listed as changed", leaf);
	if (!expect_true(change_of(text, leaf, &b, &o), why))
		return;
	snprintf(why, sizeof why, "%s: bytes", leaf);
	expect_eq_u64((uint64_t)b, (uint64_t)bytes, why);
	snprintf(why, sizeof why, "%s: objects", leaf);
	expect_eq_u64((uint64_t)o, (uint64_t)objects, why);
}

HP_TEST(diff_between_snapshots)
{
	const char *f = capture();
	char *out, line[256];

	if (!f || !(out = hp_test_sh_out("%s/heapprof diff %s@1 %s@2", hp_test_build(), f, f)))
		return;
	expect_change(out, "build_b", (long long)B_BYTES, PHASE_B_N);
	expect_change(out, "build_a", -(long long)A_BYTES, -PHASE_A_N);
	snprintf(line, sizeof line, " (+%llu bytes, +0 objects)\n",
		 (unsigned long long)(B_BYTES - A_BYTES));
	expect_true(strstr(out, line), "the totals' change: B minus A, as many objects");
	expect_true(strstr(out, "2 of 3 stacks changed"), "the pause left nothing: unchanged");
	expect_true(strstr(out, "@1 (snapshot 1 of 3, heapprof_dump(), at "), "BASE is snapshot 1");
	free(out);

	if (!(out = hp_test_sh_out("%s/heapprof diff %s@2 %s@end", hp_test_build(), f, f)))
		return;
	expect_change(out, "build_b", -(long long)B_BYTES, -PHASE_B_N);
	expect_change(out, "leak_c", (long long)C_BYTES, PHASE_C_N);
	expect_true(strstr(out, "@end (snapshot 3 of 3, exit, at "), "@end is the last snapshot");
	free(out);

	if (!(out = hp_test_sh_out("%s/heapprof diff %s@peak %s@end", hp_test_build(), f, f)))
		return;
	expect_change(out, "build_b", -(long long)B_BYTES, -PHASE_B_N);
	expect_change(out, "leak_c", (long long)C_BYTES, PHASE_C_N);
	expect_true(strstr(out, "@peak (in use at the peak, "), "@peak says what it is");
	free(out);
}

HP_TEST(diff_refuses_wrong_moments)
{
	const char *f = capture();

	if (!f)
		return;
	expect_eq_u64(hp_test_sh("%s/heapprof diff %s@x %s 2>/dev/null", hp_test_build(), f, f), 2,
		      "@x: wrong usage");
	expect_eq_u64(hp_test_sh("%s/heapprof diff %s@0 %s 2>/dev/null", hp_test_build(), f, f), 2,
		      "@0: snapshots count from 1");
	expect_eq_u64(hp_test_sh("%s/heapprof diff --metric allocated %s@peak %s 2>/dev/null",
				 hp_test_build(), f, f),
		      2, "@peak is in use at the peak, not allocated");
	expect_eq_u64(hp_test_sh("%s/heapprof diff %s@4 %s 2>/dev/null", hp_test_build(), f, f), 1,
		      "@4: there is no snapshot 4");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}

/* diff of two moments fits the terminal, as report does: the title's tail
 * and each side's name ("phases.hpf@1 (snapshot 1 of 3, ...)") go on lines
 * of their own at 80 columns, and stay on one at 200. */
HP_TEST(diff_fits_the_width)
{
	static const char *const moments[] = {"phases.hpf@1 phases.hpf@2",
					       "phases.hpf@peak phases.hpf@end"};
	char *out;

	/* Run where the capture is, so its name is as short as a user's. */
	if (!capture())
		return;
	for (size_t i = 0; i < sizeof moments / sizeof *moments; i++) {
		out = hp_test_sh_out("cd %s && COLUMNS=80 %s/heapprof diff %s | awk 'length($0) > 80' "
				     "| wc -l",
				     hp_test_tmp(), hp_test_build(), moments[i]);
		expect_true(out && atoi(out) == 0, "COLUMNS=80: every line of the diff fits 80");
		free(out);
		out = hp_test_sh_out("cd %s && COLUMNS=80 %s/heapprof diff --by thread %s | "
				     "awk 'length($0) > 80' | wc -l",
				     hp_test_tmp(), hp_test_build(), moments[i]);
		expect_true(out && atoi(out) == 0, "and of diff --by");
		free(out);
	}
	out = hp_test_sh_out("cd %s && COLUMNS=80 %s/heapprof diff phases.hpf@1 phases.hpf@2 | "
			     "sed -n 2,4p",
			     hp_test_tmp(), hp_test_build());
	/* (the snapshot's time, "at 0.002 s", varies) */
	expect_true(out && strncmp(out, "  NEW minus BASE\n  base    976.6 KiB (1000000 bytes, "
					 "100 objects)\n          phases.hpf@1 (snapshot 1 of 3, "
					 "heapprof_dump(), at ",
				   120) == 0,
		    "the title's tail and BASE's name on lines of their own");
	free(out);
	out = hp_test_sh_out("cd %s && %s/heapprof diff --width 200 phases.hpf@1 phases.hpf@2 | "
			     "sed -n 2p",
			     hp_test_tmp(), hp_test_build());
	expect_true(out && strstr(out, "(1000000 bytes, 100 objects)  phases.hpf@1 (snapshot 1 of 3"),
		    "--width 200: on one line");
	free(out);
}

/* diff --by of FILE@peak takes that side at its peak, as the diff by stack
 * does (it read the snapshot's in use: "total 48.8 KiB -> 48.8 KiB"):
 * phases' peak is B and one temporary block, its exit C. */
HP_TEST(diff_by_at_peak)
{
	char want[128];
	char *out;

	if (!capture())
		return;
	out = hp_test_sh_out("%s/heapprof diff --by thread --json %s@peak %s@end | tr -d ' \\n'",
			     hp_test_build(), capture(), capture());
	snprintf(want, sizeof want, "\"base_totals\":{\"alloc_objects\":");
	expect_true(out && strstr(out, want), "diff --by --json has the base's totals");
	snprintf(want, sizeof want, "\"inuse_objects\":%d,\"inuse_bytes\":%" PRIu64,
		 PHASE_B_N + 1, B_BYTES + PHASE_TEMP_SIZE);
	expect_true(out && strstr(out, want) && strstr(out, want) < strstr(out, "\"new_totals\""),
		    "BASE at its peak: B and a temporary block in use");
	snprintf(want, sizeof want, "\"change\":%lld,", (long long)C_BYTES -
							  (long long)(B_BYTES + PHASE_TEMP_SIZE));
	expect_true(out && strstr(out, want), "the thread's change: C minus the peak");
	free(out);
	/* (the title takes one to three lines, by the length of the capture's
	 * path: CI's checkout is deeper than a developer's) */
	out = hp_test_sh_out("%s/heapprof diff --by thread --width 200 %s@peak %s@end | "
			     "grep '^  total'",
			     hp_test_build(), capture(), capture());
	expect_true(out && strcmp(out, "  total 2.9 MiB -> 48.8 KiB (-2.8 MiB)\n") == 0,
		    "the text says the same");
	free(out);
}
