/*
 * manystacks.c - MANYSTACKS_PATHS distinct call stacks (manystacks.h),
 * walked by MANYSTACKS_THREADS threads at once: more stacks than one chunk
 * of the recorder's tables holds, interned while other threads look the
 * same stacks up.
 */
#include <pthread.h>
#include <stdlib.h>

#include "manystacks.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

/* Distinct bodies: identical functions could be folded into one. */
static volatile unsigned ones, zeros;

void path_step(unsigned path, unsigned level);

NOINLINE void path_leaf(unsigned path)
{
	void *p = malloc(MANYSTACKS_SIZE(path));
	KEEP(p);
}

NOINLINE void path_one(unsigned path, unsigned level)
{
	ones++;
	path_step(path, level + 1);
}

NOINLINE void path_zero(unsigned path, unsigned level)
{
	zeros += 2;
	path_step(path, level + 1);
}

NOINLINE void path_step(unsigned path, unsigned level)
{
	if (level == MANYSTACKS_LEVELS)
		path_leaf(path);
	else if (path >> level & 1)
		path_one(path, level);
	else
		path_zero(path, level);
}

NOINLINE void *manystacks_thread(void *arg)
{
	(void)arg;
	for (unsigned p = 0; p < MANYSTACKS_PATHS; p++)
		path_step(p, 0);
	return NULL;
}

int main(void)
{
	pthread_t t[MANYSTACKS_THREADS];

	for (int i = 0; i < MANYSTACKS_THREADS; i++)
		if (pthread_create(&t[i], NULL, manystacks_thread, NULL))
			return 1;
	for (int i = 0; i < MANYSTACKS_THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
