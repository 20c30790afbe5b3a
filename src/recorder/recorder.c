/*
 * recorder.c - the recorder's life: start, the slow paths of allocation and
 * free, fork and exit.
 *
 * Compiled only inside record_path.c, after aggregate.c and live.c: the
 * slow paths call those files' inline bodies (live_insert, live_remove,
 * agg_alloc, agg_free) where the rest of the recorder calls hp_live_insert
 * and the like; interpose.c, after it, calls record_free, the body of
 * hp_record_free.
 *
 * Threads: any thread may be in a slow path at any time; the tables they
 * touch have their own locks (stacks.h, aggregate.h, live.h). hp_state and
 * the configuration are written only at start, in the fork handlers (when
 * one thread exists) and at exit.
 */
#include "recorder.h"
#include "root.h"

#include <errno.h>
#include <string.h>

#include "../common/fmt.h"
#include "../common/hash.h"
#include "../format/format.h"
#include "aggregate.h"
#include "attr.h"
#include "config.h"
#include "events.h"
#include "log.h"
#include "modules.h"
#include "os.h"
#include "sampler.h"
#include "stacks.h"
#include "tags.h"
#include "trigger.h"
#include "unwind.h"
#include "attach.h"
#include "writer.h"
#include "interpose_inline.h"

int hp_state;
int hp_sampled;
unsigned hp_rare = HP_RARE_OFF;

/* Raises and lowers bits of hp_rare, each on its own (two threads may
 * change different states at once). Async-signal-safe, lock-free. */
static inline void rare_set(unsigned bit)
{
	__atomic_or_fetch(&hp_rare, bit, __ATOMIC_RELEASE);
}

static inline void rare_clear(unsigned bit)
{
	__atomic_and_fetch(&hp_rare, ~bit, __ATOMIC_RELEASE);
}

/* hp_state set to state, and hp_rare's HP_RARE_OFF with it (after it,
 * when the recording starts: the common case never reads hp_state).
 * Async-signal-safe, no allocation, no lock. */
static void set_state(int state)
{
	if (state == HP_STATE_ACTIVE) {
		__atomic_store_n(&hp_state, state, __ATOMIC_RELEASE);
		rare_clear(HP_RARE_OFF);
	} else {
		rare_set(HP_RARE_OFF);
		__atomic_store_n(&hp_state, state, __ATOMIC_RELEASE);
	}
}

/* Written once in hp_recorder_start (and in a fork child before it
 * resumes); read-only otherwise. The recorder's one copy: the writer, the
 * module map and the triggers keep pointers to it, and its start_ns is
 * the one start time. */
static struct hp_config config;

/* Slow paths between two looks at the clock (hp_trigger_tick), at the
 * most: every one when sampled (they are rare); in a full recording up to
 * every 64th, fewer while the thread allocates rarely (trigger.c). */
#define TICK_PERIOD (hp_sampled ? 1u : 64u)
/* A block this large, allocated or freed, is looked at at once: the heap
 * over time keeps the time of each big change, whatever the countdown. */
#define LOOK_BYTES (64u << 10)

/* hp_trigger_tick(t, TICK_PERIOD) (trigger.h: the same test) with the
 * period worked out only when the tick is due: passed to hp_trigger_tick,
 * GCC computed it (a load of hp_sampled and three instructions) on every
 * slow path. Properties as hp_trigger_tick. */
static __attribute__((noinline, cold)) void tick_due(struct hp_thread *t)
{
	hp_trigger_tick_due(t, TICK_PERIOD);
}

static inline __attribute__((always_inline)) void tick(struct hp_thread *t)
{
	if (__builtin_expect(!(__atomic_load_n(&hp_rare, __ATOMIC_ACQUIRE) & HP_RARE_PENDING) &&
				     t->ticks > 1,
			     1))
		t->ticks--;
	else
		tick_due(t);
}

/* tick in the slow paths' common case, where hp_rare was 0 (no request
 * pending) a moment ago: the countdown alone. A request made since is
 * taken by the next slow path. Properties of tick. */
static inline __attribute__((always_inline)) void tick_common(struct hp_thread *t)
{
	if (__builtin_expect(t->ticks > 1, 1))
		t->ticks--;
	else
		tick_due(t);
}

/* Threads that have started, to give each its own random stream. */
static uint64_t threads_started;

/* Sets up a thread on its first slow path. With HEAPPROF_SEED the streams
 * depend only on the seed and the order threads start in, so a
 * single-threaded run samples the same allocations every time. */
