/*
 * intern.h - an append-only table that gives word strings dense ids.
 *
 * The stack table (key: the frames of a call stack) and the bucket table
 * (key: stack id, type tag, context tag, size) are both interning tables:
 * a key seen again gets its old id, a new key the next id. Ids start at 1;
 * 0 means "none" (table full, or out of memory), and callers count that as
 * lost.
 *
 * Model: an open-addressed index of 32-bit slots, each holding the low
 * HP_INTERN_ID_BITS bits for the id (0 = empty) and above them the top bits
 * of the key's hash as a tag (a probe compares a key only on a tag match:
 * one slot in 2,048 of another key's costs a look at its entry), an entry
 * per id (where its key is, its length) and word chunks holding the keys.
 *
 * Memory is mapped as it is needed, never up front, so that a program
 * running under an address-space limit (RLIMIT_AS, ulimit -v) keeps nearly
 * all of it: the entries live in chunks of 4096 (64 KiB), found through a
 * directory of chunk pointers in this struct, and the keys in chunks of
 * 64 Ki words (512 KiB) filled in order; a key never straddles two chunks
 * (the tail of a chunk too short for the next key is left unused, at most
 * HP_INTERN_MAX_KEY_WORDS - 1 words of 64 Ki), and each entry points at its
 * key, so readers need no directory of word chunks. A chunk that cannot be
 * mapped makes the insert return 0, like a full table. The index starts
 * small (4096 slots, 16 KiB) and doubles when three quarters full, so it
 * holds 4/3 to 8/3 slots a key (5.3 to 10.7 bytes): slots are hashed, so a
 * large index mapped up front would be touched all over (a page per new
 * key) and cost both page faults and resident memory.
 *
 * Lock-free readers: an insert (under the lock) maps any chunk it needs and
 * publishes it in the directory with a release store, writes the key and
 * the entry, then publishes the id (count, then the index slot) with
 * release stores. A reader that found the id (acquire) therefore finds its
 * entry's chunk in the directory and the entry and key complete: it sees
 * either no chunk (only for ids it cannot hold yet) or a complete one.
 * Growth of the index keeps lookups lock-free too: the new index is filled,
 * then published with a release store. A reader may still be probing the
 * old one (any thread, a signal handler, for as long as it is preempted),
 * so it is never unmapped; its slots' pages are given back to the kernel
 * at once instead (hp_os_release): the range stays mapped and reads as
 * empty slots. A reader that finds an old slot sees a right id (ids never
 * change); one that finds an empty slot misses. A reader that misses a key,
 * in an old index or not, takes the lock and looks again in the current
 * index before inserting, so no key is ever added twice. What the old
 * indexes keep is address space (at most the current index's size, as they
 * halve) and the first page of each (its header, read by late readers).
 *
 * Chained keys (the stack table): a table set up by hp_intern_init_chained
 * keeps of a key longer than HP_INTERN_HEAD_WORDS only its first
 * HP_INTERN_HEAD_WORDS words, then one word, the id of a segment in a
 * second table (its tails) that holds the rest. The rest is cut from its
 * end in segments of HP_INTERN_SEG_WORDS words (the first, next to the
 * head, may be shorter), each a key of the tails table: the id of the
 * segment after it (towards the key's end; 0: none), then its words. As
 * segments are cut from the key's end, keys that end alike (stacks with
 * the same outer frames, whatever their depth) share their segments, and
 * a key's words are stored about once per distinct end. A lookup compares
 * the words in place, the head and then each segment along the chain (a
 * memcmp each): nothing is encoded or hashed again. An insert interns the
 * segments (into the tails, taking their lock under the table's) before
 * it publishes the key's id, so a reader that acquired an id finds its
 * whole chain.
 *
 * Locking: lookups are lock-free; inserts take the table's spinlock (and
 * may call mmap under it). Nothing here allocates from the target's malloc
 * (only mmap). Lookups are async-signal-safe; inserts are not (the lock).
 */
#ifndef HP_RECORDER_INTERN_H
#define HP_RECORDER_INTERN_H

#include <stdint.h>

#include "spin.h"

/* Ids of any table are below this. */
#define HP_INTERN_MAX_IDS (1u << 21)
/* Longer keys are refused (0). */
#define HP_INTERN_MAX_KEY_WORDS 1024u
#define HP_INTERN_CHUNK_BITS 12 /* entries per chunk: 4096 */
#define HP_INTERN_CHUNK_WORDS (1u << 16) /* words per key chunk */
/* Chained keys: words kept in a key's entry; words a segment holds (for
 * stacks: the least memory for about the same lookups, measured in
 * docs/internals/recorder.md, "A stack's frames"). */
