/*
 * test_probes.c - the profiled program is never harmed: programs that
 * close, dup2 and reuse every descriptor, daemonise, are cancelled, run on
 * small stacks, vfork, clone, _exit, exec and free in destructors behave
 * under heapprof exactly as they do bare (same output, files and exit
 * status), and their captures are whole and exact.
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../harness/tools.h"

#define STACK(...) ((const char *const[]){__VA_ARGS__, NULL})

static char dir[512], out[600];

/* Runs tests/programs/probe MODE ARGS bare and under `heapprof run OPTS`
 * in a fresh directory (the program's own files in DIR/bare and DIR/hp,
 * its stdout in DIR/bare.out and DIR/hp.out); compares exit statuses and,
 * with same_stdout, stdout. Returns the status under heapprof. */
static int probe_env(const char *mode, const char *args, const char *opts, int same_stdout)
{
	int bare, hp;

	snprintf(dir, sizeof dir, "%s/%s.dir", hp_test_tmp(), mode);
	snprintf(out, sizeof out, "%s/out.hpf", dir);
	hp_test_sh("rm -rf %s && mkdir -p %s/bare %s/hp", dir, dir, dir);
	hp_test_sh("printf ABCDEFGHIJ > %s/bare/in.txt && cp %s/bare/in.txt %s/hp/", dir, dir, dir);
	bare = hp_test_sh("cd %s/bare && timeout 120 %s/tests/programs/probe %s %s %s/bare "
			  "> ../bare.out 2>/dev/null",
			  dir, hp_test_build(), mode, args, dir);
	hp_test_sh("sed -i 's#/bare#/DIR#g' %s/bare.out", dir);
	hp_test_sh("test -f %s/bare/out.txt && sed -i 's#/bare#/DIR#g' %s/bare/out.txt", dir, dir);
	hp = hp_test_sh("cd %s/hp && timeout 120 %s/heapprof run -q %s -o %s -- "
			"%s/tests/programs/probe %s %s %s/hp > ../hp.out 2>/dev/null",
			dir, hp_test_build(), opts, out, hp_test_build(), mode, args, dir);
	hp_test_sh("sed -i 's#/hp#/DIR#g' %s/hp.out", dir);
	expect_eq_u64(hp, bare, "exit status under heapprof = bare");
	if (same_stdout)
		expect_eq_u64(hp_test_sh("diff %s/bare.out %s/hp.out", dir, dir), 0,
			      "stdout under heapprof = bare (diff above)");
	return hp;
}

static int probe(const char *mode, const char *args, const char *opts)
{
	return probe_env(mode, args, opts, 1);
}

/* The capture, checked whole (no damaged record); NULL on failure. */
static struct hp_capture *load_intact(const char *path)
{
	struct hp_capture *cap = hpq_load(path);
	if (cap)
		expect_eq_u64(cap->ndamage, 0, "every record of the capture is intact");
	return cap;
}

HP_TEST(exit_snapshot_after_destructors_and_late_exit_handlers)
{
	/* A linked library frees 100 blocks in its destructor (finalised
	 * after the recorder's own), an exit handler registered during exit
	 * frees 3: in use at exit are the 2 blocks main leaks, nothing else,
	 * as valgrind says. */
	struct hp_capture *cap;
	struct hpq_sum s;

	snprintf(out, sizeof out, "%s/dtorfree.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- %s/tests/programs/dtorfree",
				 hp_test_build(), out, hp_test_build()),
		      0, "exit status");
	if (!(cap = load_intact(out)))
		return;
	expect_eq_u64(hp_capture_last(cap)->reason, HP_SNAP_EXIT, "an exit snapshot");
	s = hpq_match(cap, STACK("lib_ctor_alloc"));
	expect_eq_u64(s.alloc_count, 100, "the library's constructor: allocated");
	expect_eq_u64(s.free_count, 100, "the library's destructor: freed");
	s = hpq_match(cap, STACK("main_alloc", "main"));
	expect_eq_u64(s.alloc_count, 10, "main: allocated");
	expect_eq_u64(s.free_count, 8, "main: freed by exit handlers, early and late");
	s = hpq_total(cap);
	expect_eq_u64(s.alloc_count - s.free_count, 2, "in use at exit: the 2 leaks");
	expect_eq_u64(s.alloc_bytes - s.free_bytes, 2 * 777, "in use at exit: bytes");
	hpq_free(cap);
	expect_eq_u64(hp_test_sh("valgrind --run-libc-freeres=no %s/tests/programs/dtorfree 2>&1 | "
				 "grep -q 'in use at exit: 1,554 bytes in 2 blocks'",
				 hp_test_build()),
		      0, "valgrind agrees: 1,554 bytes in 2 blocks");
}

