/*
 * live.h - the live register: address -> (bucket, size) of every recorded
 * block still allocated, so that free can be attributed.
 *
 * Model: 1,024 shards, in 64 groups chosen by the address's 64 MiB region
 * (a glibc arena's blocks share a group), in a group by the top bits of
 * the address's hash (live.c, shard_of), each an
 * open-addressed table with linear probing and backward-shift deletion (no
 * tombstones), grown (rehashed into a table a quarter larger, in whole
 * pages, mapped with mmap) when three quarters full. An entry is 16 bytes
 * (the address; the bucket and the size in one word); a large table stays
 * between 3/5 and 3/4 full, so 21 to 27 bytes per live block (small ones,
 * a few pages, as low as 3/8). Table sizes are not powers of two: the home
 * slot is the hash's top bits scaled to the table (a multiply and a
 * shift). Without tombstones a churning shard never needs a rehash. A
 * shard maps its first table (512 slots, two pages) at its first insert, not
 * at init.
 *
 * In sampled mode most frees are of blocks never recorded; a filter of 2^18
 * one-byte counters lets such a free skip the table with one load. The
 * filter is a static array (no pointer to load first, nothing to map; its
 * pages are touched only in sampled mode) indexed under a mask. In full
 * mode a flag of the geometry (all) answers "maybe" for every address
 * before the cell is looked at (the mask is 0 and cell 0 saturated too). A cell covers a granule of
 * addresses (2^shift bytes, aliasing every 2^(18+shift)) that the recorder
 * sizes to the sampling rate: rate/128, between 16 bytes and a page. Frees
 * of neighbouring blocks read the same or neighbouring cells, so the
 * filter lines a program touches stay in cache: a page granule makes the
 * filter's working set 1/4096 of the heap's (a heap of 256 KiB reads 64
 * bytes of filter, where 16-byte granules would read 16 KiB and miss the
 * L1 cache on most frees). The price is false positives: a free whose
 * granule holds a sampled block takes the slow path and finds nothing;
 * with granule = rate/128, about 1 free in 128 (a granule holds about
 * granule/rate sampled blocks). Counters saturate at 255 and then stay,
 * which only costs lookups.
 *
 * Locking: one spinlock per shard, held for one probe (or one rehash).
 * hp_live_maybe is lock-free. Nothing here calls the target's malloc.
 */
#ifndef HP_RECORDER_LIVE_H
#define HP_RECORDER_LIVE_H

#include <stdint.h>

struct hp_live_block {
	uint64_t size;
	uint32_t bucket;
	uint16_t born; /* the birth stamp (hp_live_age), set by hp_live_insert */
};

/* Lifetimes. Every insert counts one birth (a recorded allocation); an
 * entry keeps the births before it in units of 2^HP_LIVE_AGE_SHIFT, in the
 * 16 bits its packed word has to spare (live.c), so that a free knows how
 * many allocations the block lived for without a clock read or a wider
 * entry: to within one unit (64), up to 2^16 units (4 Mi allocations),
 * beyond which the count wraps (a block that lives longer reads younger by
 * a multiple of 4 Mi). docs/internals/lifetimes.md. */
#define HP_LIVE_AGE_SHIFT 6
/* An entry's size field (live.c): sizes from 2^HP_LIVE_SIZE_BITS less
 * HP_LIVE_BIG_BLOCKS bytes go to the big-block table, which holds
 * HP_LIVE_BIG_BLOCKS of them at once. */
#define HP_LIVE_SIZE_BITS 26
#define HP_LIVE_BIG_BLOCKS 1024
/* Recorded allocations so far (births): counted by hp_live_insert with a
 * relaxed load and store while the process has one thread, by each thread
 * a unit at a time once it has more (live.c, birth: a lifetime is then
 * exact to within one unit per thread allocating meanwhile); read by
 * anyone. A cache line of its own. Exposed for the inline functions below
 * only. */
extern struct __attribute__((aligned(64))) hp_live_clock {
	uint64_t births;
} hp_live_clock;