#define HP_INTERN_HEAD_WORDS 4u
#define HP_INTERN_SEG_WORDS 16u
/* An index slot's id bits (ids < HP_INTERN_MAX_IDS); the rest is the tag. */
#define HP_INTERN_ID_BITS 21

struct hp_intern_entry {
	const uint64_t *key; /* in a word chunk; never moves */
	uint32_t len;
	uint32_t hash_lo; /* the low half of the key's hash, to re-index on growth */
};

struct hp_intern_index {
	uint32_t *slots;    /* (hash >> 53) << HP_INTERN_ID_BITS | id; 0 = empty */
	uint32_t mask;      /* slots - 1, a power of two minus one */
};

struct hp_intern {
	struct hp_intern_index *index; /* current; swapped with release under lock */
	uint32_t max_ids;    /* ids < max_ids */
	uint32_t count;      /* next id; written under lock with release, read with acquire */
	uint64_t max_words;  /* words of all keys together (chunk tails not counted) */
	uint64_t used_words; /* written under lock (relaxed atomic), read by anyone */
	uint64_t *free_words; /* the unused end of the current key chunk; guarded by lock */
	uint32_t free_count;  /* words there; guarded by lock */
	/* Bytes of the old indexes still held (their first pages); written
	 * under lock (relaxed atomic), read by anyone. */
	uint64_t old_index_bytes;
	struct hp_spin lock;
	/* With chained keys, the table of their segments (else NULL). */
	struct hp_intern *tails;
	/* Chunk i holds the entries of ids i * 4096 ...; NULL until an insert
	 * needs it. Written under lock with release, read with acquire. */
	struct hp_intern_entry *entries[HP_INTERN_MAX_IDS >> HP_INTERN_CHUNK_BITS];
};

/* Sets up the table for up to max_ids - 1 keys (max_ids <= HP_INTERN_MAX_IDS)
 * of max_words words in all, mapping only a small index: entries and keys
 * are mapped as they come. Returns 0, -EINVAL or -ENOMEM. Not thread-safe:
 * call once, at init. No allocation (mmap), no lock. */
int hp_intern_init(struct hp_intern *t, uint32_t max_ids, uint64_t max_words);

/* hp_intern_init for a table of chained keys (above): their segments go
 * into tails, a table set up by hp_intern_init for them alone (max_words
 * of tails bounds their words; a key whose segments do not fit is not
 * added). t's max_words counts the words it keeps itself (at most
 * HP_INTERN_HEAD_WORDS + 1 a key). Same properties. */
int hp_intern_init_chained(struct hp_intern *t, uint32_t max_ids, uint64_t max_words,
			   struct hp_intern *tails);

/* Returns the id of key[0..len), adding it when new, or 0 when the table is
 * full, len > HP_INTERN_MAX_KEY_WORDS, or memory for it cannot be mapped.
 * len may be 0. Thread-safe; lock-free for a known key, else spins on the
 * table's lock and may mmap; no allocation; not async-signal-safe. */
uint32_t hp_intern_put(struct hp_intern *t, const uint64_t *key, uint32_t len);

/* hp_intern_put with the key's hash given: any function of the key, the
 * same for every put into t (hp_intern_put uses hp_hash_words; the stack
 * table hp_hash_stack, which the unwinder computes as it walks). Same
 * properties as hp_intern_put. */
uint32_t hp_intern_put_hashed(struct hp_intern *t, const uint64_t *key, uint32_t len,
			      uint64_t hash);

/* The number of ids handed out plus one (ids 1..count-1 exist). Lock-free,
 * async-signal-safe, no allocation. */
uint32_t hp_intern_count(const struct hp_intern *t);

/* The key of an existing id (1 <= id < hp_intern_count), in place; not
 * for a table of chained keys. Lock-free, async-signal-safe, no
 * allocation. */
const uint64_t *hp_intern_key(const struct hp_intern *t, uint32_t id, uint32_t *len);

/* Copies the key of an existing id into key[] (room for
 * HP_INTERN_MAX_KEY_WORDS words, or for the longest key put) and returns
 * its length; any table. Lock-free, async-signal-safe, no allocation. */
uint32_t hp_intern_copy(const struct hp_intern *t, uint32_t id, uint64_t *key);

/* Whether key[0..len) is the key of an existing id; any table.
 * Lock-free, async-signal-safe, no allocation. */
int hp_intern_equal(const struct hp_intern *t, uint32_t id, const uint64_t *key, uint32_t len);

/* Bytes of the table's memory that may have been touched (for accounting;
 * a chained table's tails are counted apart).
 * Lock-free, async-signal-safe, no allocation. */
uint64_t hp_intern_bytes(const struct hp_intern *t);

struct hp_root_intern;
/* Describes t's layout and address for the core root (root.h). No
 * allocation, no lock. */
void hp_intern_root(const struct hp_intern *t, struct hp_root_intern *out);

#endif
