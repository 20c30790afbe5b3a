/*
 * millionstacks.h - the allocations of tests/programs/millionstacks.c,
 * shared with the test that reads them back.
 */
#ifndef HP_TEST_MILLIONSTACKS_H
#define HP_TEST_MILLIONSTACKS_H

#define MILLIONSTACKS_LEVELS 10
#define MILLIONSTACKS_PATHS (1ul << (2 * MILLIONSTACKS_LEVELS)) /* 2^20 */
#define MILLIONSTACKS_SIZE(path) (16u + ((path) & 63))
/* The bytes of all the blocks: 2^20 x 16 plus 2^14 times 0 + ... + 63. */
#define MILLIONSTACKS_BYTES (MILLIONSTACKS_PATHS * 16 + (MILLIONSTACKS_PATHS / 64) * 2016)

#endif
