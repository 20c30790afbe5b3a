/*
 * aggregate.h - per-bucket counters, the global peak and what was lost.
 *
 * A bucket is keyed by (stack id, type tag, origin tag, size) and counts
 * objects and bytes allocated, freed, freed as temporaries, and in use at
 * the global peak. size is the allocation's exact size in sampled mode
 * (so the analyzer can unbias each size exactly) and 0 in full mode; the
 * tags are 0 until the public API sets them.
 *
 * At-peak values need no event stream (docs/internals/at-peak.md): the
 * global peak carries an epoch that moves with every new maximum of the
 * bytes in use (in sampled mode their unbiased estimate, the sum of the
 * live sampled blocks' weights: docs/internals/sampling.md); a bucket remembers the epoch of its last change, and on its
 * first change in a newer epoch copies its current in-use value, which is
 * its value at that peak, into peak_*. A reader takes peak_* when the
 * bucket's epoch is current and the live value otherwise.
 *
 * Bucket ids: a bucket with no type and size 0 is its stack's default
 * bucket, id stack + 1, found without a lookup, when its origin tag is the
 * one the default bucket was claimed for (by the first allocation at that
 * stack: in a full recording of one thread without contexts, every
 * bucket); other keys go through an interning table and get ids from
 * HP_AGG_KEYED_FIRST. Iterate with hp_agg_next. The counters live
 * in chunks of 4096 buckets of 96 bytes mapped when first needed, a
 * bucket's histograms in the bucket while it has one class and in side
 * tables from its second (aggregate.c).
 *
 * Locking: each bucket has its own spinlock for its counters; the global
 * in-use bytes and the peak are lock-free atomics, except in a full
 * recording of a threaded program, where a thread counts on its own credit
 * and a grant of credit, a turn near the peak or far from it, and a new
 * peak take the credit lock (aggregate.c, "Credit"). Nothing here calls the
 * target's malloc. hp_agg_lost is async-signal-safe; the rest is not.
 */
#ifndef HP_RECORDER_AGGREGATE_H
#define HP_RECORDER_AGGREGATE_H

#include <stdint.h>

#include "../format/records.h"
#include "stacks.h"

#define HP_AGG_KEYED_FIRST (HP_STACKS_MAX + 1)

/* Raw figures count sampled blocks at their size (all blocks in a full
 * recording); estimates count each at its unbiased weight
 * (hp_sampler_weight) and equal the raw ones in a full recording. */
struct hp_totals {
	uint64_t in_use_bytes;          /* raw */
	uint64_t in_use_estimate_bytes; /* estimated */
	uint64_t peak_estimate_bytes;   /* the largest in_use_estimate_bytes */
	uint64_t peak_bytes;            /* raw in use at that moment */
	uint64_t peak_time_ns;          /* monotonic, of that moment */
	uint64_t lost_count[HP_LOST_KINDS];
	uint64_t lost_bytes[HP_LOST_KINDS];
};

/* Sets up the bucket table; its memory is mapped as buckets come. Returns
 * 0 or -ENOMEM. Call once, at init. Not thread-safe, not
 * async-signal-safe; no allocation (mmap); no lock. */
int hp_agg_init(void);

/* The sampling rate (1 = every allocation), which weighs each sampled
 * block in the estimated bytes in use that find the peak. Call once,
 * before the first hp_agg_alloc; not thread-safe. No allocation, no lock. */
void hp_agg_set_sample_rate(uint64_t rate_bytes);

/* The bucket id for a key, created when new; 0 when the table is full or
 * the memory for the bucket cannot be mapped (count it lost). Lock-free
 * when the bucket exists; else takes a lock and may call mmap. No
 * allocation; not async-signal-safe (the lock). */
uint32_t hp_agg_bucket(uint32_t stack_id, uint32_t type_tag, uint32_t origin_tag, uint64_t size);

/* Counts an allocation of size bytes in bucket id (id 0 is ignored), a
 * bucket of malloc's blocks (its at-peak values follow malloc's peak
 * without reading its heap: custom heaps' blocks go through
 * hp_agg_heap_alloc), and moves the peak when the bytes in use pass it. Takes the bucket's
 * spinlock for a few stores (call with the thread's busy flag set: spin.h,
 * hp_spin_lock_busy_as; or from the unit tests), and on threads at times the credit lock
 * (above); a thread's first count on threads claims a credit slot
 * (pthread_setspecific, forwarded). No allocation of its own; not
 * async-signal-safe (a handler over the recorder could meet a lock held). */
void hp_agg_alloc(uint32_t id, uint64_t size);

/* Counts a free of size bytes from bucket id; temporary when the block was
 * the last one its thread allocated; life_class its lifetime class
 * (hp_hist_life_class, hp_live_life_class), or HP_AGG_LIFE_UNKNOWN (in
 * no class). Same lock and properties as hp_agg_alloc. */
#define HP_AGG_LIFE_UNKNOWN (-1)
void hp_agg_free(uint32_t id, uint64_t size, int temporary, int life_class);

/* Custom heaps (1..HP_AGG_MAX_HEAPS): their blocks' buckets count like
 * malloc's, but the bytes in use, the peak and its epoch are the heap's own
 * (none of malloc's totals, triggers or peak): hp_agg_heap_alloc and
 * hp_agg_heap_free are hp_agg_alloc and hp_agg_free for a block of heap.
 * A bucket holds the blocks of one heap. Same lock and properties. */
