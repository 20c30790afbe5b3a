/*
 * sighandler.c - a signal handler that allocates and frees while the main
 * thread is inside malloc and free. A second thread sends SIGUSR1 to the
 * main thread until it has finished LOOPS allocations. Prints the number
 * of times the handler ran.
 *
 * The handler allocates a size class the main loop never uses, so glibc's
 * own per-thread cache is not re-entered in the same bin.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define LOOPS 200000
#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static volatile sig_atomic_t runs;
static volatile int done;
static pthread_t main_thread;

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
	runs++;
}

static void *pester(void *arg)
{
	struct timespec ts = {0, 20000};
	(void)arg;
	while (!done) {
		pthread_kill(main_thread, SIGUSR1);
		nanosleep(&ts, NULL);
	}
	return NULL;
}

NOINLINE void main_loop(void)
{
	for (int i = 0; i < LOOPS; i++) {
		void *p = malloc(64);
		KEEP(p);
		free(p);
	}
}

int main(void)
{
	pthread_t t;
	sigset_t set;

	signal(SIGUSR1, on_usr1);
	main_thread = pthread_self();
	pthread_create(&t, NULL, pester, NULL);
	main_loop();
	/* Stop the signals before printing: stdio is not for handlers. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	done = 1;
	pthread_join(t, NULL);
	printf("%d\n", (int)runs);
	return 0;
}
