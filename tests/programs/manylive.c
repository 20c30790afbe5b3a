/*
 * manylive.c - LIVE blocks of 32 bytes live at once, a snapshot taken
 * with heapprof_dump() while they are, then all freed: the recorder's own
 * memory for a large live set.
 */
#include <stdlib.h>

#include "../../include/heapprof.h"

#define LIVE 1000000

int main(void)
{
	static void *blocks[LIVE];

	for (int i = 0; i < LIVE; i++)
		blocks[i] = malloc(32);
	if (!heapprof_dump || heapprof_dump() != 0)
		return 2;
	for (int i = 0; i < LIVE; i++)
		free(blocks[i]);
	return 0;
}
