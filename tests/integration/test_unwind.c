/*
 * test_unwind.c - the DWARF rule cache (src/recorder/cfa_cache.c) against
 * libunwind, on tests/programs/unwindshapes.c: two callers with equal
 * frames reaching the same inner frames, recursion past the depth limit,
 * frames without frame pointers, libc frames, signal frames (on the
 * thread's stack and on an alternate one), a frame without unwind
 * information, a CFA given by a DWARF expression, a plugin dlopen'd and
 * dlclose'd (while another thread allocates, too), threads; and two
 * libraries alike but for their frames, loaded in turn at one address.
 *
 * Three ways: HEAPPROF_UNWIND_CHECK=1 has the recorder redo every walk the
 * cache finished with unw_backtrace and count the differences (none);
 * the captures of a run with the cache and a run with libunwind alone
 * have the same buckets, frame for frame (as module offsets), with the
 * same counts, bytes, peaks and temporaries; and both have the call paths
 * the program makes, with their exact counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"

#define ROUNDS 5 /* as in unwindshapes.c */
#define DEPTHS 80
#define THREADS 3
#define MAX_DEPTH 64 /* the runs' --max-depth: DEPTHS goes past it */
#define KEPT_ROOTS (MAX_DEPTH / 4) /* src/recorder/roots.h */

#define STACK(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Runs unwindshapes (with arg after the plugin's path) under the
 * recorder with --max-depth MAX_DEPTH (its recursion goes past it) and
 * env (VAR=value ...) into NAME.hpf; returns its standard error
 * (malloc'd) or NULL. */
static char *run_shapes(const char *name, const char *env, const char *arg)
{
	return hp_test_sh_out("cd %s && env HEAPPROF_MAX_DEPTH=%d %s HEAPPROF_OUTPUT=%s/%s.hpf "
			      "LD_PRELOAD=%s/libheapprof.so "
			      "%s/tests/programs/unwindshapes %s/tests/programs/libplugin.so %s "
			      "2>&1 >/dev/null",
			      hp_test_tmp(), MAX_DEPTH, env, hp_test_tmp(), name, hp_test_build(),
			      hp_test_build(), hp_test_build(), arg);
}

/* The three figures of the recorder's "unwind check:" line. */
static int check_line(const char *err, unsigned long *walks, unsigned long *cached,
		      unsigned long *differed)
{
	const char *line = err ? strstr(err, "unwind check: ") : NULL;

	return line && sscanf(line, "unwind check: %lu walks, %lu by the rule cache, %lu differed",
			      walks, cached, differed) == 3;
}

static void check_crossed(const struct hp_capture *cap, const char *how);
static void check_trail(const struct hp_capture *cap, const char *how);

HP_TEST(unwind_cache_check_finds_no_difference)
{
	unsigned long walks = 0, cached = 0, differed = ~0UL;
	char path[512];
	struct hp_capture *cap;
	char *err = run_shapes("check", "HEAPPROF_UNWIND_CHECK=1", "");

	if (!expect_true(err != NULL, "unwindshapes runs under the recorder"))
		return;
	expect_true(check_line(err, &walks, &cached, &differed),
		    "the recorder reports its comparison at exit");
	expect_eq_u64(differed, 0, "every walk the cache finished is libunwind's, frame for frame");
	/* The cache walks everything but the walks through a signal frame
	 * (2 x ROUNDS), through nounwind_call (no FDE) and through
	 * cfaexpr_call (a CFA expression): ROUNDS each. */
	expect_eq_u64(walks - cached, 4 * ROUNDS, "walks left to libunwind: exactly those shapes");
	expect_true(cached >= ROUNDS * (2 + DEPTHS + 4 + 2 + 2 + 2 + 8) + THREADS * ROUNDS * 5,
		    "the cache walked every other shape");
	if (differed)
		printf("%s", err); /* the first differences, as the recorder logged them */
	free(err);
	snprintf(path, sizeof path, "%s/check.hpf", hp_test_tmp());
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "capture loads"))
		return;
	check_crossed(cap, "dwarf");
	check_trail(cap, "dwarf");
	hpq_free(cap);
}

#define TRAIL_DEPTH 36 /* as in unwindshapes.c */
#define TRAIL_TOPS 6   /* trail_tops' allocations */

