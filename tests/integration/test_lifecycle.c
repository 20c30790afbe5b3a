/*
 * test_lifecycle.c - heapprof run across a process's life: allocations
 * before main and after it, fork with and without --follow-fork, exec,
 * dlopen/dlclose, threads, a signal handler that allocates, and deaths by
 * signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../harness/harness.h"
#include "../harness/tools.h"
#include "../harness/query.h"

#define STACK(...) ((const char *const[]){__VA_ARGS__, NULL})

static char out[512];

/* Runs a test program under heapprof with extra options into a fresh
 * directory; returns heapprof's exit status. */
static int run(const char *name, const char *opts, const char *args)
{
	hp_test_sh("rm -rf %s/%s.dir && mkdir -p %s/%s.dir", hp_test_tmp(), name, hp_test_tmp(), name);
	snprintf(out, sizeof out, "%s/%s.dir/out.hpf", hp_test_tmp(), name);
	return hp_test_sh("timeout 120 %s/heapprof run -q %s -o %s -- %s/tests/programs/%s %s "
			  "> %s/%s.dir/stdout",
			  hp_test_build(), opts, out, hp_test_build(), name, args, hp_test_tmp(), name);
}

/* The captures in a run's directory other than out.hpf. */
static size_t others(const char *name, glob_t *g)
{
	char pattern[600];
	snprintf(pattern, sizeof pattern, "%s/%s.dir/out.*.hpf", hp_test_tmp(), name);
	if (glob(pattern, 0, NULL, g) != 0)
		return 0;
	return g->gl_pathc;
}