HP_TEST(underscore_exit_writes_the_exit_snapshot)
{
	struct hp_capture *cap;
	struct hpq_sum s;

	expect_eq_u64(probe("exit_", "", ""), 3, "_exit(3): status 3");
	if (!(cap = load_intact(out)))
		return;
	expect_eq_u64(cap->nsnapshots, 1, "one snapshot");
	expect_eq_u64(hp_capture_last(cap)->reason, HP_SNAP_EXIT, "at _exit");
	s = hpq_match(cap, STACK("probe_alloc"));
	expect_eq_u64(s.alloc_count, 4, "allocated");
	expect_eq_u64(s.free_count, 1, "freed");
	expect_eq_u64(s.alloc_bytes - s.free_bytes, 300, "in use at _exit");
	hpq_free(cap);
}

HP_TEST(forked_child_that_underscore_exits_has_its_capture)
{
	char pattern[700];
	struct hp_capture *cap;
	glob_t g;

	probe("fork-exit", "", "--follow-fork");
	snprintf(pattern, sizeof pattern, "%s/out.*.hpf", dir);
	if (!expect_eq_u64(glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0, 1, "the child's file"))
		return;
	if ((cap = load_intact(g.gl_pathv[0]))) {
		struct hpq_sum s = hpq_match(cap, STACK("probe_child_alloc"));
		expect_eq_u64(hp_capture_last(cap)->reason, HP_SNAP_EXIT, "at the child's _exit");
		expect_eq_u64(s.alloc_count - s.free_count, 5, "the child's blocks in use");
		expect_eq_u64(s.alloc_bytes - s.free_bytes, 5 * 64, "their bytes");
		hpq_free(cap);
	}
	globfree(&g);
}

HP_TEST(vfork_child_exit_leaves_the_parent_recording)
{
	struct hp_capture *cap;
	struct hpq_sum s;
	char pattern[700];
	glob_t g;

	probe("vfork-exit", "", "");
	if (!(cap = load_intact(out)))
		return;
	expect_eq_u64(hp_capture_last(cap)->reason, HP_SNAP_EXIT, "the parent's exit snapshot");
	s = hpq_match(cap, STACK("probe_alloc"));
	expect_eq_u64(s.alloc_count, 11, "the parent's allocations, after the child's exit too");
	expect_eq_u64(s.free_count, 1, "and its free");
	hpq_free(cap);
	snprintf(pattern, sizeof pattern, "%s/out.*.hpf", dir);
	expect_eq_u64(glob(pattern, 0, NULL, &g) == 0 ? g.gl_pathc : 0, 0, "no other file");
}

HP_TEST(raw_clone_child_does_not_write_the_parents_capture)
{
	struct hp_capture *cap;

	probe("raw-clone", "", "--timeseries 1");
	if (!(cap = load_intact(out)))
		return;
	expect_eq_u64(hpq_match(cap, STACK("probe_alloc")).alloc_count, 6, "the parent's blocks");
	expect_eq_u64(hpq_match(cap, STACK("probe_child_alloc")).alloc_count, 0,
		      "nothing of the child's");
	hpq_free(cap);
}

HP_TEST(cancelled_threads_leave_no_lock_held)
{
	/* Bounded inside: a deadlock shows as the timeout's status 124. */
	probe("cancel", "", "--interval 1");
}

HP_TEST(libunwind_never_touches_the_programs_descriptors)
{
	char want[700], got[700];

	probe("fds", "", "");
	snprintf(want, sizeof want, "%s/bare/out.txt", dir);
	snprintf(got, sizeof got, "%s/hp/out.txt", dir);
	expect_eq_u64(hp_test_sh("cmp %s %s && grep -qx ABCDEFGHIJ %s", want, got, got), 0,
		      "the program's copy of in.txt is whole");
}