/* The trail frames of unwindshapes: under trail_from_a and trail_from_b,
 * each of trail_tops' six allocations its own stack, ROUNDS blocks each.
 * A walk that took the last walk's outer frames where a word above them
 * had changed (the return address into trail_from_a, a saved rbp), where
 * the shared frame's CFA comes from another rbp, or at the wrong depth,
 * gives other frames. */
static void check_trail(const struct hp_capture *cap, const char *how)
{
	static const char *const from[2] = {"trail_from_a", "trail_from_b"};
	static const char *const moved[2] = {"trail_ma", "trail_mb"};
	const char *st[TRAIL_DEPTH + 16];
	char what[160];
	struct hpq_sum s;

	for (int f = 0; f < 2; f++) {
		for (int shape = 0; shape < TRAIL_TOPS; shape++) {
			int n = 0;

			st[n++] = "leaf";
			if (shape == 1 || shape >= 4)
				st[n++] = "pad_middle";
			if (shape >= 2) {
				st[n++] = "trail_mid";
				st[n++] = moved[shape % 2];
			}
			st[n++] = "trail_tops";
			for (int d = 0; d < TRAIL_DEPTH; d++)
				st[n++] = "trail_deep";
			st[n++] = from[f];
			st[n++] = "main";
			st[n] = NULL;
			s = hpq_match(cap, st);
			snprintf(what, sizeof what, "%s: trail shape %d under %s", how, shape, from[f]);
			expect_eq_u64(s.alloc_count, ROUNDS, what);
		}
	}
}

/* The rule figures at the end of the "unwind check:" line: the rules read
 * from .eh_frame and the largest table a thread grew. */
static int rules_line(const char *err, unsigned long *read, unsigned long *largest)
{
	const char *line = err ? strstr(err, "unwind check: ") : NULL;
	const char *rules = line ? strstr(line, "; ") : NULL;

	return rules && sscanf(rules, "; %lu rules read from .eh_frame, tables of up to %lu rules",
			       read, largest) == 2;
}

#define MANY_SITES 4096 /* as in manyrets.c */
#define MANY_ROUNDS 6

/* manyrets returns through 4,096 functions of its own, each called
 * MANY_ROUNDS times in turn: more rules than a table of 1,024 holds (as
 * gcc's cc1, 5,415, and clang, 11,734). The table grows to hold them, so
 * each rule is read from .eh_frame about once (4,101 return addresses,
 * and those a conflict of two sets evicts); with a table of 1,024 they
 * were read again every round: 24,577 walks read 24,000 rules and more.
 * The walks stay libunwind's. */
HP_TEST(unwind_rules_hold_a_big_programs_return_addresses)
{
	unsigned long walks = 0, cached = 0, differed = ~0UL, read = 0, largest = 0;
	char path[512];
	struct hp_capture *cap;
	struct hpq_sum s;
	char *err = hp_test_sh_out("cd %s && HEAPPROF_UNWIND_CHECK=1 HEAPPROF_OUTPUT=%s/many.hpf "
				   "LD_PRELOAD=%s/libheapprof.so %s/tests/programs/manyrets 2>&1 "
				   ">/dev/null",
				   hp_test_tmp(), hp_test_tmp(), hp_test_build(), hp_test_build());

	if (!expect_true(err != NULL, "manyrets runs under the recorder"))
		return;
	expect_true(check_line(err, &walks, &cached, &differed),
		    "the recorder reports its comparison at exit");
	expect_true(rules_line(err, &read, &largest), "and the rules it read");
	expect_eq_u64(differed, 0, "every walk is libunwind's");
	expect_eq_u64(cached, walks, "every walk by the rule cache");
	expect_true(walks >= MANY_SITES * MANY_ROUNDS, "a walk an allocation");
	printf("%lu walks, %lu rules read, tables of up to %lu rules\n", walks, read, largest);
	expect_true(read >= MANY_SITES, "each site's rule read once at least");
	expect_true(read < MANY_SITES * 3 / 2,
		    "rules read about once each, not again each round (the table holds them)");
	expect_true(largest >= 4 * MANY_SITES, "the table grew to hold 4,096 rules");
	expect_true(largest <= 65536, "and no further than its bound, 64 Ki rules (1 MiB)");
	free(err);
	snprintf(path, sizeof path, "%s/many.hpf", hp_test_tmp());
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "capture loads"))
		return;
	s = hpq_match(cap, STACK("site_0x000", "call_site", "main"));
	expect_eq_u64(s.alloc_count, MANY_ROUNDS, "the first site, every round");
	expect_eq_u64(s.alloc_bytes, MANY_ROUNDS * 16, "16 bytes each");
	s = hpq_match(cap, STACK("site_0xfff", "call_site", "main"));
	expect_eq_u64(s.alloc_count, MANY_ROUNDS, "the last site, every round");
	expect_eq_u64(s.alloc_bytes, MANY_ROUNDS * (16 + 0xfff % 61), "its bytes");
	s = hpq_match(cap, STACK("call_site", "main"));
	expect_eq_u64(s.alloc_count, 0, "no stack lost its site's frame");
	hpq_free(cap);
}

