/*
 * phases.c - a run of known phases (phases.h): build A, snapshot, pause,
 * build B while freeing A, snapshot, pause, leak C, exit. The pauses keep
 * allocating and freeing small blocks (64 at a time, 0.25 ms apart) so that
 * the time series, taken on allocation ticks, goes on every 10 ms; they
 * leave nothing in use. The block tables are static: nothing else is
 * allocated.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "../../include/heapprof.h"
#include "phases.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static void *a[PHASE_A_N], *b[PHASE_B_N];

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

NOINLINE void pause_busy(void)
{
	uint64_t end = now_ns() + PHASE_PAUSE_MS * 1000000ull;
	struct timespec tick = {0, 250000}; /* 64 allocations a tick: a sample every 10 ms */

	while (now_ns() < end) {
		for (int i = 0; i < 64; i++) {
			void *p = malloc(PHASE_TEMP_SIZE);
			KEEP(p);
			free(p);
		}
		nanosleep(&tick, NULL);
	}
}

NOINLINE void build_a(void)
{
	for (int i = 0; i < PHASE_A_N; i++)
		KEEP(a[i] = malloc(PHASE_A_SIZE));
}

NOINLINE void build_b(void)
{
	for (int i = 0; i < PHASE_B_N; i++) {
		free(a[i]);
		KEEP(b[i] = malloc(PHASE_B_SIZE));
	}
}

NOINLINE void leak_c(void)
{
	for (int i = 0; i < PHASE_C_N; i++)
		KEEP(malloc(PHASE_C_SIZE));
}

int main(void)
{
	if (!heapprof_dump)
		return 2;
	build_a();
	if (heapprof_dump() != 0)
		return 2;
	pause_busy();
	build_b();
	if (heapprof_dump() != 0)
		return 2;
	pause_busy();
	for (int i = 0; i < PHASE_B_N; i++)
		free(b[i]);
	leak_c();
	return 0;
}
