/*
 * credit.c - the exact peak of a threaded program (aggregate.c, "credit"):
 *
 *   credit [THREADS]      2 (default) to MAX_THREADS
 *
 * the threads churn small blocks well below the peak they reached first,
 * which a full recording counts from each thread's credit; then, all
 * holding their windows, every thread but thread 1 holds HELD blocks and
 * thread 1 allocates RISE blocks on top of them, the peak; then all free
 * those and churn again below it, and free everything. The recorded peak
 * must be bytes allocated, never credit: the sum of every bucket's bytes
 * at the peak, with (THREADS - 1) x HELD x BLOCK and RISE x BLOCK bytes
 * in the two sites'. The windows the churn first fills (THREADS x WINDOW
 * blocks of 16..271 bytes, about 73 KB a thread) stay below that peak
 * (500 KB and more) at any THREADS.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define MAX_THREADS 16
#define CHURN_OPS 100000
#define WINDOW 512
#define CHURN_WINDOW 128
#define HELD 100
#define RISE 300
#define BLOCK 1000
#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static pthread_barrier_t barrier;

NOINLINE void *credit_churn_alloc(size_t size)
{
	void *p = malloc(size);
	KEEP(p);
	return p;
}

NOINLINE void *credit_held_alloc(size_t size)
{
	void *p = malloc(size);
	KEEP(p);
	return p;
}

NOINLINE void *credit_rise_alloc(size_t size)
{
	void *p = malloc(size);
	KEEP(p);
	return p;
}

/* Fills window with blocks of 16..271 bytes from state, frees all but
 * its first CHURN_WINDOW (the bytes in use fall far below the peak they
 * reached), then makes CHURN_OPS frees and allocations among those. */
static void churn(void **window, uint64_t *state)
{
	uint64_t x = *state;

	for (int i = 0; i < CHURN_OPS + WINDOW; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i < WINDOW) {
			free(window[i]); /* the last churn's, or NULL */
			window[i] = credit_churn_alloc(16 + (size_t)(x >> 32) % 256);
			continue;
		}
		if (i == WINDOW)
			for (int j = CHURN_WINDOW; j < WINDOW; j++) {
				free(window[j]);
				window[j] = NULL;
			}
		free(window[x % CHURN_WINDOW]);
		window[x % CHURN_WINDOW] = credit_churn_alloc(16 + (size_t)(x >> 32) % 256);
	}
	*state = x;
}

static void *thread_main(void *arg)
{
	int me = (int)(intptr_t)arg;
	uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(me + 1);
	void *window[WINDOW] = {0};
	void *mine[RISE];
	int n = me == 1 ? RISE : HELD;

	churn(window, &state);
	pthread_barrier_wait(&barrier);
	if (me != 1)
		for (int i = 0; i < HELD; i++)
			mine[i] = credit_held_alloc(BLOCK);
	pthread_barrier_wait(&barrier);
	if (me == 1)
		for (int i = 0; i < RISE; i++)
			mine[i] = credit_rise_alloc(BLOCK);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < n; i++)
		free(mine[i]);
	churn(window, &state);
	for (int i = 0; i < WINDOW; i++)
		free(window[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[MAX_THREADS];
	int threads = argc > 1 ? atoi(argv[1]) : 2;

	if (threads < 2 || threads > MAX_THREADS)
		return 2;
	pthread_barrier_init(&barrier, NULL, (unsigned)threads);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
