/*
 * sampling.c - 256 MiB allocated in mixed sizes, each block freed at once:
 * the truth against which the sampled estimates are checked. The sizes
 * and counts are in sampling.h.
 */
#include <stdlib.h>

#include "sampling.h"

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) void sampled_alloc(size_t size)
{
	void *p = malloc(size);
	KEEP(p);
	free(p);
}

int main(void)
{
	static const struct sampling_class classes[] = SAMPLING_CLASSES;
	for (unsigned c = 0; c < sizeof classes / sizeof *classes; c++)
		for (unsigned i = 0; i < classes[c].count; i++)
			sampled_alloc(classes[c].size);
	return 0;
}
