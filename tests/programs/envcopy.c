/*
 * envcopy.c - execs a child with an environment built before the fork,
 * as git does (from its own copy of environ): copies environ's pointers,
 * forks, and the child execs /usr/bin/env with the copy; the parent
 * waits. The child's environment is printed, one variable a line.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
	size_t n = 0;
	char **copy;
	int status;
	pid_t pid;

	while (environ[n])
		n++;
	copy = malloc((n + 1) * sizeof *copy);
	if (!copy)
		return 1;
	memcpy(copy, environ, (n + 1) * sizeof *copy);
	pid = fork();
	if (pid == 0) {
		char *argv[] = {"env", NULL};
		execve("/usr/bin/env", argv, copy);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 1;
	free(copy);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
