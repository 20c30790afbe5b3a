/*
 * mapprog.c - live blocks at known addresses, for the memory map
 * (tests/integration/test_timeline.c): make_blocks allocates MAP_N blocks
 * of MAP_SIZE(i) bytes and frees every other one, a fragmented run; the
 * MAP_N / 2 kept ones are never freed, and their addresses and sizes are
 * printed, one "address size" line each, for the test to compare with
 * heapprof report --map --json.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

#define MAP_N 64
#define MAP_SIZE(i) (100u + 10u * (unsigned)(i))

static void *blocks[MAP_N];

NOINLINE void make_blocks(void)
{
	for (int i = 0; i < MAP_N; i++)
		KEEP(blocks[i] = malloc(MAP_SIZE(i)));
	for (int i = 1; i < MAP_N; i += 2)
		free(blocks[i]);
}

int main(void)
{
	make_blocks();
	for (int i = 0; i < MAP_N; i += 2)
		printf("%ju %u\n", (uintmax_t)(uintptr_t)blocks[i], MAP_SIZE(i));
	return 0;
}