HP_TEST(constructors_and_destructors)
{
	struct hp_capture *cap;
	struct hpq_sum s;

	expect_eq_u64(run("ctor_dtor", "", ""), 0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	s = hpq_match(cap, STACK("ctor_alloc"));
	expect_eq_u64(s.alloc_count, 3, "constructor before main: objects");
	expect_eq_u64(s.alloc_bytes, 3 * 111, "constructor: bytes");
	s = hpq_match(cap, STACK("dtor_alloc"));
	expect_eq_u64(s.alloc_count, 2, "destructor after main: objects");
	expect_eq_u64(s.alloc_bytes, 2 * 222, "destructor: bytes");
	s = hpq_match(cap, STACK("atexit_alloc"));
	expect_eq_u64(s.alloc_bytes, 333, "atexit handler: bytes");
	hpq_free(cap);
}

HP_TEST(threads_exact)
{
	struct hp_capture *cap;
	struct hpq_sum s;
	uint64_t bytes = 0;

	expect_eq_u64(run("threads", "", ""), 0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	for (int i = 0; i < 125000; i++)
		bytes += (uint64_t)(i % 64) + 1;
	s = hpq_match(cap, STACK("thread_alloc", "thread_main"));
	expect_eq_u64(s.alloc_count, 1000000, "8 threads: objects allocated");
	expect_eq_u64(s.alloc_bytes, 8 * bytes, "8 threads: bytes allocated");
	expect_eq_u64(s.free_count, 1000000, "8 threads: objects freed");
	expect_eq_u64(s.free_bytes, 8 * bytes, "8 threads: bytes freed");
	expect_true(hp_capture_last(cap)->lost_count[HP_LOST_UNKNOWN_FREE] == 0,
		    "no free went unmatched");
	hpq_free(cap);
}

/* Threads count on credit far from the peak (aggregate.c); the peak they
 * reach holding still is bytes allocated, to the byte: every bucket's
 * bytes at the peak add up to it, and the two sites held then count all
 * their blocks there. Five runs: the threads' interleaving differs in
 * each. */
HP_TEST(threads_peak_is_exact)
{
	for (int run_no = 0; run_no < 5; run_no++) {
		struct hp_capture *cap;
		const struct hp_cap_snapshot *last;
		struct hpq_sum all, held, rise, churn;

		if (!expect_eq_u64(run("credit", "", ""), 0, "exit status") ||
		    !(cap = hpq_load(out)))
			return;
		last = hp_capture_last(cap);
		all = hpq_total(cap);
		held = hpq_match(cap, STACK("credit_held_alloc", "thread_main"));
		rise = hpq_match(cap, STACK("credit_rise_alloc", "thread_main"));
		churn = hpq_match(cap, STACK("credit_churn_alloc", "churn"));
		expect_eq_u64(churn.alloc_count, 2 * 2 * (100000 + 512), "churn: objects allocated");
		expect_eq_u64(churn.free_count, churn.alloc_count, "churn: every object freed");
		expect_eq_u64(held.peak_bytes, 100 * 1000, "held at the peak: 100 x 1000 bytes");
		expect_eq_u64(rise.peak_bytes, 300 * 1000, "rise at the peak: 300 x 1000 bytes");
		expect_eq_u64(last->peak_bytes, all.peak_bytes,
			      "the peak is the buckets' bytes at the peak (no credit in it)");
		expect_true(churn.peak_count <= 2 * 128 && churn.peak_bytes <= 2 * 128 * 271,
			    "churn at the peak: at most the two windows");
		expect_true(hp_capture_last(cap)->lost_count[HP_LOST_UNKNOWN_FREE] == 0,
			    "no free went unmatched");
		hpq_free(cap);
	}
}

/* The same on 8 threads: every allocation and free counted (2 x 100,512
 * of each a thread at the churn's site), and the peak, which the other
 * seven threads' held blocks and thread 1's rise make (at most 8 x 128
 * churn blocks with them), exact to the byte: the buckets at the peak
 * add up to it. Five runs. */
HP_TEST(threads_peak_is_exact_on_8_threads)
{
	for (int run_no = 0; run_no < 5; run_no++) {
		struct hp_capture *cap;
		const struct hp_cap_snapshot *last;
		struct hpq_sum all, held, rise, churn;

		if (!expect_eq_u64(run("credit", "", "8"), 0, "exit status") ||
		    !(cap = hpq_load(out)))
			return;
		last = hp_capture_last(cap);
		all = hpq_total(cap);
		held = hpq_match(cap, STACK("credit_held_alloc", "thread_main"));
		rise = hpq_match(cap, STACK("credit_rise_alloc", "thread_main"));
		churn = hpq_match(cap, STACK("credit_churn_alloc", "churn"));
		expect_eq_u64(churn.alloc_count, 8 * 2 * (100000 + 512), "churn: objects allocated");
		expect_eq_u64(churn.free_count, churn.alloc_count, "churn: every object freed");
		expect_eq_u64(churn.alloc_bytes, churn.free_bytes, "churn: every byte freed");
		expect_eq_u64(held.alloc_count, 7 * 100, "held: 7 threads x 100 objects");
		expect_eq_u64(held.free_bytes, 7 * 100 * 1000, "held: every byte freed");
		expect_eq_u64(held.peak_bytes, 7 * 100 * 1000, "held at the peak: 7 x 100 x 1000 bytes");
		expect_eq_u64(rise.peak_bytes, 300 * 1000, "rise at the peak: 300 x 1000 bytes");
		expect_eq_u64(last->peak_bytes, all.peak_bytes,
			      "the peak is the buckets' bytes at the peak (no credit in it)");
		expect_true(churn.peak_count <= 8 * 128 && churn.peak_bytes <= 8 * 128 * 271,
			    "churn at the peak: at most the eight windows");
		expect_true(last->lost_count[HP_LOST_UNKNOWN_FREE] == 0, "no free went unmatched");
		hpq_free(cap);
	}
}

/* free keeps errno when its slow path writes a snapshot and the writer's
 * system calls fail: the program closed the capture (errnofree.c). The
 * free's slow path does not save errno (recorder.c); the tick that
 * writes does. Fails with the save taken out of hp_trigger_tick_due:
 * "free 11 of round 0 changed errno to 9" (EBADF, the capture's fstat). */
HP_TEST(free_keeps_errno_when_it_writes)
{
	expect_eq_u64(run("errnofree", "--interval 1", ""), 0,
		      "exit status (3: a free changed errno)");
}

/* malloc, calloc, realloc and free keep errno through every rare path of
 * a recorded allocation (errnomalloc.c): new stacks, grown tables, frames
 * without unwind tables (libunwind's walk), snapshots and event-log
 * flushes written after the program closed the capture. A recorded
 * allocation's common path does not save errno (interpose.c); what it
 * calls that can set it does. Fails with the save taken out of
 * hp_unwind_fallback: "malloc (call 3001) changed errno to 0" (libunwind's
 * readability check); out of hp_events_slow: "malloc (call 66201)
 * changed errno to 9" (EBADF, the writer's fstat of the closed capture). */
HP_TEST(allocations_keep_errno)
{
	expect_eq_u64(run("errnomalloc", "", ""), 0, "dwarf: exit status (3: errno changed)");
	expect_eq_u64(run("errnomalloc", "--events --interval 1", ""), 0,
		      "--events --interval 1: exit status (3: errno changed)");
	expect_eq_u64(run("errnomalloc", "--unwind fp", ""), 0,
		      "fp: exit status (3: errno changed)");
}

/* A threaded parent forks while its threads hold credit: the followed
 * child, which frees main's 50,000-byte block and allocates 777 bytes,
 * peaks at what it inherited, not a byte of the parent threads' credit
 * more (credit_reset in the child). */
HP_TEST(fork_of_threads_peak_is_exact)
{
	struct hp_capture *cap;
	const struct hp_cap_snapshot *last;
	glob_t g;

	expect_eq_u64(run("forkcredit", "--follow-fork", ""), 0, "exit status");
	if (!expect_eq_u64(others("forkcredit", &g), 1, "the child writes out.<pid>.hpf"))
		return;
	if ((cap = hpq_load(g.gl_pathv[0]))) {
		struct hpq_sum all = hpq_total(cap);
		uint64_t in_use = all.alloc_bytes - all.free_bytes;

		last = hp_capture_last(cap);
		expect_true(in_use > 777 + 128 * 16, "child: inherited the threads' blocks and 777");
		expect_eq_u64(last->peak_bytes, in_use - 777 + 50000,
			      "child: its peak is the bytes it inherited (main's block among them)");
		expect_eq_u64(all.peak_bytes, last->peak_bytes,
			      "child: the buckets at the peak add up to it");
		hpq_free(cap);
	}
	globfree(&g);
}

static void check_parent(struct hp_capture *cap)
{
	expect_eq_u64(hpq_match(cap, STACK("parent_before", "main")).alloc_count, 3,
		      "parent: before fork");
	expect_eq_u64(hpq_match(cap, STACK("parent_after", "main")).alloc_count, 4,
		      "parent: after fork");
	expect_eq_u64(hpq_match(cap, STACK("child_work", "main")).alloc_count, 0,
		      "parent: none of the child's");
}

HP_TEST(fork_without_follow)
{
	struct hp_capture *cap;
	glob_t g;

	expect_eq_u64(run("forker", "", ""), 0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	check_parent(cap);
	expect_eq_u64(others("forker", &g), 0, "the child writes no capture");
	hpq_free(cap);
}

HP_TEST(fork_with_follow)
{
	struct hp_capture *cap;
	glob_t g;

	expect_eq_u64(run("forker", "--follow-fork", ""), 0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	check_parent(cap);
	hpq_free(cap);
	if (!expect_eq_u64(others("forker", &g), 1, "the child writes out.<pid>.hpf"))
		return;
	if ((cap = hpq_load(g.gl_pathv[0]))) {
		expect_eq_u64(hpq_match(cap, STACK("child_work", "main")).alloc_count, 5,
			      "child: its own allocations");
		expect_eq_u64(hpq_match(cap, STACK("parent_before", "main")).alloc_count, 3,
			      "child: inherits the heap allocated before the fork");
		expect_eq_u64(hpq_match(cap, STACK("parent_after", "main")).alloc_count, 0,
			      "child: none of the parent's later ones");
		expect_true(cap->flags & HP_META_FORKED_CHILD, "child: marked as forked");
		hpq_free(cap);
	}
	globfree(&g);
}

HP_TEST(fork_exec_with_follow)
{
	char execd[512];
	struct hp_capture *cap;
	glob_t g;

	snprintf(execd, sizeof execd, "%s/tests/programs/execd", hp_test_build());
	expect_eq_u64(run("forker", "--follow-fork", execd), 0, "exit status");
	if (!expect_eq_u64(others("forker", &g), 1,
			   "one child capture: the exec'd program's (the fork only exec'd)"))
		return;
	if ((cap = hpq_load(g.gl_pathv[0]))) {
		expect_eq_u64(hpq_match(cap, STACK("execd_work", "main")).alloc_count, 6,
			      "exec'd program: its allocations");
		expect_true(strstr(cap->program, "execd") != NULL, "exec'd program: its name");
		expect_true(cap->has_symbols, "its symbols embedded, as the run's own capture's");
		hpq_free(cap);
	}
	globfree(&g);
}

HP_TEST(follow_fork_names_every_file_written)
{
	/* Without -q: one line per file, the child's named after the program
	 * it ran. */
	char execd[512];

	snprintf(execd, sizeof execd, "%s/tests/programs/execd", hp_test_build());
	hp_test_sh("rm -rf %s/named.dir && mkdir -p %s/named.dir", hp_test_tmp(), hp_test_tmp());
	expect_eq_u64(hp_test_sh("cd %s/named.dir && %s/heapprof run --follow-fork -o out.hpf -- "
				 "%s/tests/programs/forker %s 2> err",
				 hp_test_tmp(), hp_test_build(), hp_test_build(), execd),
		      0, "exit status");
	expect_eq_u64(hp_test_sh("grep -q 'wrote .*/out.hpf: ' %s/named.dir/err", hp_test_tmp()), 0,
		      "the run's own capture named");
	expect_eq_u64(hp_test_sh("grep -q 'wrote .*/out\\.[0-9]*\\.hpf: execd, pid [0-9]' "
				 "%s/named.dir/err",
				 hp_test_tmp()),
		      0, "the exec'd child's capture named after its program");
}

/* Issue 23, item 8: every recorded process is named at the run's end
 * with what became of it, also one that wrote nothing: a child killed by
 * SIGKILL (no handler runs), by SIGPIPE (its fatal snapshot says so), or
 * that exec'd a program the recorder cannot enter. */
HP_TEST(follow_fork_names_every_process_and_its_end)
{
	const char *t = hp_test_tmp(), *b = hp_test_build();

	hp_test_sh("rm -rf %s/fates.dir && mkdir -p %s/fates.dir", t, t);
	expect_eq_u64(hp_test_sh("cd %s/fates.dir && %s/heapprof run --follow-fork -o k.hpf -- "
				 "%s/tests/programs/forker SIGKILL > out 2> err", t, b, b),
		      1, "SIGKILL'd child: the parent's exit status, as bare");
	expect_eq_u64(hp_test_sh("cd %s/fates.dir && grep -qx \"heapprof: pid $(cat out) (forker) "
				 "wrote no capture: it was killed by a signal no handler sees "
				 "(SIGKILL, the OOM killer)\" err", t), 0,
		      "the SIGKILL'd child named, by its pid");
	expect_eq_u64(hp_test_sh("cd %s/fates.dir && %s/heapprof run --follow-fork -o p.hpf -- "
				 "%s/tests/programs/forker SIGPIPE > out 2> err", t, b, b),
		      1, "SIGPIPE'd child: the parent's exit status");
	expect_eq_u64(hp_test_sh("cd %s/fates.dir && grep -qx \"heapprof: wrote .*/p\\.$(cat "
				 "out)\\.hpf: forker, pid $(cat out), killed by signal 13 (SIGPIPE)\" "
				 "err && ! grep -q 'wrote no capture' err", t), 0,
		      "the SIGPIPE'd child's capture and its end");
	/* a static program: LD_PRELOAD does not enter it */
	if (expect_eq_u64(hp_test_sh("cd %s/fates.dir && printf 'int main(void){return 0;}' | "
				     "cc -static -x c -o static_true -", t), 0,
			  "cc -static (libc6-dev's libc.a)")) {
		expect_eq_u64(hp_test_sh("cd %s/fates.dir && %s/heapprof run --follow-fork -o e.hpf "
					 "-- %s/tests/programs/forker ./static_true > out 2> err",
					 t, b, b), 0, "exit status");
		expect_eq_u64(hp_test_sh("cd %s/fates.dir && grep -qx \"heapprof: pid $(cat out) "
					 "(forker) wrote no capture: it exec'd a program the recorder "
					 "could not enter (static, or setuid)\" err", t), 0,
			      "the child that exec'd a static program named");
	}
	expect_eq_u64(hp_test_sh("cd %s/fates.dir && %s/heapprof run --follow-fork -o x.hpf -- "
				 "%s/tests/programs/forker %s/tests/programs/execd > out 2> err && grep "
				 "-q 'wrote .*/x\\.[0-9]*\\.hpf: execd, pid [0-9]*, exited$' err && ! "
				 "grep -q 'wrote no capture' err && ! ls /tmp/heapprof-roster.* "
				 "2>/dev/null | grep -q .", t, b, b, b), 0,
		      "an exec'd child that exits: 'exited', no roster left behind");
}

HP_TEST(fork_exec_without_follow)
{
	char execd[512];
	glob_t g;

	snprintf(execd, sizeof execd, "%s/tests/programs/execd", hp_test_build());
	expect_eq_u64(run("forker", "", execd), 0, "exit status");
	expect_eq_u64(others("forker", &g), 0, "an exec'd program is not recorded");
}

HP_TEST(wrapper_script_execs_the_program)
{
	/* `heapprof run ./wrapper.sh` where the script execs the program: the
	 * program, keeping the pid, is the one recorded in the named file. */
	char script[8192];
	struct hp_capture *cap;
	glob_t g;

	hp_test_sh("rm -rf %s/wrapper.dir && mkdir -p %s/wrapper.dir", hp_test_tmp(), hp_test_tmp());
	snprintf(script, sizeof script, "%s/wrapper.dir/wrapper.sh", hp_test_tmp());
	hp_test_sh("printf '#!/bin/sh\\nexec %s/tests/programs/execd\\n' > %s && chmod +x %s",
		   hp_test_build(), script, script);
	snprintf(out, sizeof out, "%s/wrapper.dir/out.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s", hp_test_build(), out, script), 0,
		      "exit status");
	if ((cap = hpq_load(out))) {
		expect_eq_u64(hpq_match(cap, STACK("execd_work", "main")).alloc_count, 6,
			      "the exec'd program's allocations, in the named file");
		hpq_free(cap);
	}
	expect_eq_u64(others("wrapper", &g), 0, "no other capture");
}

HP_TEST(dlopen_dlclose)
{
	char lib[512];
	struct hp_capture *cap;
	int unloaded = 0;

	snprintf(lib, sizeof lib, "%s/tests/programs/libplugin.so", hp_test_build());
	expect_eq_u64(run("dlopener", "", lib), 0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	struct hpq_sum s = hpq_match(cap, STACK("plugin_alloc", "main"));
	expect_eq_u64(s.alloc_count, 4, "allocations in the dlclose'd library");
	expect_eq_u64(s.alloc_bytes, 4 * 444, "their bytes");
	for (size_t i = 0; i < cap->nmodules; i++)
		if (strstr(cap->modules[i].path, "libplugin.so") && cap->modules[i].unloaded)
			unloaded = 1;
	expect_true(unloaded, "the module map has the library, marked unloaded");
	hpq_free(cap);
}

HP_TEST(signal_handler_allocates)
{
	struct hp_capture *cap;
	char path[600];
	FILE *f;
	int runs = -1;

	expect_eq_u64(run("sighandler", "", ""), 0, "exit status (no deadlock, no crash)");
	snprintf(path, sizeof path, "%s/sighandler.dir/stdout", hp_test_tmp());
	if ((f = fopen(path, "r"))) {
		if (fscanf(f, "%d", &runs) != 1)
			runs = -1;
		fclose(f);
	}
	expect_true(runs > 0, "the handler ran");
	if (!(cap = hpq_load(out)))
		return;
	const struct hp_cap_snapshot *snap = hp_capture_last(cap);
	struct hpq_sum h = hpq_match(cap, STACK("handler_alloc", "on_usr1"));
	struct hpq_sum m = hpq_match(cap, STACK("main_loop", "main"));
	expect_eq_u64(m.alloc_count, 200000, "main loop: every allocation recorded");
	expect_eq_u64(h.alloc_count + snap->lost_count[HP_LOST_REENTRANT], (uint64_t)runs,
		      "handler: each allocation recorded, or counted as lost when it "
		      "interrupted the recorder");
	printf("  handler ran %d times: %llu recorded, %llu inside the recorder\n", runs,
	       (unsigned long long)h.alloc_count,
	       (unsigned long long)snap->lost_count[HP_LOST_REENTRANT]);
	hpq_free(cap);
}

HP_TEST(signal_handler_at_thread_exit)
{
	/* 20,000 threads, each signalled every 20 us through its exit (the
	 * recorder's thread-exit destructors included) by a handler that
	 * allocates: no crash (it was SIGSEGV in every run when a destructor
	 * unmapped the thread's unwind cache before letting go of it), and
	 * every allocation of the threads' own code recorded. */
	struct hp_capture *cap;
	char path[600], line[64] = "";
	FILE *f;

	expect_eq_u64(run("sigexit", "", "20000 20"), 0, "exit status (no crash, no hang)");
	snprintf(path, sizeof path, "%s/sigexit.dir/stdout", hp_test_tmp());
	if ((f = fopen(path, "r"))) {
		if (!fgets(line, sizeof line, f))
			line[0] = '\0';
		fclose(f);
	}
	expect_str(line, "20000 threads\n", "the program's output, as bare");
	if (!(cap = hpq_load(out)))
		return;
	struct hpq_sum w = hpq_match(cap, STACK("work", "thread_main"));
	expect_eq_u64(w.alloc_count, 20000 * 16, "the threads' allocations: 16 each");
	expect_eq_u64(w.alloc_bytes, 20000 * 2 * (8 * 48 + 16 * 28), "their bytes");
	hpq_free(cap);
}

HP_TEST(file_size_limit_raises_no_signal)
{
	/* Under ulimit -f 16 (16 KiB) with SIGXFSZ at its default action
	 * (death), a program that runs bare runs the same under heapprof run
	 * and preloaded: the recorder stops writing at the limit and says so,
	 * and raises no SIGXFSZ (before: both died of it, status 153). */
	char dir[600];
	const char *b = hp_test_build();

	snprintf(dir, sizeof dir, "%s/xfsz.dir", hp_test_tmp());
	hp_test_sh("rm -rf %s && mkdir -p %s", dir, dir);
	expect_eq_u64(hp_test_sh("cd %s && ulimit -f 16 && %s/tests/programs/churn 1 200000 "
				 "> bare.out",
				 dir, b),
		      0, "bare: exit 0");
	expect_eq_u64(hp_test_sh("cd %s && ulimit -f 16 && %s/heapprof run --interval 10 -o run.hpf "
				 "-- %s/tests/programs/churn 1 200000 > run.out 2> run.err",
				 dir, b, b),
		      0, "heapprof run: the program's exit status, no SIGXFSZ");
	/* sh counts ulimit -f in 512-byte blocks (dash) or KiB (bash): the
	 * limit is the one the message names, at most 16 KiB. */
	expect_eq_u64(hp_test_sh("cd %s && cmp -s bare.out run.out && "
				 "n=$(sed -n 's/.*run.hpf reached the file size limit (ulimit -f: "
				 "\\([0-9]*\\) bytes).*/\\1/p' run.err) && test \"$n\" -le 16384 && "
				 "test $(stat -c %%s run.hpf) -le \"$n\" && "
				 "%s/heapprof inspect run.hpf > /dev/null",
				 dir, b),
		      0, "the same output; said once; the capture within the limit, readable");
	expect_eq_u64(hp_test_sh("cd %s && ulimit -f 16 && HEAPPROF_OUTPUT=pre.hpf "
				 "HEAPPROF_INTERVAL_MS=10 LD_PRELOAD=%s/libheapprof.so "
				 "%s/tests/programs/churn 1 200000 > pre.out 2> pre.err && "
				 "cmp -s bare.out pre.out && test $(stat -c %%s pre.hpf) -le 16384 && "
				 "grep -q 'pre.hpf reached the file size limit' pre.err",
				 dir, b, b),
		      0, "preloaded: exit 0, the same output, the capture within the limit");
}

HP_TEST(preloaded_output_is_0600_and_never_blocks)
{
	/* HEAPPROF_OUTPUT naming an existing file of mode 0644: the capture is
	 * 0600 as a new one is (it kept 0644 before); naming a FIFO nobody
	 * reads: the program runs on at once, the recorder says why it writes
	 * nothing (it waited in open forever before). */
	char dir[600];
	const char *b = hp_test_build();

	snprintf(dir, sizeof dir, "%s/outmode.dir", hp_test_tmp());
	hp_test_sh("rm -rf %s && mkdir -p %s", dir, dir);
	expect_eq_u64(hp_test_sh("cd %s && echo old > cap.hpf && chmod 644 cap.hpf && "
				 "HEAPPROF_OUTPUT=cap.hpf LD_PRELOAD=%s/libheapprof.so "
				 "%s/tests/programs/known > /dev/null && "
				 "test $(stat -c %%a cap.hpf) = 600 && %s/heapprof inspect cap.hpf "
				 "> /dev/null",
				 dir, b, b, b),
		      0, "an existing output is made 0600, and holds the capture");
	expect_eq_u64(hp_test_sh("cd %s && mkfifo fifo && HEAPPROF_OUTPUT=fifo "
				 "LD_PRELOAD=%s/libheapprof.so timeout -k 5 20 %s/tests/programs/known "
				 "> out 2> err && grep -q 'cannot create fifo: a FIFO with no reader' "
				 "err",
				 dir, b, b),
		      0, "a FIFO with no reader: the program runs to its end, the recorder says why");
}

HP_TEST(seccomp_filter_after_start)
{
	/* A program that, once started, installs a seccomp filter killing
	 * openat runs as it does bare (it died of SIGSYS, status 159, at the
	 * recorder's next read of /proc/self/statm): the recorder opens what
	 * it needs before the filter goes in and nothing after. Under heapprof
	 * run and preloaded (whose capture is created lazily), with interval
	 * snapshots and RSS samples going on after the filter. */
	char dir[600], path[700];
	const char *b = hp_test_build();
	struct hp_capture *cap;

	snprintf(dir, sizeof dir, "%s/seccomp.dir", hp_test_tmp());
	hp_test_sh("rm -rf %s && mkdir -p %s", dir, dir);
	expect_eq_u64(hp_test_sh("cd %s && %s/tests/programs/seccomper kill 300 > bare.out", dir,
				 b),
		      0, "bare: exit 0");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof run -q --interval 10 -o run.hpf -- "
				 "%s/tests/programs/seccomper kill 300 > run.out && "
				 "cmp -s bare.out run.out",
				 dir, b, b),
		      0, "heapprof run: exit 0, the same output");
	snprintf(path, sizeof path, "%s/run.hpf", dir);
	if ((cap = hpq_load(path))) {
		const struct hp_cap_snapshot *last = hp_capture_last(cap);
		struct hpq_sum s = hpq_match(cap, STACK("sandboxed_alloc", "main"));
		expect_true(last && last->reason == HP_SNAP_EXIT, "the exit snapshot is there");
		expect_true(s.alloc_count > 1000, "the allocations after the filter are recorded");
		hpq_free(cap);
	}
	expect_eq_u64(hp_test_sh("cd %s && HEAPPROF_OUTPUT=pre.hpf HEAPPROF_INTERVAL_MS=10 "
				 "LD_PRELOAD=%s/libheapprof.so %s/tests/programs/seccomper kill 300 "
				 "> pre.out && cmp -s bare.out pre.out && "
				 "%s/heapprof inspect pre.hpf | grep -q 'exit'",
				 dir, b, b, b),
		      0, "preloaded: exit 0, the same output, a capture with its exit snapshot");
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof run -q --interval 10 -o eperm.hpf -- "
				 "%s/tests/programs/seccomper errno 300 > eperm.out && "
				 "cmp -s bare.out eperm.out",
				 dir, b, b),
		      0, "a filter that answers EPERM: exit 0, the same output");
}

