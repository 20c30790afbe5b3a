/*
 * millionstacks.c - 2^20 distinct call stacks (MILLIONSTACKS_LEVELS base-4
 * digits of the path, each a call to one of four distinct functions), one
 * block of MILLIONSTACKS_SIZE(path) bytes on each, kept to the end. No
 * stdio: every allocation is a path's.
 */
#include <stdlib.h>

#include "millionstacks.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static volatile unsigned sink;

NOINLINE static void step(unsigned long path, unsigned level);

NOINLINE static void leaf(unsigned long path)
{
	void *p = malloc(MILLIONSTACKS_SIZE(path));
	KEEP(p);
}

/* Distinct bodies: identical functions could be folded into one. */
NOINLINE static void step_0(unsigned long path, unsigned level)
{
	sink += 1;
	step(path, level + 1);
}

NOINLINE static void step_1(unsigned long path, unsigned level)
{
	sink += 2;
	step(path, level + 1);
}

NOINLINE static void step_2(unsigned long path, unsigned level)
{
	sink += 3;
	step(path, level + 1);
}

NOINLINE static void step_3(unsigned long path, unsigned level)
{
	sink += 4;
	step(path, level + 1);
}

NOINLINE static void step(unsigned long path, unsigned level)
{
	if (level == MILLIONSTACKS_LEVELS) {
		leaf(path);
		return;
	}
	switch (path >> (2 * level) & 3) {
	case 0: step_0(path, level); break;
	case 1: step_1(path, level); break;
	case 2: step_2(path, level); break;
	default: step_3(path, level); break;
	}
	sink++; /* not a tail call: each step stays on the stack */
}

int main(void)
{
	for (unsigned long p = 0; p < MILLIONSTACKS_PATHS; p++)
		step(p, 0);
	return 0;
}
