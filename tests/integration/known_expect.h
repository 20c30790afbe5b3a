/*
 * known_expect.h - what a capture of tests/programs/known.c must hold,
 * exactly (its figures are in known.h): check_known, shared by the
 * dynamic recorder's test (test_known.c) and the static one's
 * (test_static.c). Included once per test binary.
 */
#ifndef HP_TEST_KNOWN_EXPECT_H
#define HP_TEST_KNOWN_EXPECT_H

#include "../harness/harness.h"
#include "../harness/query.h"
#include "../programs/known.h"

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

#endif