#define HP_AGG_MAX_HEAPS 255u
void hp_agg_heap_alloc(uint32_t id, uint64_t size, uint32_t heap);
void hp_agg_heap_free(uint32_t id, uint64_t size, uint32_t heap);
/* Counts a reset of heap. Lock-free, no allocation. */
void hp_agg_heap_reset_counted(uint32_t heap);
/* Heap's peak (bytes, blocks, time) and resets. Lock-free, no allocation. */
void hp_agg_heap_peak(uint32_t heap, struct hp_rec_heap_peak *out);
/* The heap of bucket id's blocks (0: malloc's). Lock-free. */
uint32_t hp_agg_heap_of(uint32_t id);

/* Moves a live block of size bytes from bucket from to bucket to (a type
 * named later, heapprof_set_type or a vtable): its allocation goes with
 * it, and its at-peak value when from's epoch says the block was counted
 * at the peak (from unchanged since the peak). Both buckets are of the
 * same heap. Takes each bucket's lock in turn, never both; call with the
 * block's shard lock held (so that its free cannot run in between). No
 * allocation; not async-signal-safe. */
void hp_agg_move(uint32_t from, uint32_t to, uint64_t size);

/* The size and lifetime histograms of bucket id (format.h, HISTOGRAMS):
 * its allocations by size class (hp_rec_hist's classes) and its frees by
 * lifetime class. Counts are 32-bit and wrap. Kept sparse (a class
 * inline, the rest in a side table from a bucket's second class on:
 * aggregate.c, "Histograms"). Lock-free (atomic reads),
 * async-signal-safe, no allocation. */
void hp_agg_hist(uint32_t id, struct hp_rec_hist *out);

/* hp_agg_hist's histograms of bucket id while they have a class each at
 * most (kept inline): the size class, 1-based (0: none), and its count,
 * the lifetime class likewise (hp_rec_hist_put_one's arguments). Returns
 * 1, or 0 when they have spilled (then hp_agg_hist reads them). As
 * hp_agg_hist: lock-free, async-signal-safe, no allocation. */
int hp_agg_hist_one(uint32_t id, unsigned *size_class, uint64_t *size_count,
		    unsigned *life_class, uint64_t *life_count);

/* The key of bucket id. Lock-free, async-signal-safe, no allocation. */
void hp_agg_key(uint32_t id, uint32_t *stack_id, uint32_t *type_tag, uint32_t *origin_tag,
		uint64_t *size);

/* The type tag of bucket id's key: 0 for a stack's default bucket (below
 * HP_AGG_KEYED_FIRST) without reading the bucket, so that a scan of many
 * blocks (attr.c's vtable scan) touches no bucket line. Lock-free,
 * async-signal-safe, no allocation. */
uint32_t hp_agg_type(uint32_t id);

/* Counts count allocations totalling bytes that could not be recorded.
 * Lock-free, async-signal-safe, no allocation. */
void hp_agg_lost(enum hp_lost_reason why, uint64_t count, uint64_t bytes);

/* The first bucket id after id (0 to start) that may hold counts, or 0
 * when there is none. Lock-free, async-signal-safe, no allocation. */
uint32_t hp_agg_next(uint32_t id);

/* hp_agg_next for the timeline's ticks: also a stack's default bucket
 * that no longer holds counts (its blocks all moved to a typed bucket,
 * hp_agg_move) but changed since its last timeline entry, so that its
 * fall to nothing is written. Call from the writer, under its lock.
 * Lock-free, async-signal-safe, no allocation. */
uint32_t hp_agg_next_tick(uint32_t id);

/* Copies bucket id, as the record schema's bucket (format/records.h) the
 * writer encodes: a consistent-enough copy. Lock-free (reads may straddle a concurrent update by one
 * allocation), async-signal-safe, no allocation. */
void hp_agg_read(uint32_t id, struct hp_rec_bucket *out);

/* The per-site timeline: when bucket id changed since the last call that
 * returned 1 for it (or ever), or force, fills *out with its key (stack,
 * size, type and origin tags) and what it holds in use now, and returns 1; else returns 0. A change racing the call
 * shows at the next. Call from one thread at a time (the writer, under its
 * lock). Lock-free, no allocation; async-signal-safe. */
int hp_agg_take_change(uint32_t id, int force, struct hp_rec_site *out);

/* The global figures and lost counts. Lock-free (each an atomic load),
 * async-signal-safe, no allocation. */
void hp_agg_totals(struct hp_totals *out);

/* Bytes of recorder memory the buckets may have touched. Lock-free,
 * async-signal-safe, no allocation. */
uint64_t hp_agg_bytes(void);

/* Zeroes every counter, the totals, the peaks and the lost counts, each
 * bucket under its lock; bucket ids and keys stay (a new recording in the
 * same process: heapprof attach again, after hp_live_clear). No
 * allocation; not async-signal-safe. */
void hp_agg_zero(void);
/* Makes the bytes in use now the peak (a followed fork child's start).
 * Lock-free, async-signal-safe, no allocation. */
void hp_agg_restart_peak(void);

/* The credit's race windows in a threaded count (aggregate.c): a turn
 * near after near is marked and before the credit is taken back, a grant
 * after its test and before its add, an allocation near the peak after it
 * read near and before its add. In the unit tests' build only (os.h,
 * HP_OS_MUTABLE), hp_agg_pause, when set, is called in each. */
enum { HP_AGG_PAUSE_TURNING = 1, HP_AGG_PAUSE_GRANTING, HP_AGG_PAUSE_ADDING };
#ifdef HP_OS_MUTABLE
extern void (*hp_agg_pause)(int window);
#endif

/* For fork: take and release every bucket lock, the key table's and the
 * chunks' (prepare handler, then parent or child handler). No allocation;
 * not async-signal-safe. */
void hp_agg_lock_all(void);
void hp_agg_unlock_all(void);

#endif