static void thread_start(struct hp_thread *t)
{
	uint64_t n = __atomic_fetch_add(&threads_started, 1, __ATOMIC_RELAXED);
	uint64_t seed = config.seed ? config.seed : hp_os_now_ns() ^ (uintptr_t)t;

	t->rng = hp_hash_u64(seed + n * 0x9e3779b97f4a7c15ULL) | 1;
	t->ticks = t->every = 1;
	if (!t->stack_hi && hp_os_thread_stack(&t->stack_lo, &t->stack_hi) < 0)
		t->stack_lo = t->stack_hi = 1; /* unknown (allocation-free: os.h) */
	if (t->stack_hi > t->stack_lo && t->stack_hi - t->stack_lo > HP_RECORD_STACK_BYTES) {
		t->room_floor = t->stack_lo + HP_RECORD_STACK_BYTES - 1;
		t->room_span = t->stack_hi - t->room_floor;
	}
	if (!hp_attr_self.thread)
		hp_attr_thread_start(&hp_attr_self);
	hp_attr_origin_moves(); /* no origin cached yet */
	t->ready = 1;
}

uintptr_t hp_stack_room_off_stack(const struct hp_thread *t, uintptr_t sp)
{
	uintptr_t lo, hi, room = UINTPTR_MAX; /* a stack of the program's own making (a fiber) */
	int saved = errno; /* the common allocation path does not save it */

	(void)t;
	if (hp_os_altstack(&lo, &hi) == 0 && sp > lo && sp <= hi)
		room = sp - lo;
	errno = saved;
	return room;
}

static int exit_consumed;
static void rearm_exit(void);

/* Whether frames[0..depth) (of hash hash) are the stack this thread
 * interned last: then the table is not probed. The hashes are compared
 * first (one compare on a miss), the frames only when they are equal. */
static inline int same_as_last(const struct hp_thread *t, const uint64_t *frames, uint32_t depth,
			       uint64_t hash)
{
	if (hash != t->last_stack_hash || !t->last_stack || !depth)
		return 0;
	return hp_stacks_equal(t->last_stack, frames, depth);
}

/* The bucket of an allocation by this thread now (type 0) at stack, of
 * size (0 in a full recording). */
static inline uint32_t bucket_of(uint32_t stack, uint32_t heap, uint64_t size)
{
	return hp_agg_bucket(stack, 0, hp_attr_origin_of(&hp_attr_self, heap), size);
}

/* hp_record_alloc's body: interpose.c's malloc_slow inlines it. */
static inline __attribute__((always_inline)) void record_alloc(struct hp_thread *t, void *p,
							       size_t size, uintptr_t entry)
{
	uint64_t frames[config.max_depth + HP_UNWIND_SLACK];
	struct hp_live_block stale;
	uint32_t depth, stack, bucket;
	uintptr_t room;
	uint64_t hash;
	int r;

	/* Temporaries (thread.h): p is the last block until the countdown
	 * moves or another slow path sets last_alloc. Each branch below takes
	 * the mark as soon as it has set the countdown, before anything that
	 * may allocate (unwinding), so that such an allocation ends it. */
	t->last_alloc = ~(uintptr_t)p; /* not a pointer: thread.h */
	if (!size && hp_sampled) {
		/* Size 0 takes the slow path only so that the fast path
		 * needs one compare: never sampled (no byte of it), and the
		 * countdown stays. */
		t->last_mark = t->countdown_bytes;
		return;
	}
	if (t->forwarding || t->busy) {
		/* The recorder's own allocations, or ones nested in a forwarded
		 * C++ operator: passed through. A signal handler allocating on
		 * top of the recorder (busy): passed through, counted. A fresh
		 * countdown keeps the next sample unbiased. */
		if (t->busy && !t->forwarding && hp_state == HP_STATE_ACTIVE)
			hp_agg_lost(HP_LOST_REENTRANT, 1, size);
		if (!hp_sampled)
			t->countdown_bytes = 0;
		else if (t->ready)
			t->countdown_bytes = hp_sampler_draw(&t->rng, config.sample_rate_bytes);
		t->last_mark = t->countdown_bytes;
		return;
	}
	if (hp_state != HP_STATE_ACTIVE) {
		t->countdown_bytes = t->last_mark = 0;
		return;
	}
	t->busy = 1;
	if (!t->ready) {
		thread_start(t);
		if (hp_sampled) {
			/* The first countdown was a placeholder: start afresh. */
			int64_t left = hp_sampler_draw(&t->rng, config.sample_rate_bytes) -
				       (int64_t)size;
			if (left >= 0) {
				t->countdown_bytes = t->last_mark = left;
				room = hp_stack_room(t);
				goto out;
			}
		}
	}
	t->countdown_bytes = hp_sampled ? hp_sampler_draw(&t->rng, config.sample_rate_bytes) : 0;
	t->last_mark = t->countdown_bytes;
	/* Measured once: the write budget below is of this same frame. */
	room = hp_stack_room(t);
	if (room < HP_RECORD_STACK_BYTES) {
		/* A small thread stack or signal stack: unwinding could
		 * overflow it. Say so rather than risk the program. */
		hp_agg_lost(HP_LOST_STACK_ROOM, 1, size);
		t->busy = 0;
		return;
	}

	depth = hp_unwind_fast(t, frames, config.max_depth, &hash, &stack, entry);
	if (!stack) { /* the frames are in frames[] */
		stack = same_as_last(t, frames, depth, hash)
				? t->last_stack
				: hp_stacks_intern_hashed(frames, depth, hash);
		if (stack && t->cfa_memo) /* a remembered DWARF walk */
			hp_unwind_remember(t, stack);
	}
	if (stack) {
		t->last_stack = stack;
		t->last_stack_hash = hash;
	}
	if (!stack)
		hp_agg_lost(depth ? HP_LOST_STACK_TABLE_FULL : HP_LOST_UNWIND_FAILED, 1, size);
	if (hp_sampled) {
		bucket = bucket_of(stack, 0, size);
	} else {
		/* The bucket remembered with the walk, for this origin: every
		 * thread but the one that claimed a stack's default bucket
		 * would look its bucket up. */
		uint32_t origin = hp_attr_origin_of(&hp_attr_self, 0);
		bucket = t->cfa_memo ? hp_unwind_bucket(t, origin) : 0;
		if (!bucket) {
			bucket = hp_agg_bucket(stack, 0, origin, 0);
			if (bucket && t->cfa_memo)
				hp_unwind_remember_bucket(t, origin, bucket, bucket_at(bucket));
		}
	}
	if (!bucket) {
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, size);
		goto out;
	}
	r = live_insert((uintptr_t)p, bucket, size, &stale);
	if (r < 0) {
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, size);
		goto out;
	}
	if (r == 1) /* its free went unseen: count it now */
		hp_agg_free(stale.bucket, stale.size, 0, HP_AGG_LIFE_UNKNOWN);
	agg_alloc(bucket, size);
	HP_EVENTS_ALLOC(p, size, bucket);
	/* Byte triggers count what the run allocated: each sampled block at
	 * its unbiased weight (its size in a full recording). */
	if (config.dump_every_bytes || config.high_water_bytes) /* (no call when neither is on) */
		hp_trigger_allocated(hp_sampled ? hp_sampler_weight(size, config.sample_rate_bytes)
						: size);
