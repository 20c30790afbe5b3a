/*
 * threads.c - THREADS threads allocate and free PER_THREAD blocks each,
 * of size (i % 64) + 1: 1,000,000 blocks in all, every one freed.
 */
#include <pthread.h>
#include <stdlib.h>

#define THREADS 8
#define PER_THREAD 125000
#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

NOINLINE void *thread_alloc(size_t size)
{
	void *p = malloc(size);
	KEEP(p);
	return p;
}

static void *thread_main(void *arg)
{
	void *window[16] = {0};
	(void)arg;
	for (int i = 0; i < PER_THREAD; i++) {
		free(window[i % 16]); /* free(NULL) at first: not an event */
		window[i % 16] = thread_alloc((size_t)(i % 64) + 1);
	}
	for (int i = 0; i < 16; i++)
		free(window[i]);
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, thread_main, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	return 0;
}
