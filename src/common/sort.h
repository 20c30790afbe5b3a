/*
 * sort.h - qsort and bsearch for arrays that may be empty.
 *
 * The C library declares both with a nonnull base, even for no element:
 * qsort(NULL, 0, ...) is undefined behaviour (UBSan stops on it), and an
 * empty array of the analyzer is NULL as often as not (a capture without
 * buckets, a view that kept nothing). Every sort and binary search of
 * src/format and src/analyzer goes through these two, so that no caller
 * has to remember the empty case (tests/unit/test_layout.c checks that no
 * other calls qsort or bsearch).
 *
 * Allocation-free and async-signal-safe as far as cmp is; header-only.
 */
#ifndef HP_COMMON_SORT_H
#define HP_COMMON_SORT_H

#include <stddef.h>
#include <stdlib.h>

/* qsort(base, n, size, cmp), and nothing for fewer than 2 elements (base
 * may then be NULL). */
static inline void hp_sort(void *base, size_t n, size_t size,
			   int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* bsearch(key, base, n, size, cmp), and NULL for no element (base may
 * then be NULL). */
static inline void *hp_bsearch(const void *key, const void *base, size_t n, size_t size,
			       int (*cmp)(const void *, const void *))
{
	return n ? bsearch(key, base, n, size, cmp) : NULL;
}

#endif
