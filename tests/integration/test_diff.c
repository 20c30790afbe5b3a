/*
 * test_diff.c - `heapprof diff` on two runs of tests/programs/diffprog.c
 * whose leaks differ by known figures (diffprog.h): BASE leaks BASE_GROW
 * blocks from grow_leaf and BASE_SHRINK from shrink_leaf, NEW leaks
 * NEW_GROW and none (shrink_leaf's stack is absent from NEW), both the
 * same steady blocks. BASE runs without address randomization and NEW
 * with it, so the stacks can only match by their functions.
 *
 * The text diff must show exactly the differences, signed and ranked; the
 * pprof diff must show them too when read by `go tool pprof`, which is
 * required (a missing tool fails the test, naming the package).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../harness/harness.h"
#include "../harness/tools.h"
#include "../harness/query.h"
#include "../programs/diffprog.h"

#define BASE_GROW 5
#define BASE_SHRINK 3
#define NEW_GROW 12

#define GROW_CHANGE ((long long)(NEW_GROW - BASE_GROW) * DIFF_GROW_SIZE)
#define SHRINK_CHANGE (-(long long)BASE_SHRINK * DIFF_SHRINK_SIZE)

/* --- running the tools ------------------------------------------------ */

static const char *hp(void)
{
	static char path[4200];
	snprintf(path, sizeof path, "%s/heapprof", hp_test_build());
	return path;
}

static const char *tmp(const char *name)
{
	static char paths[8][4200];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, sizeof paths[0], "%s/%s", hp_test_tmp(), name);
	return p;
}

/* The two captures, recorded once for every test of this binary. BASE
 * runs under `setarch -R` (no address randomization), NEW does not. */
static int captures(const char **base, const char **new)
{
	static char b[4200], n[4200];
	static int state; /* 0 not run, 1 ok, -1 failed */

	if (!state) {
		snprintf(b, sizeof b, "%s/base.hpf", hp_test_tmp());
		snprintf(n, sizeof n, "%s/new.hpf", hp_test_tmp());
		state = hp_test_sh("setarch \"$(uname -m)\" -R %s run -q -o %s -- "
				   "%s/tests/programs/diffprog %d %d", hp(), b, hp_test_build(),
				   BASE_GROW, BASE_SHRINK) == 0 &&
				hp_test_sh("%s run -q -o %s -- %s/tests/programs/diffprog %d 0", hp(), n,
					   hp_test_build(), NEW_GROW) == 0
			? 1 : -1;
	}
	*base = b;
	*new = n;
	return expect_true(state == 1, "diffprog runs twice under heapprof (setarch: util-linux)");
}

/* --- reading the outputs ---------------------------------------------- */

/* One ranked stack of a text diff. */
struct shown {
	int rank;
	long long figure, companion;
	char unit[16];
	char leaf[128];
	int only_base;
};

/* Parses the ranked stacks: "   N. +F unit, +C unit  (...)" then the
 * innermost frame on the next line. Returns how many. */
static int parse_text(const char *text, struct shown *out, int max)
{
	const char *line = text;
	int n = 0;

	while (line && *line && n < max) {
		const char *end = strchr(line, '\n');
		struct shown s = {0};
		char cu[16];
		const char *paren = end ? memchr(line, '(', (size_t)(end - line)) : NULL;
		if (sscanf(line, " %d. ", &s.rank) == 1 && paren &&
		    sscanf(paren, "(%lld %15[a-z], %lld %15[a-z]", &s.figure, s.unit, &s.companion,
			   cu) == 4) {
			const char *nl = strchr(line, '\n');
			s.only_base = nl && memmem(line, (size_t)(nl - line), "only in BASE", 12) != NULL;
			if (sscanf(end + 1, " %127s", s.leaf) == 1)
				out[n++] = s;
		}
		line = end ? end + 1 : NULL;
	}
	return n;
}

static const struct shown *find(const struct shown *s, int n, const char *leaf)
{
	for (int i = 0; i < n; i++)
		if (strcmp(s[i].leaf, leaf) == 0)
			return &s[i];
	return NULL;
}

/* --- tests -------------------------------------------------------------- */

