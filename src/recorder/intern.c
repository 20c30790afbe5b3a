/*
 * intern.c - the append-only interning table (see intern.h for the model,
 * its chunks and how lock-free readers stay correct).
 */
#include "intern.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "../common/hash.h"
#include "os.h"
#include "root.h"

#define INITIAL_SLOTS 4096u
#define CHUNK_ENTRIES (1u << HP_INTERN_CHUNK_BITS)

/* What an empty key points at: readers may look at key[0]. Never written. */
static const uint64_t empty_key[1];

#define ID_MASK ((1u << HP_INTERN_ID_BITS) - 1)
#define TAG_SHIFT (64 - (32 - HP_INTERN_ID_BITS)) /* the hash's top bits */

_Static_assert(HP_INTERN_MAX_IDS <= 1u << HP_INTERN_ID_BITS, "an id fits its slot bits");

static uint32_t slot_of(uint64_t hash, uint32_t id)
{
	return (uint32_t)(hash >> TAG_SHIFT) << HP_INTERN_ID_BITS | id;
}

static size_t index_bytes(uint32_t slots)
{
	return sizeof(struct hp_intern_index) + (size_t)slots * sizeof(uint32_t);
}

static struct hp_intern_index *new_index(uint32_t slots)
{
	struct hp_intern_index *x = hp_os_map(index_bytes(slots));
	if (x) {
		x->slots = (uint32_t *)(x + 1);
		x->mask = slots - 1;
	}
	return x;
}

int hp_intern_init(struct hp_intern *t, uint32_t max_ids, uint64_t max_words)
{
	memset(t, 0, sizeof *t);
	if (max_ids > HP_INTERN_MAX_IDS)
		return -EINVAL;
	t->index = new_index(INITIAL_SLOTS);
	if (!t->index)
		return -ENOMEM;
	t->max_ids = max_ids;
	t->max_words = max_words;
	t->count = 1;
	return 0;
}

int hp_intern_init_chained(struct hp_intern *t, uint32_t max_ids, uint64_t max_words,
			   struct hp_intern *tails)
{
	int err = hp_intern_init(t, max_ids, max_words);
	if (!err)
		t->tails = tails;
	return err;
}

/* The entry of id. Its chunk must exist: id was published (acquired by
 * the caller) or the caller holds the lock and made the chunk. */
static struct hp_intern_entry *entry(const struct hp_intern *t, uint32_t id)
{
	struct hp_intern_entry *chunk =
		__atomic_load_n(&t->entries[id >> HP_INTERN_CHUNK_BITS], __ATOMIC_ACQUIRE);
	return chunk + (id & (CHUNK_ENTRIES - 1));
}

/* Whether key[0..n) (n >= 1) is the rest of a chained key whose first
 * segment is seg in tails x (intern.h): the first segment holds
 * (n - 1) % HP_INTERN_SEG_WORDS + 1 words, each after it
 * HP_INTERN_SEG_WORDS, the last names no next one. */
static int same_tail(const struct hp_intern *x, uint32_t seg, const uint64_t *key, uint32_t n)
{
	uint32_t r = (n - 1) % HP_INTERN_SEG_WORDS + 1;

	for (;;) {
		const struct hp_intern_entry *e = entry(x, seg);
		if (e->len != r + 1 || memcmp(e->key + 1, key, r * sizeof *key) != 0)
			return 0;
		key += r;
		n -= r;
		seg = (uint32_t)e->key[0];
		if (!n || !seg)
			return !n && !seg;
		r = HP_INTERN_SEG_WORDS;
	}
}

static int same_key(const struct hp_intern *t, uint32_t id, const uint64_t *key, uint32_t len)
{
	const struct hp_intern_entry *e = entry(t, id);

	if (e->len != len)
		return 0;
	if (!t->tails || len <= HP_INTERN_HEAD_WORDS)
		return !len || memcmp(e->key, key, len * sizeof *key) == 0;
	return memcmp(e->key, key, HP_INTERN_HEAD_WORDS * sizeof *key) == 0 &&
	       same_tail(t->tails, (uint32_t)e->key[HP_INTERN_HEAD_WORDS],
			 key + HP_INTERN_HEAD_WORDS, len - HP_INTERN_HEAD_WORDS);
}

/* Interns key[0..n) (n >= 1), the rest of a chained key, as segments of
 * tails x cut from its end (intern.h); returns the first segment's id, or
 * 0 when one could not be added. Under the table's lock (x's own is
 * taken per new segment). */
static uint32_t put_tail(struct hp_intern *x, const uint64_t *key, uint32_t n)
{
	uint64_t seg[HP_INTERN_SEG_WORDS + 1];
	uint32_t first = (n - 1) % HP_INTERN_SEG_WORDS + 1, next = 0;

	for (uint32_t end = n; end > first; end -= HP_INTERN_SEG_WORDS) {
		seg[0] = next;
		memcpy(seg + 1, key + end - HP_INTERN_SEG_WORDS, HP_INTERN_SEG_WORDS * sizeof *key);
		next = hp_intern_put(x, seg, HP_INTERN_SEG_WORDS + 1);
		if (!next)
			return 0;
	}
	seg[0] = next;
	memcpy(seg + 1, key, first * sizeof *key);
	return hp_intern_put(x, seg, first + 1);
}

