/*
 * table.c - the analyzer's hash tables (see table.h).
 */
#include "table.h"

#include <errno.h>
#include <stdlib.h>

void hp_hindex_probe(const struct hp_hindex *t, uint64_t h, struct hp_hindex_probe *it)
{
	it->hash = h;
	it->slot = (size_t)h & t->mask;
}

uint32_t hp_hindex_next(const struct hp_hindex *t, struct hp_hindex_probe *it)
{
	if (!t->items)
		return HP_HINDEX_NONE;
	for (size_t i = it->slot; t->items[i]; i = (i + 1) & t->mask) {
		if (t->hashes[i] == it->hash) {
			it->slot = (i + 1) & t->mask;
			return t->items[i] - 1;
		}
	}
	return HP_HINDEX_NONE;
}

/* Puts (h, item + 1) in the first empty slot from h's. */
static void place(uint64_t *hashes, uint32_t *items, size_t mask, uint64_t h, uint32_t item1)
{
	size_t i = (size_t)h & mask;

	while (items[i])
		i = (i + 1) & mask;
	hashes[i] = h;
	items[i] = item1;
}

/* The mask after one more add: the same, or the table's next size when
 * it would be half full. */
static size_t next_mask(const struct hp_hindex *t)
{
	if ((t->count + 1) * 2 <= t->mask)
		return t->mask;
	return t->mask ? t->mask * 2 + 1 : 63;
}

size_t hp_hindex_grow_bytes(const struct hp_hindex *t)
{
	size_t mask = next_mask(t);

	return mask == t->mask ? 0 : (mask + 1) * (sizeof *t->hashes + sizeof *t->items);
}

int hp_hindex_add(struct hp_hindex *t, uint64_t h, uint32_t item)
{
	if (item == HP_HINDEX_NONE)
		return -EINVAL;
	if (next_mask(t) != t->mask) { /* keep it under half full */
		size_t mask = next_mask(t);
		uint64_t *hashes = malloc((mask + 1) * sizeof *hashes);
		uint32_t *items = calloc(mask + 1, sizeof *items);

		if (!hashes || !items) {
			free(hashes);
			free(items);
			return -ENOMEM;
		}
		for (size_t i = 0; t->items && i <= t->mask; i++)
			if (t->items[i])
				place(hashes, items, mask, t->hashes[i], t->items[i]);
		free(t->hashes);
		free(t->items);
		t->hashes = hashes;
		t->items = items;
		t->mask = mask;
	}
	place(t->hashes, t->items, t->mask, h, item + 1);
	t->count++;
	return 0;
}

void hp_hindex_free(struct hp_hindex *t)
{
	free(t->hashes);
	free(t->items);
	t->hashes = NULL;
	t->items = NULL;
	t->mask = t->count = 0;
}
