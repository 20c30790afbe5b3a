/*
 * lifetimes.c - blocks of known sizes and lifetimes (lifetimes.h).
 */
#include <stdlib.h>

#include "lifetimes.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static void *held[LIFE_LONG_N];

NOINLINE void short_lived(void)
{
	for (int i = 0; i < LIFE_SHORT_N; i++) {
		void *p = malloc(LIFE_SHORT_SIZE);
		KEEP(p);
		free(p);
	}
}

NOINLINE void filler(void)
{
	for (int i = 0; i < LIFE_FILLER_N; i++) {
		void *p = malloc(LIFE_FILLER_SIZE);
		KEEP(p);
		free(p);
	}
}

NOINLINE void long_lived(void)
{
	for (int i = 0; i < LIFE_LONG_N; i++)
		KEEP(held[i] = malloc(LIFE_LONG_SIZE));
	filler();
	for (int i = 0; i < LIFE_LONG_N; i++)
		free(held[i]);
}

NOINLINE void leak(void)
{
	for (int i = 0; i < LIFE_LEAK_N; i++)
		KEEP(malloc(LIFE_LEAK_SIZE));
}

int main(void)
{
	short_lived();
	long_lived();
	leak();
	return 0;
}