/* Probes x for key; returns its id, or 0 with *empty the first empty slot.
 * Inline: the lookup of a known key is the whole cost of most puts. */
static inline __attribute__((always_inline)) uint32_t probe(const struct hp_intern *t, const struct hp_intern_index *x, uint64_t hash,
		      const uint64_t *key, uint32_t len, uint32_t *empty)
{
	uint32_t tag = slot_of(hash, 0), mask = x->mask;

	for (uint32_t i = (uint32_t)hash & mask;; i = (i + 1) & mask) {
		uint32_t s = __atomic_load_n(&x->slots[i], __ATOMIC_ACQUIRE);
		if (!s) {
			*empty = i;
			return 0;
		}
		if ((s & ~ID_MASK) == tag && same_key(t, s & ID_MASK, key, len))
			return s & ID_MASK;
	}
}

/* Replaces the index by one twice as large, and gives the old one's slots
 * back to the kernel (intern.h: a late reader finds them empty and takes
 * the lock). Under the lock. Returns 0 or -ENOMEM (the old index stays,
 * and is still usable). */
static int grow(struct hp_intern *t)
{
	struct hp_intern_index *old = t->index;
	struct hp_intern_index *x = new_index((old->mask + 1) * 2);

	if (!x)
		return -ENOMEM;
	/* The rehash reads and writes slots all over it (hp_os_populate). */
	hp_os_populate(x, index_bytes((old->mask + 1) * 2));
	for (uint32_t i = 0; i <= old->mask; i++) {
		uint32_t s = old->slots[i];
		if (!s)
			continue;
		uint32_t j = entry(t, s & ID_MASK)->hash_lo & x->mask;
		while (x->slots[j])
			j = (j + 1) & x->mask;
		x->slots[j] = s;
	}
	__atomic_store_n(&t->index, x, __ATOMIC_RELEASE);
	/* Never unmapped: a reader may still be in it. Its first page stays,
	 * with the header late readers read (mask, slots) and the slots
	 * after it. */
	size_t page = hp_os_page_size();
	size_t bytes = (index_bytes(old->mask + 1) + page - 1) & ~(page - 1); /* as mapped */
	if (bytes > page)
		hp_os_release((char *)old + page, bytes - page);
	__atomic_store_n(&t->old_index_bytes, t->old_index_bytes + page, __ATOMIC_RELAXED);
	return 0;
}

/* Maps what id and a key of len words need: the entry chunk of id
 * (published with release before the id is), and room for the key in the
 * current key chunk (a fresh chunk when the key does not fit; the old
 * chunk's tail stays unused). Under the lock. Returns 0 or -ENOMEM, with
 * nothing published. */
static int make_room(struct hp_intern *t, uint32_t id, uint32_t len)
{
	struct hp_intern_entry **slot = &t->entries[id >> HP_INTERN_CHUNK_BITS];

	if (len > t->free_count) {
		uint64_t *words = hp_os_map(HP_INTERN_CHUNK_WORDS * sizeof *words);
		if (!words)
			return -ENOMEM;
		t->free_words = words;
		t->free_count = HP_INTERN_CHUNK_WORDS;
	}
	if (!*slot) {
		struct hp_intern_entry *chunk = hp_os_map(CHUNK_ENTRIES * sizeof *chunk);
		if (!chunk)
			return -ENOMEM;
		__atomic_store_n(slot, chunk, __ATOMIC_RELEASE);
	}
	return 0;
}

uint32_t hp_intern_put(struct hp_intern *t, const uint64_t *key, uint32_t len)
{
	return hp_intern_put_hashed(t, key, len, hp_hash_words(key, len, 0x68656170));
}

/* A new key (or one another thread is adding): under the lock. x and
 * empty are the index the caller probed and the empty slot it ended at. */
static __attribute__((noinline)) uint32_t insert(struct hp_intern *t, const uint64_t *key,
						 uint32_t len, uint64_t hash,
						 struct hp_intern_index *probed, uint32_t empty);

uint32_t hp_intern_put_hashed(struct hp_intern *t, const uint64_t *key, uint32_t len,
			      uint64_t hash)
{
	struct hp_intern_index *x;
	uint32_t empty = 0, id; /* probe sets empty whenever it returns 0 */

	/* One acquire load of the index: a plain read of t->index here would
	 * race with grow's release store on another thread. */
	x = __atomic_load_n(&t->index, __ATOMIC_ACQUIRE);
	if (!x || len > HP_INTERN_MAX_KEY_WORDS)
		return 0;
	id = probe(t, x, hash, key, len, &empty);
	return id ? id : insert(t, key, len, hash, x, empty);
}