out:
	t->busy = 0;
	if (__builtin_expect(__atomic_load_n(&exit_consumed, __ATOMIC_RELAXED), 0))
		rearm_exit();
	if (size >= LOOK_BYTES)
		t->ticks = 1;
	if (room >= HP_WRITE_STACK_BYTES)
		tick(t);
}

/* Whether this thread's allocation takes record_alloc_common: a full
 * recording, on, with no byte trigger and no exit handler to arm again
 * (hp_rare), on a thread set up, with its origin cached, neither busy nor
 * forwarding (the thread's word, thread.h). Two loads and compares for
 * what record_alloc tests one by one. Async-signal-safe, no allocation,
 * no lock. */
static inline __attribute__((always_inline)) int alloc_common(const struct hp_thread *t)
{
	return __builtin_expect(t->common == HP_THREAD_COMMON &&
					!__atomic_load_n(&hp_rare, __ATOMIC_RELAXED),
				1);
}

/* record_alloc in its common case (alloc_common): what record_alloc does
 * when none of the states it tests is set, each rare case's test left
 * out, the origin's cache among them. The countdown and its mark stay 0 (a full recording's: every path
 * that sets them sets 0 when not sampled), the byte triggers have
 * nothing to count and no exit handler waits to be armed. Properties of
 * hp_record_alloc. */
