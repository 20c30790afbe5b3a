/*
 * lifetimes.h - the known sizes and lifetimes of tests/programs/lifetimes.c,
 * shared with the test that checks its histograms
 * (tests/integration/test_timeline.c).
 *
 *   short_lived: SHORT_N blocks of SHORT_SIZE, each freed at once (no
 *     allocation in between: lifetime class 0, "< 64");
 *   long_lived: LONG_N blocks of LONG_SIZE, then filler allocates and
 *     frees FILLER_N blocks of FILLER_SIZE (each freed at once), then the
 *     LONG_N blocks are freed: each lived through FILLER_N plus fewer than
 *     LONG_N allocations, counted in units of 64 (1,472 or 1,536): class
 *     [1,024, 2,048);
 *   leak: LEAK_N blocks of LEAK_SIZE, never freed.
 */
#ifndef HP_TEST_LIFETIMES_H
#define HP_TEST_LIFETIMES_H

#define SHORT_N 200
#define SHORT_SIZE 24 /* class [16, 32) */
#define LONG_N 10
#define LONG_SIZE 3000 /* class [2,048, 4,096) */
#define FILLER_N 1500
#define FILLER_SIZE 8 /* class [8, 16) */
#define LEAK_N 5
#define LEAK_SIZE 100000 /* class [65,536, 131,072) */

#endif
