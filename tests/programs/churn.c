/*
 * churn.c - CHURN_PATHS call stacks that change all the time (churn.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "churn.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static void *held[CHURN_PATHS];
static unsigned round_no; /* the rounds walked so far: sizes change with it */
/* Distinct bodies: identical functions could be folded into one. */
static volatile unsigned ones, zeros;

void churn_step(unsigned path, unsigned level);

NOINLINE void churn_leaf(unsigned path)
{
	free(held[path]);
	KEEP(held[path] = malloc(CHURN_SIZE(path, round_no)));
}

NOINLINE void churn_one(unsigned path, unsigned level)
{
	ones++;
	churn_step(path, level + 1);
}

NOINLINE void churn_zero(unsigned path, unsigned level)
{
	zeros++;
	churn_step(path, level + 1);
}

NOINLINE void churn_step(unsigned path, unsigned level)
{
	if (level == CHURN_LEVELS)
		churn_leaf(path);
	else if (path >> level & 1)
		churn_one(path, level);
	else
		churn_zero(path, level);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
	uint64_t end = now_ns() + CHURN_MS * 1000000ull;

	for (; now_ns() < end; round_no++)
		for (unsigned p = 0; p < CHURN_PATHS; p++)
			churn_step(p, 0);
	for (unsigned p = 0; p < CHURN_PATHS; p++)
		free(held[p]);
	return 0;
}
