/*
 * attachee.c - a running program for `heapprof attach` to find: threads
 * that allocate at a steady rate from known sites, and that count which
 * of their calls went to the recorder.
 *
 * Each allocation reads the malloc pointer out of the program's GOT and
 * calls through that pointer: when it is not libc's malloc, the recorder
 * had patched the GOT and records this call; the same for free. So the
 * counts the program prints at the end are exactly what the capture of an
 * attach must hold, per site, whenever the attach and the detach happened.
 *
 *   attachee [--long]   --long adds a thread that spends its time inside
 *                       realloc, holding its arena's lock across a large
 *                       copy (an attach must not deadlock on it)
 *
 * Prints "ready" when its threads run; on a line "stop" on standard input
 * (or its end) it stops them and prints, per site, "SITE allocs N frees M
 * calls C", then "patched N" (1 when the GOT still pointed at the recorder
 * at the end) and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 3
#define RING 16

typedef void *(*malloc_fn)(size_t);
typedef void (*free_fn)(void *);

static malloc_fn libc_malloc;
static free_fn libc_free;
static volatile int stopping;

/* The GOT's entries, read each time (the compiler would keep the address
 * of malloc in a register: it takes it for a constant). */
static malloc_fn got_malloc(void)
{
	malloc_fn m;
	__asm__ volatile("mov malloc@GOTPCREL(%%rip), %0" : "=r"(m));
	return m;
}

static free_fn got_free(void)
{
	free_fn f;
	__asm__ volatile("mov free@GOTPCREL(%%rip), %0" : "=r"(f));
	return f;
}

struct counts {
	unsigned long allocs, frees, calls;
};

struct block {
	void *p;
	int recorded;
};

static inline __attribute__((always_inline)) void *take(size_t size, struct counts *c, struct block *b)
{
	malloc_fn m = got_malloc();

	b->p = m(size);
	memset(b->p, 0x5a, size);
	b->recorded = m != libc_malloc;
	c->allocs += (unsigned long)b->recorded;
	c->calls++;
	return b->p;
}

static inline __attribute__((always_inline)) void give(struct counts *c, struct block *b)
{
	free_fn f = got_free();

	/* A free counts where the capture counts it: the block was recorded
	 * and the free reached the recorder. */
	c->frees += (unsigned long)(b->recorded && f != libc_free);
	f(b->p);
	b->p = NULL;
}

struct worker {
	pthread_t thread;
	struct counts kept, temp; /* sites "kept_site" and "temp_site" */
};

/* 64-byte blocks kept in a ring of 16, the oldest freed. */
__attribute__((noinline)) static void kept_site(struct worker *w, struct block *ring, int i)
{
	if (ring[i % RING].p)
		give(&w->kept, &ring[i % RING]);
	take(64, &w->kept, &ring[i % RING]);
}

/* 1000-byte blocks freed at once. */
__attribute__((noinline)) static void temp_site(struct worker *w)
{
	struct block b;

	take(1000, &w->temp, &b);
	give(&w->temp, &b);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct block ring[RING] = {{0}};
	struct timespec ts = {0, 200 * 1000};

	for (int i = 0; !stopping; i++) {
		kept_site(w, ring, i);
		temp_site(w);
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < RING; i++)
		if (ring[i].p)
			give(&w->kept, &ring[i]);
	return NULL;
}

/* Inside realloc most of the time: a 16 MiB block grown to 32 MiB where a
 * small block after it keeps it from growing in place, so that realloc
 * copies it under its arena's lock. */
static void *long_realloc(void *arg)
{
	(void)arg;
	while (!stopping) {
		char *p = malloc(16 << 20), *q;
		memset(p, 1, 16 << 20);
		q = malloc(32);
		p = realloc(p, 32 << 20);
		free(q);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct worker w[WORKERS];
	pthread_t longer;
	int with_long = argc > 1 && strcmp(argv[1], "--long") == 0;
	char line[64];

	libc_malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
	libc_free = (free_fn)dlsym(RTLD_NEXT, "free");
	if (!libc_malloc || !libc_free || got_malloc() != libc_malloc) {
		fprintf(stderr, "attachee: malloc is not libc's at the start\n");
		return 2;
	}
	if (with_long) {
		/* Large blocks from the arena, not mmap: realloc copies them. */
		mallopt(M_MMAP_THRESHOLD, 256 << 20);
		pthread_create(&longer, NULL, long_realloc, NULL);
	}
	memset(w, 0, sizeof w);
	for (int i = 0; i < WORKERS; i++)
		pthread_create(&w[i].thread, NULL, work, &w[i]);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof line, stdin) && strcmp(line, "stop\n") != 0)
		;
	stopping = 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i].thread, NULL);
	if (with_long)
		pthread_join(longer, NULL);
	{
		struct counts kept = {0}, temp = {0};
		for (int i = 0; i < WORKERS; i++) {
			kept.allocs += w[i].kept.allocs;
			kept.frees += w[i].kept.frees;
			kept.calls += w[i].kept.calls;
			temp.allocs += w[i].temp.allocs;
			temp.frees += w[i].temp.frees;
			temp.calls += w[i].temp.calls;
		}
		printf("kept_site allocs %lu frees %lu calls %lu\n", kept.allocs, kept.frees,
		       kept.calls);
		printf("temp_site allocs %lu frees %lu calls %lu\n", temp.allocs, temp.frees,
		       temp.calls);
	}
	printf("patched %d\n", got_malloc() != libc_malloc);
	return 0;
}
