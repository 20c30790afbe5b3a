/*
 * rec_seam.h - the recorder's unit tests swap os.c functions through the
 * seam (src/recorder/os.h, built with HP_OS_MUTABLE): mmap that fails from
 * the N-th call on, writes that stop half way.
 *
 * Each test that swaps a function puts the real one back before it ends
 * (seam_restore). The counters are atomics: the fakes may run on many
 * threads.
 */
#ifndef HP_TEST_REC_SEAM_H
#define HP_TEST_REC_SEAM_H

#include <errno.h>
#include <stdint.h>

#include "../../src/recorder/os.h"

/* The real functions, taken before any test swaps them. */
static void *(*seam_map_real)(size_t);
static int (*seam_pwrite_real)(int, const void *, size_t, uint64_t);

/* Calls of hp_os_map so far, and the number of calls that still succeed
 * (-1: all). */
static long seam_map_calls, seam_map_left = -1;

static inline void *seam_map(size_t n)
{
	long left = __atomic_load_n(&seam_map_left, __ATOMIC_RELAXED);

	__atomic_add_fetch(&seam_map_calls, 1, __ATOMIC_RELAXED);
	if (left == 0) /* stays 0: every later call fails too */
		return NULL;
	if (left > 0) /* failures are tested on one thread: no race here */
		__atomic_store_n(&seam_map_left, left - 1, __ATOMIC_RELAXED);
	return seam_map_real(n);
}

/* From now on hp_os_map succeeds `left` more times, then fails (-1: never
 * fails, counting only). */
static inline void seam_map_fail_after(long left)
{
	if (!seam_map_real)
		seam_map_real = hp_os_map;
	seam_map_calls = 0;
	seam_map_left = left;
	hp_os_map = seam_map;
}

/* pwrite: the byte budget left before the disk is "full" (-1: no limit);
 * a write that crosses it writes what fits and fails with ENOSPC. */
static int64_t seam_disk_left = -1;
static long seam_pwrite_calls;

static inline int seam_pwrite(int fd, const void *p, size_t n, uint64_t off)
{
	seam_pwrite_calls++;
	if (seam_disk_left >= 0 && (int64_t)n > seam_disk_left) {
		size_t part = (size_t)seam_disk_left;
		seam_disk_left = 0;
		if (part)
			seam_pwrite_real(fd, p, part, off);
		return -ENOSPC;
	}
	if (seam_disk_left >= 0)
		seam_disk_left -= (int64_t)n;
	return seam_pwrite_real(fd, p, n, off);
}

static inline void seam_disk_full_after(int64_t bytes)
{
	if (!seam_pwrite_real)
		seam_pwrite_real = hp_os_pwrite_all;
	seam_pwrite_calls = 0;
	seam_disk_left = bytes;
	hp_os_pwrite_all = seam_pwrite;
}

/* Puts every swapped function back. */
static inline void seam_restore(void)
{
	if (seam_map_real)
		hp_os_map = seam_map_real;
	if (seam_pwrite_real)
		hp_os_pwrite_all = seam_pwrite_real;
	seam_map_left = seam_disk_left = -1;
}

#endif
