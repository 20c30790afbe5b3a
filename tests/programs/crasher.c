/* crasher.c - allocates 7 x 77 bytes, then dies: abort (argv[1] "abort"),
 * a segfault ("segv"), SIGTERM to itself ("term"), a write to a pipe with
 * no reader ("pipe": SIGPIPE, the commonest early end in a pipeline),
 * SIGHUP ("hup"), its alarm ("alarm": SIGALRM), SIGUSR1 ("usr1") or a
 * real-time signal ("rt": SIGRTMIN + 2), each at its default action; or
 * as sort and many servers do, from a handler of its own that cleans up,
 * puts back the default action and raises the signal again: SIGPIPE
 * through signal() ("pipe-own"), SIGTERM through sigaction() ("term-own").
 * The handler checks that the default action reads back as SIG_DFL (else
 * exit status 3). */
#include <signal.h>
#include <unistd.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) void before_crash(void)
{
	for (int i = 0; i < 7; i++)
		KEEP(malloc(77));
}

/* sort's sighandler: the default action back, then the signal again */
static void own_handler(int sig)
{
	struct sigaction now;

	if (sig == SIGPIPE) {
		signal(sig, SIG_DFL);
	} else {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		sigaction(sig, &dfl, NULL);
	}
	if (sigaction(sig, NULL, &now) != 0 || now.sa_handler != SIG_DFL ||
	    (now.sa_flags & SA_SIGINFO))
		_exit(3);
	raise(sig);
}

int main(int argc, char **argv)
{
	before_crash();
	if (argc > 1 && strcmp(argv[1], "pipe-own") == 0) {
		int fds[2];
		signal(SIGPIPE, own_handler);
		if (pipe(fds) == 0 && close(fds[0]) == 0)
			(void)!write(fds[1], "x", 1);
	}
	if (argc > 1 && strcmp(argv[1], "term-own") == 0) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = own_handler;
		sigaction(SIGTERM, &sa, NULL);
		raise(SIGTERM);
	}
	if (argc > 1 && strcmp(argv[1], "segv") == 0)
		*(volatile int *)(uintptr_t)8 = 1;
	if (argc > 1 && strcmp(argv[1], "term") == 0)
		raise(SIGTERM);
	if (argc > 1 && strcmp(argv[1], "pipe") == 0) {
		int fds[2];
		if (pipe(fds) == 0 && close(fds[0]) == 0)
			(void)!write(fds[1], "x", 1);
	}
	if (argc > 1 && strcmp(argv[1], "hup") == 0)
		raise(SIGHUP);
	if (argc > 1 && strcmp(argv[1], "alarm") == 0) {
		alarm(1);
		pause();
	}
	if (argc > 1 && strcmp(argv[1], "usr1") == 0)
		raise(SIGUSR1);
	if (argc > 1 && strcmp(argv[1], "rt") == 0)
		raise(SIGRTMIN + 2);
	abort();
}
