/*
 * test_known.c - heapprof run on tests/programs/known.c: per-stack figures,
 * exactly, with the right call paths, in both unwinding modes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../programs/known.h"
#include "../../src/common/version.h"

static struct hp_capture *run_known(const char *mode)
{
	char out[512];
	snprintf(out, sizeof out, "%s/known-%s.hpf", hp_test_tmp(), mode);
	int st = hp_test_sh("%s/heapprof run -q --unwind %s -o %s -- %s/tests/programs/known",
			    hp_test_build(), mode, out, hp_test_build());
	if (!expect_eq_u64(st, 0, "known exits 0 under heapprof (the allocator's answers kept)"))
		return NULL;
	return hpq_load(out);
}

#define STACK(...) ((const char *const[]){__VA_ARGS__, NULL})

static void check_known(struct hp_capture *cap)
{
	struct hpq_sum s;
	const struct hp_cap_snapshot *snap;

	if (!expect_true(cap != NULL, "capture loads"))
		return;
	snap = hp_capture_last(cap);
	if (!expect_true(snap != NULL, "a snapshot was written"))
		return;
	expect_eq_u64(snap->reason, HP_SNAP_EXIT, "last snapshot at exit");

	s = hpq_match(cap, STACK("leak_leaf", "leak_path", "main"));
	expect_eq_u64(s.alloc_count, LEAK_N, "leak: objects allocated");
	expect_eq_u64(s.alloc_bytes, LEAK_N * LEAK_SIZE, "leak: bytes allocated");
	expect_eq_u64(s.free_count, 0, "leak: nothing freed");
	expect_eq_u64(s.peak_count, LEAK_N, "leak: all live at the peak");
	expect_eq_u64(s.peak_bytes, LEAK_N * LEAK_SIZE, "leak: bytes at the peak");

	s = hpq_match(cap, STACK("peak_leaf", "main"));
	expect_eq_u64(s.alloc_count, PEAK_N, "peak: objects");
	expect_eq_u64(s.alloc_bytes, PEAK_N * PEAK_SIZE, "peak: bytes");
	expect_eq_u64(s.free_bytes, PEAK_N * PEAK_SIZE, "peak: all freed (by peak_release)");
	expect_eq_u64(s.peak_count, PEAK_N, "peak: all live at the peak");
	expect_eq_u64(s.peak_bytes, PEAK_N * PEAK_SIZE, "peak: bytes at the peak");
	/* peak_release frees in allocation order: only the last block is freed
	 * before its thread allocated anything else. */
	expect_eq_u64(s.temp_count, 1, "peak: one temporary, the last block");

	s = hpq_match(cap, STACK("churn_leaf", "main"));
	expect_eq_u64(s.alloc_count, CHURN_N, "churn: objects");
	expect_eq_u64(s.alloc_bytes, CHURN_N * CHURN_SIZE, "churn: bytes");
	expect_eq_u64(s.free_count, CHURN_N, "churn: all freed");
	expect_eq_u64(s.temp_count, CHURN_N, "churn: every block is a temporary");
	expect_eq_u64(s.temp_bytes, CHURN_N * CHURN_SIZE, "churn: temporary bytes");
	expect_eq_u64(s.peak_count, 0, "churn: nothing live at the peak");

	s = hpq_match(cap, STACK("calloc_leaf", "main"));
	expect_eq_u64(s.alloc_count, CALLOC_N, "calloc: objects");
	expect_eq_u64(s.alloc_bytes, CALLOC_N * CALLOC_NMEMB * CALLOC_SIZE, "calloc: bytes (n x size)");
	expect_eq_u64(s.free_count, CALLOC_N, "calloc: freed by calloc_release");

	s = hpq_match(cap, STACK("realloc_leaf", "main"));
	expect_eq_u64(s.alloc_count, 3, "realloc chain: each realloc is an allocation");
	expect_eq_u64(s.alloc_bytes, 16 + 32 + 64, "realloc chain: bytes");
	expect_eq_u64(s.free_count, 3, "realloc chain: each old block freed, the last by free");
	expect_eq_u64(s.temp_count, 3, "realloc chain: each block freed before the next allocation");

	s = hpq_match(cap, STACK("posix_memalign_leaf", "main"));
	expect_eq_u64(s.alloc_bytes, POSIX_MEMALIGN_SIZE, "posix_memalign: bytes");
	expect_eq_u64(s.free_count, 1, "posix_memalign: freed");
	s = hpq_match(cap, STACK("aligned_alloc_leaf", "main"));
	expect_eq_u64(s.alloc_bytes, ALIGNED_ALLOC_SIZE, "aligned_alloc: bytes");
	s = hpq_match(cap, STACK("memalign_leaf", "main"));
	expect_eq_u64(s.alloc_bytes, MEMALIGN_SIZE, "memalign: bytes");
	s = hpq_match(cap, STACK("valloc_leaf", "main"));
	expect_eq_u64(s.alloc_bytes, VALLOC_SIZE, "valloc: bytes");
	s = hpq_match(cap, STACK("pvalloc_leaf", "main"));
	expect_eq_u64(s.alloc_bytes, PVALLOC_SIZE, "pvalloc: bytes (as requested)");
	expect_eq_u64(s.free_count, 1, "pvalloc: freed");

	s = hpq_match(cap, STACK("thread_leaf", "thread_main"));
	expect_eq_u64(s.alloc_count, THREADS * THREAD_N, "threads: objects");
	expect_eq_u64(s.alloc_bytes, THREADS * THREAD_N * THREAD_SIZE, "threads: bytes");
	expect_eq_u64(s.free_count, THREADS * THREAD_N / 2, "threads: half freed");

	s = hpq_match(cap, STACK("failures", "main"));
	expect_eq_u64(s.alloc_count, 1, "failures: only the malloc(8) that worked is counted");
	expect_eq_u64(s.alloc_bytes, 8, "failures: its bytes");
	expect_eq_u64(s.free_count, 0, "failures: its failed realloc freed nothing");

	expect_eq_u64(snap->peak_bytes, KNOWN_PEAK_BYTES, "global peak: leaks + peak blocks");
	s = hpq_total(cap);
	expect_eq_u64(s.peak_bytes, KNOWN_PEAK_BYTES, "buckets at peak add up to the peak");
	if (s.peak_bytes != KNOWN_PEAK_BYTES || snap->peak_bytes != KNOWN_PEAK_BYTES)
		hpq_dump(cap);
}

