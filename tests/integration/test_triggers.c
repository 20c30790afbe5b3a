/*
 * test_triggers.c - snapshots besides exit: heapprof_dump(), the dump
 * signal, every N bytes; and a capture cut by SIGKILL, whole up to its last
 * snapshot.
 */
#include <stdint.h>
#include <stdio.h>

#include "../harness/harness.h"
#include "../harness/query.h"

#define STACK(...) ((const char *const[]){__VA_ARGS__, NULL})

static struct hp_capture *run(const char *name, const char *opts, const char *arg, int status)
{
	char out[8192];
	snprintf(out, sizeof out, "%s/%s.hpf", hp_test_tmp(), name);
	expect_eq_u64(hp_test_sh("%s/heapprof run -q %s -o %s -- %s/tests/programs/triggers %s",
				 hp_test_build(), opts, out, hp_test_build(), arg),
		      status, "exit status");
	return hpq_load(out);
}

/* Allocations of a phase in snapshot i. */
static uint64_t phase_in(struct hp_capture *cap, size_t i, const char *phase)
{
	size_t n = cap->nsnapshots;
	uint64_t count;

	/* hpq_match reads the last snapshot: look at snapshot i instead. */
	cap->nsnapshots = i + 1;
	count = hpq_match(cap, STACK(phase, "main")).alloc_count;
	cap->nsnapshots = n;
	return count;
}

HP_TEST(dump_api_and_signal)
{
	struct hp_capture *cap = run("api", "", "", 0);

	if (!cap)
		return;
	if (expect_eq_u64(cap->nsnapshots, 3, "API, signal and exit snapshots")) {
		expect_eq_u64(cap->snapshots[0].reason, HP_SNAP_API, "first: heapprof_dump()");
		expect_eq_u64(phase_in(cap, 0, "phase1"), 10, "it holds phase 1");
		expect_eq_u64(phase_in(cap, 0, "phase2"), 0, "and not phase 2");
		expect_eq_u64(cap->snapshots[1].reason, HP_SNAP_SIGNAL, "second: the dump signal");
		expect_eq_u64(cap->snapshots[1].signo, 12, "SIGUSR2");
		expect_eq_u64(phase_in(cap, 1, "phase2"), 20, "it holds phase 2");
		expect_eq_u64(phase_in(cap, 1, "phase3"), 0, "and not phase 3");
		expect_eq_u64(cap->snapshots[2].reason, HP_SNAP_EXIT, "third: exit");
		expect_eq_u64(phase_in(cap, 2, "phase3"), 30, "it holds phase 3");
	}
	hpq_free(cap);
}

HP_TEST(sigkill_keeps_last_snapshot)
{
	struct hp_capture *cap = run("kill", "", "kill", 128 + 9);

	if (!cap)
		return;
	expect_eq_u64(cap->ndamage, 0, "the file is intact");
	if (expect_eq_u64(cap->nsnapshots, 2, "the snapshots before the kill")) {
		expect_eq_u64(cap->snapshots[1].reason, HP_SNAP_SIGNAL, "the last is the signal's");
		expect_eq_u64(phase_in(cap, 1, "phase2"), 20, "with phase 2");
	}
	hpq_free(cap);
}

HP_TEST(dump_every_bytes)
{
	/* 60 allocations, 14 KiB in all; a snapshot is due every 2 KiB
	 * allocated, taken at the next allocation. */
	struct hp_capture *cap = run("every", "--dump-every 2048", "", 0);
	size_t bytes_snaps = 0;

	if (!cap)
		return;
	for (size_t i = 0; i < cap->nsnapshots; i++)
		bytes_snaps += cap->snapshots[i].reason == HP_SNAP_BYTES;
	expect_true(bytes_snaps >= 5 && bytes_snaps <= 7, "about one snapshot per 2 KiB");
	printf("  %zu snapshots for bytes allocated\n", bytes_snaps);
	hpq_free(cap);
}

HP_TEST(interval_snapshots_never_starve_the_program)
{
	/* 100,000 live blocks, then 6,000,000 allocations of churn, with a
	 * snapshot asked every millisecond: a snapshot walks the live
	 * register (the C++ types' scan) and costs far more than a
	 * millisecond, so back to back they left the program 64 allocations
	 * (one look at the clock) between two of them. The recorder spaces
	 * them so that writing them takes at most 5% of the run: between two,
	 * the program makes at least 19 times a snapshot's cost of progress,
	 * tens of thousands of allocations here however fast the machine
	 * (both scale with it). The report says how far apart they were. */
	char out[600], rep[700];
	struct hp_capture *cap;
	uint64_t prev = 0, least = UINT64_MAX;
	size_t n = 0;

	snprintf(out, sizeof out, "%s/livechurn.hpf", hp_test_tmp());
	snprintf(rep, sizeof rep, "%s/livechurn.txt", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --interval 1 -o %s -- "
				 "%s/tests/programs/livechurn 100000 6000000 > /dev/null",
				 hp_test_build(), out, hp_test_build()),
		      0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	/* Those of the churn, once the 100,000 blocks are live (100,001
	 * allocations with the array holding them). */
	for (size_t i = 0; i < cap->nsnapshots; i++) {
		const struct hp_cap_snapshot *s = &cap->snapshots[i];
		if (s->reason != HP_SNAP_INTERVAL || s->alloc_count < 100001)
			continue;
		if (n++ && s->alloc_count - prev < least)
			least = s->alloc_count - prev;
		prev = s->alloc_count;
	}
	printf("  %zu interval snapshots in the churn, at least %llu allocations between two\n",
	       n, (unsigned long long)least);
	expect_true(n >= 2, "interval snapshots were taken in the churn");
	expect_true(least >= 20000, "the program runs between two snapshots");
	expect_eq_u64(hp_test_sh("%s/heapprof report %s > %s && grep -q 'interval snapshots, .* s "
				 "apart on average (asked: 1 ms)' %s && grep -q 'spaced out by the "
				 "recorder: writing them takes at most 5%%' %s",
				 hp_test_build(), out, rep, rep, rep),
		      0, "the report gives their real spacing");
	hpq_free(cap);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
