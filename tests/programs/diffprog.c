/*
 * diffprog.c - leaks chosen on the command line, for `heapprof diff`
 * (see diffprog.h): two runs with different arguments differ by exactly
 * known figures on known stacks, at different addresses (ASLR).
 * Functions are noinline and end with a compiler barrier so that each
 * keeps its frame.
 */
#include <stdlib.h>

#include "diffprog.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

NOINLINE void grow_leaf(int n)
{
	for (int i = 0; i < n; i++)
		KEEP(malloc(DIFF_GROW_SIZE));
}

NOINLINE void shrink_leaf(int n)
{
	for (int i = 0; i < n; i++)
		KEEP(malloc(DIFF_SHRINK_SIZE));
}

NOINLINE void steady_leaf(void)
{
	for (int i = 0; i < DIFF_STEADY_N; i++)
		KEEP(malloc(DIFF_STEADY_SIZE));
}

/* n blocks held at once, then freed: the peak, not the leaks. */
NOINLINE void temp_peak(int n)
{
	void *held[64];

	for (int i = 0; i < n && i < 64; i++)
		KEEP(held[i] = malloc(DIFF_TEMP_SIZE));
	for (int i = 0; i < n && i < 64; i++)
		free(held[i]);
}

int main(int argc, char **argv)
{
	int grow = argc > 1 ? atoi(argv[1]) : 0, shrink = argc > 2 ? atoi(argv[2]) : 0;
	int temp = argc > 3 ? atoi(argv[3]) : 0;

	steady_leaf();
	grow_leaf(grow);
	if (shrink)
		shrink_leaf(shrink);
	if (temp)
		temp_peak(temp);
	KEEP(argv);
	return 0;
}