HP_TEST(known_dwarf)
{
	struct hp_capture *cap = run_known("dwarf");
	check_known(cap);
	if (cap)
		expect_str(cap->recorder_version, HP_VERSION, "the recorder says heapprof's version");
	hpq_free(cap);
}

HP_TEST(known_fp)
{
	struct hp_capture *cap = run_known("fp");
	check_known(cap);
	hpq_free(cap);
}

HP_TEST(recorder_memory_budget)
{
	/* The budget: at most 32 bytes per live recorded block, all
	 * of the recorder's memory included, checked with a million blocks
	 * live (the figure is the recorder's own account of its tables and
	 * buffers; 27.6 bytes with 16-byte register entries, 52.8 with the
	 * 24-byte ones). */
	char out[8192];
	struct hp_capture *cap;

	snprintf(out, sizeof out, "%s/manylive.hpf", hp_test_tmp());
	expect_eq_u64(hp_test_sh("%s/heapprof run -q --no-symbols -o %s -- %s/tests/programs/manylive",
				 hp_test_build(), out, hp_test_build()),
		      0, "exit status");
	if (!(cap = hpq_load(out)))
		return;
	if (expect_true(cap->nsnapshots >= 2, "the dump's snapshot and the exit's")) {
		const struct hp_cap_snapshot *s = &cap->snapshots[0];
		uint64_t live = s->alloc_count - s->free_count;
		expect_true(live >= 1000000, "a million blocks live at the dump");
		expect_true(s->recorder_bytes > 0, "the recorder reports its memory");
		expect_true(s->recorder_bytes <= 32 * live,
			    "recorder memory <= 32 bytes per live block");
		printf("  recorder: %.1f MiB for %llu live blocks (%.1f bytes each)\n",
		       s->recorder_bytes / 1048576.0, (unsigned long long)live,
		       (double)s->recorder_bytes / (double)live);
	}
	hpq_free(cap);
}

int main(int argc, char **argv)
{
	return hp_test_main(argc, argv);
}
