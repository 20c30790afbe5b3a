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
 *
 * Two more kinds of damage, each ending in abort() with a core:
 *   uaf     frees two 40-byte blocks (into tcache: "freed1", then "freed2",
 *           the list's head) and writes 8 bytes of 0x42 over freed2's
 *           first word, its tcache link: a write after free
 *   uafzero the same with 8 zero bytes: the link reads as the list's end,
 *           so the list holds one chunk where the bin counts two
 *   uafsize the same with keep's address, mangled as glibc 2.32+ mangles
 *           a link: the list leads to a chunk in use of another size
 *   double  fills the 48-byte tcache bin (7 frees), then frees "x", "y"
 *           and x again: glibc checks only a fastbin's head, so x is in
 *           the fastbin twice, a loop x -> y -> x
 */
#include <stdint.h>
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

/* A write after free into a tcache chunk's link (fill: the byte
 * written, or -1: keep's address, mangled); then abort. */
__attribute__((noinline)) static int use_after_free(int fill)
{
	char *a = malloc(40), *b = malloc(40), *keep = malloc(fill < 0 ? 100 : 40);

	free(a);
	free(b);
	printf("freed1 %p\nfreed2 %p\nkeep %p\n", (void *)a, (void *)b, (void *)keep);
	fflush(stdout);
	if (fill < 0) { /* the bug */
		uintptr_t link = ((uintptr_t)b >> 12) ^ (uintptr_t)keep;
		memcpy(b, &link, 8);
	} else {
		memset(b, fill, 8); /* the bug */
	}
	__asm__ volatile("" : : "r"(b) : "memory");
	abort();
}

/* A double free glibc does not catch (fastbin, not its head); then abort. */
__attribute__((noinline)) static int double_free(void)
{
	char *fill[7], *x, *y, *keep;

	for (int i = 0; i < 7; i++)
		fill[i] = malloc(40);
	x = malloc(40);
	y = malloc(40);
	keep = malloc(40); /* keeps x and y off the top chunk */
	for (int i = 0; i < 7; i++)
		free(fill[i]);
	printf("x %p\ny %p\nkeep %p\n", (void *)x, (void *)y, (void *)keep);
	fflush(stdout);
	free(x);
	free(y);
	free(x); /* the bug */
	abort();
}

int main(int argc, char **argv)
{
	char *parser, *victim;
	int wait = argc > 1 && strcmp(argv[1], "wait") == 0;

	if (!wait) {
		struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
		setrlimit(RLIMIT_CORE, &rl);
	}
	if (argc > 1 && strcmp(argv[1], "uaf") == 0)
		return use_after_free(0x42);
	if (argc > 1 && strcmp(argv[1], "uafzero") == 0)
		return use_after_free(0);
	if (argc > 1 && strcmp(argv[1], "uafsize") == 0)
		return use_after_free(-1);
	if (argc > 1 && strcmp(argv[1], "double") == 0)
		return double_free();
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