/* The crossed frames of unwindshapes: each of the eight walks its own
 * stack, ROUNDS blocks each. The walks remembered from one of them may
 * not be taken for another: (p, a) and (q, a) differ only at cross_p's
 * return address, after the word that told (p, a) from (p, b). */
static void check_crossed(const struct hp_capture *cap, const char *how)
{
	static const char *const mids[2] = {"cross_a", "cross_b"}, *const tops[2] = {"cross_p",
										  "cross_q"};
	char what[128];
	struct hpq_sum s;

	for (int inner = 0; inner < 2; inner++) {
		for (int top = 0; top < 2; top++) {
			for (int mid = 0; mid < 2; mid++) {
				if (inner)
					s = hpq_match(cap, STACK("leaf", "pad_middle", mids[mid],
								 tops[top], "cross_shape", "main"));
				else
					s = hpq_match(cap, STACK("leaf", mids[mid], tops[top],
								 "cross_shape", "main"));
				snprintf(what, sizeof what, "%s: %s%s under %s", how,
					 inner ? "pad_middle under " : "", mids[mid], tops[top]);
				expect_eq_u64(s.alloc_count, ROUNDS, what);
			}
		}
	}
}

#define RUNTIME_ROOTS 3 /* main's callers: __libc_start_call_main, __libc_start_main, _start */

/* Stacks deeper than max-depth keep their roots: recurse(d) has d + 2 +
 * runtime frames (leaf, d x recurse, main, and the runtime's frames the
 * walk reaches below it: RUNTIME_ROOTS with DWARF, fewer with frame
 * pointers, as libc has none), past MAX_DEPTH from d = MAX_DEPTH - 1 -
 * runtime to DEPTHS, one block a depth a round. Each of those walks gives
 * one stack: leaf, recurse up to the gap frame, the gap at MAX_DEPTH - 1 -
 * KEPT_ROOTS, then the outermost frames, recurse down to main and its
 * callers. The stack of the depth below is MAX_DEPTH frames whole. (The
 * threads recurse 5 deep at most.) */