HP_TEST(non_pie_executable_is_not_shadowed)
{
	/* A non-PIE executable that takes malloc's address has a canonical
	 * PLT entry for it (an undefined symbol with a value: Debian's python3
	 * and node), which dlsym answers for "malloc": it is no definition,
	 * and every allocation is recorded. The recorder said "defines malloc
	 * ahead of libheapprof.so ... no allocation can be recorded" and the
	 * report's header "nothing recorded". */
	struct hp_capture *cap;
	char path[600];

	expect_eq_u64(run("nonpie", "", "2> /dev/null"), 0, "exit status");
	snprintf(path, sizeof path, "%s/nonpie.dir", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -o %s/o2.hpf -- %s/tests/programs/nonpie "
				 "> /dev/null 2> %s/err && ! grep -q 'defines malloc' %s/err && "
				 "! %s/heapprof report %s/o2.hpf | grep -q 'nothing recorded'",
				 hp_test_build(), path, hp_test_build(), path, path, hp_test_build(),
				 path),
		      0, "no warning of a malloc ahead of the recorder, in the run or the report");
	if (!(cap = hpq_load(out)))
		return;
	struct hpq_sum s = hpq_match(cap, STACK("nonpie_alloc", "main"));
	expect_eq_u64(s.alloc_count, 10, "every allocation through the PLT entry's address");
	expect_eq_u64(s.alloc_bytes, 1000, "their bytes");
	expect_true(!(cap->flags & HP_META_SHADOWED), "not marked shadowed");
	hpq_free(cap);
}

