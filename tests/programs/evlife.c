/*
 * evlife: blocks of known lifetimes, times and threads, for the event log
 * (tests/integration/test_events.c). Each kind of block has a size of its
 * own, so that the test finds it in `report --blocks` whatever glibc
 * allocates besides; each is allocated in a function named phase_*, so
 * that `--focus phase_` keeps them alone.
 *
 *   at 0 s     main: 20 x 5005 B kept to the end (lived > 0.9 s);
 *              1,000 x 1001 B, each freed at once (lived well under 100 ms)
 *   at 0.5 s   thread "ev-worker": 50 x 2002 B, freed 100 ms later
 *              (0.6 s), and 7 x 3003 B never freed, typed "Leak"
 *              (heapprof_set_type, after their allocation)
 *   at 1.0 s   main: 3 x 4004 B, freed at once; then frees the 20 x 5005 B
 *
 * Prints "done" and exits with status 3.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../../include/heapprof.h"

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t) != 0)
		;
}

static void *volatile sink;

__attribute__((noinline)) static void phase_short(void)
{
	for (int i = 0; i < 1000; i++) {
		sink = malloc(1001);
		free(sink);
	}
}

__attribute__((noinline)) static void phase_long(void **keep)
{
	for (int i = 0; i < 20; i++)
		keep[i] = malloc(5005);
}

__attribute__((noinline)) static void phase_worker(void)
{
	void *mid[50];

	for (int i = 0; i < 50; i++)
		mid[i] = malloc(2002);
	for (int i = 0; i < 7; i++) {
		sink = malloc(3003); /* never freed */
		if (heapprof_set_type)
			heapprof_set_type(sink, "Leak");
	}
	sleep_ms(100);
	for (int i = 0; i < 50; i++)
		free(mid[i]);
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "ev-worker"); /* before it allocates */
	phase_worker();
	return NULL;
}

__attribute__((noinline)) static void phase_late(void)
{
	for (int i = 0; i < 3; i++) {
		sink = malloc(4004);
		free(sink);
	}
}

int main(void)
{
	void *keep[20];
	pthread_t t;

	phase_long(keep);
	phase_short();
	sleep_ms(500);
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	sleep_ms(1000 - 600);
	phase_late();
	for (int i = 0; i < 20; i++)
		free(keep[i]);
	printf("done\n");
	return 3;
}