static void check_roots(const struct hp_capture *cap, const char *how, uint32_t runtime)
{
	const struct hp_cap_snapshot *snap = &cap->snapshots[cap->nsnapshots - 1];
	const uint32_t gap = MAX_DEPTH - 1 - KEPT_ROOTS, main_at = MAX_DEPTH - 1 - runtime;
	uint64_t cut = 0, cut_bytes = 0, cut_stacks = 0, shaped = 0, whole = 0;
	char what[160];

	for (size_t id = 1; id < cap->nstacks; id++) {
		const struct hp_cap_stack *st = &cap->stacks[id];
		int has_gap = 0, ok;
		for (uint32_t f = 0; f < st->depth; f++)
			has_gap |= st->frames[f] == HP_FRAME_GAP;
		if (!has_gap) {
			if (st->depth == MAX_DEPTH && strcmp(hpq_symbol(cap, st->frames[1]), "recurse") == 0 &&
			    strcmp(hpq_symbol(cap, st->frames[main_at]), "main") == 0)
				for (size_t i = 0; i < snap->nbuckets; i++)
					if (snap->buckets[i].stack_id == id)
						whole += snap->buckets[i].alloc_count;
			continue;
		}
		cut_stacks++;
		ok = st->depth == MAX_DEPTH && st->frames[gap] == HP_FRAME_GAP &&
		     strcmp(hpq_symbol(cap, st->frames[0]), "leaf") == 0 &&
		     strcmp(hpq_symbol(cap, st->frames[main_at]), "main") == 0;
		for (uint32_t f = 1; ok && f < main_at; f++)
			ok = f == gap || strcmp(hpq_symbol(cap, st->frames[f]), "recurse") == 0;
		for (size_t i = 0; i < snap->nbuckets; i++) {
			if (snap->buckets[i].stack_id != id)
				continue;
			cut += snap->buckets[i].alloc_count;
			cut_bytes += snap->buckets[i].alloc_bytes;
			if (ok)
				shaped += snap->buckets[i].alloc_count;
		}
	}
	snprintf(what, sizeof what, "%s: one stack past max-depth (every depth from %u to %u)", how,
		 MAX_DEPTH - 1 - runtime, DEPTHS);
	expect_eq_u64(cut_stacks, 1, what);
	snprintf(what, sizeof what, "%s: its blocks, one a depth a round", how);
	expect_eq_u64(cut, ROUNDS * (DEPTHS - (MAX_DEPTH - 1 - runtime) + 1), what);
	expect_eq_u64(cut_bytes, 33 * cut, "33 bytes each");
	snprintf(what, sizeof what,
		 "%s: innermost frames, the gap frame at %u, recurse down to main at %u (the roots)",
		 how, gap, main_at);
	expect_eq_u64(shaped, cut, what);
	snprintf(what, sizeof what, "%s: the stack of depth %u, exactly max-depth, whole", how,
		 MAX_DEPTH - 2 - runtime);
	expect_eq_u64(whole, ROUNDS, what);
	if (shaped != cut || cut_stacks != 1)
		hpq_dump(cap);
}

/* The frame-pointer walk through the remembered walks: each checked
 * against a fresh walk (none differs), and the paths unwindshapes makes
 * with frame pointers (caller_a and caller_b at one rsp; moved_a and
 * moved_b, whose inner frames share one) counted apart. */