static inline __attribute__((always_inline)) void record_alloc_common(struct hp_thread *t,
								      void *p, size_t size,
								      uintptr_t entry)
{
	uint64_t frames[HP_CONFIG_MAX_DEPTH_LIMIT + HP_UNWIND_SLACK];
	struct hp_live_block stale;
	uint32_t depth, stack, bucket, origin;
	struct bucket *at;
	uintptr_t room;
	uint64_t hash;
	int r, alone;

	t->last_alloc = ~(uintptr_t)p; /* not a pointer: thread.h */
	t->busy = 1;
	/* The room on the thread's own stack in one compare (thread.h,
	 * room_floor); anywhere else (a signal stack, a fiber's, unknown
	 * bounds) measured as record_alloc does. */
	room = (uintptr_t)__builtin_frame_address(0) - t->room_floor - 1;
	if (__builtin_expect(room >= t->room_span, 0)) {
		room = hp_stack_room(t);
		if (room < HP_RECORD_STACK_BYTES) {
			hp_agg_lost(HP_LOST_STACK_ROOM, 1, size);
			t->busy = 0;
			return;
		}
	}
	/* A remembered walk from the program's registers, looked for here
	 * (no call); when none matched, the walk stepped without looking
	 * again; when it could not look, the walk's own function. */
	r = hp_unwind_recall ? hp_cfa_recall_entry(t, frames, config.max_depth, &hash, &stack,
						    entry, hp_unwind_recall == 2)
			     : -2;
	if (__builtin_expect(r == -1, 0))
		r = hp_unwind_recall == 2
			    ? hp_cfa_walk_fp_stepped(t, frames, config.max_depth, &hash, entry)
			    : hp_cfa_walk_stepped(t, frames, config.max_depth, &hash, entry);
	depth = r >= 0 ? (uint32_t)r
		: r == -1 ? hp_unwind_fallback(t, frames, config.max_depth, &hash)
			  : hp_unwind_fast(t, frames, config.max_depth, &hash, &stack, entry);
	if (!stack) { /* the frames are in frames[] */
		stack = same_as_last(t, frames, depth, hash)
				? t->last_stack
				: hp_stacks_intern_hashed(frames, depth, hash);
		if (stack && t->cfa_memo) /* a remembered DWARF walk */
			hp_unwind_remember(t, stack);
	}
	if (stack) {
		t->last_stack = stack;
		t->last_stack_hash = hash;
	} else {
		hp_agg_lost(depth ? HP_LOST_STACK_TABLE_FULL : HP_LOST_UNWIND_FAILED, 1, size);
	}
	origin = hp_attr_self.origin; /* current: origin_moved is 0 (alloc_common) */
	bucket = t->cfa_memo ? hp_unwind_bucket(t, origin) : 0;
	if (__builtin_expect(bucket != 0, 1)) {
		at = hp_unwind_bucket_at(t); /* bucket_at(bucket), remembered */
	} else {
		bucket = hp_agg_bucket(stack, 0, origin, 0);
		if (!bucket) {
			hp_agg_lost(HP_LOST_NO_MEMORY, 1, size);
			goto out;
		}
		at = bucket_at(bucket);
		if (t->cfa_memo)
			hp_unwind_remember_bucket(t, origin, bucket, at);
	}
	/* The thread count read once for the register and the bucket (no
	 * thread starts in between); no filter and no rate to read in a
	 * full recording. */
	alone = hp_os_single_threaded();
	r = live_insert_as((uintptr_t)p, bucket, size, &stale, alone, 0);
	if (r < 0) {
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, size);
		goto out;
	}
	if (r == 1) /* its free went unseen: count it now */
		hp_agg_free(stale.bucket, stale.size, 0, HP_AGG_LIFE_UNKNOWN);
	agg_alloc_at(at, bucket, size, alone, 1);
	HP_EVENTS_ALLOC(p, size, bucket);
out:
	t->busy = 0;
	if (size >= LOOK_BYTES)
		t->ticks = 1;
	/* The write budget is the record budget or less: room enough. */
	_Static_assert(HP_WRITE_STACK_BYTES <= HP_RECORD_STACK_BYTES, "room for the tick");
	tick_common(t);
}

void hp_record_alloc(struct hp_thread *t, void *p, size_t size, uintptr_t entry)
{
	record_alloc(t, p, size, entry);
}

int hp_record_heap_alloc(struct hp_thread *t, const void *p, size_t size, uint32_t heap)
{
	uint64_t frames[config.max_depth + HP_UNWIND_SLACK];
	struct hp_attr *a = &hp_attr_self;
	struct hp_live_block stale;
	uint32_t depth, stack, bucket, origin;
	uint64_t hash;
	int r;

	if (hp_state != HP_STATE_ACTIVE || t->busy || t->forwarding)
		return -ENODEV;
	if (!heap || heap > hp_tags_heap_count())
		return -EINVAL;
	t->busy = 1;
	if (!t->ready)
		thread_start(t);
	if (hp_sampled) {
		/* A countdown of the heap's own (attr.h), as malloc's. */
		if (size && (int64_t)size <= a->heap_countdown) {
			a->heap_countdown -= (int64_t)size;
			t->busy = 0;
			return 0;
		}
		a->heap_countdown = hp_sampler_draw(&t->rng, config.sample_rate_bytes);
	}
	if (hp_stack_room(t) < HP_RECORD_STACK_BYTES) {
		hp_agg_lost(HP_LOST_STACK_ROOM, 1, size);
		t->busy = 0;
		return -ENOSPC;
	}
	depth = hp_unwind(t, frames, config.max_depth, &hash, NULL, 0);
	stack = hp_stacks_intern_hashed(frames, depth, hash);
	if (!stack)
		hp_agg_lost(depth ? HP_LOST_STACK_TABLE_FULL : HP_LOST_UNWIND_FAILED, 1, size);
	origin = hp_attr_origin_of(a, heap);
	bucket = hp_agg_bucket(stack, 0, origin, hp_sampled ? size : 0);
	r = bucket ? hp_live_insert(hp_attr_key(p, heap), bucket, size, &stale) : -ENOMEM;
	if (r < 0) {
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, size);
	} else {
		if (r == 1) /* a block still live there: freed first */
			hp_agg_heap_free(stale.bucket, stale.size, heap);
		hp_agg_heap_alloc(bucket, size, heap);
	}
	t->busy = 0;
	return r < 0 ? r : 0;
}

void hp_record_heap_free(struct hp_thread *t, const void *p, uint32_t heap)
{
	struct hp_live_block blk;
	int r;

	if (hp_state != HP_STATE_ACTIVE || t->busy || t->forwarding)
		return;
	t->busy = 1;
	r = hp_live_remove(hp_attr_key(p, heap), &blk, 1);
	if (r == 1)
		hp_agg_heap_free(blk.bucket, blk.size, heap);
	else if (!hp_sampled)
		hp_agg_lost(HP_LOST_UNKNOWN_FREE, 1, 0);
	t->busy = 0;
}

