/*
 * intern.c - the append-only interning table (see intern.h for the model).
 */
#include "intern.h"

#include <errno.h>
#include <string.h>

#include "../common/hash.h"
#include "os.h"

int hp_intern_init(struct hp_intern *t, uint32_t max_ids, uint64_t max_words)
{
	uint32_t slots = 1;

	/* Twice as many slots as ids keeps the load under a half, so probes stay
	 * short even when the table is nearly full. */
	while (slots < 2 * max_ids)
		slots <<= 1;
	memset(t, 0, sizeof *t);
	t->slots = hp_os_map((size_t)slots * sizeof *t->slots);
	t->entries = hp_os_map((size_t)max_ids * sizeof *t->entries);
	t->words = hp_os_map(max_words * sizeof *t->words);
	if (!t->slots || !t->entries || !t->words) {
		hp_os_unmap(t->slots, (size_t)slots * sizeof *t->slots);
		hp_os_unmap(t->entries, (size_t)max_ids * sizeof *t->entries);
		hp_os_unmap(t->words, max_words * sizeof *t->words);
		memset(t, 0, sizeof *t);
		return -ENOMEM;
	}
	t->slot_mask = slots - 1;
	t->max_ids = max_ids;
	t->max_words = max_words;
	t->count = 1;
	return 0;
}

static int same_key(const struct hp_intern *t, uint32_t id, const uint64_t *key, uint32_t len)
{
	const struct hp_intern_entry *e = &t->entries[id];
	return e->len == len && memcmp(t->words + e->offset, key, len * sizeof *key) == 0;
}

/* Probes for key; returns its id, or 0 with *empty the first empty slot. */
static uint32_t probe(const struct hp_intern *t, uint64_t hash, const uint64_t *key, uint32_t len,
		      uint32_t *empty)
{
	uint32_t tag = (uint32_t)(hash >> 32);

	for (uint32_t i = (uint32_t)hash & t->slot_mask;; i = (i + 1) & t->slot_mask) {
		uint64_t s = __atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE);
		if (!s) {
			*empty = i;
			return 0;
		}
		if ((uint32_t)(s >> 32) == tag && same_key(t, (uint32_t)s, key, len))
			return (uint32_t)s;
	}
}

uint32_t hp_intern_put(struct hp_intern *t, const uint64_t *key, uint32_t len)
{
	uint64_t hash = hp_hash_words(key, len, 0x68656170);
	uint32_t empty, id;

	if (!t->slots)
		return 0;
	id = probe(t, hash, key, len, &empty);
	if (id)
		return id;

	hp_spin_lock(&t->lock);
	id = probe(t, hash, key, len, &empty); /* another thread may have added it */
	if (!id && t->count < t->max_ids && t->used_words + len <= t->max_words) {
		id = t->count;
		memcpy(t->words + t->used_words, key, len * sizeof *key);
		t->entries[id] = (struct hp_intern_entry){t->used_words, len, (uint32_t)(hash >> 32)};
		t->used_words += len;
		__atomic_store_n(&t->count, id + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&t->slots[empty], (hash >> 32) << 32 | id, __ATOMIC_RELEASE);
	}
	hp_spin_unlock(&t->lock);
	return id;
}

uint32_t hp_intern_count(const struct hp_intern *t)
{
	return t->slots ? __atomic_load_n(&t->count, __ATOMIC_ACQUIRE) : 1;
}

const uint64_t *hp_intern_key(const struct hp_intern *t, uint32_t id, uint32_t *len)
{
	const struct hp_intern_entry *e = &t->entries[id];
	*len = e->len;
	return t->words + e->offset;
}

uint64_t hp_intern_bytes(const struct hp_intern *t)
{
	uint32_t n = hp_intern_count(t);
	return (uint64_t)n * (2 * sizeof *t->slots + sizeof *t->entries) +
	       t->used_words * sizeof *t->words;
}
