/*
 * corerec.c - known allocations under heapprof, then abort() with a core
 * (tests/integration/test_core_rec.c): from three sites, each its own
 * noinline call path,
 *   site_small  10 blocks of 24 bytes, 4 freed     -> 6 x 24 in use
 *   site_mid     5 blocks of 1000 bytes, none freed -> 5 x 1000
 *   site_big     2 blocks of 70000 bytes, 1 freed   -> 1 x 70000
 * and a site whose blocks are all freed (3 x 512). RLIMIT_CORE is raised
 * so the kernel writes the core in the current directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static void *keep[64];

__attribute__((noinline)) static void *site_small(void)
{
	return malloc(24);
}

__attribute__((noinline)) static void *site_mid(void)
{
	return malloc(1000);
}

__attribute__((noinline)) static void *site_big(void)
{
	return malloc(70000);
}

__attribute__((noinline)) static void *site_gone(void)
{
	return malloc(512);
}

int main(int argc, char **argv)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	void *gone[3];
	int n = 0;

	if (setrlimit(RLIMIT_CORE, &rl) != 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CORE, &rl);
	}
	for (int i = 0; i < 10; i++)
		keep[n++] = site_small();
	for (int i = 0; i < 4; i++)
		free(keep[--n]);
	for (int i = 0; i < 5; i++)
		keep[n++] = site_mid();
	keep[n++] = site_big();
	free(site_big());
	for (int i = 0; i < 3; i++)
		gone[i] = site_gone();
	for (int i = 0; i < 3; i++)
		free(gone[i]);
	for (int d = 1; argc > 1 && argv[1][0] == 'd' && d <= 40; d++) { /* "deep" */
		void *site_deep(int); /* after main, so that the lines above stay */
		keep[n++] = site_deep(d);
	}
	printf("kept %d\n", n);
	fflush(stdout);
	abort();
}

/* With the argument "deep": 40 blocks of 40 bytes from site_deep at the
 * end of a recursion 1 to 40 calls deep, one stack each, deeper than the
 * stack table keeps in a key's head (test_core_rec's
 * core_reads_deep_stacks). */
__attribute__((noinline)) void *site_deep(int n)
{
	void *p = n ? site_deep(n - 1) : malloc(40);
	__asm__ volatile("" : : "r"(p) : "memory"); /* no tail call */
	return p;
}
