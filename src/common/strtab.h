/*
 * strtab.h - strings for the analyzer: a pool they live in, and a table
 * that numbers distinct strings.
 *
 * struct hp_strpool hands out bytes that live until the pool is freed, in
 * blocks of 64 KiB (a larger string gets a block of its own); a string
 * never moves, so pointers to it stay valid.
 *
 * struct hp_strtab interns strings: each distinct string gets the next
 * index, 0, 1, 2, ... in the order of first sight, and a copy in the
 * table's pool. The string tables of pprof's Profile and of the SYMBOLS
 * record are such tables. Lookups hash the string (hp_hash_str) into a
 * hash index (table.h).
 *
 * Ordinary analyzer C: allocates with malloc (never linked into the
 * recorder), not thread-safe. A zeroed struct is empty.
 */
#ifndef HP_COMMON_STRTAB_H
#define HP_COMMON_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "table.h"

struct hp_strpool_block;

struct hp_strpool {
	struct hp_strpool_block *blocks; /* the newest first */
};

/* n bytes that live as long as the pool, or NULL when out of memory. */
char *hp_strpool_alloc(struct hp_strpool *p, size_t n);

/* A copy of s in the pool, or NULL when out of memory. */
const char *hp_strpool_dup(struct hp_strpool *p, const char *s);

void hp_strpool_free(struct hp_strpool *p);

struct hp_strtab {
	const char **strings; /* by index, each in pool */
	size_t count, cap;
	struct hp_hindex index;
	struct hp_strpool pool;
};

/* The index of s, s copied and given the next index on first sight.
 * Returns 0, or -ENOMEM (the table unchanged). */
int hp_strtab_intern(struct hp_strtab *t, const char *s, uint32_t *index);

/* The string of an index below t->count. */
static inline const char *hp_strtab_get(const struct hp_strtab *t, uint32_t index)
{
	return t->strings[index];
}

void hp_strtab_free(struct hp_strtab *t);

#endif
