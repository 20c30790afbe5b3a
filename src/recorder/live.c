/*
 * live.c - the live register (see live.h for the model).
 */
#include "live.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "os.h"
#include "root.h"
#include "spin.h"
#include "thread.h"

#define SHARD_BITS 10
#define SHARDS (1u << SHARD_BITS)
/* Tables are whole pages: their slot counts are multiples of this. */
#define PAGE_SLOTS (4096u / sizeof(struct entry))
/* Two pages: a program's blocks share the 16 shards of their arena's
 * group, and a first table of one page, a quarter full with churn's 1,024
 * live blocks, would make probes and deletes' shifts longer. */
#define INITIAL_SLOTS (2 * PAGE_SLOTS)
#define EMPTY 0u

/* 16 bytes: the address, and the bucket, size and birth stamp packed in
 * one word (the low HP_LIVE_BUCKET_BITS bits the bucket, the next
 * SIZE_BITS the size, the top STAMP_BITS the birth stamp). A size that does
 * not fit below BIG_BASE (64 MiB less BIG_BLOCKS bytes, and more) is kept
 * in a slot of the big-block table, and the size field holds BIG_BASE +
 * the slot's index. */
struct entry {
	uint64_t addr;
	uint64_t packed;
};

#define SIZE_BITS HP_LIVE_SIZE_BITS
#define STAMP_BITS (64 - HP_LIVE_BUCKET_BITS - SIZE_BITS)
_Static_assert(STAMP_BITS == 16, "the birth stamp is 16 bits (live.h)");
#define SIZE_MASK ((UINT64_C(1) << SIZE_BITS) - 1)
#define STAMP_SHIFT (HP_LIVE_BUCKET_BITS + SIZE_BITS)
#define BIG_BLOCKS HP_LIVE_BIG_BLOCKS
#define BIG_BASE ((UINT64_C(1) << SIZE_BITS) - BIG_BLOCKS)
#define BUCKET_MASK ((UINT64_C(1) << HP_LIVE_BUCKET_BITS) - 1)

/* The sizes of blocks of BIG_BASE bytes or more. A slot is claimed with a
 * CAS of used from 0 and belongs to the one entry whose size field names
 * it; its size is written and read under that entry's shard lock, and
 * given back (used 0) by the entry's removal. At most BIG_BLOCKS such
 * blocks live at once (64 GiB of them at least); one more is refused like
 * a shard that cannot grow. (Without the birth stamp's 16 bits the size
 * field would be 42 bits, 4 TiB.) */
static struct {
	uint32_t used; /* atomic */
	uint64_t size;
} big[BIG_BLOCKS];

/* The size field of a block of size >= BIG_BASE: a big-block slot
 * claimed for it, or -ENOMEM when none is left. Under the shard lock. */
