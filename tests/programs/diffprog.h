/*
 * diffprog.h - the allocations of tests/programs/diffprog.c, shared with
 * the diff tests: `diffprog GROW SHRINK` leaks GROW blocks from grow_leaf
 * and SHRINK blocks from shrink_leaf (with 0, the stack never allocates
 * and is absent from the capture), and always the same steady blocks from
 * steady_leaf; `diffprog GROW SHRINK TEMP` also holds TEMP blocks of
 * DIFF_TEMP_SIZE from temp_peak at once and frees them before exit (the
 * peak grows, nothing more leaks). Tests compute every expected figure
 * from these constants.
 */
#ifndef HP_TEST_DIFFPROG_H
#define HP_TEST_DIFFPROG_H

#define DIFF_GROW_SIZE 100
#define DIFF_SHRINK_SIZE 1000
#define DIFF_STEADY_N 7
#define DIFF_STEADY_SIZE 40
#define DIFF_TEMP_SIZE 100000

#endif