HP_TEST(diff_runs_differ_in_addresses)
{
	const char *b, *n;
	struct hp_capture *cb, *cn;

	if (!captures(&b, &n))
		return;
	cb = hpq_load(b);
	cn = hpq_load(n);
	if (expect_true(cb && cn && cb->nmodules && cn->nmodules, "both captures load"))
		expect_true(cb->modules[0].bias != cn->modules[0].bias,
			    "diffprog was loaded at different addresses in the two runs");
	hpq_free(cb);
	hpq_free(cn);
}

HP_TEST(diff_text_shows_exact_changes)
{
	const char *b, *n;
	struct shown s[32];
	const struct shown *g, *k;
	char *out, want[128];
	int count;

	if (!captures(&b, &n) || !(out = hp_test_sh_out("%s diff --metric leaked %s %s", hp(), b, n)))
		return;
	count = parse_text(out, s, 32);
	g = find(s, count, "grow_leaf");
	k = find(s, count, "shrink_leaf");
	if (expect_true(g != NULL, "grow_leaf's stack is listed")) {
		expect_eq_u64(g->figure, GROW_CHANGE, "grow: +(NEW_GROW - BASE_GROW) x size bytes");
		expect_eq_u64(g->companion, NEW_GROW - BASE_GROW, "grow: +(NEW_GROW - BASE_GROW) objects");
		expect_str(g->unit, "bytes", "leaked is ranked by bytes");
		expect_true(!g->only_base, "grow_leaf is in both");
	}
	if (expect_true(k != NULL, "shrink_leaf's stack, gone in NEW, is listed")) {
		expect_eq_u64(k->figure, SHRINK_CHANGE, "shrink: -BASE_SHRINK x size bytes");
		expect_eq_u64(k->companion, -(long long)BASE_SHRINK, "shrink: -BASE_SHRINK objects");
		expect_true(k->only_base, "shrink_leaf is marked as only in BASE");
	}
	expect_true(find(s, count, "steady_leaf") == NULL, "the unchanged stack is not listed");
	expect_eq_u64(count, 2, "two stacks changed");
	if (g && k)
		expect_true(k->rank == 1 && g->rank == 2,
			    "ranked by absolute change: -3000 before +700");
	snprintf(want, sizeof want, " (%+lld bytes, %+lld objects)\n",
		 GROW_CHANGE + SHRINK_CHANGE, (long long)(NEW_GROW - BASE_GROW - BASE_SHRINK));
	expect_true(strstr(out, want) != NULL, "the totals' change (diffprog allocates nothing else)");
	expect_true(strstr(out, "2 of 3 stacks changed") != NULL, "2 of the 3 stacks changed");
	free(out);
}

/* Issue 23 item 7 and issue 24 item 10: the peak beside the bytes in use
 * (diffprog leaks everything: both move together), stacks as report shows
 * them (no runtime frames below main), and --json by stack. */
HP_TEST(diff_peak_beside_names_and_json)
{
	const char *b, *n;
	char *out, want[160];

	if (!captures(&b, &n) || !(out = hp_test_sh_out("%s diff --metric leaked --width 80 %s %s", hp(),
							b, n)))
		return;
	/* BASE: 5 x 100 + 3 x 1000 + 7 x 40 = 3780 B in 15 blocks at the
	 * peak; NEW: 12 x 100 + 7 x 40 = 1480 B in 19 */
	snprintf(want, sizeof want, "\n  peak    3.7 KiB -> 1.4 KiB: -2.2 KiB, +%d blocks\n",
		 NEW_GROW - BASE_GROW - BASE_SHRINK);
	if (!expect_true(strstr(out, want) != NULL, "the peak's line beside the leaked totals"))
		printf("%s", out);
	expect_true(strstr(out, "\n      grow_leaf  diffprog.c:") != NULL,
		    "grow_leaf's frame as report shows it");
	expect_true(strstr(out, "_start") == NULL && strstr(out, "__libc_start") == NULL,
		    "no runtime frame below main");
	free(out);
	if ((out = hp_test_sh_out("%s diff --metric peak --width 80 %s %s", hp(), b, n))) {
		expect_true(strstr(out, "\n  in use  3.7 KiB -> 1.4 KiB: -2.2 KiB, +4 blocks\n") !=
				    NULL,
			    "--metric peak: the bytes in use beside it");
		free(out);
	}
	expect_eq_u64(
		hp_test_sh("%s diff --metric leaked --json %s %s | python3 -c '"
			   "import json,sys; r=json.load(sys.stdin)\n"
			   "assert r[\"by\"]==\"stack\" and r[\"metric\"]==\"leaked\", r\n"
			   "s=r[\"stacks\"]\n"
			   "assert len(s)==2, s\n"
			   "assert s[0][\"stack\"][0][\"function\"]==\"shrink_leaf\", s[0]\n"
			   "assert s[0][\"change\"]==%lld and s[0][\"only_in\"]==\"base\", s[0]\n"
			   "assert s[1][\"stack\"][0][\"function\"]==\"grow_leaf\", s[1]\n"
			   "assert s[1][\"change\"]==%lld and s[1][\"only_in\"] is None, s[1]\n"
			   "assert r[\"new_totals\"][\"peak_bytes\"]-r[\"base_totals\"][\"peak_bytes\"]==%lld'",
			   hp(), b, n, SHRINK_CHANGE, GROW_CHANGE, GROW_CHANGE + SHRINK_CHANGE),
		0, "diff --json: the changed stacks, most changed first, with both sides");
}

