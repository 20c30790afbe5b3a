/*
 * overflow.c - a heap overrun, then a crash in free() (issue 27;
 * tests/integration/test_core_damage.c). In this order, before any stdio:
 *   alloc_parser  1 x 40   the block that overruns
 *   alloc_victim  1 x 64   right after it in the brk heap
 *   alloc_row     5 x 100  kept in a global
 * then it prints "parser ADDR", "victim ADDR", "row ADDR" (the first) and
 * "ready" on stdout (a file: stdio's 4 KiB buffer is the 8th block), and
 * parse() writes 56 bytes into the 40-byte block: 16 bytes of 0x41 over
 * the victim's chunk header (its size field, 8 bytes past the block's
 * end, and its first 8 bytes). With "wait" it then reads a line from
 * stdin with read(2) (a gcore is taken then) and exits 0; with "abort"
 * (RLIMIT_CORE raised) it frees the victim: glibc finds its size absurd
 * and aborts, and the kernel writes a core.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static char *g_rows[5];

__attribute__((noinline)) static char *alloc_parser(void) { return malloc(40); }
__attribute__((noinline)) static char *alloc_victim(void) { return malloc(64); }
__attribute__((noinline)) static char *alloc_row(void) { return malloc(100); }

/* The bug: 56 bytes into a 40-byte block. */
__attribute__((noinline)) static void parse(char *buf)
{
	memset(buf, 'p', 40);
	memset(buf + 40, 0x41, 16);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

int main(int argc, char **argv)
{
	char *parser, *victim;
	int wait = argc > 1 && strcmp(argv[1], "wait") == 0;

	if (!wait) {
		struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
		setrlimit(RLIMIT_CORE, &rl);
	}
	parser = alloc_parser();
	victim = alloc_victim();
	memset(victim, 0, 64);
	strcpy(victim, "victim");
	for (int i = 0; i < 5; i++) {
		g_rows[i] = alloc_row();
		memset(g_rows[i], 0, 100);
	}
	printf("parser %p\nvictim %p\nrow %p\nready\n", (void *)parser, (void *)victim,
	       (void *)g_rows[0]);
	fflush(stdout);
	parse(parser);
	if (wait) {
		char line[16]; /* read(2): stdin's stdio buffer would be a 9th block */
		if (read(0, line, sizeof line) <= 0)
			return 3;
		printf("alive\n");
		return 0;
	}
	free(victim); /* glibc: "free(): invalid pointer", abort */
	printf("not reached\n");
	return 0;
}
