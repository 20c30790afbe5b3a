/*
 * triggers.c - snapshots on demand: heapprof_dump() after phase 1, the dump
 * signal after phase 2; then phase 3, and with argument "kill" a SIGKILL,
 * which leaves the capture as it was at the last snapshot.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "../../include/heapprof.h"

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")
#define NOINLINE __attribute__((noinline))

NOINLINE void phase1(void) { for (int i = 0; i < 10; i++) KEEP(malloc(100)); }
NOINLINE void phase2(void) { for (int i = 0; i < 20; i++) KEEP(malloc(200)); }
NOINLINE void phase3(void) { for (int i = 0; i < 30; i++) KEEP(malloc(300)); }

int main(int argc, char **argv)
{
	phase1();
	if (!heapprof_dump || heapprof_dump() != 0)
		return 2;
	phase2();
	raise(SIGUSR2);
	phase3();
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		raise(SIGKILL);
	return 0;
}
