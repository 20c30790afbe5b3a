/*
 * errnofree.c - free keeps errno, whatever the recorder does in it: the
 * program closes every descriptor above 2, as a daemon does (the
 * recorder's capture among them, which the writer then finds gone, its
 * fstat failing with EBADF, and reopens by name), then frees ROUNDS x
 * BATCH recorded blocks with errno set to a mark before each, and exits
 * 3 at the first free that changed it (0 when none did). Run it
 * with interval snapshots (--interval 1), so that frees write them: a
 * free's slow path does not save errno itself (recorder.c,
 * hp_record_free); what it calls that can set errno saves it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ROUNDS 400
#define BATCH 500
#define MARK 4321

int main(void)
{
	static void *blocks[BATCH];

	for (int i = 0; i < BATCH; i++)
		if (!(blocks[i] = malloc(16 + (size_t)(i % 200))))
			return 1;
	/* The capture sits just under the descriptor limit; the frees below
	 * come first after it is gone and after an interval has passed, so
	 * that one of them writes the next snapshot. */
	closefrom(3);
	usleep(5000);
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < BATCH; i++) {
			errno = MARK;
			free(blocks[i]);
			if (errno != MARK) {
				fprintf(stderr, "errnofree: free %d of round %d changed errno to %d\n", i,
					r, errno);
				return 3;
			}
		}
		for (int i = 0; i < BATCH; i++)
			if (!(blocks[i] = malloc(16 + (size_t)(i % 200))))
				return 1;
	}
	return 0;
}
