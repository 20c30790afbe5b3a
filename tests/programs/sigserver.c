/*
 * sigserver.c - a server's shape for signals: allocates known blocks,
 * says "ready PID\n" on stdout, then waits for signals, as a daemon does
 * (test_lifecycle.c, signals sent to heapprof run's pid).
 *
 * Usage: sigserver MARKER [MODE]. Each signal it handles (SIGHUP,
 * SIGUSR1, SIGTERM; SIGINT and SIGQUIT too in MODE "all") is appended to
 * the file MARKER as its number and a newline. SIGTERM ends it: with exit
 * status 3 after sigserver_shutdown allocates and frees, as a graceful
 * shutdown would. In MODE "bare" it handles none of them: SIGTERM then
 * kills it (and the recorder's own handler writes its snapshot).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

static const char *marker;
static volatile sig_atomic_t ending;
static void *kept[12];

NOINLINE void sigserver_start(void)
{
	for (int i = 0; i < 12; i++)
		kept[i] = malloc(4000);
	KEEP(kept);
}

NOINLINE void sigserver_shutdown(void)
{
	void *p = malloc(777);
	KEEP(p);
	free(p);
}

static void on_signal(int sig)
{
	char line[8];
	int n = snprintf(line, sizeof line, "%d\n", sig);
	int fd = open(marker, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

	if (fd >= 0) {
		if (write(fd, line, (size_t)n) < 0)
			(void)0;
		close(fd);
	}
	if (sig == SIGTERM)
		ending = 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "";
	char ready[64];
	sigset_t none, handled;

	if (argc < 2)
		return 2;
	marker = argv[1];
	sigserver_start();
	/* Blocked but in sigsuspend: none arrives between the test of ending
	 * and the wait. */
	sigemptyset(&none);
	sigemptyset(&handled);
	sigaddset(&handled, SIGTERM);
	sigaddset(&handled, SIGHUP);
	sigaddset(&handled, SIGUSR1);
	sigaddset(&handled, SIGINT);
	sigaddset(&handled, SIGQUIT);
	if (strcmp(mode, "bare") != 0)
		sigprocmask(SIG_BLOCK, &handled, NULL);
	if (strcmp(mode, "bare") != 0) {
		struct sigaction sa = {0};
		sa.sa_handler = on_signal;
		sigaction(SIGHUP, &sa, NULL);
		sigaction(SIGUSR1, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		if (strcmp(mode, "all") == 0) {
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGQUIT, &sa, NULL);
		}
	}
	snprintf(ready, sizeof ready, "ready %d\n", (int)getpid());
	if (write(1, ready, strlen(ready)) < 0)
		return 2;
	while (!ending)
		sigsuspend(&none);
	sigserver_shutdown();
	return 3;
}
