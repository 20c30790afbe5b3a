/*
 * manystacks.c - a program with 4^LEVELS distinct call stacks (LEVELS
 * from argv[1], default 10: 1,048,576 stacks), BLOCKS blocks allocated on
 * each (argv[2], default 1) and kept to the end: the capture of the
 * analyzer benchmark's million stacks (bench/analyzer/run.sh).
 *
 * Path p is the stack: step_P for each base-4 digit of p, innermost digit
 * last, then leaf; step_0..step_3 are distinct functions, so every path
 * is a distinct stack of LEVELS + 3 frames or so (main, the steps, leaf).
 */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static unsigned levels = 10, blocks = 1;
static volatile unsigned sink;

NOINLINE static void step(unsigned long path, unsigned level);

NOINLINE static void leaf(unsigned long path)
{
	for (unsigned b = 0; b < blocks; b++) {
		void *p = malloc(16 + (path & 63));
		KEEP(p);
	}
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
	if (level == levels) {
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

int main(int argc, char **argv)
{
	if (argc > 1)
		levels = (unsigned)atoi(argv[1]);
	if (argc > 2)
		blocks = (unsigned)atoi(argv[2]);
	if (levels > 15 || !blocks) {
		fprintf(stderr, "usage: manystacks [LEVELS (<= 15)] [BLOCKS]\n");
		return 2;
	}
	for (unsigned long p = 0; p < 1ul << (2 * levels); p++)
		step(p, 0);
	printf("%lu stacks\n", 1ul << (2 * levels));
	return 0;
}