HP_TEST(unwind_fp_remembered_check_finds_no_difference)
{
	unsigned long walks = 0, cached = 0, differed = ~0UL;
	char path[512];
	struct hp_capture *cap;
	struct hpq_sum s;
	char *err = run_shapes("fpcheck", "HEAPPROF_UNWIND=fp HEAPPROF_UNWIND_CHECK=1", "");

	if (!expect_true(err != NULL, "unwindshapes runs under the recorder"))
		return;
	expect_true(check_line(err, &walks, &cached, &differed),
		    "the recorder reports its comparison at exit");
	expect_eq_u64(differed, 0, "every remembered walk is the frame-pointer walk");
	expect_eq_u64(walks, cached, "every walk went through the remembered walks");
	if (differed)
		printf("%s", err);
	free(err);
	err = run_shapes("fp", "HEAPPROF_UNWIND=fp", "");
	free(err);
	snprintf(path, sizeof path, "%s/fp.hpf", hp_test_tmp());
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "capture loads"))
		return;
	s = hpq_match(cap, STACK("leaf", "pad_middle", "caller_a", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "fp: caller_a");
	s = hpq_match(cap, STACK("leaf", "pad_middle", "caller_b", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "fp: caller_b, same frame size: its own stack");
	s = hpq_match(cap, STACK("leaf", "moved_mid", "moved_a", "moved_shape", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "fp: moved_a");
	s = hpq_match(cap, STACK("leaf", "moved_mid", "moved_b", "moved_shape", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "fp: moved_b, its own stack");
	check_crossed(cap, "fp");
	check_trail(cap, "fp");
	check_roots(cap, "fp", 1); /* main's caller: its return address */
	hpq_free(cap);
}

/* A thread loads, calls and unloads the plugin while the main thread
 * allocates: each dlclose empties every thread's table. */
HP_TEST(unwind_cache_check_across_dlclose)
{
	unsigned long walks = 0, cached = 0, differed = ~0UL;
	char *err = run_shapes("race", "HEAPPROF_UNWIND_CHECK=1", "race");

	if (!expect_true(err != NULL, "unwindshapes race runs under the recorder"))
		return;
	expect_true(check_line(err, &walks, &cached, &differed),
		    "the recorder reports its comparison at exit");
	expect_eq_u64(differed, 0, "no walk differs from libunwind's");
	expect_eq_u64(walks - cached, 4 * ROUNDS, "the same walks left to libunwind");
	expect_true(cached > 200 * 4, "the plugin's allocations walked by the cache");
	if (differed)
		printf("%s", err);
	free(err);
}

/* libshape1.so and libshape2.so loaded in turn at one address: the same
 * return address, other frames. Each dlclose empties the rule cache, so
 * both libraries' blocks have their whole stack. (libunwind 1.6's own
 * trace cache is never emptied: with it alone, libshape2's frame is
 * stepped with libshape1's rule, which loses swap_shape; that run is not
 * compared here.) */
HP_TEST(unwind_cache_emptied_by_dlclose)
{
	char path[512];
	struct hp_capture *cap;
	struct hpq_sum s;
	char *err = run_shapes("swap", "", "swap");

	free(err);
	snprintf(path, sizeof path, "%s/swap.hpf", hp_test_tmp());
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "capture loads"))
		return;
	s = hpq_match(cap, STACK("shape_alloc", "swap_shape", "main"));
	expect_eq_u64(s.alloc_count, 2 * ROUNDS, "libshape1 and libshape2, in turn, whole stacks");
	expect_eq_u64(s.alloc_bytes, ROUNDS * (77 + 78), "libshape1's and libshape2's bytes");
	hpq_free(cap);
}

/* The last snapshot's buckets as one sorted line each: figures and frames
 * (module+offset), without the stack ids (their order of interning), and
 * the lost lines. */
/* The buckets of the capture NAME.hpf, a line each with their frames as
 * module offsets, sorted; buckets whose lines then read alike merged (their
 * counts, bytes, at-peak and temporary figures added): the plugin is
 * dlopen'd again each round, and whether it lands where it was depends on
 * the run's other mappings, not on the unwinder (a round elsewhere is a
 * stack, so a bucket, of its own: "alloc=16" and "alloc=4" in one run,
 * "alloc=20" in the other). */
static char *buckets(const char *name)
{
	return hp_test_sh_out(
		"%s/heapprof inspect --stacks %s/%s.hpf | awk '"
		"/^buckets of snapshot/ {on = 1; next} /^damage/ {on = 0} /^  lost/ {print} "
		"on && $1 == \"bucket\" {if (l != \"\") print l; sub(/stack=[0-9]+ /, \"\"); l = $0; "
		"next} on {l = l \" \" $3} END {print l}' | awk '"
		"$1 != \"bucket\" {print; next} "
		"{k = $2; for (i = 11; i <= NF; i++) k = k \" \" $i; "
		"split($3, a, \"=\"); n[k, 1] += a[2]; n[k, 2] += $4; "
		"split($5, a, \"=\"); n[k, 3] += a[2]; n[k, 4] += $6; "
		"split($7, a, \"=\"); n[k, 5] += a[2]; n[k, 6] += $8; "
		"split($9, a, \"=\"); n[k, 7] += a[2]; n[k, 8] += $10; keys[k] = 1} "
		"END {for (k in keys) {f = index(k, \" \"); "
		"printf \"  bucket %%s alloc=%%d %%d free=%%d %%d peak=%%d %%d temp=%%d %%d%%s\\n\", "
		"substr(k, 1, f - 1), n[k, 1], n[k, 2], n[k, 3], n[k, 4], n[k, 5], n[k, 6], "
		"n[k, 7], n[k, 8], substr(k, f)}}' | sort",
		hp_test_build(), hp_test_tmp(), name);
}

static void check_paths(const char *name)
{
	char path[512];
	struct hp_capture *cap;
	struct hpq_sum s;

	snprintf(path, sizeof path, "%s/%s.hpf", hp_test_tmp(), name);
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "capture loads"))
		return;
	s = hpq_match(cap, STACK("leaf", "pad_middle", "caller_a", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "caller_a: one block a round");
	expect_eq_u64(s.alloc_bytes, ROUNDS * 18, "caller_a: 18 bytes each");
	s = hpq_match(cap, STACK("leaf", "pad_middle", "caller_b", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "caller_b, same frame size: its own stack");
	expect_eq_u64(s.alloc_bytes, ROUNDS * 19, "caller_b: 19 bytes each");
	s = hpq_match(cap, STACK("leaf", "pad_middle", "caller_b", "thread_main"));
	expect_eq_u64(s.alloc_count, THREADS * ROUNDS, "caller_b on the threads");
	s = hpq_match(cap, STACK("leaf", "recurse"));
	expect_eq_u64(s.alloc_count, ROUNDS * DEPTHS + THREADS * ROUNDS, "recursion: every depth");
	s = hpq_match(cap, STACK("leaf", "recurse", "recurse", "recurse", "recurse", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "recursion of depth 4 ends in main");
	s = hpq_match(cap, STACK("leaf", "nofp_inner", "nofp_outer", "main"));
	expect_eq_u64(s.alloc_count, 2 * ROUNDS, "frames without frame pointers");
	s = hpq_match(cap, STACK("leaf", "nofp_inner", "nofp_outer", "nofp_vla", "main"));
	expect_eq_u64(s.alloc_count, 2 * ROUNDS, "under a variable-length array");
	s = hpq_match(cap, STACK("leaf", "nofp_inner", "nofp_outer", "thread_main"));
	expect_eq_u64(s.alloc_count, 2 * THREADS * ROUNDS,
		      "frames without frame pointers, threads");
	s = hpq_match(cap, STACK("leaf", "pad_middle", "handler"));
	expect_eq_u64(s.alloc_count, 2 * ROUNDS, "in the signal handler, both stacks");
	expect_eq_u64(s.alloc_bytes, 2 * ROUNDS * 91, "in the signal handler: bytes");
	s = hpq_match(cap, STACK("leaf", "moved_mid", "moved_a", "moved_shape", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "moved_a: one block a round");
	s = hpq_match(cap, STACK("leaf", "moved_mid", "moved_b", "moved_shape", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS,
		      "moved_b, inner frames at moved_a's rsp, moved_mid elsewhere: its own stack");
	s = hpq_match(cap, STACK("leaf", "pad_middle", "nounwind_call", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "through a frame without unwind information");
	s = hpq_match(cap, STACK("leaf", "pad_middle", "cfaexpr_call", "main"));
	expect_eq_u64(s.alloc_count, ROUNDS, "through a CFA expression");
	s = hpq_match(cap, STACK("plugin_alloc", "plugin_shape", "main"));
	expect_eq_u64(s.alloc_count, 4 * ROUNDS, "in the plugin, loaded and unloaded each round");
	expect_eq_u64(s.alloc_bytes, 4 * ROUNDS * 444, "in the plugin: bytes");
	s = hpq_match(cap, STACK("leaf", "compare"));
	expect_true(s.alloc_count > 0, "under qsort's frames");
	check_trail(cap, name);
	check_roots(cap, name, RUNTIME_ROOTS);
	hpq_free(cap);
}

HP_TEST(unwind_cache_capture_equals_libunwind)
{
	char *a = run_shapes("cache", "HEAPPROF_UNWIND_CACHE=1", "");
	char *b = run_shapes("libunwind", "HEAPPROF_UNWIND_CACHE=0", "");
	char *ba = a ? buckets("cache") : NULL, *bb = b ? buckets("libunwind") : NULL;

	if (expect_true(ba && bb, "both runs and their inspection succeed")) {
		expect_true(strlen(ba) > 1000, "buckets listed");
		expect_str(ba, bb,
			   "the same buckets, frames, counts and bytes with either unwinder");
	}
	check_paths("cache");
	check_paths("libunwind");
	free(a);
	free(b);
	free(ba);
	free(bb);
}

/* --max-depth 3, below where roots are kept (roots.h: a quarter of 3 is
 * 0): a deeper stack is its 2 innermost frames and the gap frame, in every
 * unwinder alike (the check compares the cache's with libunwind's), and
 * every recursion is one stack: leaf, recurse, the gap. */
HP_TEST(unwind_small_max_depth_ends_in_the_gap)
{
	unsigned long walks = 0, cached = 0, differed = ~0UL;
	char path[512];
	struct hp_capture *cap;
	const struct hp_cap_snapshot *snap;
	uint64_t gapped = 0, wrong = 0;
	char *err = run_shapes("small", "HEAPPROF_MAX_DEPTH=3 HEAPPROF_UNWIND_CHECK=1", "");

	if (!expect_true(err != NULL, "unwindshapes runs under the recorder"))
		return;
	expect_true(check_line(err, &walks, &cached, &differed), "the recorder reports its check");
	expect_eq_u64(differed, 0, "every walk the cache finished is libunwind's");
	free(err);
	snprintf(path, sizeof path, "%s/small.hpf", hp_test_tmp());
	cap = hpq_load(path);
	if (!expect_true(cap != NULL, "capture loads"))
		return;
	snap = &cap->snapshots[cap->nsnapshots - 1];
	for (size_t i = 0; i < snap->nbuckets; i++) {
		const struct hp_cap_stack *st = &cap->stacks[snap->buckets[i].stack_id];
		int has_gap = 0;
		for (uint32_t f = 0; f < st->depth; f++)
			has_gap |= st->frames[f] == HP_FRAME_GAP;
		if (!has_gap)
			continue;
		if (st->depth != 3 || st->frames[2] != HP_FRAME_GAP)
			wrong += snap->buckets[i].alloc_count;
		else if (strcmp(hpq_symbol(cap, st->frames[0]), "leaf") == 0 &&
			 strcmp(hpq_symbol(cap, st->frames[1]), "recurse") == 0)
			gapped += snap->buckets[i].alloc_count;
	}
	expect_eq_u64(wrong, 0, "a gap frame only ever third and last");
	expect_eq_u64(gapped, ROUNDS * DEPTHS + THREADS * ROUNDS,
		      "every recursion's block under leaf, recurse, the gap");
	hpq_free(cap);
}

/* The deep stack in every view: the report's summary line and its JSON,
 * the folded stacks (the flame graph's), pprof as go tool pprof reads it:
 * 105 allocations of 33 bytes (recursions 60 to 80 deep, ROUNDS each),
 * their path main, recurse x 12 (the roots kept, under main's 3 runtime
 * callers), the gap, recurse x 46, leaf. */
HP_TEST(unwind_deep_stack_in_every_view)
{
	char path[512], folded[4096], *out, *err = run_shapes("deep", "", "");
	size_t at;
	int found = 0;

	free(err);
	snprintf(path, sizeof path, "%s/deep.hpf", hp_test_tmp());
	out = hp_test_sh_out("%s/heapprof report %s", hp_test_build(), path);
	expect_true(out && strstr(out, "\n  deep stacks     1 past --max-depth 64 (") &&
			    strstr(out, " of the peak): [frames cut]\n"),
		    "report: the summary counts the stack cut");
	free(out);
	out = hp_test_sh_out("%s/heapprof report --json %s", hp_test_build(), path);
	expect_true(out && strstr(out, "\"max_depth\": 64,\n  \"cut_stacks\": {\"count\": 1, "
					"\"values\": {\"alloc_objects\": 105, \"alloc_bytes\": 3465, "),
		    "report --json: the stack cut, 105 allocations, 3,465 bytes");
	free(out);
	at = (size_t)snprintf(folded, sizeof folded, "main;");
	for (int i = 0; i < KEPT_ROOTS - RUNTIME_ROOTS - 1; i++)
		at += (size_t)snprintf(folded + at, sizeof folded - at, "recurse;");
	at += (size_t)snprintf(folded + at, sizeof folded - at,
			       "[frames cut: stack deeper than --max-depth 64];");
	for (int i = 0; i < MAX_DEPTH - KEPT_ROOTS - 2; i++)
		at += (size_t)snprintf(folded + at, sizeof folded - at, "recurse;");
	snprintf(folded + at, sizeof folded - at, "leaf 105\n");
	out = hp_test_sh_out("%s/heapprof export --format folded --metric allocations -o - %s",
			     hp_test_build(), path);
	expect_true(out && strstr(out, folded), "folded: main at the root, the gap, leaf at the tip");
	if (out && !strstr(out, folded))
		printf("expected %s", folded);
	free(out);
	if (!hp_test_need_go())
		return;
	out = hp_test_sh_out("%s/heapprof export --format pprof -o %s/deep.pb.gz %s && "
			     "go tool pprof -sample_index=alloc_objects -top %s/deep.pb.gz 2>&1",
			     hp_test_build(), hp_test_tmp(), path, hp_test_tmp());
	expect_eq_u64((uint64_t)hp_test_pprof_column(out ? out : "",
						     "[frames cut: stack deeper than --max-depth 64]",
						     1, &found),
		      105, "go tool pprof: the gap frame, 105 allocations under it");
	expect_true(found, "go tool pprof lists the gap frame");
	free(out);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
