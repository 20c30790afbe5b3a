/*
 * forkctx.c - a fork child allocating in the context its parent opened
 * (for tests/integration/test_attr_rec.c): main pushes "before-fork",
 * allocates 3 x 100 bytes at parent_site (its thread's origin is then
 * cached), forks; the child allocates 5 x 300 bytes at child_site, still
 * in "before-fork", and exits; the parent waits for it. Prints the
 * child's pid.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/heapprof.h"

static void *volatile sink;

static __attribute__((noinline)) void *parent_site(void)
{
	return malloc(100);
}

static __attribute__((noinline)) void *child_site(void)
{
	return malloc(300);
}

int main(void)
{
	int status = 0;
	pid_t pid;

	heapprof_context_push("before-fork");
	for (int i = 0; i < 3; i++)
		sink = parent_site();
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (int i = 0; i < 5; i++)
			sink = child_site();
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	heapprof_context_pop();
	printf("child=%d\n", (int)pid);
	return 0;
}
