/*
 * manystacks.h - the allocations of tests/programs/manystacks.c, shared
 * with the test that reads them back.
 *
 * Path p (0 <= p < MANYSTACKS_PATHS) is a distinct call stack, innermost
 * first: path_leaf, path_step, then for each level l from LEVELS - 1 down
 * to 0 either path_one (bit l of p set) or path_zero, each followed by
 * path_step, then main (or manystacks_thread). Each thread allocates
 * MANYSTACKS_SIZE(p) bytes once on every path, and never frees them.
 */
#ifndef HP_TEST_MANYSTACKS_H
#define HP_TEST_MANYSTACKS_H

#define MANYSTACKS_LEVELS 13
#define MANYSTACKS_PATHS (1u << MANYSTACKS_LEVELS) /* 8192: two entry chunks of 4096 */
/* At least 64 bytes, so that a sampling rate of 2 bytes samples every one. */
#define MANYSTACKS_SIZE(p) (64u + (p))
#define MANYSTACKS_THREADS 4

#endif
