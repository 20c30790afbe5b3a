/*
 * corectx.c - a program under heapprof with threads, contexts, a custom
 * heap and explicit types, that aborts with a core
 * (tests/integration/test_core_rec.c, core_tags): the capture of the dump
 * must name them as the recorder's own snapshots do.
 *   thread "loader" (named before it allocates), in context "load":
 *     3 x 100 bytes of type "struct record", live
 *   the main thread ("corectx"), in "serve" > "parse": 2 x 50 bytes, live
 *   custom heap "arena": 4 blocks of 32 bytes in one malloc'd chunk
 *     (4096 bytes, main thread, no context), live
 * Then abort(). RLIMIT_CORE is raised so the kernel writes the core in
 * the current directory.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "../../include/heapprof.h"

static void *volatile keep[16];
static pthread_barrier_t named;

static __attribute__((noinline)) void *make_record(void)
{
	void *p = malloc(100);
	heapprof_set_type(p, "struct record");
	return p;
}

static __attribute__((noinline)) void *make_parsed(void)
{
	return malloc(50);
}

static __attribute__((noinline)) char *make_chunk(void)
{
	return malloc(4096);
}

static void *loader(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&named);
	heapprof_context_push("load");
	for (int i = 0; i < 3; i++)
		keep[i] = make_record();
	heapprof_context_pop();
	return NULL;
}

int main(void)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	pthread_t t;
	char *chunk;
	int heap;

	if (!heapprof_active || !heapprof_active())
		return 2;
	if (setrlimit(RLIMIT_CORE, &rl) != 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CORE, &rl);
	}
	pthread_barrier_init(&named, NULL, 2);
	pthread_create(&t, NULL, loader, NULL);
	pthread_setname_np(t, "loader");
	pthread_barrier_wait(&named);
	pthread_join(t, NULL);
	heapprof_context_push("serve");
	heapprof_context_push("parse");
	keep[3] = make_parsed();
	keep[4] = make_parsed();
	heapprof_context_pop();
	heapprof_context_pop();
	chunk = make_chunk();
	keep[5] = chunk;
	heap = heapprof_heap_create("arena");
	for (int i = 0; i < 4; i++)
		heapprof_heap_alloc(heap, chunk + 64 * i, 32);
	abort();
}
