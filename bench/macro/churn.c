/*
 * churn: small-block malloc/free churn through deep call paths.
 *
 *   churn [THREADS [OPS]]      THREADS 1 (default) or more, OPS 10000000
 *
 * The model: each thread owns a ring of CHURN_RING_SLOTS live blocks. One
 * operation picks a random slot, frees the block there and puts a fresh one
 * of a random size (CHURN_MIN_BYTES..CHURN_MAX_BYTES) in its place, so the
 * heap holds a steady window of short-lived blocks instead of the trivial
 * malloc-then-free that any allocator (and any profiler) handles from a cache.
 *
 * Each allocation is made CHURN_MIN_DEPTH..CHURN_MAX_DEPTH calls below the
 * worker loop: the worker calls one of four distinct call sites, which
 * recurse through descend() until the chosen depth is reached. That makes
 * stack capture the dominant cost for a profiler, and gives a realistic
 * handful of distinct stacks (4 sites x 11 depths) rather than one.
 *
 * OPS operations are split evenly across the threads; with one thread the work
 * runs on the main thread and no thread is ever created. The random stream is a
 * fixed-seed xorshift64 per thread, so every run does exactly the same work.
 *
 * With BENCH_REPORT=1 in the environment it prints "allocations: N" to stderr
 * (N counts the blocks this program asked for; libc's own, such as stdio's
 * buffer, are not included).
 *
 * Build with -O2; bench/macro/run.sh also builds a frame-pointer variant.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	CHURN_DEFAULT_OPS_COUNT = 10000000,
	CHURN_MAX_THREADS = 64,
	CHURN_RING_SLOTS = 1024,
	CHURN_MIN_BYTES = 8,
	CHURN_MAX_BYTES = 512,
	CHURN_MIN_DEPTH = 10,
	CHURN_MAX_DEPTH = 20,
	CHURN_SITE_COUNT = 4,
};

/*
 * An empty asm that claims to read and modify p and to touch memory: the
 * compiler must keep the call that produced p as a real call that returns
 * here (no tail call, no merging of frames), and cannot move it elsewhere.
 */
#define KEEP_FRAME(p) __asm__ volatile("" : "+r"(p) : : "memory")

/* One thread's share of the work. Written by main before start, by the worker after. */
struct worker {
	pthread_t thread;
	uint64_t rng_state;
	uint64_t ops_count;
	uint64_t alloc_count;
};

/* xorshift64 (Marsaglia 2003): fast, deterministic, never returns 0 from a non-zero state. */
static uint64_t xorshift64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* Calls itself depth more times, then allocates: one real stack frame per level. */
__attribute__((noinline)) static void *descend(size_t size_bytes, unsigned depth)
{
	void *p = depth == 0 ? malloc(size_bytes) : descend(size_bytes, depth - 1);
	KEEP_FRAME(p);
	return p;
}

/*
 * Four distinct entry points, so the profile has several call sites, as a
 * real program would. Each counts as one level of the requested depth. The
 * asm names the site so that GCC's identical code folding (-fipa-icf, on at
 * -O2) cannot merge the four into one function.
 */