HP_TEST(unfollowed_child_execs_with_the_bare_environment)
{
	/* Without --follow-fork, a child that execs with an environment the
	 * program built before the fork (git's way) passes on the
	 * environment the program would pass bare: it passed HEAPPROF_OUTPUT,
	 * HEAPPROF_OUTPUT_CLAIMED, HEAPPROF_QUIET and an empty LD_PRELOAD=. */
	char dir[600];
	const char *b = hp_test_build();

	snprintf(dir, sizeof dir, "%s/envcopy.dir", hp_test_tmp());
	hp_test_sh("rm -rf %s && mkdir -p %s", dir, dir);
	expect_eq_u64(hp_test_sh("cd %s && %s/tests/programs/envcopy | sort > bare && "
				 "%s/heapprof run -q -o run.hpf -- %s/tests/programs/envcopy | sort "
				 "> run && diff bare run",
				 dir, b, b, b),
		      0, "the same environment as bare (diff above)");
}

HP_TEST(exit_function_list_is_not_in_use_at_exit)
{
	/* A library's constructor registers 200 exit functions before main
	 * (clang's libraries ~3,100): glibc's exit list holds 6 blocks of
	 * 1,040 bytes of its own, still allocated when the exit snapshot is
	 * taken and freed by glibc after it. The capture has them; the model
	 * counts them freed, as they are by the end of the process: no figure
	 * holds them in use (clang++'s driver read 106 blocks in use where
	 * valgrind reads 9), even without the default suppressions. */
	struct hp_capture *cap;
	char dir[600];

	expect_eq_u64(run("exitlist", "", ""), 0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	struct hpq_sum raw = hpq_total(cap);
	hpq_free(cap);
	snprintf(dir, sizeof dir, "%s/exitlist.dir", hp_test_tmp());
	char *t = hp_test_sh_out("%s/heapprof report --json --no-default-suppressions %s/out.hpf | "
				 "sed -n 's/.*\"totals\": {.*\"inuse_objects\": \\([0-9]*\\), "
				 "\"inuse_bytes\": \\([0-9]*\\).*/\\1 \\2/p'",
				 hp_test_build(), dir);
	unsigned long long objects = 0, bytes = 0;
	expect_true(t && sscanf(t, "%llu %llu", &objects, &bytes) == 2, "the report's totals");
	free(t);
	expect_eq_u64(raw.alloc_count - raw.free_count - objects, 6,
		      "the capture holds 6 blocks more in use than the report: the exit list's");
	expect_eq_u64(raw.alloc_bytes - raw.free_bytes - bytes, 6 * 1040, "of 1,040 bytes each");
	expect_eq_u64(hp_test_sh("%s/heapprof report --no-default-suppressions %s/out.hpf | "
				 "sed -n '/^leaks/,/^[a-z]/p' | grep -c register_many | grep -qx 0",
				 hp_test_build(), dir),
		      0, "not among the leaks, without the default suppressions too");
}

HP_TEST(recorder_handlers_are_invisible)
{
	/* A program that installs a handler only over the default action must
	 * see the default action, and its handler must then be the one run. */
	char path[8192];
	FILE *f;
	char line[64] = "";

	expect_eq_u64(run("sigquery", "", ""), 0, "exit status");
	snprintf(path, sizeof path, "%s/sigquery.dir/stdout", hp_test_tmp());
	if ((f = fopen(path, "r"))) {
		if (!fgets(line, sizeof line, f))
			line[0] = '\0';
		fclose(f);
	}
	expect_str(line, "dfl dfl handled\n", "SIGINT and SIGTERM look untouched");
}

static void check_crash(const char *how, int status, int signo)
{
	struct hp_capture *cap;
	const struct hp_cap_snapshot *snap;

	expect_eq_u64(run("crasher", "", how), status, "exit status is 128 + the signal");
	if (!(cap = hpq_load(out)))
		return;
	snap = hp_capture_last(cap);
	if (expect_true(snap != NULL, "a snapshot was written before dying")) {
		expect_eq_u64(snap->reason, HP_SNAP_FATAL, "snapshot reason");
		expect_eq_u64(snap->signo, signo, "snapshot signal");
		expect_eq_u64(hpq_match(cap, STACK("before_crash", "main")).alloc_bytes, 7 * 77,
			      "allocations before the crash");
	}
	hpq_free(cap);
}

HP_TEST(abort_writes_capture) { check_crash("abort", 128 + 6, 6); }
HP_TEST(segv_writes_capture) { check_crash("segv", 128 + 11, 11); }
HP_TEST(sigterm_writes_capture) { check_crash("term", 128 + 15, 15); }
/* Every signal whose default action ends the process: the fatal-signal
 * snapshot, then the same end (SIGPIPE left no figures: "holds no
 * snapshot: killed by signal 13"). */
HP_TEST(sigpipe_writes_capture) { check_crash("pipe", 128 + 13, 13); }
HP_TEST(sighup_writes_capture) { check_crash("hup", 128 + 1, 1); }
HP_TEST(sigalrm_writes_capture) { check_crash("alarm", 128 + 14, 14); }
HP_TEST(sigusr1_writes_capture) { check_crash("usr1", 128 + 10, 10); }
HP_TEST(realtime_signal_writes_capture) { check_crash("rt", 128 + 34 + 2, 34 + 2); }
/* A handler of the program's own that puts the default action back and
 * raises the signal again (sort on SIGPIPE in `sort | head`): the
 * recorder's handler stands in for the default, unseen. */
HP_TEST(own_handler_then_default_sigpipe_writes_capture) { check_crash("pipe-own", 128 + 13, 13); }
HP_TEST(own_handler_then_default_sigterm_writes_capture) { check_crash("term-own", 128 + 15, 15); }

/* --- signals sent to heapprof run's pid ------------------------------------ */

/* heapprof run -q [opts] -o DIR/out.hpf -- sigserver DIR/marker MODE,
 * started directly (no shell between: pid is heapprof's). */
struct sigrun {
	pid_t heapprof, prog;
	char dir[512], hpf[600], marker[600];
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Starts it and reads the program's "ready PID". Returns 1 when it runs. */
static int sigrun_start(struct sigrun *r, const char *name, const char *opt, const char *mode)
{
	char heapprof[600], prog[600], line[64] = "";
	char *argv[12];
	int out[2], n = 0;
	size_t len = 0;
	uint64_t end;

	memset(r, 0, sizeof *r);
	snprintf(r->dir, sizeof r->dir, "%s/%s.dir", hp_test_tmp(), name);
	hp_test_sh("rm -rf %s && mkdir -p %s", r->dir, r->dir);
	snprintf(r->hpf, sizeof r->hpf, "%s/out.hpf", r->dir);
	snprintf(r->marker, sizeof r->marker, "%s/marker", r->dir);
	snprintf(heapprof, sizeof heapprof, "%s/heapprof", hp_test_build());
	snprintf(prog, sizeof prog, "%s/tests/programs/sigserver", hp_test_build());
	argv[n++] = heapprof;
	argv[n++] = "run";
	argv[n++] = "-q";
	if (opt)
		argv[n++] = (char *)opt;
	argv[n++] = "-o";
	argv[n++] = r->hpf;
	argv[n++] = "--";
	argv[n++] = prog;
	argv[n++] = r->marker;
	argv[n++] = (char *)mode;
	argv[n] = NULL;
	if (pipe(out) < 0)
		return 0;
	r->heapprof = fork();
	if (r->heapprof == 0) {
		dup2(out[1], 1);
		close(out[0]);
		close(out[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(out[1]);
	end = now_ms() + 10000;
	while (now_ms() < end && len < sizeof line - 1 && !strchr(line, '\n')) {
		struct pollfd p = {out[0], POLLIN, 0};
		ssize_t k;
		if (poll(&p, 1, 100) <= 0)
			continue;
		k = read(out[0], line + len, sizeof line - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
		line[len] = '\0';
	}
	close(out[0]);
	if (strncmp(line, "ready ", 6) == 0)
		r->prog = (pid_t)atoi(line + 6);
	return expect_true(r->heapprof > 0 && r->prog > 0, "the program runs and says so");
}

/* The program's marker file as one string ("" when none). */
static const char *marker_text(const struct sigrun *r)
{
	static char buf[256];
	FILE *f = fopen(r->marker, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Waits until the marker reads want, for at most 10 s. */
static int marker_is(const struct sigrun *r, const char *want)
{
	uint64_t end = now_ms() + 10000;

	while (now_ms() < end && strcmp(marker_text(r), want) != 0)
		usleep(10000);
	return strcmp(marker_text(r), want) == 0;
}

/* heapprof run's wait status, within ms; -1 when it did not end (it is
 * then killed). Whatever happens, the program does not outlive the test:
 * left orphaned, it is killed and that is said. */
static int sigrun_end(struct sigrun *r, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	int status = -1;

	while (now_ms() < end) {
		if (waitpid(r->heapprof, &status, WNOHANG) == r->heapprof)
			break;
		status = -1;
		usleep(10000);
	}
	if (status == -1) {
		kill(r->heapprof, SIGKILL);
		waitpid(r->heapprof, NULL, 0);
	}
	/* heapprof reaps the program before it exits: a pid still there is
	 * an orphan (or, rarely, a reuse: checked by its command line). */
	char path[64], cmd[256] = "";
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)r->prog);
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, cmd, sizeof cmd - 1);
		close(fd);
		cmd[n > 0 ? n : 0] = '\0';
	}
	int orphan = strstr(cmd, "sigserver") != NULL;
	expect_true(!orphan, "the program does not outlive heapprof run");
	if (orphan)
		kill(r->prog, SIGKILL);
	return status;
}

/* kill -USR1, -HUP, then -TERM of heapprof run: each reaches the program,
 * which shuts down with its own status, and heapprof exits with it after
 * writing the whole capture. */
HP_TEST(signals_to_heapprof_reach_the_program)
{
	struct sigrun r;
	struct hp_capture *cap;
	int status;

	if (!sigrun_start(&r, "sigfwd", NULL, ""))
		return;
	kill(r.heapprof, SIGUSR1);
	expect_true(marker_is(&r, "10\n"), "SIGUSR1 reached the program");
	kill(r.heapprof, SIGHUP);
	expect_true(marker_is(&r, "10\n1\n"), "SIGHUP reached the program");
	kill(r.heapprof, SIGTERM);
	status = sigrun_end(&r, 20000);
	expect_str(marker_text(&r), "10\n1\n15\n", "SIGTERM reached the program, once");
	expect_true(WIFEXITED(status), "heapprof run exits, not killed");
	expect_eq_u64(WEXITSTATUS(status), 3, "with the program's exit status");
	if (!(cap = hpq_load(r.hpf)))
		return;
	const struct hp_cap_snapshot *snap = hp_capture_last(cap);
	if (expect_true(snap != NULL, "the capture has a snapshot")) {
		expect_eq_u64(snap->reason, HP_SNAP_EXIT, "the program's exit's");
		expect_eq_u64(hpq_match(cap, STACK("sigserver_start", "main")).peak_bytes,
			      12 * 4000, "the blocks it kept");
		expect_eq_u64(hpq_match(cap, STACK("sigserver_shutdown", "main")).alloc_bytes, 777,
			      "what its shutdown allocated");
	}
	expect_true(cap->has_symbols, "symbols embedded");
	hpq_free(cap);
}

/* kill -TERM of heapprof run when the program does not handle it: it dies
 * of it (the recorder's snapshot written first) and heapprof exits
 * 128+15, as the shell shows the program's death. */
HP_TEST(sigterm_to_heapprof_kills_the_program_not_orphans_it)
{
	struct sigrun r;
	struct hp_capture *cap;
	int status;

	if (!sigrun_start(&r, "sigbare", NULL, "bare"))
		return;
	kill(r.heapprof, SIGTERM);
	status = sigrun_end(&r, 20000);
	expect_true(WIFEXITED(status), "heapprof run exits, not killed");
	expect_eq_u64(WEXITSTATUS(status), 128 + SIGTERM, "128 + SIGTERM, the program's death");
	if (!(cap = hpq_load(r.hpf)))
		return;
	const struct hp_cap_snapshot *snap = hp_capture_last(cap);
	if (expect_true(snap != NULL, "the capture has a snapshot")) {
		expect_eq_u64(snap->reason, HP_SNAP_FATAL, "the fatal signal's");
		expect_eq_u64(snap->signo, SIGTERM, "SIGTERM");
		expect_eq_u64(hpq_match(cap, STACK("sigserver_start", "main")).peak_bytes,
			      12 * 4000, "the blocks it kept");
	}
	hpq_free(cap);
}

/* The dump signal (SIGUSR2 by default) sent to heapprof run asks the
 * program for a snapshot, as sent to the program; SIGINT and SIGQUIT sent
 * with kill reach a program that handles them. */
HP_TEST(dump_signal_to_heapprof_asks_a_snapshot)
{
	struct sigrun r;
	uint64_t end;
	int status, signalled = 0;

	if (!sigrun_start(&r, "sigdump", NULL, "all"))
		return;
	kill(r.heapprof, SIGUSR2);
	end = now_ms() + 10000;
	while (!signalled && now_ms() < end) {
		usleep(20000);
		struct hp_capture c;
		char err[256];
		if (hp_capture_load(r.hpf, &c, err, sizeof err) == 0) {
			for (size_t i = 0; i < c.nimages && !signalled; i++)
				for (size_t k = 0; k < c.images[i].nsnapshots; k++)
					signalled |=
						c.images[i].snapshots[k].reason == HP_SNAP_SIGNAL;
			hp_capture_free(&c);
		}
	}
	expect_true(signalled, "a snapshot of the dump signal is in the capture");
	kill(r.heapprof, SIGINT);
	expect_true(marker_is(&r, "2\n"), "SIGINT reached the program");
	kill(r.heapprof, SIGQUIT);
	expect_true(marker_is(&r, "2\n3\n"), "SIGQUIT reached the program");
	kill(r.heapprof, SIGTERM);
	status = sigrun_end(&r, 20000);
	expect_true(WIFEXITED(status) && WEXITSTATUS(status) == 3,
		    "heapprof run exits with the program's status");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
