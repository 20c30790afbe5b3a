/*
 * livechurn.c - many live blocks, then churn: LIVE blocks of 32 bytes
 * allocated and kept, then ITERS allocations of 64 bytes, each freed at
 * once, then the live ones freed. With --interval, a snapshot's walk of
 * the live register costs far more than the churn between two ticks.
 *
 * argv[1]: LIVE (default 1000000), argv[2]: ITERS (default 4000000).
 * Prints 0; exit status 0.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

NOINLINE void *keep_alloc(void)
{
	return malloc(32);
}

NOINLINE void churn_alloc(void)
{
	void *p = malloc(64);
	KEEP(p);
	free(p);
}

int main(int argc, char **argv)
{
	long live = argc > 1 ? atol(argv[1]) : 1000000, iters = argc > 2 ? atol(argv[2]) : 4000000;
	void **b = malloc(sizeof(void *) * (size_t)live);

	if (!b)
		return 1;
	for (long i = 0; i < live; i++)
		b[i] = keep_alloc();
	for (long i = 0; i < iters; i++)
		churn_alloc();
	for (long i = 0; i < live; i++)
		free(b[i]);
	free(b);
	printf("0\n");
	return 0;
}