/* The stamp units since a block of birth stamp born was. */
static inline uint32_t hp_live_age_units(uint16_t born)
{
	return (uint16_t)((uint16_t)(__atomic_load_n(&hp_live_clock.births, __ATOMIC_RELAXED) >>
				     HP_LIVE_AGE_SHIFT) -
			  born);
}

/* The allocations recorded since a block of birth stamp born was: a
 * multiple of 2^HP_LIVE_AGE_SHIFT (0: born in the current unit).
 * Lock-free (a relaxed load), async-signal-safe, no allocation. */
static inline uint64_t hp_live_age(uint16_t born)
{
	return (uint64_t)hp_live_age_units(born) << HP_LIVE_AGE_SHIFT;
}

/* Its lifetime class (format.h, HISTOGRAMS: hp_hist_life_class of
 * hp_live_age, computed on the units: their bit length). Same
 * properties. */
static inline unsigned hp_live_life_class(uint16_t born)
{
	uint64_t u = hp_live_age_units(born);

	/* The bit length of u without a branch for 0: that of 2u + 1, less
	 * one (2u + 1 is never 0). */
	return 63 - (unsigned)__builtin_clzll(2 * u + 1);
}

/* Buckets are below 1 << HP_LIVE_BUCKET_BITS (aggregate.c checks its ids
 * fit); a shard's table has at most HP_LIVE_MAX_SLOTS slots. */
#define HP_LIVE_BUCKET_BITS 22
#define HP_LIVE_MAX_SLOTS (1u << 30)

/* The hash of an address (a Fibonacci multiply: cheap enough to
 * recompute for every entry a delete shifts): its top 4 bits choose the
 * shard in the address's group, bits 24..55 the home slot. The address is
 * shifted by 3 first (blocks are 8- or 16-aligned): the multiplier is then
 * the golden ratio's (8-aligned) or twice it (16-aligned), both of which
 * spread any stride, where glibc's 16-aligned addresses times the golden
 * ratio alone made 16 times it, a poor one: blocks allocated one after
 * another with sizes of 32 to 96 bytes took 200 probes an insert (2^16
 * of them; 600 in a run of bench/analyzer/manystacks 8), against 1.3.
 * Pure. */
static inline uint64_t hp_live_hash(uintptr_t addr)
{
	return (uint64_t)(addr >> 3) * 0x9e3779b97f4a7c15ull;
}

/* The home slot of hash h in a table of slots slots. Pure. */
static inline uint32_t hp_live_home(uint64_t h, uint32_t slots)
{
	return (uint32_t)(((h >> 24 & 0xffffffffu) * slots) >> 32);
}

/* Maps the shards; filter_shift the log2 of the filter's granule in
 * sampled mode (4..12), 0 for none (full mode: every address "maybe").
 * Returns 0 or -ENOMEM. Once, at init: not thread-safe. No allocation
 * (mmap), no lock. */
int hp_live_init(unsigned filter_shift);

/* The filter's granule for a sampling rate (1: full mode, 0: no filter):
 * rate/128 as a power of two between 16 and 4096, its log2. Pure. */
unsigned hp_live_filter_shift_for(uint64_t rate_bytes);

/* Whether addr may be in the register: always 1 in full mode (once
 * hp_live_filter_pin made it so). Lock-free, async-signal-safe. */
static inline int hp_live_maybe(uintptr_t addr);

/* Adds addr. When addr was already present (a free the recorder could not
 * see), the old block is returned in *stale and 1 is returned; 0 when addr
 * was new; -ENOMEM when the shard could not grow (nothing added). Takes
 * the shard's spinlock (may mmap under it to grow), with the thread's busy
 * flag set (spin.h, hp_spin_lock_busy_as; the unit tests call it with no
 * signal handler that could meet the lock); no allocation; not
 * async-signal-safe. */
int hp_live_insert(uintptr_t addr, uint32_t bucket, uint64_t size, struct hp_live_block *stale);