static inline __attribute__((always_inline)) int take(struct hp_thread *t, void *p,
							struct hp_live_block *blk)
{
	int r;

	if (hp_state != HP_STATE_ACTIVE)
		return 0;
	/* busy is raised while the shard lock is held, so that a signal
	 * handler's free on top of us does not wait for it; inside the recorder
	 * already (that handler's free), never wait for a lock the interrupted
	 * code may hold. */
	int nested = t->busy != 0;
	t->busy++;
	r = hp_live_remove((uintptr_t)p, blk, !nested);
	t->busy--;
	if (r < 0)
		hp_agg_lost(HP_LOST_REENTRANT_FREE, 1, 0);
	if (r == 0 && !hp_sampled)
		hp_agg_lost(HP_LOST_UNKNOWN_FREE, 1, 0);
	return r == 1;
}

static inline __attribute__((always_inline)) void release(struct hp_thread *t, void *p,
							  const struct hp_live_block *blk)
{
	int temporary = t->last_alloc == ~(uintptr_t)p && t->countdown_bytes == t->last_mark;

	if (temporary)
		t->last_alloc = 0;
	if (t->busy) {
		/* A bucket lock could be held by the code we interrupted. The
		 * block is out of the register, so its bytes stay counted in use:
		 * say so. */
		hp_agg_lost(HP_LOST_REENTRANT_FREE, 1, blk->size);
		return;
	}
	t->busy++; /* the bucket lock: see hp_record_take */
	hp_agg_free(blk->bucket, blk->size, temporary, (int)hp_live_life_class(blk->born));
	HP_EVENTS_FREE(p);
	t->busy--;
	if (blk->size >= LOOK_BYTES)
		t->ticks = 1;
	tick(t);
}

int hp_record_take(struct hp_thread *t, void *p, struct hp_live_block *blk)
{
	return take(t, p, blk);
}

void hp_record_release(struct hp_thread *t, void *p, const struct hp_live_block *blk)
{
	release(t, p, blk);
}

/* A free's whole slow path. Outside the recorder (the common case) busy
 * is raised once around the register and the bucket, where take() and
 * release() raise it for each; over the recorder (a signal handler's
 * free) the two parts do what they do alone. errno is not saved here:
 * nothing on the way makes a system call that can set it (the shard and
 * bucket locks yield with sched_yield, which cannot fail), and what can
 * (a credit slot's first claim, the tick's writer) saves it itself. */
static inline __attribute__((always_inline)) void record_free_outside(struct hp_thread *t,
									void *p, int common);

static inline __attribute__((always_inline)) void record_free(struct hp_thread *t, void *p)
{
	struct hp_live_block blk;

	if (hp_state != HP_STATE_ACTIVE)
		return;
	if (__builtin_expect(t->busy != 0, 0)) {
		if (take(t, p, &blk))
			release(t, p, &blk);
		return;
	}
	record_free_outside(t, p, 0);
}

/* Whether this thread's free takes record_free_common: a full recording
 * (no filter to count down), on, no snapshot request pending (hp_rare),
 * the thread set up, neither busy nor forwarding (thread.h).
 * Async-signal-safe, no allocation, no lock. */
static inline __attribute__((always_inline)) int free_common(const struct hp_thread *t)
{
	return __builtin_expect(t->common == HP_THREAD_COMMON &&
					!(__atomic_load_n(&hp_rare, __ATOMIC_RELAXED) &
					  (HP_RARE_OFF | HP_RARE_PENDING | HP_RARE_SAMPLED)),
				1);
}

/* record_free in its common case (free_common). Properties of
 * hp_record_free. */
static inline __attribute__((always_inline)) void record_free_common(struct hp_thread *t, void *p)
{
	record_free_outside(t, p, 1);
}

/* The free of p outside the recorder (busy clear, the recorder on): busy
 * raised once around the register and the bucket, the thread count read
 * once for both (no thread starts in between); common: from
 * record_free_common (tick_common for tick, no filter, a full
 * recording). Properties of hp_record_free. */
static inline __attribute__((always_inline)) void record_free_outside(struct hp_thread *t,
									void *p, int common)
{
	struct hp_live_block blk;
	int r, alone;

	t->busy = 1;
	alone = hp_os_single_threaded();
	r = live_remove_as((uintptr_t)p, &blk, 2, alone, !common);
	if (__builtin_expect(r == 1, 1)) {
		int temporary = t->last_alloc == ~(uintptr_t)p && t->countdown_bytes == t->last_mark;
		int life = (int)hp_live_life_class(blk.born);

		if (temporary)
			t->last_alloc = 0;
		agg_free_as(blk.bucket, blk.size, temporary, life, alone, common);
		HP_EVENTS_FREE(p);
		/* Counted: until the real free returns, the block is the one
		 * this thread is freeing (thread.h), its details first. */
		t->freeing_size = blk.size;
		t->freeing_bucket = blk.bucket;
		t->freeing_temp = (int8_t)temporary;
		t->freeing_life = (int8_t)life;
		__atomic_signal_fence(__ATOMIC_RELEASE);
		t->freeing = ~(uintptr_t)p;
		t->busy = 0;
		if (common)
			tick_common(t);
		else
			tick(t);
		return;
	}
	t->busy = 0;
	if (!hp_sampled)
		hp_agg_lost(HP_LOST_UNKNOWN_FREE, 1, 0);
}

