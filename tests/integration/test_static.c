/*
 * test_static.c - the static recorder (libheapprof.a, heapprof-static.pc):
 * tests/programs/known.c linked with
 *
 *     gcc -static ... $(pkg-config --static --libs heapprof-static)
 *
 * through the build tree's .pc file, then run with HEAPPROF_OUTPUT alone
 * and under heapprof run, in both unwinding modes: the figures known.h
 * gives, and per stack exactly what the dynamic recorder records of the
 * same program. heapprof run on a static program without the recorder
 * says so in one line. Fork, exec, constructors and destructors of static
 * programs, as test_lifecycle checks them for dynamic ones.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"
#include "known_expect.h"

/* The flags the Makefile builds test programs with (TEST_PROG_CFLAGS). */
#define PROG_CFLAGS "-O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -pthread"

/* Links tests/programs/NAME.c (or NAME.cpp, with c++ and the flags the
 * Makefile adds for C++) statically with the recorder, through the
 * build tree's heapprof-static.pc, into the scratch directory, once per
 * test binary. Returns its path, or NULL after a failed expectation. */
static const char *static_build(const char *name)
{
	static char path[8][4400];
	static int n;
	char want[4400];
	int st;

	snprintf(want, sizeof want, "%s/%s-static", hp_test_tmp(), name);
	for (int i = 0; i < n; i++)
		if (strcmp(path[i], want) == 0)
			return path[i];
	st = hp_test_sh("PKG_CONFIG_PATH=%s/pkgconfig; export PKG_CONFIG_PATH; "
			"if test -f tests/programs/%s.cpp; then "
			"c++ " PROG_CFLAGS " -std=c++17 -fsized-deallocation -static -o %s "
			"tests/programs/%s.cpp $(pkg-config --static --libs heapprof-static); else "
			"cc " PROG_CFLAGS " -static -o %s tests/programs/%s.c "
			"$(pkg-config --static --libs heapprof-static); fi >%s.log 2>&1",
			hp_test_build(), name, want, name, want, name, want);
	if (!expect_eq_u64(st, 0, "cc -static $(pkg-config --static --libs heapprof-static)")) {
		hp_test_sh("tail -n 20 %s.log >&2", want);
		return NULL;
	}
	expect_eq_u64(hp_test_sh("test ! -s %s.log || { cat %s.log >&2; exit 1; }", want, want), 0,
		      "the static link says nothing (no warning about dlopen in a static program)");
	expect_eq_u64(hp_test_sh("file -L %s | grep -q 'statically linked'", want), 0,
		      "the program is statically linked");
	snprintf(path[n], sizeof path[n], "%s", want);
	return path[n++];
}

/* The capture of the static known, run as the issue shows: with
 * HEAPPROF_OUTPUT (and HEAPPROF_UNWIND) alone, or under heapprof run. */
static struct hp_capture *run_static(const char *mode, int under_run)
{
	const char *prog = static_build("known");
	char out[4600];
	int st;

	if (!prog)
		return NULL;
	snprintf(out, sizeof out, "%s/static-%s-%d.hpf", hp_test_tmp(), mode, under_run);
	hp_test_sh("rm -f %s", out);
	if (under_run)
		st = hp_test_sh("%s/heapprof run -q --unwind %s -o %s -- %s", hp_test_build(), mode,
				out, prog);
	else
		st = hp_test_sh("HEAPPROF_UNWIND=%s HEAPPROF_OUTPUT=%s %s", mode, out, prog);
	if (!expect_eq_u64(st, 0, "the static known exits 0 (the allocator's answers kept)"))
		return NULL;
	return hpq_load(out);
}

static struct hp_capture *run_dynamic(const char *mode)
{
	char out[4600];

	snprintf(out, sizeof out, "%s/dynamic-%s.hpf", hp_test_tmp(), mode);
	if (!expect_eq_u64(hp_test_sh("%s/heapprof run -q --unwind %s -o %s -- %s/tests/programs/known",
				      hp_test_build(), mode, out, hp_test_build()),
			   0, "the dynamic known exits 0"))
		return NULL;
	return hpq_load(out);
}