static uint32_t insert(struct hp_intern *t, const uint64_t *key, uint32_t len, uint64_t hash,
		       struct hp_intern_index *probed, uint32_t empty)
{
	struct hp_intern_index *x;
	/* A chained key keeps its head and its first segment's id. */
	int chained = t->tails && len > HP_INTERN_HEAD_WORDS;
	uint32_t id = 0, tail = 0, words = chained ? HP_INTERN_HEAD_WORDS + 1 : len;

	hp_spin_lock(&t->lock);
	x = t->index;
	/* Another thread may have added the key since the caller's probe:
	 * then at the slot the probe ended at (the slots before it held
	 * other keys, and a slot is never emptied), unless the index grew.
	 * While that slot is still empty in the same index, the key is not
	 * in it and the slot is where it goes: no second probe. */
	if (x != probed || __atomic_load_n(&x->slots[empty], __ATOMIC_RELAXED))
		id = probe(t, x, hash, key, len, &empty);
	if (!id && t->count < t->max_ids && t->used_words + words <= t->max_words) {
		/* Keep the index at most three quarters full: probes stay
		 * short (a miss reads 8.5 slots on average, a cache line). */
		if ((uint64_t)t->count * 4 >= (uint64_t)x->mask * 3 && grow(t) == 0) {
			x = t->index;
			probe(t, x, hash, key, len, &empty);
		}
		if (chained) /* the segments first: published before the id */
			tail = put_tail(t->tails, key + HP_INTERN_HEAD_WORDS,
					len - HP_INTERN_HEAD_WORDS);
		if ((!chained || tail) && (uint64_t)t->count < x->mask &&
		    make_room(t, t->count, words) == 0) {
			const uint64_t *stored = empty_key;
			id = t->count;
			if (len) {
				memcpy(t->free_words, key,
				       (chained ? HP_INTERN_HEAD_WORDS : len) * sizeof *key);
				if (chained)
					t->free_words[HP_INTERN_HEAD_WORDS] = tail;
				stored = t->free_words;
				t->free_words += words;
				t->free_count -= words;
			}
			*entry(t, id) = (struct hp_intern_entry){stored, len, (uint32_t)hash};
			__atomic_store_n(&t->used_words, t->used_words + words, __ATOMIC_RELAXED);
			__atomic_store_n(&t->count, id + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&x->slots[empty], slot_of(hash, id), __ATOMIC_RELEASE);
		}
	}
	hp_spin_unlock(&t->lock);
	return id;
}

uint32_t hp_intern_count(const struct hp_intern *t)
{
	return __atomic_load_n(&t->index, __ATOMIC_RELAXED) ? __atomic_load_n(&t->count, __ATOMIC_ACQUIRE)
							    : 1;
}

const uint64_t *hp_intern_key(const struct hp_intern *t, uint32_t id, uint32_t *len)
{
	const struct hp_intern_entry *e = entry(t, id);
	*len = e->len;
	return e->key;
}

uint32_t hp_intern_copy(const struct hp_intern *t, uint32_t id, uint64_t *key)
{
	const struct hp_intern_entry *e = entry(t, id);
	uint32_t len = e->len, at = HP_INTERN_HEAD_WORDS;

	if (!t->tails || len <= HP_INTERN_HEAD_WORDS) {
		memcpy(key, e->key, len * sizeof *key);
		return len;
	}
	memcpy(key, e->key, HP_INTERN_HEAD_WORDS * sizeof *key);
	for (uint32_t seg = (uint32_t)e->key[HP_INTERN_HEAD_WORDS]; seg && at < len;) {
		const struct hp_intern_entry *s = entry(t->tails, seg);
		uint32_t r = s->len - 1;
		if (r > len - at) /* never, as the chain is built */
			break;
		memcpy(key + at, s->key + 1, r * sizeof *key);
		at += r;
		seg = (uint32_t)s->key[0];
	}
	return len;
}

int hp_intern_equal(const struct hp_intern *t, uint32_t id, const uint64_t *key, uint32_t len)
{
	return same_key(t, id, key, len);
}

uint64_t hp_intern_bytes(const struct hp_intern *t)
{
	const struct hp_intern_index *x = __atomic_load_n(&t->index, __ATOMIC_ACQUIRE);
	uint32_t n = hp_intern_count(t);
	return x ? index_bytes(x->mask + 1) +
			   __atomic_load_n(&t->old_index_bytes, __ATOMIC_RELAXED) +
			   (uint64_t)n * sizeof(struct hp_intern_entry) +
			   __atomic_load_n(&t->used_words, __ATOMIC_RELAXED) * sizeof(uint64_t)
		 : 0;
}

void hp_intern_root(const struct hp_intern *t, struct hp_root_intern *out)
{
	_Static_assert(offsetof(struct hp_intern_entry, key) == 0 &&
			       offsetof(struct hp_intern_entry, len) == 8,
		       "root.h's entry layout");
	out->addr = (uintptr_t)t;
	out->count_off = offsetof(struct hp_intern, count);
	out->entries_off = offsetof(struct hp_intern, entries);
	out->entries_max = sizeof t->entries / sizeof *t->entries;
	out->chunk_bits = HP_INTERN_CHUNK_BITS;
	out->entry_bytes = sizeof(struct hp_intern_entry);
}
