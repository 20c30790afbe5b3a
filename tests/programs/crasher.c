/* crasher.c - allocates 7 x 77 bytes, then dies: abort (argv[1] "abort"),
 * a segfault ("segv") or SIGTERM to itself ("term"). */
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")

__attribute__((noinline)) void before_crash(void)
{
	for (int i = 0; i < 7; i++)
		KEEP(malloc(77));
}

int main(int argc, char **argv)
{
	before_crash();
	if (argc > 1 && strcmp(argv[1], "segv") == 0)
		*(volatile int *)(uintptr_t)8 = 1;
	if (argc > 1 && strcmp(argv[1], "term") == 0)
		raise(SIGTERM);
	abort();
}
