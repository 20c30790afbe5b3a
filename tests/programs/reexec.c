/*
 * reexec.c - a program that replaces itself (execv) over and over, with a
 * thread that allocates meanwhile: what `heapprof attach` may meet in the
 * middle of an attach, an image that ends under it.
 *
 *   reexec N [MS]   allocates for about MS milliseconds (default 20),
 *                   then execs itself with N-1 (from its main thread, or
 *                   from the other thread on odd N); at N = 0 prints
 *                   "done" and exits 0
 *
 * Each image checks the blocks it made and prints nothing else; a block
 * found wrong prints "corrupt" and exits 1.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char self[4096];
static int left, ms;
static volatile int stopping;

static void reexec(void)
{
	char n[16], m[16];

	snprintf(n, sizeof n, "%d", left - 1);
	snprintf(m, sizeof m, "%d", ms);
	execl(self, self, n, m, (char *)NULL);
	_exit(127);
}

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Allocates and checks blocks until stopping, or execs from here. */
static void *churn(void *arg)
{
	char *ring[32] = {0};
	long end = now_ms() + ms;

	for (unsigned i = 0; !stopping; i++) {
		char **b = &ring[i % 32];
		if (*b) {
			for (int k = 0; k < 100; k++)
				if ((*b)[k] != (char)(i % 32)) {
					printf("corrupt\n");
					exit(1);
				}
			free(*b);
		}
		*b = malloc(100 + i % 1000);
		memset(*b, (char)(i % 32), 100);
		if (arg && now_ms() >= end)
			reexec();
	}
	for (int i = 0; i < 32; i++)
		free(ring[i]);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);

	if (argc < 2 || len < 0)
		return 2;
	self[len] = '\0';
	left = atoi(argv[1]);
	ms = argc > 2 ? atoi(argv[2]) : 20;
	if (left <= 0) {
		printf("done\n");
		return 0;
	}
	/* On odd N the other thread execs: the exec kills this one. */
	pthread_create(&t, NULL, churn, left % 2 ? (void *)1 : NULL);
	if (left % 2) {
		for (;;)
			pause();
	}
	{
		struct timespec ts = {0, (long)ms * 1000000L};
		nanosleep(&ts, NULL);
	}
	stopping = 1;
	pthread_join(t, NULL);
	reexec();
	return 0;
}
