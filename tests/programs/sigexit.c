/*
 * sigexit.c - a signal handler that allocates, arriving while threads
 * exit: THREADS threads are created and joined one after another, each
 * allocates a little (so that the recorder sets up its per-thread state),
 * then arms a timer that sends it SIGUSR1 every PERIOD_US microseconds and
 * returns. The signal keeps arriving through the thread's exit, the
 * recorder's thread-exit destructors included; the handler allocates and
 * frees. A key of the program's own, created after the recorder's, stops
 * the timer and blocks the signal last, before glibc frees the thread's
 * malloc cache (a handler that allocated then could wait for an arena lock
 * the exiting thread holds, bare too).
 *
 * argv[1]: threads (default 20000), argv[2]: the period in microseconds
 * (default 20). Prints the number of threads; exit status 0.
 *
 * The handler allocates a size class the threads never use, so glibc's
 * per-thread cache is not re-entered in the same bin.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static pthread_key_t last_key;
static long period_us = 20;

NOINLINE void handler_alloc(void)
{
	void *p = malloc(200);
	KEEP(p);
	free(p);
}

static void on_usr1(int sig)
{
	(void)sig;
	handler_alloc();
}

/* The program's own key's destructor: after the recorder's (created
 * earlier, run first), stops the signal for this thread. */
static void stop_timer(void *arg)
{
	timer_t *timer = arg;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	timer_delete(*timer);
	free(timer);
}

NOINLINE void work(void)
{
	for (int i = 0; i < 8; i++) {
		void *p = malloc(48 + (size_t)i * 16);
		KEEP(p);
		free(p);
	}
}

static void *thread_main(void *arg)
{
	struct sigevent ev = {0};
	struct itimerspec its = {{0, period_us * 1000}, {0, period_us * 1000}};
	timer_t *timer = malloc(sizeof *timer);
	sigset_t set;

	(void)arg;
	work();
	if (!timer)
		return NULL;
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &ev, timer) != 0) {
		free(timer);
		return NULL;
	}
	pthread_setspecific(last_key, timer);
	timer_settime(*timer, 0, &its, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	work();
	return NULL;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 20000;
	struct sigaction sa = {0};
	sigset_t set;

	if (argc > 2)
		period_us = atol(argv[2]);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pthread_key_create(&last_key, stop_timer) != 0)
		return 1;
	for (long i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, thread_main, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	printf("%ld threads\n", threads);
	return 0;
}
