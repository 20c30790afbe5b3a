/*
 * strtab.c - the string pool and the string table (see strtab.h).
 */
#include "strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

#define BLOCK_BYTES 65536

struct hp_strpool_block {
	struct hp_strpool_block *next;
	size_t used, cap;
	char data[];
};

char *hp_strpool_alloc(struct hp_strpool *p, size_t n)
{
	struct hp_strpool_block *b = p->blocks;
	char *s;

	if (!b || b->cap - b->used < n) {
		size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
		b = malloc(sizeof *b + cap);
		if (!b)
			return NULL;
		b->next = p->blocks;
		b->used = 0;
		b->cap = cap;
		p->blocks = b;
	}
	s = b->data + b->used;
	b->used += n;
	return s;
}

const char *hp_strpool_dup(struct hp_strpool *p, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = hp_strpool_alloc(p, n);

	return d ? memcpy(d, s, n) : NULL;
}

void hp_strpool_free(struct hp_strpool *p)
{
	while (p->blocks) {
		struct hp_strpool_block *next = p->blocks->next;
		free(p->blocks);
		p->blocks = next;
	}
}

int hp_strtab_intern(struct hp_strtab *t, const char *s, uint32_t *index)
{
	uint64_t h = hp_hash_u64(hp_hash_str(HP_HASH_STR_SEED, s));
	struct hp_hindex_probe it;
	const char *copy;
	uint32_t i;

	hp_hindex_probe(&t->index, h, &it);
	while ((i = hp_hindex_next(&t->index, &it)) != HP_HINDEX_NONE) {
		if (strcmp(t->strings[i], s) == 0) {
			*index = i;
			return 0;
		}
	}
	if (t->count >= HP_HINDEX_NONE || hp_vec_grow(&t->strings, &t->cap, t->count + 1) ||
	    !(copy = hp_strpool_dup(&t->pool, s)))
		return -ENOMEM;
	/* A failed add leaves the copy in the pool, unused: freed with it. */
	if (hp_hindex_add(&t->index, h, (uint32_t)t->count))
		return -ENOMEM;
	t->strings[t->count] = copy;
	*index = (uint32_t)t->count++;
	return 0;
}

void hp_strtab_free(struct hp_strtab *t)
{
	free(t->strings);
	hp_hindex_free(&t->index);
	hp_strpool_free(&t->pool);
	memset(t, 0, sizeof *t);
}