void hp_record_free(struct hp_thread *t, void *p)
{
	record_free(t, p);
}

void hp_record_untake(struct hp_thread *t, void *p, const struct hp_live_block *blk)
{
	struct hp_live_block stale;
	int r = -1;

	if (!t->busy) {
		t->busy++;
		r = hp_live_insert((uintptr_t)p, blk->bucket, blk->size, &stale);
		t->busy--;
	}
	if (r < 0 && t->busy) {
		/* Inside the recorder already (a signal handler's realloc over
		 * it): the interrupted code may hold the bucket's lock or the
		 * credit lock, so, as release() does, the block's bytes stay
		 * counted in use, and it says so. */
		hp_agg_lost(HP_LOST_REENTRANT_FREE, 1, blk->size);
	} else if (r < 0) {
		/* Not back in the register: count it freed now, so that its
		 * bytes do not stay in use forever. */
		t->busy++;
		hp_agg_free(blk->bucket, blk->size, 0, HP_AGG_LIFE_UNKNOWN);
		t->busy--;
		hp_agg_lost(HP_LOST_NO_MEMORY, 1, blk->size);
	}
}

/* Set in a fork child that is not followed (fork_child): the program
 * may exec with an environment it built before the fork (git does, from
 * its copy of environ), which hp_os_unpreload cannot reach. */
static int strip_exec_env;

char *const *hp_record_exec_env(char *const envp[])
{
	if (!__atomic_load_n(&strip_exec_env, __ATOMIC_RELAXED))
		return envp;
	return hp_os_env_without(envp, "libheapprof.so");
}

/* Under heapprof run --follow-fork (config.roster set): puts this process
 * on the run's roster, a line "PID PROGRAM" appended in one write, so that
 * the run names it at its end even when it dies before writing a capture
 * (SIGKILL, the OOM killer). Called with one thread in the process (a fork
 * child's handler, or a program's start), hence the static line.
 * Async-signal-safe, no allocation, no lock. */
static void enlist(void)
{
	static char line[HP_CONFIG_PATH_MAX], exe[HP_CONFIG_PATH_MAX - 32];
	int saved_errno = errno; /* the program's, after its fork */

	if (!config.roster[0])
		return;
	hp_os_exe_path(exe, sizeof exe);
	hp_fmt(line, sizeof line, "%d run %s\n", (int)hp_os_getpid(), exe);
	if (hp_os_append(config.roster, line, strlen(line)) < 0)
		config.roster[0] = '\0'; /* gone: the run has ended, or never made one */
	errno = saved_errno;
}

static void fork_prepare(void)
{
	hp_self.forwarding++;
	hp_interpose_mmap_lock();
	hp_writer_lock();
	hp_modules_lock();
	/* The lock order (attr.c): shards, then tables and buckets. */
	hp_live_lock_all();
	hp_tags_lock_all();
	hp_stacks_lock();
	hp_agg_lock_all();
}

static void fork_unlock(void)
{
	hp_agg_unlock_all();
	hp_stacks_unlock();
	hp_tags_unlock_all();
	hp_live_unlock_all();
	hp_modules_unlock();
	hp_writer_unlock();
	hp_interpose_mmap_unlock();
}

static void fork_parent(void)
{
	fork_unlock();
	hp_self.forwarding--;
}

/* forwarding, raised by fork_prepare, stays raised to the end: a signal
 * handler that allocates in the child while the recorder's state is being
 * reset passes through unrecorded. */
static void fork_child(void)
{
	fork_unlock();
	if (hp_state != HP_STATE_ACTIVE)
		goto out;
	if (!config.follow_fork) {
		/* The child stops cleanly: it frees what it inherited straight
		 * to the real allocator, writes nothing, keeps none of the
		 * recorder's signal handlers (its SIGUSR2 kills it, as bare),
		 * holds no descriptor of ours, and what it execs is not
		 * recorded. */
		set_state(HP_STATE_OFF);
		hp_trigger_stop();
		hp_writer_close();
		hp_os_unpreload("libheapprof.so");
		__atomic_store_n(&strip_exec_env, 1, __ATOMIC_RELAXED);
		goto out;
	}
	/* Keep recording into a file of its own; the inherited heap stays
	 * counted, since the child owns those blocks too, but the parent's
	 * peak is not the child's: its peak starts at what it inherited. */
	hp_agg_restart_peak();
	/* This thread is the child's only one, with a tid of its own. */
	hp_attr_reset_caches(&hp_attr_self);
	hp_attr_thread_refresh(&hp_attr_self, 1);
	hp_events_fork_child();
	if (hp_writer_open(&config, HP_ROLE_FORKED) < 0)
		set_state(HP_STATE_OFF);
	else
		enlist();
out:
	hp_self.forwarding--;
}

