/*
 * known.c - a program whose allocations are known exactly (see known.h):
 * several call paths, leaks, a peak, churn, calloc, a realloc chain, every
 * aligned function, threads and failing allocations. Functions are
 * noinline and end with a compiler barrier so that each keeps its frame.
 *
 * It checks the allocator's answers itself (NULL, errno, EINVAL) and exits
 * 1 if the recorder changed them.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "known.h"

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static void *leaks[LEAK_N];
static void *peak[PEAK_N];
static void *callocs[CALLOC_N];
static int broken;
/* Sizes no allocator can satisfy, hidden from the compiler's checks. */
static volatile size_t huge = SIZE_MAX - 4096, half = SIZE_MAX / 2;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "known: %s\n", what);
		broken = 1;
	}
}

NOINLINE void leak_leaf(void)
{
	for (int i = 0; i < LEAK_N; i++)
		leaks[i] = malloc(LEAK_SIZE);
	KEEP(leaks);
}

NOINLINE void leak_path(void)
{
	leak_leaf();
	KEEP(leaks);
}

NOINLINE void peak_leaf(void)
{
	for (int i = 0; i < PEAK_N; i++)
		peak[i] = malloc(PEAK_SIZE);
	KEEP(peak);
}

NOINLINE void peak_release(void)
{
	for (int i = 0; i < PEAK_N; i++)
		free(peak[i]);
	KEEP(peak);
}

NOINLINE void churn_leaf(void)
{
	for (int i = 0; i < CHURN_N; i++) {
		void *p = malloc(CHURN_SIZE);
		KEEP(p);
		free(p);
	}
}

NOINLINE void calloc_leaf(void)
{
	for (int i = 0; i < CALLOC_N; i++) {
		callocs[i] = calloc(CALLOC_NMEMB, CALLOC_SIZE);
		check(callocs[i] && ((char *)callocs[i])[CALLOC_SIZE - 1] == 0, "calloc not zeroed");
	}
	KEEP(callocs);
}

NOINLINE void calloc_release(void)
{
	for (int i = 0; i < CALLOC_N; i++)
		free(callocs[i]);
	KEEP(callocs);
}

NOINLINE void realloc_leaf(void)
{
	static const size_t sizes[] = REALLOC_SIZES;
	void *p = NULL;
	for (unsigned i = 0; i < sizeof sizes / sizeof *sizes; i++)
		p = realloc(p, sizes[i]);
	free(p);
	KEEP(p);
}

NOINLINE void posix_memalign_leaf(void)
{
	void *p = NULL;
	check(posix_memalign(&p, 64, POSIX_MEMALIGN_SIZE) == 0 && ((uintptr_t)p & 63) == 0,
	      "posix_memalign");
	free(p);
}

NOINLINE void aligned_alloc_leaf(void)
{
	void *p = aligned_alloc(128, ALIGNED_ALLOC_SIZE);
	check(p && ((uintptr_t)p & 127) == 0, "aligned_alloc");
	free(p);
}

NOINLINE void memalign_leaf(void)
{
	void *p = memalign(32, MEMALIGN_SIZE);
	check(p && ((uintptr_t)p & 31) == 0, "memalign");
	free(p);
}

NOINLINE void valloc_leaf(void)
{
	void *p = valloc(VALLOC_SIZE);
	check(p && ((uintptr_t)p & 4095) == 0, "valloc");
	free(p);
}

NOINLINE void pvalloc_leaf(void)
{
	void *p = pvalloc(PVALLOC_SIZE);
	check(p && ((uintptr_t)p & 4095) == 0, "pvalloc");
	free(p);
}

NOINLINE void thread_leaf(void **blocks)
{
	for (int i = 0; i < THREAD_N; i++)
		blocks[i] = malloc(THREAD_SIZE);
	KEEP(blocks);
}

static void *thread_main(void *arg)
{
	void *blocks[THREAD_N];
	(void)arg;
	thread_leaf(blocks);
	for (int i = 0; i < THREAD_N; i += 2) /* the other half leaks */
		free(blocks[i]);
	KEEP(blocks);
	return NULL;
}

NOINLINE void failures(void)
{
	void *p;
	int r;

	errno = 0;
	p = malloc(huge);
	check(!p && errno == ENOMEM, "malloc(huge) must fail with ENOMEM");
	errno = 0;
	p = calloc(half, 4);
	check(!p && errno == ENOMEM, "calloc overflow must fail with ENOMEM");
	r = posix_memalign(&p, 3, 16);
	check(r == EINVAL, "posix_memalign(3) must be EINVAL");
	p = malloc(8); /* leaked: its realloc fails */
	errno = 0;
	p = realloc(p, huge);
	check(!p && errno == ENOMEM, "realloc(huge) must fail with ENOMEM");
	errno = 1234;
	free(NULL);
	check(errno == 1234, "free must keep errno");
}

int main(void)
{
	pthread_t t[THREADS];

	leak_path();
	peak_leaf();
	peak_release();
	churn_leaf();
	calloc_leaf();
	calloc_release();
	realloc_leaf();
	posix_memalign_leaf();
	aligned_alloc_leaf();
	memalign_leaf();
	valloc_leaf();
	pvalloc_leaf();
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, thread_main, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	failures();
	return broken;
}
