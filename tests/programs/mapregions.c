/*
 * mapregions.c - live blocks in each kind of region that holds the heap,
 * for the memory map's regions (tests/integration/test_timeline.c):
 *
 *   make_small    SMALL_N blocks of SMALL_SIZE(i) bytes in the brk heap,
 *                 every other one freed: SMALL_N / 2 kept
 *   make_big      a BIG_A_BYTES block (glibc mmaps it: over its 128 KiB
 *                 threshold) of which only the first BIG_A_TOUCHED bytes
 *                 are written, then a BIG_B_BYTES block written whole
 *                 (two mappings side by side that the kernel may merge)
 *   make_threaded THREAD_N blocks of THREAD_SIZE bytes, allocated by a
 *                 second thread: in the heap of another arena
 *
 * Nothing is freed after; the program prints "small|big|thread ADDRESS
 * SIZE" for each kept block, then "maps" and its /proc/self/maps, read and
 * written with system calls only (no malloc, no stdio buffer), as the
 * last thing before exit.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

#define SMALL_N 64
#define SMALL_SIZE(i) (200u + 8u * (unsigned)(i))
#define BIG_A_BYTES (1u << 20)
#define BIG_A_TOUCHED (64u << 10)
#define BIG_B_BYTES (512u << 10)
#define THREAD_N 20
#define THREAD_SIZE 1000u

static void *small[SMALL_N], *big_a, *big_b, *threaded[THREAD_N];

NOINLINE void make_small(void)
{
	for (int i = 0; i < SMALL_N; i++)
		KEEP(small[i] = malloc(SMALL_SIZE(i)));
	for (int i = 1; i < SMALL_N; i += 2)
		free(small[i]);
}

NOINLINE void make_big(void)
{
	KEEP(big_a = malloc(BIG_A_BYTES));
	memset(big_a, 1, BIG_A_TOUCHED);
	KEEP(big_b = malloc(BIG_B_BYTES));
	memset(big_b, 2, BIG_B_BYTES);
}

NOINLINE void make_threaded(void)
{
	for (int i = 0; i < THREAD_N; i++) {
		KEEP(threaded[i] = malloc(THREAD_SIZE));
		memset(threaded[i], 3, THREAD_SIZE);
	}
}

static void *thread_main(void *arg)
{
	(void)arg;
	make_threaded();
	return NULL;
}

static void put_maps(void)
{
	static char buf[1 << 16];
	int fd = open("/proc/self/maps", O_RDONLY);
	ssize_t n;

	if (write(1, "maps\n", 5) != 5 || fd < 0)
		exit(1);
	while ((n = read(fd, buf, sizeof buf)) > 0)
		if (write(1, buf, (size_t)n) != n)
			exit(1);
	close(fd);
}

int main(void)
{
	pthread_t t;

	make_small();
	make_big();
	if (pthread_create(&t, NULL, thread_main, NULL) || pthread_join(t, NULL))
		return 1;
	for (int i = 0; i < SMALL_N; i += 2)
		printf("small %ju %u\n", (uintmax_t)(uintptr_t)small[i], SMALL_SIZE(i));
	printf("big %ju %u\n", (uintmax_t)(uintptr_t)big_a, BIG_A_BYTES);
	printf("big %ju %u\n", (uintmax_t)(uintptr_t)big_b, BIG_B_BYTES);
	for (int i = 0; i < THREAD_N; i++)
		printf("thread %ju %u\n", (uintmax_t)(uintptr_t)threaded[i], THREAD_SIZE);
	fflush(stdout);
	put_maps();
	return 0;
}