/* The exit snapshot and the end of recording. Runs once, in the process
 * that owns the capture; flags as for hp_writer_snapshot. */
static void finish(unsigned flags)
{
	if (hp_state != HP_STATE_ACTIVE || !hp_writer_owned())
		return;
	hp_self.forwarding++;
	hp_unwind_report();
	hp_writer_snapshot(HP_SNAP_EXIT, 0, flags);
	set_state(HP_STATE_OFF);
	if (!flags)
		hp_writer_close();
	hp_self.forwarding--;
}

static void finish_last(void *unused)
{
	(void)unused;
	finish(0);
}

/* The library's destructor runs inside the loader's _dl_fini, before the
 * destructors of objects initialised after it (a library that frees its
 * tables at exit) and before exit handlers registered earlier than
 * _dl_fini. An exit handler registered now (hp_os_at_exit), while exit is
 * running them, is run after all of those (glibc restarts its list when
 * one is added), just before the process ends: the exit snapshot sees
 * every free. */

/* Set by a vfork child that runs exit(): it consumes, in the memory it
 * shares with us, the exit handlers and destructors our exit would have
 * run, this library's destructor included. The next slow path of the
 * parent then asks for the exit snapshot at its thread's exit instead
 * (glibc runs a thread's TLS destructors first thing in exit()). */
static void rearm_exit(void)
{
	__atomic_store_n(&exit_consumed, 0, __ATOMIC_RELAXED);
	rare_clear(HP_RARE_EXIT);
	hp_self.forwarding++;
	hp_os_at_thread_exit(finish_last, NULL);
	hp_self.forwarding--;
}

static void stop_at_exit(void) __attribute__((destructor));
static void stop_at_exit(void)
{
	int r;

	if (hp_state == HP_STATE_ACTIVE && !hp_writer_owned()) {
		__atomic_store_n(&exit_consumed, 1, __ATOMIC_RELAXED);
		rare_set(HP_RARE_EXIT);
		return;
	}
	if (hp_state != HP_STATE_ACTIVE)
		return;
	hp_self.forwarding++; /* glibc may allocate the handler's slot */
	r = hp_os_at_exit(finish_last, NULL);
	hp_self.forwarding--;
	if (r != 0)
		finish(0);
}

void hp_record_exit_now(void)
{
	/* _exit may be called from a signal handler that interrupted the
	 * recorder: then do not wait for its locks. */
	finish(hp_self.busy ? HP_WRITE_SIGNAL : 0);
}

void hp_record_exec(void)
{
	if (hp_state != HP_STATE_ACTIVE || !hp_writer_owned())
		return;
	if (config.roster[0]) {
		/* "PID exec": what it execs enlists itself when it is recorded;
		 * the run says of one that is not (static, setuid) what it did. */
		char line[32];
		hp_fmt(line, sizeof line, "%d exec\n", (int)hp_os_getpid());
		hp_os_append(config.roster, line, strlen(line));
	}
	if (!hp_writer_has_file())
		return;
	hp_self.forwarding++;
	hp_writer_snapshot(HP_SNAP_EXEC, 0, hp_self.busy ? HP_WRITE_SIGNAL : 0);
	hp_self.forwarding--;
}

/* Who we are in the run. The first recorded process is marked in the
 * environment with its pid (by `heapprof run` before the exec, or here);
 * an image that finds its own pid there is that process after an exec (a
 * shell wrapper, a launcher), and carries on its capture; any other is a
 * program a recorded process exec'd. */
static enum hp_role find_role(void)
{
	char mark[64];

	if (!config.claimed_pid) {
		/* Not with setenv: that would make the program's environ a
		 * heap block of ours (os.h). */
		hp_fmt(mark, sizeof mark, "HEAPPROF_OUTPUT_CLAIMED=%d", hp_os_getpid());
		hp_os_env_add(mark);
		return HP_ROLE_ROOT;
	}
	return config.claimed_pid == hp_os_getpid() ? HP_ROLE_ROOT_EXEC : HP_ROLE_DESCENDANT;
}

/* Another allocator preloaded before us (LD_PRELOAD=libjemalloc.so:
 * libheapprof.so) takes every call: nothing reaches the recorder. Returns
 * the path of the module that defines the program's malloc when it is not
 * us, or NULL. */
static const char *malloc_owner(void)
{
	void *m = hp_os_dlsym_default("malloc");
	const char *path;

	/* A non-PIE executable that takes malloc's address (python3, node)
	 * has a canonical PLT entry for it, which dlsym answers: it jumps to
	 * whoever defines malloc, us included. */
	if (!m || hp_unwind_is_own((uintptr_t)m) || !hp_os_is_definition(m))
		return NULL;
	path = hp_os_object_of(m);
	return path ? path : "another library";
}

