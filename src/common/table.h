/*
 * table.h - the analyzer's hash tables: a hash index and a map of 64-bit
 * keys, both open-addressed (linear probing), both kept under half full.
 *
 * struct hp_hindex indexes items the caller keeps in an array of its own:
 * it maps a 64-bit hash to item numbers (uint32_t), several per hash if
 * need be. A lookup walks the items whose hash is equal and the caller
 * compares them with what it looks for; nothing is ever removed:
 *
 *     struct hp_hindex_probe it;
 *     uint32_t item;
 *     hp_hindex_probe(&t, h, &it);
 *     while ((item = hp_hindex_next(&t, &it)) != HP_HINDEX_NONE)
 *             if (same(&items[item], x))
 *                     return item;
 *     ret = hp_hindex_add(&t, h, new_item);
 *
 * struct hp_u64map maps 64-bit keys (any, 0 included) to 32-bit values: a
 * hash index on hp_hash_u64(key), which is a bijection, so that an equal
 * hash is an equal key and the map needs no key of its own.
 *
 * Ordinary analyzer C: allocates with malloc (never linked into the
 * recorder), not thread-safe. A zeroed struct is an empty table.
 */
#ifndef HP_COMMON_TABLE_H
#define HP_COMMON_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

#define HP_HINDEX_NONE UINT32_MAX

struct hp_hindex {
	uint64_t *hashes; /* per slot */
	uint32_t *items;  /* per slot: item + 1, 0 = empty */
	size_t mask;      /* slots - 1; 0 before the first add */
	size_t count;     /* items added */
};

/* The state of one lookup. */
struct hp_hindex_probe {
	uint64_t hash;
	size_t slot;
};

/* Starts a lookup of hash h. */
void hp_hindex_probe(const struct hp_hindex *t, uint64_t h, struct hp_hindex_probe *it);

/* The next item whose hash is it's, or HP_HINDEX_NONE when there is no
 * more. */
uint32_t hp_hindex_next(const struct hp_hindex *t, struct hp_hindex_probe *it);

/* Adds item (below HP_HINDEX_NONE) under hash h, growing the table when
 * it would be half full. Does not look for an equal item: the caller has.
 * Returns 0 or -ENOMEM (the table unchanged). */
int hp_hindex_add(struct hp_hindex *t, uint64_t h, uint32_t item);

/* The bytes the next hp_hindex_add asks malloc for (its slots, grown), or
 * 0 when the item fits as it is: for a caller that bounds its memory and
 * charges it first (capture.c). */
size_t hp_hindex_grow_bytes(const struct hp_hindex *t);

/* Frees the slots; the table is empty again. */
void hp_hindex_free(struct hp_hindex *t);

struct hp_u64map {
	struct hp_hindex index;
};

/* Whether key is in the map; its value in *val when it is. */
static inline int hp_u64map_get(const struct hp_u64map *m, uint64_t key, uint32_t *val)
{
	struct hp_hindex_probe it;
	uint32_t v;

	hp_hindex_probe(&m->index, hp_hash_u64(key), &it);
	v = hp_hindex_next(&m->index, &it);
	if (v == HP_HINDEX_NONE)
		return 0;
	*val = v;
	return 1;
}

/* Maps key (not in the map yet) to val (below HP_HINDEX_NONE). Returns 0
 * or -ENOMEM. */
static inline int hp_u64map_put(struct hp_u64map *m, uint64_t key, uint32_t val)
{
	return hp_hindex_add(&m->index, hp_hash_u64(key), val);
}

/* How many keys the map holds. */
static inline size_t hp_u64map_count(const struct hp_u64map *m)
{
	return m->index.count;
}

static inline void hp_u64map_free(struct hp_u64map *m)
{
	hp_hindex_free(&m->index);
}

#endif
