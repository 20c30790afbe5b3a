/*
 * lifetimes.c - blocks of known sizes and lifetimes (lifetimes.h).
 */
#include <stdlib.h>

#include "lifetimes.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static void *held[LONG_N];

NOINLINE void short_lived(void)
{
	for (int i = 0; i < SHORT_N; i++) {
		void *p = malloc(SHORT_SIZE);
		KEEP(p);
		free(p);
	}
}

NOINLINE void filler(void)
{
	for (int i = 0; i < FILLER_N; i++) {
		void *p = malloc(FILLER_SIZE);
		KEEP(p);
		free(p);
	}
}

NOINLINE void long_lived(void)
{
	for (int i = 0; i < LONG_N; i++)
		KEEP(held[i] = malloc(LONG_SIZE));
	filler();
	for (int i = 0; i < LONG_N; i++)
		free(held[i]);
}

NOINLINE void leak(void)
{
	for (int i = 0; i < LEAK_N; i++)
		KEEP(malloc(LEAK_SIZE));
}

int main(void)
{
	short_lived();
	long_lived();
	leak();
	return 0;
}
