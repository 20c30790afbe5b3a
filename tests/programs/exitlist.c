/*
 * exitlist.c - linked with libexitlist.so, whose constructor registered
 * 200 exit functions before main (glibc's exit list then holds blocks of
 * its own, freed at exit after the exit snapshot). The program allocates
 * 3 blocks of 64 bytes, frees them, and exits: nothing is in use at exit.
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

NOINLINE void *exitlist_alloc(void)
{
	return malloc(64);
}

int main(void)
{
	void *p[3];

	for (int i = 0; i < 3; i++)
		p[i] = exitlist_alloc();
	for (int i = 0; i < 3; i++)
		free(p[i]);
	puts("ok");
	return 0;
}
