/*
 * errnomalloc.c - malloc, calloc, realloc and free keep errno, whatever the
 * recorder does in them: each call is made with errno set to a mark, and
 * the program exits 3 at the first that changed it (0 when none did).
 *
 * The calls reach every rare path of a recorded allocation: 3,000 stacks
 * met for the first time (walks stepped and remembered, stacks interned,
 * buckets made, the tables mapped and grown), 60,000 blocks live at once
 * (the live register's tables grown), frames without unwind tables (the
 * walk's fallback to libunwind, whose readability check sets errno), and,
 * after the program closed every descriptor above 2 (the capture among
 * them, which the writer finds gone, its fstat failing with EBADF), more
 * allocations: with --interval 1 their ticks write snapshots, with
 * --events their full buffers are flushed. A successful allocation
 * leaves errno alone (C11 7.5: a library function may set it only where
 * its documentation says; glibc's malloc sets it only on failure).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MARK 4321
#define LIVE 60000
#define ROUNDS 40

static void *blocks[LIVE];
static unsigned calls;

static void changed(const char *what)
{
	fprintf(stderr, "errnomalloc: %s (call %u) changed errno to %d\n", what, calls, errno);
	exit(3);
}

/* One allocation of each kind at this stack, kept or given back. */
void errnomalloc_allocate(unsigned i);
__attribute__((noinline, used)) void errnomalloc_allocate(unsigned i)
{
	void *p;

	calls++;
	errno = MARK;
	p = malloc(16 + i % 300);
	if (errno != MARK)
		changed("malloc");
	errno = MARK;
	p = realloc(p, 32 + i % 500);
	if (errno != MARK)
		changed("realloc");
	errno = MARK;
	free(blocks[i % LIVE]);
	if (errno != MARK)
		changed("free");
	blocks[i % LIVE] = p;
	errno = MARK;
	p = calloc(1 + i % 7, 24);
	if (errno != MARK)
		changed("calloc");
	free(p);
}

/* depth frames of recursion, then one of seven sites: a stack of its own
 * for each (depth, site). */
static __attribute__((noinline)) void site0(unsigned i) { errnomalloc_allocate(i); }
static __attribute__((noinline)) void site1(unsigned i) { errnomalloc_allocate(i); }
static __attribute__((noinline)) void site2(unsigned i) { errnomalloc_allocate(i); }
static __attribute__((noinline)) void site3(unsigned i) { errnomalloc_allocate(i); }
static __attribute__((noinline)) void site4(unsigned i) { errnomalloc_allocate(i); }
static __attribute__((noinline)) void site5(unsigned i) { errnomalloc_allocate(i); }
static __attribute__((noinline)) void site6(unsigned i) { errnomalloc_allocate(i); }
static void (*const sites[])(unsigned) = {site0, site1, site2, site3, site4, site5, site6};

static __attribute__((noinline)) void descend(unsigned depth, unsigned site, unsigned i)
{
	if (depth)
		descend(depth - 1, site, i);
	else
		sites[site](i);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

/* A frame without unwind tables (no FDE: the rule cache cannot step it,
 * so the walk falls back to libunwind, which guesses with frame
 * pointers): opaque(i) calls allocate(i). */
void opaque(unsigned i);
__asm__(".text\n"
	".type opaque, @function\n"
	"opaque:\n"
	"\tpush %rbp\n"
	"\tmov %rsp, %rbp\n"
	"\tcall errnomalloc_allocate\n"
	"\tpop %rbp\n"
	"\tret\n"
	".size opaque, .-opaque\n");

static void round_of(unsigned r)
{
	for (unsigned i = 0; i < 3000; i++)
		descend(i / 7 % 430, i % 7, r * 3000 + i);
	for (unsigned i = 0; i < 200; i++)
		opaque(r * 3000 + i);
}

int main(void)
{
	for (unsigned r = 0; r < ROUNDS / 2; r++)
		round_of(r);
	/* The capture sits above 2: the calls below come after it is gone
	 * and after an interval has passed, so that their ticks write. */
	closefrom(3);
	usleep(5000);
	for (unsigned r = ROUNDS / 2; r < ROUNDS; r++)
		round_of(r);
	for (unsigned i = 0; i < LIVE; i++)
		free(blocks[i]);
	return 0;
}