static __attribute__((noinline, cold)) int64_t big_field(uint64_t size)
{
	for (unsigned i = 0; i < BIG_BLOCKS; i++) {
		uint32_t zero = 0;
		if (!__atomic_load_n(&big[i].used, __ATOMIC_RELAXED) &&
		    __atomic_compare_exchange_n(&big[i].used, &zero, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			big[i].size = size;
			return (int64_t)(BIG_BASE + i);
		}
	}
	return -ENOMEM;
}

/* The packed word of (bucket, size): 0 or -ENOMEM (a big block and no
 * slot left). Under the shard lock. */
static inline __attribute__((always_inline)) int pack(uint32_t bucket, uint64_t size,
						      uint16_t born, uint64_t *out)
{
	uint64_t field = size;

	if (__builtin_expect(size >= BIG_BASE, 0)) {
		int64_t f = big_field(size);
		if (f < 0)
			return (int)f;
		field = (uint64_t)f;
	}
	*out = (uint64_t)born << STAMP_SHIFT | field << HP_LIVE_BUCKET_BITS | bucket;
	return 0;
}

/* Unpacks e into *out, giving back its big-block slot if it has one.
 * Under the shard lock. */
static inline __attribute__((always_inline)) void unpack(const struct entry *e,
							 struct hp_live_block *out)
{
	uint64_t field = e->packed >> HP_LIVE_BUCKET_BITS & SIZE_MASK;

	out->bucket = (uint32_t)(e->packed & BUCKET_MASK);
	out->born = (uint16_t)(e->packed >> STAMP_SHIFT);
	out->size = field;
	if (field >= BIG_BASE) {
		out->size = big[field - BIG_BASE].size;
		__atomic_store_n(&big[field - BIG_BASE].used, 0, __ATOMIC_RELEASE);
	}
}

struct shard {
	struct hp_spin lock;
	/* slots and live are written under the lock with relaxed atomic
	 * stores, so that hp_live_usage may read them without it. */
	uint32_t slots; /* a multiple of PAGE_SLOTS; 1 before the first table */
	uint32_t live;  /* entries in use */
	/* The entries at which the table grows: 3/4 of slots (0 before the
	 * first table), kept so that an insert compares without a multiply. */
	uint32_t full;
	struct entry *table;
} __attribute__((aligned(32)));
/* Two a cache line: a group's 16 shards, which a one-thread program
 * touches at random, take 8 lines of the L1 cache, where a line of its own
 * each would take 16. Two threads share a line only where they share a
 * group (shard_of), and then a line changes cores as often either way. */

/* Mapped at init; each shard's fields are guarded by its lock. */
static struct shard *shards;
/* A shard's table until its first insert: one empty slot, so that a
 * lookup finds nothing and an insert grows it to INITIAL_SLOTS. Mapping
 * every shard's first table at init would take 8 KiB of address space a
 * shard (1,024 mappings) before the program allocated anything. Never written: an
 * insert always grows a table of one slot first. */
static struct entry no_slots[1];
/* The filter (live.h): cells are atomics; used in sampled mode, where the
 * mask covers it, and through cell 0 alone in full mode (mask 0). */
uint8_t hp_live_filter[1u << HP_LIVE_FILTER_BITS];
struct hp_live_filter_geom hp_live_filter_geom __attribute__((aligned(16)));
/* Whether the filter is in use (sampled mode): written at init. */
static int filtering;
/* Whether a cell may be set (any but the initial .bss zeroes): set by
 * whatever sets one, so that the next init clears them. Relaxed atomic:
 * written by sampled inserts (rare) and pins, read by init only. */
static int filter_dirty;

unsigned hp_live_filter_shift_for(uint64_t rate_bytes)
{
	unsigned shift = 4;

	if (rate_bytes <= 1)
		return 0;
	while (shift < 12 && (2ull << shift) <= rate_bytes >> 7)
		shift++;
	return shift;
}

int hp_live_init(unsigned filter_shift)
{
	int use_filter = filter_shift != 0;

	shards = hp_os_map(SHARDS * sizeof *shards);
	if (!shards)
		return -ENOMEM;
	for (unsigned i = 0; i < SHARDS; i++)
		shards[i] = (struct shard){.slots = 1, .table = no_slots};
	filtering = use_filter;
	/* Again at each init (the unit tests start afresh), but only when a
	 * cell was ever set: the array is in .bss, and clearing its 64 pages
	 * for nothing would fault them all in, a large part of the recorder's
	 * start. */
	if (__atomic_load_n(&filter_dirty, __ATOMIC_RELAXED))
		memset(hp_live_filter, 0, sizeof hp_live_filter);
	__atomic_store_n(&filter_dirty, !use_filter, __ATOMIC_RELAXED);
	hp_live_filter_geom.mask = use_filter ? sizeof hp_live_filter - 1 : 0;
	hp_live_filter_geom.shift = use_filter ? filter_shift : 0;
	hp_live_filter_geom.all = !use_filter;
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
	uintptr_t granule = (uintptr_t)1 << hp_live_filter_geom.shift;
	__atomic_store_n(&filter_dirty, 1, __ATOMIC_RELAXED);
	for (uintptr_t a = lo & ~(granule - 1); a < hi; a += granule)
		__atomic_store_n(hp_live_filter_cell(a), 255, __ATOMIC_RELAXED);
}

static void filter_add(uintptr_t addr, int delta)
{
	uint8_t *cell;
	uint8_t v;

	if (!filtering)
		return;
	if (delta > 0)
		__atomic_store_n(&filter_dirty, 1, __ATOMIC_RELAXED);
	cell = hp_live_filter_cell(addr);
	v = __atomic_load_n(cell, __ATOMIC_RELAXED);
	do {
		if (v == 255) /* saturated: stays set */
			return;
	} while (!__atomic_compare_exchange_n(cell, &v, (uint8_t)(v + delta), 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* The shard of addr (of hash h): the 64 MiB region it lies in chooses one
 * of 64 groups of 16 shards (the region's number modulo 64), the
 * address's hash one of them. The blocks of one glibc arena (64 MiB
 * heaps, 64 MiB-aligned; most often one thread's) sit in shards of their
 * own, which other threads rarely touch, where a hash of the address alone
 * would spread every thread's blocks over all the shards and send each
 * shard's line from core to core. A one-thread program's blocks then fill
 * 16 tables: longer probes, fewer cache lines. glibc maps its arenas' heaps
 * at neighbouring 64 MiB regions, which the modulo puts in distinct groups
 * up to 64 of them (a multiply of the region's number spread 16 threads'
 * arenas and main's over 17 groups, at two instructions more an
 * operation: 4 a malloc+free pair on churn). Pure. */
static inline unsigned shard_of(uintptr_t addr, uint64_t h)
{
	return (unsigned)((addr >> 26 & 63) << 4 | h >> 60);
}
_Static_assert(SHARD_BITS == 10, "64 groups of 16 shards");

/* The next slot after i, cyclically. */
static inline uint32_t next_slot(const struct shard *s, uint32_t i)
{
	return i + 1 == s->slots ? 0 : i + 1;
}

/* Returns the slot holding addr, or NULL with *free_slot the empty slot
 * that ends its probe path. Under the shard lock. absent: the caller
 * expects addr not to be there (an insert), so each slot is tested for
 * empty first (addr is never EMPTY: either order finds the same). */
static inline __attribute__((always_inline)) struct entry *find(struct shard *s, uint64_t h,
								 uint64_t addr,
								 struct entry **free_slot,
								 int absent)
{
	for (uint32_t i = hp_live_home(h, s->slots);; i = next_slot(s, i)) {
		struct entry *e = &s->table[i];
		if (absent && e->addr == EMPTY) {
			*free_slot = e;
			return NULL;
		}
		if (e->addr == addr)
			return e;
		if (!absent && e->addr == EMPTY) {
			*free_slot = e;
			return NULL;
		}
	}
}

/* Empties slot i by shifting back the entries after it that probed past
 * it (backward-shift deletion): no tombstones, so a churning shard never
 * needs a rehash, and probes stay as short as the load allows. */
static inline __attribute__((always_inline)) void delete_at(struct shard *s, uint32_t i)
{
	uint32_t n = s->slots;

	for (uint32_t j = next_slot(s, i); s->table[j].addr != EMPTY; j = next_slot(s, j)) {
		uint32_t home = hp_live_home(hp_live_hash(s->table[j].addr), n);
		/* Entry j may move to i when i lies on its probe path, i.e.
		 * cyclically in [home, j). */
		uint32_t from_home = j >= home ? j - home : j + n - home;
		uint32_t from_i = j >= i ? j - i : j + n - i;
		if (from_home >= from_i) {
			s->table[i] = s->table[j];
			i = j;
		}
	}
	s->table[i].addr = EMPTY;
}

/* The slots of the table after one of n slots: a quarter more, in whole
 * pages (the first table: INITIAL_SLOTS). Growing by a quarter at 3/4 full
 * keeps a large table at least 3/5 full, 16 bytes an entry: under 27 bytes
 * per live block (doubling would leave it 3/8 full, 43 bytes). */
static uint32_t grown_slots(uint32_t n)
{
	uint32_t want = n > 1 ? n + n / 4 : INITIAL_SLOTS;
	return (want + PAGE_SLOTS - 1) / PAGE_SLOTS * PAGE_SLOTS;
}

/* Rehashes the shard into a larger table (grown_slots). Under the shard
 * lock. Returns 0 or -ENOMEM (the old table stays). */
static __attribute__((noinline, cold)) int grow(struct shard *s)
{
	uint32_t slots = grown_slots(s->slots);
	struct entry *old = s->table, *fresh;

	if (slots > HP_LIVE_MAX_SLOTS)
		return -ENOMEM;
	fresh = hp_os_map((size_t)slots * sizeof *fresh);
	if (!fresh)
		return -ENOMEM;
	/* The rehash reads and writes slots all over it (hp_os_populate). */
	hp_os_populate(fresh, (size_t)slots * sizeof *fresh);
	for (uint32_t i = 0; i < s->slots; i++) {
		if (old[i].addr == EMPTY)
			continue;
		uint32_t j = hp_live_home(hp_live_hash(old[i].addr), slots);
		while (fresh[j].addr != EMPTY)
			j = j + 1 == slots ? 0 : j + 1;
		fresh[j] = old[i];
	}
	if (old != no_slots)
		hp_os_unmap(old, (size_t)s->slots * sizeof *old);
	s->table = fresh;
	s->full = slots / 4 * 3 + slots % 4 * 3 / 4;
	__atomic_store_n(&s->slots, slots, __ATOMIC_RELAXED);
	return 0;
}

/* live.h. A line of its own: in a threaded process every free reads it
 * and every 64th birth of each thread writes it. */
struct hp_live_clock hp_live_clock;

/* Counts a birth; its stamp. While the process has one thread (alone:
 * hp_os_single_threaded(), read by the caller for its lock too), a plain
 * load and store. With threads, each counts its births in its own
 * hp_thread and adds them to the shared clock a unit (64) at a time, with
 * one locked add: a shared store on every allocation would keep its line
 * moving between the cores. A stamp then lags the births of the other
 * threads' units not yet added, so a lifetime is exact to within one unit
 * for each thread allocating at the time (live.h). A signal handler's
 * birth on top of the thread's may be lost from its count: a lifetime a
 * little shorter. */
static __attribute__((noinline)) uint64_t births_threaded(void)
{
	if (++hp_self.births_unadded < 1u << HP_LIVE_AGE_SHIFT)
		return __atomic_load_n(&hp_live_clock.births, __ATOMIC_RELAXED);
	hp_self.births_unadded = 0;
	return __atomic_add_fetch(&hp_live_clock.births, 1u << HP_LIVE_AGE_SHIFT, __ATOMIC_RELAXED);
}

static inline uint16_t birth(int alone)
{
	uint64_t n;

	if (__builtin_expect(alone, 1)) {
		n = __atomic_load_n(&hp_live_clock.births, __ATOMIC_RELAXED) + 1;
		__atomic_store_n(&hp_live_clock.births, n, __ATOMIC_RELAXED);
	} else {
		n = births_threaded();
	}
	return (uint16_t)(n >> HP_LIVE_AGE_SHIFT);
}

/* hp_live_insert's body, for a caller that has read the thread count
 * (alone: hp_os_single_threaded()) and knows whether the filter may be in
 * use (filter 0: a full recording, where it never is): record_path.c's
 * allocation path inlines it. Properties of hp_live_insert. */
static inline __attribute__((always_inline)) int live_insert_as(uintptr_t addr, uint32_t bucket,
								 uint64_t size,
								 struct hp_live_block *stale,
								 int alone, int filter)
{
	uint64_t h = hp_live_hash(addr), packed = 0;
	struct shard *s = &shards[shard_of(addr, h)];
	struct entry *e, *slot = NULL;
	int ret = 0;

	hp_spin_lock_busy_as(&s->lock, alone);
	/* Grow at 3/4 full; a table that cannot grow takes entries while
	 * one slot stays empty (probes end at an empty slot). */
	if (__builtin_expect(s->live >= s->full, 0) && grow(s) < 0 && s->live + 1 >= s->slots) {
		ret = -ENOMEM;
		goto out;
	}
	e = find(s, h, addr, &slot, 1);
	if (pack(bucket, size, birth(alone), &packed) < 0) {
		ret = -ENOMEM;
		goto out;
	}
	if (__builtin_expect(e != NULL, 0)) { /* a free not seen: rare */
		unpack(e, stale);
		e->packed = packed;
		ret = 1;
		goto out;
	}
	*slot = (struct entry){addr, packed};
	__atomic_store_n(&s->live, s->live + 1, __ATOMIC_RELAXED);
	if (filter)
		filter_add(addr, 1);
out:
	hp_spin_unlock(&s->lock);
	return ret;
}

/* hp_live_insert's body for any caller. */
static inline __attribute__((always_inline)) int live_insert(uintptr_t addr, uint32_t bucket,
							      uint64_t size,
							      struct hp_live_block *stale)
{
	/* no thread starts in here */
	return live_insert_as(addr, bucket, size, stale, hp_os_single_threaded(), 1);
}

int hp_live_insert(uintptr_t addr, uint32_t bucket, uint64_t size, struct hp_live_block *stale)
{
	return live_insert(addr, bucket, size, stale);
}

/* hp_live_remove's body, may_block 2: a caller that has read the thread
 * count (alone) and says whether the filter may be in use (filter, as
 * for live_insert_as); may_block 0 or 1: as hp_live_remove, alone and
 * filter unused. record_path.c's free path inlines it. Properties of
 * hp_live_remove. */
static inline __attribute__((always_inline)) int live_remove_as(uintptr_t addr,
								 struct hp_live_block *out,
								 int may_block, int alone,
								 int filter)
{
	uint64_t h = hp_live_hash(addr);
	struct shard *s = &shards[shard_of(addr, h)];
	struct entry *e, *slot;

	if (may_block == 2)
		hp_spin_lock_busy_as(&s->lock, alone);
	else if (may_block)
		hp_spin_lock_busy_as(&s->lock, hp_os_single_threaded());
	else if (!hp_spin_trylock(&s->lock))
		return -EAGAIN;
	e = find(s, h, addr, &slot, 0);
	if (e) {
		unpack(e, out);
		delete_at(s, (uint32_t)(e - s->table));
		__atomic_store_n(&s->live, s->live - 1, __ATOMIC_RELAXED);
		if (may_block != 2 || filter)
			filter_add(addr, -1);
	}
	hp_spin_unlock(&s->lock);
	return e != NULL;
}

/* hp_live_remove's body for any caller. */
static inline __attribute__((always_inline)) int live_remove(uintptr_t addr,
							      struct hp_live_block *out,
							      int may_block)
{
	return live_remove_as(addr, out, may_block, 0, 1);
}

int hp_live_remove(uintptr_t addr, struct hp_live_block *out, int may_block)
{
	return live_remove(addr, out, may_block);
}

/* The block of e, its big-block slot kept. Under the shard lock. */
static void peek(const struct entry *e, struct hp_live_block *out)
{
	uint64_t field = e->packed >> HP_LIVE_BUCKET_BITS & SIZE_MASK;

	out->bucket = (uint32_t)(e->packed & BUCKET_MASK);
	out->born = (uint16_t)(e->packed >> STAMP_SHIFT);
	out->size = field >= BIG_BASE ? big[field - BIG_BASE].size : field;
}

/* Applies fn's answer to entry i of s: returns whether the slot must be
 * examined again (an entry was deleted and another shifted into it).
 * Under the shard lock. */
static int visit(struct shard *s, uint32_t i, hp_live_fn *fn, void *arg)
{
	struct entry *e = &s->table[i];
	struct hp_live_block blk;
	uint64_t addr = e->addr;
	int r;

	peek(e, &blk);
	r = fn(arg, addr, &blk);
	if (r == HP_LIVE_RETAG) {
		e->packed = (e->packed & ~BUCKET_MASK) | (blk.bucket & BUCKET_MASK);
	} else if (r == HP_LIVE_DROP) {
		unpack(e, &blk);
		delete_at(s, i);
		__atomic_store_n(&s->live, s->live - 1, __ATOMIC_RELAXED);
		filter_add(addr, -1);
		return s->table[i].addr != EMPTY;
	}
	return 0;
}

int hp_live_update(uintptr_t addr, hp_live_fn *fn, void *arg)
{
	uint64_t h = hp_live_hash(addr);
	struct shard *s = &shards[shard_of(addr, h)];
	struct entry *e, *slot;

	hp_spin_lock(&s->lock);
	e = find(s, h, addr, &slot, 0);
	if (e)
		visit(s, (uint32_t)(e - s->table), fn, arg);
	hp_spin_unlock(&s->lock);
	return e != NULL;
}

/* Slots ahead of the one visited whose block hp_live_walk_reading
 * prefetches: the walk goes through the table in hash order, so the
 * blocks it reads are scattered over the heap, a cache miss each that a
 * reading fn would otherwise wait for in turn. */
#define PREFETCH_AHEAD 16u

static inline __attribute__((always_inline)) void walk(hp_live_fn *fn, void *arg, int prefetch)
{
	for (unsigned k = 0; k < SHARDS; k++) {
		struct shard *s = &shards[k];
		hp_spin_lock(&s->lock);
		/* A deletion shifts later entries back (cyclically) into the
		 * emptied slot: that slot is examined again. An entry that
		 * wrapped round to the table's start and shifts to its end is
		 * examined twice, which fn's answers allow (KEEP or RETAG
		 * again). */
		for (uint32_t i = 0; i < s->slots; i++) {
			if (prefetch && i + PREFETCH_AHEAD < s->slots) {
				uint64_t a = s->table[i + PREFETCH_AHEAD].addr;
				/* (a prefetch never faults: a block freed by now
				 * or a custom heap's tagged address is harmless,
				 * but the tagged ones are not addresses at all) */
				if (a != EMPTY && !(a >> 48))
					__builtin_prefetch((const void *)(uintptr_t)a);
			}
			while (s->table[i].addr != EMPTY && visit(s, i, fn, arg))
				;
		}
		hp_spin_unlock(&s->lock);
	}
}

void hp_live_walk(hp_live_fn *fn, void *arg)
{
	walk(fn, arg, 0);
}

void hp_live_walk_reading(hp_live_fn *fn, void *arg)
{
	walk(fn, arg, 1);
}

void hp_live_usage(uint64_t *blocks, uint64_t *bytes)
{
	uint64_t n = 0, b = SHARDS * sizeof *shards;
	for (unsigned i = 0; i < SHARDS; i++) {
		uint32_t slots = __atomic_load_n(&shards[i].slots, __ATOMIC_RELAXED);
		n += __atomic_load_n(&shards[i].live, __ATOMIC_RELAXED);
		b += slots > 1 ? (uint64_t)slots * sizeof(struct entry) : 0; /* 1: no table yet */
	}
	*blocks = n;
	*bytes = b;
}

void hp_live_clear(void)
{
	for (unsigned i = 0; i < SHARDS; i++) {
		struct shard *sh = &shards[i];
		hp_spin_lock(&sh->lock);
		if (sh->table != no_slots)
			memset(sh->table, 0, (size_t)sh->slots * sizeof *sh->table);
		__atomic_store_n(&sh->live, 0, __ATOMIC_RELAXED);
		hp_spin_unlock(&sh->lock);
	}
	for (unsigned i = 0; i < BIG_BLOCKS; i++)
		__atomic_store_n(&big[i].used, 0, __ATOMIC_RELEASE);
	if (filtering)
		for (size_t i = 0; i < sizeof hp_live_filter; i++)
			__atomic_store_n(&hp_live_filter[i], 0, __ATOMIC_RELAXED);
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

void hp_live_root(struct hp_root *r)
{
	r->live_shards_addr = (uintptr_t)&shards;
	r->live_shards = SHARDS;
	r->shard_bytes = sizeof(struct shard);
	r->shard_lock_off = offsetof(struct shard, lock);
	r->shard_slots_off = offsetof(struct shard, slots);
	r->shard_live_off = offsetof(struct shard, live);
	r->shard_table_off = offsetof(struct shard, table);
	r->entry_bytes = sizeof(struct entry);
	r->bucket_bits = HP_LIVE_BUCKET_BITS;
	r->big_base = BIG_BASE;
	r->big_addr = (uintptr_t)big;
	r->big_blocks = BIG_BLOCKS;
	r->big_bytes = sizeof big[0];
	r->big_size_off = offsetof(__typeof__(big[0]), size);
	r->size_bits = SIZE_BITS;
}
