/*
 * attr.c - known allocations by context, thread, heap and explicit type
 * (issue 9), for tests/integration/test_attr.c. Prints its threads' tids.
 *
 *   worker-a (renamed "renamed-a" by main later), in context "ctx-a":
 *     site_a: 3 x 100 bytes; worker-b frees 2 of them
 *   worker-b, in context "ctx-b" > "inner":
 *     site_b: 2 x 200 bytes; worker-a frees 1 of them
 *   main, custom heap "arena" over a malloc'd 4096-byte chunk (arena_chunk):
 *     arena_alloc: 64, 32, 16 (the first at the chunk's own address), the
 *     32 freed, a reset, then 8 and 8: 5 / 128 allocated, 2 / 16 in use,
 *     heap peak 3 blocks / 112 bytes, 1 reset
 *   main: make_points: 4 x 24 bytes typed "struct point", 1 freed
 *   main: peak_maker: 1 MiB kept, the last allocation before the dump (the
 *     global peak is then: every malloc bucket's at-peak is its in use)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../include/heapprof.h"

static void *a_blocks[3], *b_blocks[2];
static pthread_barrier_t start, allocated, renamed;
static volatile int tid_a, tid_b;
static void *volatile sink;

static __attribute__((noinline)) void *site_a(void)
{
	return malloc(100);
}

static __attribute__((noinline)) void *site_b(void)
{
	return malloc(200);
}

static __attribute__((noinline)) void churn(void)
{
	/* Long enough for the thread to look at the clock and read its name
	 * again (at most every 10 ms: HP_ATTR_NAME_PERIOD_NS): 300 slow paths,
	 * then until 30 ms have passed. */
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0;; i++) {
		sink = malloc(8);
		free(sink);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (i >= 300 && (t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >
					30000000L)
			break;
	}
}

static void *worker_a(void *arg)
{
	(void)arg;
	tid_a = (int)syscall(SYS_gettid);
	pthread_barrier_wait(&start);
	heapprof_context_push("ctx-a");
	for (int i = 0; i < 3; i++)
		a_blocks[i] = site_a();
	heapprof_context_pop();
	pthread_barrier_wait(&allocated);
	pthread_barrier_wait(&renamed);
	free(b_blocks[0]);
	churn();
	return NULL;
}

static void *worker_b(void *arg)
{
	(void)arg;
	tid_b = (int)syscall(SYS_gettid);
	pthread_barrier_wait(&start);
	heapprof_context_push("ctx-b");
	heapprof_context_push("inner");
	for (int i = 0; i < 2; i++)
		b_blocks[i] = site_b();
	heapprof_context_pop();
	heapprof_context_pop();
	pthread_barrier_wait(&allocated);
	pthread_barrier_wait(&renamed);
	free(a_blocks[0]);
	free(a_blocks[1]);
	return NULL;
}

static char *chunk;
static size_t used;
static int heap;

static __attribute__((noinline)) char *arena_chunk(void)
{
	return malloc(4096);
}

static __attribute__((noinline)) void *arena_alloc(size_t n)
{
	void *p = chunk + used;
	used += n;
	heapprof_heap_alloc(heap, p, n);
	return p;
}

struct point {
	double x, y, z;
};

static __attribute__((noinline)) struct point *make_point(void)
{
	struct point *p = malloc(sizeof *p);
	heapprof_set_type(p, "struct point");
	return p;
}

static __attribute__((noinline)) void *peak_maker(void)
{
	return malloc(1 << 20);
}

int main(void)
{
	pthread_t ta, tb;
	struct point *pts[4];
	void *x, *y;

	if (!heapprof_active || !heapprof_active())
		return 2;
	pthread_setname_np(pthread_self(), "attr-main");
	pthread_barrier_init(&start, NULL, 3);
	pthread_barrier_init(&allocated, NULL, 3);
	pthread_barrier_init(&renamed, NULL, 3);
	pthread_create(&ta, NULL, worker_a, NULL);
	pthread_create(&tb, NULL, worker_b, NULL);
	/* Named from this thread, before their first allocation. */
	pthread_setname_np(ta, "worker-a");
	pthread_setname_np(tb, "worker-b");
	pthread_barrier_wait(&start);
	pthread_barrier_wait(&allocated);
	/* Renamed from this thread after its first slow paths. */
	pthread_setname_np(ta, "renamed-a");
	pthread_barrier_wait(&renamed);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);

	chunk = arena_chunk();
	heap = heapprof_heap_create("arena");
	x = arena_alloc(64);
	y = arena_alloc(32);
	arena_alloc(16);
	heapprof_heap_free(heap, y);
	heapprof_heap_free(heap, (char *)y + 1); /* unknown: counted */
	heapprof_heap_reset(heap);
	used = 0;
	arena_alloc(8);
	arena_alloc(8);
	if (x != chunk)
		return 3;

	for (int i = 0; i < 4; i++)
		pts[i] = make_point();
	free(pts[3]);
	sink = peak_maker();
	heapprof_dump();
	printf("tid_a=%d tid_b=%d heap=%d\n", tid_a, tid_b, heap);
	return 0;
}
