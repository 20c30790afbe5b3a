/*
 * churn.h - tests/programs/churn.c: CHURN_PATHS distinct call stacks that
 * all change all the time, for CHURN_MS, shared with the test that
 * bounds the per-site timeline's cost (tests/integration/test_timeline.c).
 *
 * Path p (0 <= p < CHURN_PATHS) is a distinct stack, as manystacks.h's:
 * churn_leaf, then for each level either churn_one or churn_zero. The
 * program walks the paths round and round; on each it frees the block the
 * path holds and allocates CHURN_SIZE(p, r) bytes in its place (r: the
 * rounds walked before), so each path holds one block at any time, of a
 * size that moves, and every bucket changes between two ticks of the
 * timeline with a new figure.
 */
#ifndef HP_TEST_CHURN_H
#define HP_TEST_CHURN_H

#define CHURN_LEVELS 10
#define CHURN_PATHS (1u << CHURN_LEVELS) /* 1024 */
#define CHURN_SIZE(p, r) (32u + (((p)*7u + (r)) & 1023u))
#define CHURN_MS 2000

#endif