/* Removes addr into *out. Returns 1 when found, 0 when absent. With
 * may_block 0 (inside a signal handler that interrupted the recorder) it
 * returns -EAGAIN instead of waiting for a busy shard: then
 * async-signal-safe. Takes the shard's spinlock, with may_block 1 only
 * with the thread's busy flag set (as hp_live_insert); no allocation. */
int hp_live_remove(uintptr_t addr, struct hp_live_block *out, int may_block);

/* What hp_live_update and hp_live_walk do with a block, fn's answer:
 * leave it, give it the bucket fn wrote into blk->bucket, or remove it
 * (fn has counted its free). */
enum { HP_LIVE_KEEP = 0, HP_LIVE_RETAG = 1, HP_LIVE_DROP = 2 };
typedef int hp_live_fn(void *arg, uintptr_t addr, struct hp_live_block *blk);

/* Calls fn on the block at addr, under its shard's lock, and applies its
 * answer; returns 1 when addr is present, 0 when not. fn may take bucket
 * and table locks (the lock order: a shard's, then those), never a shard
 * lock, and must not allocate. Not async-signal-safe; no allocation. */
int hp_live_update(uintptr_t addr, hp_live_fn *fn, void *arg);

/* Calls fn on every block, each shard's under its lock in turn, and
 * applies its answers (fn as for hp_live_update; it may see an entry
 * twice). O(slots). Not async-signal-safe; no allocation. */
void hp_live_walk(hp_live_fn *fn, void *arg);

/* hp_live_walk for an fn that reads each block's memory (attr.c's scan
 * for vtables): each block is prefetched some slots before fn is called
 * on it, so that the walk waits for memory at a fraction of the blocks.
 * As hp_live_walk: not async-signal-safe, no allocation, the shards'
 * locks in turn. */
void hp_live_walk_reading(hp_live_fn *fn, void *arg);

/* Live blocks and the bytes of recorder memory the shards occupy.
 * Lock-free (relaxed reads), async-signal-safe, no allocation. */
void hp_live_usage(uint64_t *blocks, uint64_t *bytes);

/* Empties the register (a new recording in the same process: heapprof
 * attach again), each shard under its lock; the tables keep their size.
 * No allocation; not async-signal-safe. */
void hp_live_clear(void);
/* For fork: take and release every shard lock. No allocation; not
 * async-signal-safe. */
void hp_live_lock_all(void);
void hp_live_unlock_all(void);

/* Makes every address in [lo, hi) "maybe" for good (their cells
 * saturated): blocks that must reach the slow path of free although the
 * register does not hold them (the bootstrap buffer's). In full mode it
 * makes cell 0, every address's, saturated. After hp_live_init; not
 * thread-safe (at start); no allocation, no lock. */
void hp_live_filter_pin(uintptr_t lo, uintptr_t hi);

/* The filter and its geometry, exposed for the inline check only: cells
 * are atomics; mask, shift and all (one cache line) are written at init (before
 * the interposed free uses the filter) and read-only afterwards. */
#define HP_LIVE_FILTER_BITS 18
extern uint8_t hp_live_filter[1u << HP_LIVE_FILTER_BITS];
extern struct hp_live_filter_geom {
	uintptr_t mask;
	unsigned shift;
	/* 1 in full mode (every address "maybe", set at init): tested
	 * first, so that a full recording's free takes one load and a
	 * branch to its slow path rather than the cell's address and
	 * load (sampled mode: one load and a branch more a free). */
	uint8_t all;
} hp_live_filter_geom __attribute__((aligned(16)));

/* The filter cell of addr. Pure. */
static inline uint8_t *hp_live_filter_cell(uintptr_t addr)
{
	return &hp_live_filter[(addr >> hp_live_filter_geom.shift) & hp_live_filter_geom.mask];
}

static inline int hp_live_maybe(uintptr_t addr)
{
	if (hp_live_filter_geom.all)
		return 1;
	return __atomic_load_n(hp_live_filter_cell(addr), __ATOMIC_RELAXED) != 0;
}

#endif
