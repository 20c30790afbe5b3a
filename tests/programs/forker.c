/*
 * forker.c - allocates before and after a fork; the child allocates and
 * either exits, execs argv[1] (when given), or with "SIGKILL" or
 * "SIGPIPE" kills itself with that signal (the parent then exits 1).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

NOINLINE void parent_before(void) { for (int i = 0; i < 3; i++) KEEP(malloc(301)); }
NOINLINE void parent_after(void) { for (int i = 0; i < 4; i++) KEEP(malloc(401)); }
NOINLINE void child_work(void) { for (int i = 0; i < 5; i++) KEEP(malloc(501)); }

int main(int argc, char **argv)
{
	pid_t pid;
	int status;

	parent_before();
	pid = fork();
	if (pid == 0) {
		child_work();
		if (argc > 1 && strcmp(argv[1], "SIGKILL") == 0)
			kill(getpid(), SIGKILL);
		if (argc > 1 && strcmp(argv[1], "SIGPIPE") == 0)
			kill(getpid(), SIGPIPE);
		if (argc > 1) {
			execv(argv[1], argv + 1);
			_exit(127);
		}
		exit(0);
	}
	waitpid(pid, &status, 0);
	parent_after();
	printf("%d\n", (int)pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
