/*
 * live.c - the live register (see live.h for the model).
 */
#include "live.h"

#include <errno.h>
#include <string.h>

#include "../common/hash.h"
#include "os.h"
#include "spin.h"

#define SHARD_BITS 8
#define SHARDS (1u << SHARD_BITS)
#define INITIAL_SLOTS 256u
#define EMPTY 0u

struct entry {
	uint64_t addr;
	uint64_t size;
	uint32_t bucket;
	uint32_t pad;
};

struct shard {
	struct hp_spin lock;
	/* mask and live are written under the lock with relaxed atomic
	 * stores, so that hp_live_usage may read them without it. */
	uint32_t mask;  /* slots - 1 */
	uint32_t live;  /* entries in use */
	struct entry *slots;
} __attribute__((aligned(64))); /* one cache line each: no false sharing */

/* Mapped at init; each shard's fields are guarded by its lock. */
static struct shard *shards;
/* A shard's table until its first insert: one empty slot (mask 0), so that
 * a lookup finds nothing and an insert grows it to INITIAL_SLOTS. Mapping
 * every shard's first table at init would take 2 MiB of address space
 * (256 mappings) before the program allocated anything. Never written: an
 * insert always grows a table with mask 0 first. */
static struct entry no_slots[1];
/* The filter (live.h): cells are atomics; used in sampled mode, where the
 * mask covers it, and through cell 0 alone in full mode (mask 0). */
uint8_t hp_live_filter[1u << HP_LIVE_FILTER_BITS];
uintptr_t hp_live_filter_mask;
/* Whether the filter is in use (sampled mode): written at init. */
static int filtering;

int hp_live_init(int use_filter)
{
	shards = hp_os_map(SHARDS * sizeof *shards);
	if (!shards)
		return -ENOMEM;
	for (unsigned i = 0; i < SHARDS; i++)
		shards[i].slots = no_slots; /* mask 0 */
	filtering = use_filter;
	/* Again at each init (the unit tests start afresh). */
	memset(hp_live_filter, 0, use_filter ? sizeof hp_live_filter : 1);
	hp_live_filter_mask = use_filter ? sizeof hp_live_filter - 1 : 0;
	if (!use_filter)
		hp_live_filter[0] = 255;
	return 0;
}

void hp_live_filter_pin(uintptr_t lo, uintptr_t hi)
{
	if (!filtering) {
		hp_live_filter[0] = 255;
		return;
	}
	for (uintptr_t a = lo & ~(uintptr_t)15; a < hi; a += 16)
		__atomic_store_n(hp_live_filter_cell(a), 255, __ATOMIC_RELAXED);
}