/* Every stack of known.c, compared field by field between the two. */
static void same_as_dynamic(struct hp_capture *st, struct hp_capture *dyn)
{
	const char *const *const stacks[] = {
		STACK("leak_leaf", "leak_path", "main"), STACK("peak_leaf", "main"),
		STACK("churn_leaf", "main"),             STACK("calloc_leaf", "main"),
		STACK("realloc_leaf", "main"),           STACK("posix_memalign_leaf", "main"),
		STACK("aligned_alloc_leaf", "main"),     STACK("memalign_leaf", "main"),
		STACK("valloc_leaf", "main"),            STACK("pvalloc_leaf", "main"),
		STACK("thread_leaf", "thread_main"),     STACK("failures", "main"),
	};

	if (!st || !dyn)
		return;
	for (size_t i = 0; i < sizeof stacks / sizeof *stacks; i++) {
		struct hpq_sum a = hpq_match(st, stacks[i]), b = hpq_match(dyn, stacks[i]);
		char why[160];
#define SAME(f)                                                                              \
	snprintf(why, sizeof why, "%s: " #f " as the dynamic recorder's", stacks[i][0]);     \
	expect_eq_u64(a.f, b.f, why)
		SAME(alloc_count);
		SAME(alloc_bytes);
		SAME(free_count);
		SAME(free_bytes);
		SAME(peak_count);
		SAME(peak_bytes);
		SAME(temp_count);
		SAME(temp_bytes);
#undef SAME
		snprintf(why, sizeof why, "%s: recorded at all", stacks[i][0]);
		expect_true(a.alloc_count > 0, why);
	}
	expect_eq_u64(hp_capture_last(st)->peak_bytes, hp_capture_last(dyn)->peak_bytes,
		      "global peak as the dynamic recorder's");
}

static void known_static(const char *mode, int under_run)
{
	struct hp_capture *st = run_static(mode, under_run), *dyn;

	check_known(st);
	dyn = run_dynamic(mode);
	same_as_dynamic(st, dyn);
	hpq_free(st);
	hpq_free(dyn);
}

HP_TEST(static_known_dwarf)
{
	known_static("dwarf", 0);
}

HP_TEST(static_known_fp)
{
	known_static("fp", 0);
}

HP_TEST(static_known_heapprof_run)
{
	known_static("dwarf", 1);
}

HP_TEST(static_without_recorder)
{
	const char *tmp = hp_test_tmp();
	char *out;
	int st;

	st = hp_test_sh("cc -static -o %s/plain tests/programs/known.c -pthread", tmp);
	if (!expect_eq_u64(st, 0, "a static known without the recorder links"))
		return;
	hp_test_sh("rm -f %s/plain.hpf", tmp);
	out = hp_test_sh_out("%s/heapprof run -o %s/plain.hpf -- %s/plain 2>&1; echo \"status $?\"",
			     hp_test_build(), tmp, tmp);
	if (expect_true(out != NULL, "heapprof run answers")) {
		char want[4600];
		snprintf(want, sizeof want,
			 "heapprof: run: cannot record %s/plain: statically linked without the "
			 "recorder: link it with pkg-config heapprof-static, or use a dynamic "
			 "build\nstatus 126\n",
			 tmp);
		expect_str(out, want, "one line, exit 126, the program not run");
	}
	free(out);
	expect_eq_u64(hp_test_sh("test ! -e %s/plain.hpf", tmp), 0, "no empty capture left");
}

/* heapprof run -q OPTS -o DIR/out.hpf -- PROG ARGS in a fresh DIR. */
static int run_in(const char *dir, const char *opts, const char *prog, const char *args)
{
	hp_test_sh("rm -rf %s && mkdir -p %s", dir, dir);
	return hp_test_sh("timeout 120 %s/heapprof run -q %s -o %s/out.hpf -- %s %s >%s/stdout",
			  hp_test_build(), opts, dir, prog, args, dir);
}

/* test_lifecycle's fork_with_follow and fork_exec_with_follow, static: a
 * static forker whose child execs a static execd. */
HP_TEST(static_fork_exec_follow)
{
	const char *forker = static_build("forker"), *execd = static_build("execd");
	char dir[4400], path[4600];
	struct hp_capture *cap;
	glob_t g;

	if (!forker || !execd)
		return;
	snprintf(dir, sizeof dir, "%s/static-forker", hp_test_tmp());
	expect_eq_u64(run_in(dir, "--follow-fork", forker, ""), 0, "fork: exit status");
	snprintf(path, sizeof path, "%s/out.hpf", dir);
	if ((cap = hpq_load(path))) {
		expect_eq_u64(hpq_match(cap, STACK("parent_before", "main")).alloc_count, 3,
			      "parent: before fork");
		expect_eq_u64(hpq_match(cap, STACK("parent_after", "main")).alloc_count, 4,
			      "parent: after fork");
		expect_eq_u64(hpq_match(cap, STACK("child_work", "main")).alloc_count, 0,
			      "parent: none of the child's");
		hpq_free(cap);
	}
	snprintf(path, sizeof path, "%s/out.*.hpf", dir);
	if (expect_eq_u64(glob(path, 0, NULL, &g), 0, "the child writes out.<pid>.hpf") &&
	    expect_eq_u64(g.gl_pathc, 1, "one child capture")) {
		if ((cap = hpq_load(g.gl_pathv[0]))) {
			expect_eq_u64(hpq_match(cap, STACK("child_work", "main")).alloc_count, 5,
				      "child: its own allocations");
			expect_eq_u64(hpq_match(cap, STACK("parent_before", "main")).alloc_count, 3,
				      "child: inherits the heap allocated before the fork");
			expect_true(cap->flags & HP_META_FORKED_CHILD, "child: marked as forked");
			hpq_free(cap);
		}
		globfree(&g);
	}

	expect_eq_u64(run_in(dir, "--follow-fork", forker, execd), 0, "fork+exec: exit status");
	if (expect_eq_u64(glob(path, 0, NULL, &g), 0, "a child capture") &&
	    expect_eq_u64(g.gl_pathc, 1, "one child capture: the exec'd program's")) {
		if ((cap = hpq_load(g.gl_pathv[0]))) {
			expect_eq_u64(hpq_match(cap, STACK("execd_work", "main")).alloc_count, 6,
				      "exec'd static program: its allocations");
			expect_true(strstr(cap->program, "execd") != NULL, "exec'd program: its name");
			hpq_free(cap);
		}
		globfree(&g);
	}
}

/* Constructors, destructors and atexit handlers of a static program: the
 * recorder's constructor runs before the program's. */
HP_TEST(static_constructors_and_destructors)
{
	const char *prog = static_build("ctor_dtor");
	char dir[4400], path[4600];
	struct hp_capture *cap;

	if (!prog)
		return;
	snprintf(dir, sizeof dir, "%s/static-ctor", hp_test_tmp());
	expect_eq_u64(run_in(dir, "", prog, ""), 0, "exit status");
	snprintf(path, sizeof path, "%s/out.hpf", dir);
	if (!(cap = hpq_load(path)))
		return;
	expect_eq_u64(hpq_match(cap, STACK("ctor_alloc")).alloc_bytes, 3 * 111,
		      "constructor before main: bytes");
	expect_eq_u64(hpq_match(cap, STACK("dtor_alloc")).alloc_bytes, 2 * 222,
		      "destructor after main: bytes");
	expect_eq_u64(hpq_match(cap, STACK("atexit_alloc")).alloc_bytes, 333, "atexit handler: bytes");
	hpq_free(cap);
}

/* Every C++ operator (tests/programs/cxx_all.cpp, test_cxx's program),
 * linked statically with libstdc++.a: per function, exactly the dynamic
 * recorder's figures. The link itself is part of the test: libunwind.a's
 * _Unwind_Resume must not collide with libgcc_eh.a's. */
HP_TEST(static_cxx_every_operator)
{
	static const char *const fns[] = {
		"new_plain",           "new_array",         "new_nothrow",
		"new_array_nothrow",   "new_aligned",       "new_aligned_array",
		"new_aligned_nothrow", "new_aligned_array_nothrow", "explicit_operators",
		"new_fails",           "after_exception",
	};
	const char *prog = static_build("cxx_all");
	char st_out[4600], dyn_out[4600];
	struct hp_capture *st, *dyn;

	if (!prog)
		return;
	snprintf(st_out, sizeof st_out, "%s/static-cxx.hpf", hp_test_tmp());
	snprintf(dyn_out, sizeof dyn_out, "%s/dynamic-cxx.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s", hp_test_build(), st_out, prog), 0,
		      "the static cxx_all exits 0 (bad_alloc thrown and caught through the recorder)");
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/cxx_all",
				 hp_test_build(), dyn_out, hp_test_build()),
		      0, "the dynamic cxx_all exits 0");
	st = hpq_load(st_out);
	dyn = hpq_load(dyn_out);
	if (st && dyn) {
		for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
			struct hpq_sum a = hpq_match(st, STACK(fns[i], "main"));
			struct hpq_sum b = hpq_match(dyn, STACK(fns[i], "main"));
			char why[160];
			snprintf(why, sizeof why, "%s: allocations as the dynamic recorder's", fns[i]);
			expect_eq_u64(a.alloc_count, b.alloc_count, why);
			snprintf(why, sizeof why, "%s: bytes as the dynamic recorder's", fns[i]);
			expect_eq_u64(a.alloc_bytes, b.alloc_bytes, why);
			snprintf(why, sizeof why, "%s: frees as the dynamic recorder's", fns[i]);
			expect_eq_u64(a.free_count, b.free_count, why);
			snprintf(why, sizeof why, "%s: freed bytes as the dynamic recorder's", fns[i]);
			expect_eq_u64(a.free_bytes, b.free_bytes, why);
		}
		expect_true(hpq_match(st, STACK("new_plain", "main")).alloc_count > 0,
			    "operator new recorded at all");
	}
	hpq_free(st);
	hpq_free(dyn);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