HP_TEST(daemon_closing_every_descriptor_keeps_its_log_and_our_capture)
{
	struct hp_capture *cap;

	probe("daemon", "", "");
	expect_eq_u64(hp_test_sh("cmp %s/bare/daemon.log %s/hp/daemon.log", dir, dir), 0,
		      "the program's log holds its lines only");
	if (!(cap = load_intact(out)))
		return;
	expect_eq_u64(cap->nsnapshots, 6, "5 snapshots asked for, and the exit one");
	expect_eq_u64(hpq_match(cap, STACK("probe_alloc")).alloc_count, 50, "every allocation");
	hpq_free(cap);
}

HP_TEST(dup2_over_every_descriptor)
{
	struct hp_capture *cap;

	probe("dup2", "", "");
	if (!(cap = load_intact(out)))
		return;
	expect_eq_u64(cap->nsnapshots, 2, "the snapshot asked for, and the exit one");
	expect_eq_u64(hpq_match(cap, STACK("probe_alloc")).alloc_count, 7, "every allocation");
	hpq_free(cap);
}

static void small_stack(const char *used_kib, int recorded)
{
	struct hp_capture *cap;
	struct hpq_sum s;
	uint64_t lost;

	probe("small-stack", used_kib, "");
	if (!(cap = load_intact(out)))
		return;
	s = hpq_match(cap, STACK("probe_alloc", "small_stack_work"));
	lost = hp_capture_last(cap)->lost_count[HP_LOST_STACK_ROOM];
	expect_eq_u64(s.alloc_count + lost, 10, "each allocation recorded or counted as lost");
	if (recorded)
		expect_eq_u64(s.alloc_count, 10, "with room: all recorded");
	else
		expect_eq_u64(lost, 10, "without room: all counted as lost");
	hpq_free(cap);
}

HP_TEST(small_thread_stacks)
{
	small_stack("4", 1); /* 16 KiB stack (about 9 usable), 4 KiB used: room left */
	small_stack("8", 0); /* 8 KiB used: too little for the recorder */
}

/* The same after one allocation with the stack shallow: the thread is set
 * up and the deep allocations take the recorder's common path
 * (record_alloc_common), whose room test is its own (thread.h,
 * room_floor). */
HP_TEST(small_thread_stacks_after_a_first_allocation)
{
	small_stack("4 warm", 1);
	small_stack("8 warm", 0);
}

HP_TEST(abort_on_a_small_signal_stack_dies_of_sigabrt)
{
	struct hp_capture *cap;

	expect_eq_u64(probe("altstack-abort", "", ""), 128 + 6, "SIGABRT, as bare");
	if ((cap = load_intact(out))) {
		expect_eq_u64(hp_capture_last(cap)->reason, HP_SNAP_FATAL, "the fatal snapshot");
		hpq_free(cap);
	}
}

HP_TEST(fork_without_follow_dies_of_the_dump_signal)
{
	probe("fork-usr2", "", "");
}

HP_TEST(exec_chain_keeps_every_image)
{
	/* The program execs itself twice, asking for a snapshot in each
	 * image: the capture keeps all three images, each ending with its
	 * exec (or exit) snapshot, with its own exact figures. */
	struct hp_capture *cap;

	probe("exec-chain", "0", "");
	if (!(cap = load_intact(out)))
		return;
	if (expect_eq_u64(cap->nimages, 3, "three images: the program and two execs")) {
		for (size_t i = 0; i < 3; i++) {
			hp_capture_select(cap, i);
			expect_eq_u64(cap->nsnapshots, 2, "the snapshot asked for and the last one");
			expect_eq_u64(hp_capture_last(cap)->reason, i < 2 ? HP_SNAP_EXEC : HP_SNAP_EXIT,
				      "each image ends with its exec, the last with its exit");
			expect_eq_u64(hpq_match(cap, STACK("probe_alloc")).alloc_count, i + 1,
				      "each image's own allocations");
		}
	}
	hpq_free(cap);
}

HP_TEST(pthread_getattr_np_does_not_deadlock)
{
	/* It allocates holding the thread's lock: the recorder must not ask
	 * for the same lock from inside that allocation. */
	probe("getattr", "", "");
	probe("getattr", "", "--unwind fp");
}

