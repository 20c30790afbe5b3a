/*
 * coreforked.c - a fork child that is not followed (no --follow-fork)
 * allocates, then aborts with a core (tests/integration/test_core_rec.c,
 * core_of_unfollowed_child): the parent's site_before 3 blocks of 300
 * bytes, recorded, inherited by the child; the child's site_after 7
 * blocks of 700 bytes, which the child's stopped recorder must not record
 * (its slow path's common case is taken only while the recorder is on:
 * recorder.c, hp_rare). The parent waits for the child and exits 0;
 * exits 2 when the recorder is not active, 3 when fork fails.
 */
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../include/heapprof.h"

static void *keep[16];

__attribute__((noinline)) static void *site_before(void)
{
	return malloc(300);
}

__attribute__((noinline)) static void *site_after(void)
{
	return malloc(700);
}

int main(void)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	pid_t child;

	if (!heapprof_active || !heapprof_active())
		return 2;
	if (setrlimit(RLIMIT_CORE, &rl) != 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CORE, &rl);
	}
	for (int i = 0; i < 3; i++)
		keep[i] = site_before();
	child = fork();
	if (child < 0)
		return 3;
	if (child == 0) {
		for (int i = 3; i < 10; i++)
			keep[i] = site_after();
		abort();
	}
	waitpid(child, NULL, 0);
	return 0;
}
