/*
 * sigquery.c - asks about SIGINT and SIGTERM as programs that install a
 * handler only over the default one do, installs its own SIGINT handler,
 * raises SIGINT, and says what it saw: "dfl dfl handled".
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t handled;

static void on_int(int sig)
{
	(void)sig;
	handled = 1;
}

int main(void)
{
	struct sigaction old;
	void (*prev)(int);

	free(malloc(16));
	sigaction(SIGINT, NULL, &old);
	prev = signal(SIGTERM, SIG_DFL);
	printf("%s %s ", old.sa_handler == SIG_DFL ? "dfl" : "other",
	       prev == SIG_DFL ? "dfl" : "other");
	if (old.sa_handler == SIG_DFL)
		signal(SIGINT, on_int);
	raise(SIGINT);
	printf("%s\n", handled ? "handled" : "not handled");
	return 0;
}
