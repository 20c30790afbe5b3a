/*
 * corereach.c - known blocks under heapprof, some still reachable and
 * some not, then abort() with a core (tests/integration/test_core_reach.c).
 * From its own noinline call path, each site allocates:
 *   site_global   3 x 40   kept in a global array         -> still reachable
 *   site_stack    2 x 56   kept in main's frame           -> still reachable
 *   site_holder   1 x 64   kept in a global, and holds    -> still reachable
 *   site_inner    4 x 72   ... these, only in that block  -> still reachable
 *   site_lost     5 x 88   the last pointer dropped       -> definitely lost
 *   site_head     1 x 48   a list dropped whole: its head -> definitely lost
 *   site_tail     3 x 48   and the rest of it             -> indirectly lost
 *   site_last     1 x 16   kept in a global, allocated last (the recorder
 *                          remembers the last block each thread allocated,
 *                          complemented: not a pointer that could make it
 *                          reachable)
 *   site_final    1 x 24   the main thread's very last block, its pointer
 *                          dropped                        -> definitely lost
 * It prints "global ADDR", "inner ADDR", "lost ADDR" (one block of each)
 * for --whatis, scrubs the dead part of its stack (where the dropped
 * pointers lay in the frames of malloc and of the recorder), and aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static void *g_global[3];
static void **g_holder;
void *volatile g_last; /* read by nothing: volatile keeps the store */

__attribute__((noinline)) static void *site_global(void) { return malloc(40); }
__attribute__((noinline)) static void *site_stack(void) { return malloc(56); }
__attribute__((noinline)) static void *site_holder(void) { return malloc(64); }
__attribute__((noinline)) static void *site_inner(void) { return malloc(72); }
__attribute__((noinline)) static void *site_lost(void) { return malloc(88); }
__attribute__((noinline)) static void *site_head(void) { return malloc(48); }
__attribute__((noinline)) static void *site_tail(void) { return malloc(48); }
__attribute__((noinline)) static void *site_last(void) { return malloc(16); }
__attribute__((noinline)) static void site_final(void)
{
	void *p = malloc(24);
	memset(p, 0, 24);
	__asm__ volatile("" : : "r"(p) : "memory");
}

/* Allocates the lost blocks; only an address, as a number xor'ed with a
 * constant, leaves (to print one). */
__attribute__((noinline)) static uintptr_t drop(void)
{
	uintptr_t shown = 0;

	for (int i = 0; i < 5; i++) {
		void *p = site_lost();
		memset(p, 0, 88);
		if (i == 2)
			shown = (uintptr_t)p ^ 0x5a5a5a5a5a5a5a5aULL;
	}
	/* a list: head -> tail 1 -> tail 2 -> tail 3 */
	void **head = site_head(), **t = head;
	for (int i = 0; i < 3; i++) {
		*t = site_tail();
		t = *t;
	}
	*t = NULL;
	/* the stores above are not dead: the compiler must keep them */
	__asm__ volatile("" : : "r"(head) : "memory");
	return shown;
}

/* Overwrites the stack below the caller's frame, where the dead frames
 * of malloc, the recorder and drop() lay. */
__attribute__((noinline)) static void scrub(void)
{
	volatile char buf[65536];

	memset((char *)buf, 0, sizeof buf);
	__asm__ volatile("" : : "r"(buf) : "memory");
}

int main(void)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	void *volatile on_stack[2];
	uintptr_t lost;

	if (setrlimit(RLIMIT_CORE, &rl) != 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CORE, &rl);
	}
	setvbuf(stdout, NULL, _IONBF, 0); /* no stdio buffer from malloc */
	for (int i = 0; i < 3; i++)
		g_global[i] = site_global();
	for (int i = 0; i < 2; i++)
		on_stack[i] = site_stack();
	g_holder = site_holder();
	for (int i = 0; i < 4; i++)
		g_holder[i] = site_inner();
	lost = drop();
	g_last = site_last();
	printf("global %p\ninner %p\nlost 0x%lx\nstack %p\n", g_global[1], g_holder[3],
	       (unsigned long)(lost ^ 0x5a5a5a5a5a5a5a5aULL), on_stack[0]);
	fflush(stdout);
	site_final(); /* the thread's very last block, dropped */
	scrub();
	abort();
}
