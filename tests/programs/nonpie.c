/*
 * nonpie.c - built without PIE (as Debian's python3 and node are), taking
 * malloc's address: the executable then has a canonical PLT entry for
 * malloc, an undefined symbol with a value, which dlsym answers for
 * "malloc" though the executable defines none. 10 allocations of 100
 * bytes through that address, 5 kept; prints 5.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void *(*volatile take_malloc)(size_t);

NOINLINE void *nonpie_alloc(void)
{
	return take_malloc(100);
}

int main(void)
{
	void *keep[5];
	int kept = 0;

	take_malloc = malloc; /* in code: an absolute address, the PLT entry's */
	for (int i = 0; i < 10; i++) {
		void *p = nonpie_alloc();
		if (i % 2)
			free(p);
		else
			keep[kept++] = p;
	}
	printf("%d\n", kept);
	for (int i = 0; i < kept; i++)
		free(keep[i]);
	return 0;
}