HP_TEST(environment_as_bare)
{
	/* The program sees LD_PRELOAD and the HEAPPROF_ variables of the run
	 * and nothing else of ours; what it execs sees exactly what it would
	 * bare. (_ is the shell's, naming heapprof.) */
	probe_env("env", "", "", 0);
	expect_eq_u64(hp_test_sh("cd %s && grep -v -e '^_=' bare.out > bare.env; "
				 "grep -v -e '^_=' -e '^LD_PRELOAD=' -e '^HEAPPROF_' hp.out > hp.env; "
				 "diff bare.env hp.env",
				 dir),
		      0, "the program's environment, but for the run's variables");
	probe_env("child-env", "", "", 0);
	expect_eq_u64(hp_test_sh("cd %s && grep -v '^_=' bare.out > bare.env; "
				 "grep -v '^_=' hp.out > hp.env; diff bare.env hp.env",
				 dir),
		      0, "a child's environment, exactly");
}

HP_TEST(another_allocator_first_in_ld_preload_is_said)
{
	struct hp_capture *cap;

	snprintf(out, sizeof out, "%s/shadowed.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("LD_PRELOAD=%s/tests/programs/libmymalloc.so:%s/libheapprof.so "
				 "HEAPPROF_OUTPUT=%s %s/tests/programs/known 2> %s.err",
				 hp_test_build(), hp_test_build(), out, hp_test_build(), out),
		      0, "exit status");
	expect_eq_u64(hp_test_sh("grep -q 'libmymalloc.so defines malloc ahead of libheapprof.so' "
				 "%s.err",
				 out),
		      0, "one line says why nothing is recorded");
	if ((cap = load_intact(out))) {
		expect_true(cap->flags & HP_META_SHADOWED, "the capture says it too");
		hpq_free(cap);
	}
	expect_eq_u64(hp_test_sh("%s/heapprof inspect %s | grep -q '^warning   another library.s malloc'",
				 hp_test_build(), out),
		      0, "inspect says it");
	expect_eq_u64(hp_test_sh("%s/heapprof report %s | grep -q 'nothing recorded: another library'",
				 hp_test_build(), out),
		      0, "report says it");
}

HP_TEST(library_opened_by_a_relative_path_is_named_absolutely)
{
	/* dlopen("./libplugin.so") from another directory than the one the
	 * report runs in: the capture names the file absolutely, and the
	 * plugin's frame is symbolized. */
	struct hp_capture *cap;
	int absolute = 0;

	snprintf(out, sizeof out, "%s/relative.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("cd %s/tests/programs && %s/heapprof run -q -o %s -- ./dlopener "
				 "./libplugin.so",
				 hp_test_build(), hp_test_build(), out),
		      0, "exit status");
	if (!(cap = load_intact(out)))
		return;
	for (size_t i = 0; i < cap->nmodules; i++)
		if (strstr(cap->modules[i].path, "libplugin.so"))
			absolute = cap->modules[i].path[0] == '/';
	expect_true(absolute, "the plugin's path is absolute");
	hpq_free(cap);
	expect_eq_u64(hp_test_sh("cd %s && %s/heapprof report %s | grep -q 'plugin_alloc  libplugin.c:'",
				 hp_test_tmp(), hp_test_build(), out),
		      0, "the plugin's frame is symbolized");
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}

HP_TEST(recorded_under_valgrind)
{
	/* valgrind maps the program's stack itself, unnamed, growing it a
	 * few pages at a time: the recorder once took the pages there at its
	 * first allocation for the whole stack, and counted every allocation
	 * made deeper than that as lost for want of stack room (all of
	 * bench/macro/churn's). The benchmarks count instructions with
	 * cachegrind, so this matters: under valgrind, recorded as bare. */
	struct hp_capture *cap;
	struct hpq_sum s;

	if (!hp_test_need("valgrind", "valgrind"))
		return;
	snprintf(out, sizeof out, "%s/valgrind.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q -o %s -- valgrind -q --tool=none "
				 "%s/tests/programs/probe deep 1000 >/dev/null",
				 hp_test_build(), out, hp_test_build()),
		      0, "exit status");
	if (!(cap = load_intact(out)))
		return;
	expect_eq_u64(hp_capture_last(cap)->lost_count[HP_LOST_STACK_ROOM], 0,
		      "nothing lost for want of stack room");
	s = hpq_match(cap, STACK("probe_alloc", "probe_deep"));
	expect_eq_u64(s.alloc_count, 10, "1000 frames down: allocated");
	expect_eq_u64(s.free_count, 10, "1000 frames down: freed");
	expect_eq_u64(s.alloc_bytes, 1000, "1000 frames down: bytes");
	hpq_free(cap);
}