static void filter_add(uintptr_t addr, int delta)
{
	uint8_t *cell;
	uint8_t v;

	if (!filtering)
		return;
	cell = hp_live_filter_cell(addr);
	v = __atomic_load_n(cell, __ATOMIC_RELAXED);
	do {
		if (v == 255) /* saturated: stays set */
			return;
	} while (!__atomic_compare_exchange_n(cell, &v, (uint8_t)(v + delta), 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* Returns the slot holding addr, or NULL with *free_slot the empty slot
 * that ends its probe path. Under the shard lock. */
static struct entry *find(struct shard *s, uint64_t h, uint64_t addr, struct entry **free_slot)
{
	for (uint32_t i = (uint32_t)h & s->mask;; i = (i + 1) & s->mask) {
		struct entry *e = &s->slots[i];
		if (e->addr == addr)
			return e;
		if (e->addr == EMPTY) {
			*free_slot = e;
			return NULL;
		}
	}
}

/* Empties slot i by shifting back the entries after it that probed past
 * it (backward-shift deletion): no tombstones, so a churning shard never
 * needs a rehash, and probes stay as short as the load allows. */
static void delete_at(struct shard *s, uint32_t i)
{
	for (uint32_t j = (i + 1) & s->mask; s->slots[j].addr != EMPTY; j = (j + 1) & s->mask) {
		uint32_t home = (uint32_t)hp_hash_u64(s->slots[j].addr) & s->mask;
		/* Entry j may move to i when i lies on its probe path, i.e.
		 * cyclically in [home, j). */
		if (((j - home) & s->mask) >= ((j - i) & s->mask)) {
			s->slots[i] = s->slots[j];
			i = j;
		}
	}
	s->slots[i].addr = EMPTY;
}

/* Rehashes the shard into a table twice as large (the first table of a
 * shard: INITIAL_SLOTS). Under the shard lock. Returns 0 or -ENOMEM (the
 * old table stays). */
static int grow(struct shard *s)
{
	uint32_t slots = s->mask ? (s->mask + 1) * 2 : INITIAL_SLOTS;
	struct entry *old = s->slots, *fresh;

	fresh = hp_os_map((size_t)slots * sizeof *fresh);
	if (!fresh)
		return -ENOMEM;
	for (uint32_t i = 0; i <= s->mask; i++) {
		if (old[i].addr == EMPTY)
			continue;
		uint32_t j = (uint32_t)hp_hash_u64(old[i].addr) & (slots - 1);
		while (fresh[j].addr != EMPTY)
			j = (j + 1) & (slots - 1);
		fresh[j] = old[i];
	}
	if (old != no_slots)
		hp_os_unmap(old, (size_t)(s->mask + 1) * sizeof *old);
	s->slots = fresh;
	__atomic_store_n(&s->mask, slots - 1, __ATOMIC_RELAXED);
	return 0;
}

int hp_live_insert(uintptr_t addr, uint32_t bucket, uint64_t size, struct hp_live_block *stale)
{
	uint64_t h = hp_hash_u64(addr);
	struct shard *s = &shards[h >> (64 - SHARD_BITS)];
	struct entry *e, *slot = NULL;
	int ret = 0;

	hp_spin_lock(&s->lock);
	if ((s->live + 1) * 4 > (s->mask + 1) * 3 && grow(s) < 0 && s->live + 1 > s->mask) {
		ret = -ENOMEM;
		goto out;
	}
	e = find(s, h, addr, &slot);
	if (e) {
		stale->size = e->size;
		stale->bucket = e->bucket;
		e->size = size;
		e->bucket = bucket;
		ret = 1;
		goto out;
	}
	*slot = (struct entry){addr, size, bucket, 0};
	__atomic_store_n(&s->live, s->live + 1, __ATOMIC_RELAXED);
	filter_add(addr, 1);
out:
	hp_spin_unlock(&s->lock);
	return ret;
}

int hp_live_remove(uintptr_t addr, struct hp_live_block *out, int may_block)
{
	uint64_t h = hp_hash_u64(addr);
	struct shard *s = &shards[h >> (64 - SHARD_BITS)];
	struct entry *e, *slot;

	if (may_block)
		hp_spin_lock(&s->lock);
	else if (!hp_spin_trylock(&s->lock))
		return -EAGAIN;
	e = find(s, h, addr, &slot);
	if (e) {
		out->size = e->size;
		out->bucket = e->bucket;
		delete_at(s, (uint32_t)(e - s->slots));
		__atomic_store_n(&s->live, s->live - 1, __ATOMIC_RELAXED);
		filter_add(addr, -1);
	}
	hp_spin_unlock(&s->lock);
	return e != NULL;
}

void hp_live_usage(uint64_t *blocks, uint64_t *bytes)
{
	uint64_t n = 0, b = SHARDS * sizeof *shards;
	for (unsigned i = 0; i < SHARDS; i++) {
		uint32_t mask = __atomic_load_n(&shards[i].mask, __ATOMIC_RELAXED);
		n += __atomic_load_n(&shards[i].live, __ATOMIC_RELAXED);
		b += mask ? ((uint64_t)mask + 1) * sizeof(struct entry) : 0; /* 0: no table yet */
	}
	*blocks = n;
	*bytes = b;
}

void hp_live_lock_all(void)
{
	for (unsigned i = 0; i < SHARDS; i++)
		hp_spin_lock(&shards[i].lock);
}

void hp_live_unlock_all(void)
{
	for (unsigned i = 0; i < SHARDS; i++)
		hp_spin_unlock(&shards[i].lock);
}
