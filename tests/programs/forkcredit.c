/*
 * forkcredit.c - a threaded program forks while its threads hold credit
 * (aggregate.c): two threads fill 512 blocks, free all but 128 (their
 * bytes in use far below the peak they reached) and churn 50,000 times
 * among those, then wait; main forks. The child (followed: --follow-fork)
 * inherits the heap but not the threads, nor their credit: it frees
 * main's block of MAIN_BLOCK bytes, allocates CHILD_KEEP and _exits, so
 * that its peak is what it inherited, to the byte (a peak that counted the
 * parent threads' credit would be more).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAIN_BLOCK 50000
#define CHILD_KEEP 777
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

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
	pthread_barrier_wait(&barrier); /* main forks after this */
	pthread_barrier_wait(&barrier); /* and waits for the child */
	for (int i = 0; i < 128; i++)
		free(v[i]);
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	pid_t pid;
	void *p, *block = malloc(MAIN_BLOCK);

	KEEP(block);
	pthread_barrier_init(&barrier, NULL, 3);
	for (uintptr_t i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	pthread_barrier_wait(&barrier);
	pid = fork();
	if (pid == 0) {
		free(block);
		p = malloc(CHILD_KEEP);
		KEEP(p);
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	free(block);
	return pid > 0 ? 0 : 1;
}
