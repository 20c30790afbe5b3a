/*
 * peaks.c - runs one workload of peaks.h (grow, parse or churn) on the C
 * allocator: the truth against which the sampled peak is checked. Exits 2
 * on an unknown workload, 1 when an allocation fails.
 */
#include <stdlib.h>

#include "peaks.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

NOINLINE static void *peaks_malloc(size_t size)
{
	void *p = malloc(size);
	if (!p)
		exit(1);
	KEEP(p);
	return p;
}

NOINLINE static void *peaks_realloc(void *old, size_t size)
{
	void *p = realloc(old, size);
	if (!p)
		exit(1);
	KEEP(p);
	return p;
}

NOINLINE static void peaks_free(void *p)
{
	free(p);
	KEEP(p);
}

int main(int argc, char **argv)
{
	static const struct peaks_ops ops = {peaks_malloc, peaks_realloc, peaks_free};
	void (*run)(const struct peaks_ops *) = argc == 2 ? peaks_workload(argv[1]) : NULL;

	if (!run)
		return 2;
	run(&ops);
	return 0;
}