#define DEFINE_SITE(name)                                                        \
	__attribute__((noinline)) static void *name(size_t size_bytes, unsigned depth) \
	{                                                                        \
		__asm__ volatile("# call site " #name);                          \
		void *p = descend(size_bytes, depth - 1);                        \
		KEEP_FRAME(p);                                                   \
		return p;                                                        \
	}

DEFINE_SITE(site_parse)
DEFINE_SITE(site_reply)
DEFINE_SITE(site_cache)
DEFINE_SITE(site_log)

/* Allocates size_bytes exactly depth calls below the caller, through call site `site`. */
static void *allocate(unsigned site, size_t size_bytes, unsigned depth)
{
	switch (site) {
	case 0:
		return site_parse(size_bytes, depth);
	case 1:
		return site_reply(size_bytes, depth);
	case 2:
		return site_cache(size_bytes, depth);
	default:
		return site_log(size_bytes, depth);
	}
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	/* 8 KiB on the stack: the ring itself is not a heap allocation. */
	void *ring[CHURN_RING_SLOTS] = { 0 };
	/*
	 * Work on locals and write back once: the workers share cache lines, and
	 * updating w-> on every operation would add false sharing between threads.
	 */
	uint64_t rng_state = w->rng_state;
	uint64_t alloc_count = 0;

	for (uint64_t i = 0; i < w->ops_count; i++) {
		/* One random draw gives the slot, size, depth and site from disjoint bits. */
		uint64_t r = xorshift64(&rng_state);
		unsigned slot = (unsigned)(r % CHURN_RING_SLOTS);
		size_t size_bytes =
			CHURN_MIN_BYTES + (size_t)((r >> 10) % (CHURN_MAX_BYTES - CHURN_MIN_BYTES + 1));
		unsigned depth =
			CHURN_MIN_DEPTH + (unsigned)((r >> 20) % (CHURN_MAX_DEPTH - CHURN_MIN_DEPTH + 1));
		unsigned site = (unsigned)((r >> 30) % CHURN_SITE_COUNT);

		free(ring[slot]);
		char *block = allocate(site, size_bytes, depth);
		if (!block) {
			fprintf(stderr, "churn: out of memory\n");
			exit(1);
		}
		/* Touch the block as a program would; one byte, as the allocation path is what is measured. */
		block[0] = (char)i;
		ring[slot] = block;
		alloc_count++;
	}
	for (unsigned slot = 0; slot < CHURN_RING_SLOTS; slot++)
		free(ring[slot]);
	w->rng_state = rng_state;
	w->alloc_count = alloc_count;
	return NULL;
}

/* Parses a positive decimal integer no larger than max; returns 0 on any error. */
static uint64_t parse_count(const char *text, uint64_t max)
{
	char *end;
	unsigned long long value = strtoull(text, &end, 10);
	if (*text == '\0' || *end != '\0' || value == 0 || value > max)
		return 0;
	return value;
}

int main(int argc, char **argv)
{
	uint64_t thread_count = 1;
	uint64_t ops_count = CHURN_DEFAULT_OPS_COUNT;

	if (argc > 3 || (argc > 1 && !(thread_count = parse_count(argv[1], CHURN_MAX_THREADS))) ||
	    (argc > 2 && !(ops_count = parse_count(argv[2], UINT64_MAX)))) {
		fprintf(stderr, "usage: churn [THREADS (1..%d) [OPS]]\n", CHURN_MAX_THREADS);
		return 2;
	}

	struct worker workers[CHURN_MAX_THREADS];
	memset(workers, 0, sizeof(workers));
	for (uint64_t t = 0; t < thread_count; t++) {
		/* A distinct non-zero seed per thread; the first thread takes the remainder. */
		workers[t].rng_state = 0x9E3779B97F4A7C15ull * (t + 1);
		workers[t].ops_count = ops_count / thread_count + (t == 0 ? ops_count % thread_count : 0);
	}

	if (thread_count == 1) {
		run_worker(&workers[0]);
	} else {
		for (uint64_t t = 0; t < thread_count; t++) {
			int err = pthread_create(&workers[t].thread, NULL, run_worker, &workers[t]);
			if (err) {
				fprintf(stderr, "churn: pthread_create: %s\n", strerror(err));
				return 1;
			}
		}
		for (uint64_t t = 0; t < thread_count; t++)
			pthread_join(workers[t].thread, NULL);
	}

	uint64_t alloc_count = 0;
	for (uint64_t t = 0; t < thread_count; t++)
		alloc_count += workers[t].alloc_count;
	const char *report = getenv("BENCH_REPORT");
	if (report && strcmp(report, "1") == 0)
		fprintf(stderr, "allocations: %" PRIu64 "\n", alloc_count);
	return 0;
}
