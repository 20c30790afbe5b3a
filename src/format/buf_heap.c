/*
 * buf_heap.c - growing an hp_buf with realloc, for the analyzer, the tests
 * and the tools. Never linked into the recorder, which must not call the
 * program's allocator (it grows its buffers with mmap, in writer.c).
 */
#include <errno.h>
#include <stdlib.h>

#include "encode.h"

int hp_buf_grow_heap(struct hp_buf *b, size_t need)
{
	size_t cap = b->cap ? b->cap : 4096;
	uint8_t *p;

	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}
