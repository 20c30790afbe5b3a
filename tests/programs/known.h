/*
 * known.h - the allocations of tests/programs/known.c, shared with the
 * tests that check them. Every figure a test expects is computed from these
 * constants, never copied from an output.
 */
#ifndef HP_TEST_KNOWN_H
#define HP_TEST_KNOWN_H

/* leak_path -> leak_leaf: never freed. */
#define LEAK_N 10
#define LEAK_SIZE 100
/* peak_leaf: all live together at the global peak, then freed by peak_release. */
#define PEAK_N 50
#define PEAK_SIZE 1000
/* churn_leaf: each block freed at once, before anything else is allocated. */
#define CHURN_N 1000
#define CHURN_SIZE 64
/* calloc_leaf: CALLOC_N blocks of CALLOC_NMEMB x CALLOC_SIZE, freed later. */
#define CALLOC_N 5
#define CALLOC_NMEMB 10
#define CALLOC_SIZE 20
/* realloc_leaf: realloc(NULL, 16) -> 32 -> 64, then free. */
#define REALLOC_SIZES {16, 32, 64}
/* aligned functions, one call each, each from its own function, freed. */
#define POSIX_MEMALIGN_SIZE 100
#define ALIGNED_ALLOC_SIZE 256
#define MEMALIGN_SIZE 48
#define VALLOC_SIZE 100
#define PVALLOC_SIZE 100
/* thread_leaf: THREADS threads allocate THREAD_N blocks each, free half. */
#define THREADS 4
#define THREAD_N 500
#define THREAD_SIZE 16

/* The global peak: the leaks plus the peak blocks. */
#define KNOWN_PEAK_BYTES (LEAK_N * LEAK_SIZE + PEAK_N * PEAK_SIZE)

#endif
