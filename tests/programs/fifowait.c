/*
 * fifowait.c - a program blocked in read() on a FIFO, whose read buffer,
 * never written before the read, holds stale addresses inside libc's
 * malloc: what a thread's stack looks like after a deep call returned.
 * Only its call chain (read, wait_on, main, libc's start) tells whether
 * the thread is inside the allocator; the words of its stack say it is.
 *
 *   fifowait FIFO   fills the stack with malloc's address, opens FIFO,
 *                   prints "ready", reads it to its end and prints
 *                   "read N" (the bytes read); exits 0
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define WORDS 8192 /* 64 KiB */

/* Leaves WORDS words of malloc's address (inside it) on the stack. */
__attribute__((noinline)) static void poison(uintptr_t at)
{
	volatile uintptr_t words[WORDS];

	for (size_t i = 0; i < WORDS; i++)
		words[i] = at + 16 + (i % 64);
}

/* Reads into a buffer where poison's words were, not written before. */
__attribute__((noinline)) static long wait_on(int fd)
{
	uintptr_t buf[WORDS];
	long total = 0;
	ssize_t n;

	printf("ready\n");
	fflush(stdout);
	while ((n = read(fd, buf, sizeof buf)) > 0)
		total += n;
	return total;
}

int main(int argc, char **argv)
{
	uintptr_t at = (uintptr_t)dlsym(RTLD_NEXT, "malloc");
	int fd;

	if (argc != 2 || !at)
		return 2;
	poison(at);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		return 2;
	printf("read %ld\n", wait_on(fd));
	return 0;
}