/* HP_RARE_BYTES as the configuration's byte triggers say. Lock-free, no
 * allocation. */
static void rare_bytes(void)
{
	if (config.dump_every_bytes || config.high_water_bytes)
		rare_set(HP_RARE_BYTES);
	else
		rare_clear(HP_RARE_BYTES);
}

void hp_recorder_start(void)
{
	uint64_t start_ns = hp_os_now_ns();
	const char *shadow;
	enum hp_role role;
	int err;

	hp_config_load(&config);
	config.attached = hp_attach_starting();
	config.start_ns = start_ns;
	role = find_role();
	if (role == HP_ROLE_DESCENDANT && !config.follow_fork) {
		/* Started by a recorded process (posix_spawn runs no fork
		 * handler) without --follow-fork: not ours to record. */
		hp_os_unpreload("libheapprof.so");
		return;
	}
	hp_sampled = config.sample_rate_bytes > 1;
	hp_agg_set_sample_rate(config.sample_rate_bytes);
	err = hp_stacks_init(config.max_stacks);
	if (!err)
		err = hp_agg_init();
	if (!err)
		err = hp_live_init(hp_live_filter_shift_for(config.sample_rate_bytes));
	if (!err)
		err = hp_tags_init();
	if (!err)
		err = hp_modules_init(&config);
	if (err) {
		hp_log("cannot map memory for the recorder's tables; not recording");
		return;
	}
	if (config.mmap && hp_interpose_mmap_start() < 0)
		hp_log("no heap id left for the mmap heap; mappings are not recorded");
	hp_root_fill(); /* for a reader of a core dump (root.h) */
	if (hp_unwind_init(config.unwind, config.unwind_cache, config.unwind_check) < 0)
		hp_log("cannot find the recorder's own code; stacks will include its frames");
	shadow = config.attached ? NULL : malloc_owner(); /* attached: GOT entries, not order */
	if (shadow) {
		hp_log("%s defines malloc ahead of libheapprof.so (LD_PRELOAD order): no "
		       "allocation can be recorded; put libheapprof.so first",
		       shadow);
		config.shadowed = 1;
	}
	hp_modules_refresh(1);
	if (hp_writer_open(&config, role) < 0)
		return; /* the writer said why */
	hp_trigger_init(&config);
	hp_events_init(&config);
	hp_os_atfork(fork_prepare, fork_parent, fork_child);
	if (role == HP_ROLE_DESCENDANT)
		enlist();
	if (hp_sampled)
		rare_set(HP_RARE_SAMPLED);
	rare_bytes();
	set_state(HP_STATE_ACTIVE);
}

int hp_recorder_restart(void)
{
	struct hp_config old = config;

	hp_config_load(&config);
	config.start_ns = hp_os_now_ns();
	config.attached = 1;
	config.claimed_pid = old.claimed_pid ? old.claimed_pid : config.claimed_pid;
	if (config.sample_rate_bytes != old.sample_rate_bytes || config.unwind != old.unwind ||
	    config.max_depth != old.max_depth || config.max_stacks != old.max_stacks) {
		/* The live filter, the unwinder, the frame buffers and the
		 * stack table were set up for the first recording's. */
		char output[sizeof config.output];
		memcpy(output, config.output, sizeof output);
		config = old;
		memcpy(config.output, output, sizeof output);
		return -EINVAL;
	}
	hp_live_clear();
	hp_agg_zero();
	hp_modules_refresh(1);
	if (hp_writer_open(&config, find_role()) < 0)
		return -EIO;
	hp_trigger_init(&config);
	rare_bytes();
	set_state(HP_STATE_ACTIVE);
	return 0;
}

void hp_recorder_sandbox(int strict)
{
	if (__atomic_load_n(&hp_os_sandboxed, __ATOMIC_RELAXED))
		return;
	hp_self.forwarding++;
	if (hp_state == HP_STATE_ACTIVE && hp_writer_owned()) {
		/* What the recorder will need, opened while it still may. */
		hp_writer_ensure();
		(void)hp_os_rss_bytes(); /* the last RSS, kept for later samples */
		/* Strict mode leaves read, write and exit: not even the
		 * capture's pwrite. The last snapshot now, as if the program
		 * had asked for it (heapprof_dump), then nothing. */
		if (strict)
			hp_recorder_stop(HP_SNAP_API);
	}
	__atomic_store_n(&hp_os_sandboxed, 1, __ATOMIC_RELAXED);
	hp_self.forwarding--;
}

void hp_recorder_stop(unsigned reason)
{
	if (hp_state != HP_STATE_ACTIVE || !hp_writer_owned())
		return;
	hp_self.forwarding++;
	hp_unwind_report();
	hp_writer_snapshot(reason, 0, 0);
	set_state(HP_STATE_OFF);
	hp_trigger_stop();
	hp_writer_close();
	hp_self.forwarding--;
}
