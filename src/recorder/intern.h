/*
 * intern.h - an append-only table that gives word strings dense ids.
 *
 * The stack table (key: the frames of a call stack) and the bucket table
 * (key: stack id, type tag, context tag, size) are both interning tables:
 * a key seen again gets its old id, a new key the next id. Ids start at 1;
 * 0 means "none" (table full, or out of memory), and callers count that as
 * lost.
 *
 * Model: an open-addressed index of 64-bit slots, each holding the upper 32
 * bits of the key's hash and its id (0 = empty), an entry array (offset and
 * length of each id's key) and a word arena holding the keys. The entry
 * array and the arena are mapped once at their maximum size and filled in
 * order, so only the pages in use are ever touched. The index starts small
 * and grows fourfold when half full: slots are hashed, so a large index
 * mapped up front would be touched all over (a page per new key) and cost
 * both page faults and resident memory.
 *
 * Growth keeps lookups lock-free: the new index is filled, then published
 * with a release store; the old one is left mapped (a reader may still be
 * probing it), which wastes at most a third of the index memory. A reader
 * that misses a key, in an old index or not, takes the lock and looks
 * again before inserting, so no key is ever added twice.
 *
 * Locking: lookups are lock-free; inserts take the table's spinlock. Nothing
 * here allocates from the target's malloc (only mmap). Lookups are
 * async-signal-safe; inserts are not (the lock).
 */
#ifndef HP_RECORDER_INTERN_H
#define HP_RECORDER_INTERN_H

#include <stdint.h>

#include "spin.h"

struct hp_intern_entry {
	uint64_t offset; /* into words */
	uint32_t len;
	uint32_t hash_lo; /* the low half of the key's hash, to re-index on growth */
};

struct hp_intern_index {
	uint64_t *slots;    /* (hash >> 32) << 32 | id; 0 = empty */
	uint32_t mask;      /* slots - 1, a power of two minus one */
};

struct hp_intern {
	struct hp_intern_index *index; /* current; swapped with release under lock */
	uint32_t max_ids;    /* ids < max_ids */
	struct hp_intern_entry *entries;
	uint64_t *words;
	uint64_t max_words;
	uint64_t used_words; /* guarded by lock */
	uint32_t count;      /* next id; written under lock with release, read with acquire */
	struct hp_spin lock;
};

/* Maps the table for up to max_ids - 1 keys of max_words words in all.
 * Returns 0 or -ENOMEM. Not thread-safe: call once, at init. */
int hp_intern_init(struct hp_intern *t, uint32_t max_ids, uint64_t max_words);

/* Returns the id of key[0..len), adding it when new, or 0 when the table is
 * full. len may be 0. Thread-safe; may spin on the table's lock. */
uint32_t hp_intern_put(struct hp_intern *t, const uint64_t *key, uint32_t len);

/* The number of ids handed out plus one (ids 1..count-1 exist). Lock-free. */
uint32_t hp_intern_count(const struct hp_intern *t);

/* The key of an existing id. Lock-free, async-signal-safe. */
const uint64_t *hp_intern_key(const struct hp_intern *t, uint32_t id, uint32_t *len);

/* Bytes of the table's memory that may have been touched (for accounting). */
uint64_t hp_intern_bytes(const struct hp_intern *t);

#endif
