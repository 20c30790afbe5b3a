/*
 * fdhog.c - a program that has used up its file descriptors: it opens
 * /dev/null until open fails (EMFILE), prints "ready N" (N opened), then
 * allocates a little for each line of its standard input; at its end
 * prints "bye" and exits 0. Run it with a low RLIMIT_NOFILE.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	char line[64];
	int n = 0;

	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	printf("ready %d\n", n);
	fflush(stdout);
	while (fgets(line, sizeof line, stdin))
		free(malloc(100));
	printf("bye\n");
	return 0;
}
