/*
 * slowgrow.c - a heap that grows slowly (issue 23, item 1): N blocks of
 * SIZE bytes (default 60 of 1 MiB), one every GAP_MS milliseconds
 * (default 50), kept to the end; nothing else allocated in between.
 *
 *   slowgrow [N [SIZE [GAP_MS]]]
 *
 * Prints "done N". Exit status 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) static void *grow(size_t size) { return malloc(size); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 60;
	size_t size = argc > 2 ? (size_t)atol(argv[2]) : 1u << 20;
	long gap = argc > 3 ? atol(argv[3]) : 50;
	struct timespec ts = {gap / 1000, (gap % 1000) * 1000000L};

	printf("start\n");
	fflush(stdout);
	for (long i = 0; i < n; i++) {
		KEEP(grow(size));
		nanosleep(&ts, NULL);
	}
	printf("done %ld\n", n);
	return 0;
}