/* Issue 23 item 7: two runs are compared by their peaks by default. NEW
 * holds 10 blocks of DIFF_TEMP_SIZE from temp_peak at once and frees them:
 * its peak grew by exactly 1,000,000 bytes, its leaks not at all (the
 * leaked metric read +0 here). Moments of one run keep the bytes in use. */
HP_TEST(diff_default_is_the_peak)
{
	const char *b, *n, *p = tmp("peaky.hpf");
	struct shown s[32];
	const struct shown *t;
	char *out;
	int count;

	if (!captures(&b, &n) ||
	    !expect_eq_u64(hp_test_sh("%s run -q -o %s -- %s/tests/programs/diffprog %d %d 10", hp(),
				      p, hp_test_build(), BASE_GROW, BASE_SHRINK),
			   0, "diffprog with 10 temporary blocks runs"))
		return;
	if (!(out = hp_test_sh_out("%s diff --width 80 %s %s", hp(), b, p)))
		return;
	count = parse_text(out, s, 32);
	t = find(s, count, "temp_peak");
	if (!expect_true(t != NULL && count == 1, "temp_peak's stack, the one that changed, listed"))
		printf("%s", out);
	else
		expect_eq_u64(t->figure, 10 * DIFF_TEMP_SIZE, "the peak grew by 10 x 100,000 bytes");
	expect_true(strstr(out, "\n  in use  3.7 KiB -> 3.7 KiB: +0 B, +0 blocks\n") != NULL,
		    "the bytes in use beside it, unchanged");
	free(out);
	expect_eq_u64(hp_test_sh("%s diff --json %s %s | python3 -c '"
				 "import json,sys; r=json.load(sys.stdin)\n"
				 "assert r[\"metric\"]==\"peak\", r[\"metric\"]\n"
				 "assert r[\"stacks\"][0][\"change\"]==%d, r[\"stacks\"]'",
				 hp(), b, p, 10 * DIFF_TEMP_SIZE),
		      0, "--json says the peak, +1,000,000");
	expect_eq_u64(hp_test_sh("%s diff --fail-if-grew 999999 %s %s >/dev/null 2>&1", hp(), b, p),
		      3, "--fail-if-grew gates on the peak by default");
	expect_eq_u64(hp_test_sh("%s diff --metric leaked --fail-if-grew 1 %s %s >/dev/null 2>&1",
				 hp(), b, p),
		      0, "the leaks did not grow");
	if ((out = hp_test_sh_out("%s diff --json %s@end %s@end", hp(), b, p))) {
		expect_true(strstr(out, "\"metric\": \"leaked\"") != NULL,
			    "moments: in use at each by default");
		free(out);
	}
}

