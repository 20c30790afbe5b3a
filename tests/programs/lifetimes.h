/*
 * lifetimes.h - the known sizes and lifetimes of tests/programs/lifetimes.c,
 * shared with the test that checks its histograms
 * (tests/integration/test_timeline.c).
 *
 *   short_lived: LIFE_SHORT_N blocks of LIFE_SHORT_SIZE, each freed at once (no
 *     allocation in between: lifetime class 0, "< 64");
 *   long_lived: LIFE_LONG_N blocks of LIFE_LONG_SIZE, then filler allocates and
 *     frees LIFE_FILLER_N blocks of LIFE_FILLER_SIZE (each freed at once), then the
 *     LIFE_LONG_N blocks are freed: each lived through LIFE_FILLER_N plus fewer than
 *     LIFE_LONG_N allocations, counted in units of 64 (1,472 or 1,536): class
 *     [1,024, 2,048);
 *   leak: LIFE_LEAK_N blocks of LIFE_LEAK_SIZE, never freed.
 */
#ifndef HP_TEST_LIFETIMES_H
#define HP_TEST_LIFETIMES_H

#define LIFE_SHORT_N 200
#define LIFE_SHORT_SIZE 24 /* class [16, 32) */
#define LIFE_LONG_N 10
#define LIFE_LONG_SIZE 3000 /* class [2,048, 4,096) */
#define LIFE_FILLER_N 1500
#define LIFE_FILLER_SIZE 8 /* class [8, 16) */
#define LIFE_LEAK_N 5
#define LIFE_LEAK_SIZE 100000 /* class [65,536, 131,072) */

#endif
