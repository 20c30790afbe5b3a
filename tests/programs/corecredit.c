/*
 * corecredit.c - a threaded program that dies holding credit (aggregate.c):
 * two threads fill 512 blocks, free all but 128 (their bytes in use far
 * below the peak they reached), churn 50,000 times among those, then wait
 * while main aborts. At the dump each thread holds credit, bytes the
 * recorder counts in use but that are not allocated: `heapprof core` must
 * leave them out (root layout 4).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

static pthread_barrier_t barrier;

static void *worker(void *arg)
{
	void *v[512] = {0};
	uint64_t x = 88172645463325252ull + (uintptr_t)arg;

	for (int i = 0; i < 512; i++)
		v[i] = malloc(16 + (size_t)i % 200);
	for (int i = 128; i < 512; i++)
		free(v[i]);
	for (int i = 0; i < 50000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		free(v[x % 128]);
		v[x % 128] = malloc(16 + (size_t)(x >> 40) % 256);
	}
	pthread_barrier_wait(&barrier); /* main aborts after this */
	pthread_barrier_wait(&barrier); /* never passed */
	return NULL;
}

int main(void)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	pthread_t t[2];

	if (setrlimit(RLIMIT_CORE, &rl) != 0) { /* a core, as corerec.c */
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CORE, &rl);
	}
	pthread_barrier_init(&barrier, NULL, 3);
	for (uintptr_t i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	pthread_barrier_wait(&barrier);
	abort();
}