HP_TEST(diff_text_other_metrics)
{
	const char *b, *n;
	struct shown s[32];
	const struct shown *g;
	char *out;
	int count;

	if (!captures(&b, &n) || !(out = hp_test_sh_out("%s diff --metric allocations %s %s", hp(), b, n)))
		return;
	count = parse_text(out, s, 32);
	g = find(s, count, "grow_leaf");
	if (expect_true(g != NULL, "allocations: grow_leaf listed")) {
		expect_eq_u64(g->figure, NEW_GROW - BASE_GROW, "allocations: +(NEW_GROW - BASE_GROW)");
		expect_str(g->unit, "objects", "allocations are ranked by objects");
		expect_eq_u64(g->companion, GROW_CHANGE, "with the bytes");
	}
	free(out);
	out = hp_test_sh_out("%s diff --top 1 %s %s", hp(), b, n);
	if (out) {
		count = parse_text(out, s, 32);
		expect_eq_u64(count, 1, "--top 1 shows one stack");
		expect_true(count == 1 && strcmp(s[0].leaf, "shrink_leaf") == 0, "the largest change");
		free(out);
	}
	out = hp_test_sh_out("%s diff --metric leaked %s %s", hp(), b, b);
	if (out) {
		expect_true(strstr(out, "0 of 3 stacks changed") != NULL,
			    "a capture against itself: nothing changed");
		expect_true(strstr(out, "change  +0 B (+0 bytes, +0 objects)") != NULL, "zero change");
		free(out);
	}
}

HP_TEST(diff_pprof_read_by_go)
{
	const char *b, *n, *pb = tmp("diff.pb.gz");
	char *out;
	int found;

	if (!hp_test_need_go() || !captures(&b, &n))
		return;
	if (!expect_eq_u64(hp_test_sh("%s diff --metric leaked %s %s --format pprof -o %s", hp(),
				      b, n, pb), 0,
			   "diff --format pprof succeeds"))
		return;
	out = hp_test_sh_out("go tool pprof -top -unit=B -nodefraction=0 -nodecount=1000 %s 2>&1", pb);
	if (out) {
		expect_true(strstr(out, "Type: inuse_space") != NULL, "leaked: inuse_space by default");
		expect_eq_u64(hp_test_pprof_column(out, "grow_leaf", 0, &found), GROW_CHANGE, "go: grow_leaf +bytes");
		expect_eq_u64(hp_test_pprof_column(out, "shrink_leaf", 0, &found), SHRINK_CHANGE,
			      "go: shrink_leaf -bytes (negative values)");
		hp_test_pprof_column(out, "steady_leaf", 0, &found);
		expect_true(!found, "go: the unchanged stack has no sample");
		free(out);
	}
	out = hp_test_sh_out("go tool pprof -top -nodefraction=0 -sample_index=alloc_objects %s 2>&1", pb);
	if (out) {
		expect_eq_u64(hp_test_pprof_column(out, "grow_leaf", 0, &found), NEW_GROW - BASE_GROW,
			      "go: grow_leaf +objects");
		expect_eq_u64(hp_test_pprof_column(out, "shrink_leaf", 0, &found), -(long long)BASE_SHRINK,
			      "go: shrink_leaf -objects");
		free(out);
	}
	out = hp_test_sh_out("go tool pprof -traces -unit=B %s 2>&1", pb);
	if (out) {
		char want[128];
		snprintf(want, sizeof want, "%lldB   grow_leaf\n             main\n", GROW_CHANGE);
		expect_true(strstr(out, want) != NULL, "go -traces: grow_leaf <- main");
		snprintf(want, sizeof want, "%lldB   shrink_leaf\n             main\n", SHRINK_CHANGE);
		expect_true(strstr(out, want) != NULL, "go -traces: shrink_leaf <- main");
		free(out);
	}
}

HP_TEST(diff_usage_errors)
{
	const char *b, *n;

	if (!captures(&b, &n))
		return;
	expect_eq_u64(hp_test_sh("%s diff %s 2>/dev/null", hp(), b), 2, "one capture: usage error");
	expect_eq_u64(hp_test_sh("%s diff %s %s --format pprof >/dev/null 2>&1", hp(), b, n), 2,
		      "pprof without -o: usage error");
	expect_eq_u64(hp_test_sh("%s diff --metric size %s %s 2>/dev/null", hp(), b, n), 2,
		      "unknown metric: usage error");
	expect_eq_u64(hp_test_sh("%s diff %s /nonexistent.hpf 2>/dev/null", hp(), b), 1,
		      "a missing capture: exit 1");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
