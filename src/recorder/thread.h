/*
 * thread.h - the recorder's per-thread state, inlined into the fast path:
 * the recorder's one thread-local.
 *
 * Every field is thread-local and written only by its own thread (and by
 * signal handlers running on it, which is why the fast path re-reads
 * instead of caching). The static initial state is valid: a thread's first
 * allocation finds countdown_bytes = 0, takes the slow path, and the slow
 * path sets the rest up. Initial-exec TLS: no __tls_get_addr, no
 * allocation on first touch.
 */
#ifndef HP_RECORDER_THREAD_H
#define HP_RECORDER_THREAD_H

#include <stdint.h>

/* hp_thread.common when ready == 1 and origin_moved, busy and forwarding
 * are 0. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HP_THREAD_COMMON UINT64_C(1)
#else
#define HP_THREAD_COMMON (UINT64_C(1) << 48)
#endif

struct hp_thread {
	/* Bytes to allocate before the next sampled one, never negative: an
	 * allocation of size bytes stays on the fast path, and subtracts
	 * size, when 0 < size <= countdown_bytes (hp_fast_alloc); any other
	 * (size 0 too) takes the slow path. Always 0 in full mode. */
	int64_t countdown_bytes;
	/* countdown_bytes as the slow path left it after its last allocation,
	 * last_alloc: while both are unchanged, this thread has allocated
	 * nothing since (a fast-path allocation lowers the countdown, a slow
	 * one sets last_alloc), so freeing last_alloc makes it a temporary.
	 * The fast path stores nothing for it. */
	int64_t last_mark;
	/* The thread's rare states in one word, read by the slow paths'
	 * common case in one compare: common == HP_THREAD_COMMON while the
	 * thread is set up, its cached origin is current and it is neither
	 * busy nor forwarding (recorder.c, record_alloc_common). Each field
	 * is written on its own, as ever: the word is the fields. */
	union {
		struct {
			/* Non-zero once the slow path has set up the fields
			 * below (thread_start). */
			uint16_t ready;
			/* Non-zero while the origin cached in hp_attr_self
			 * (attr.h) may not be this thread's now: raised by
			 * a context push or pop, at the thread's start and
			 * in a fork child; lowered by hp_attr_origin when it
			 * caches heap 0's origin. While it is 0,
			 * hp_attr_self.origin is the origin, never 0, and the
			 * common case reads it without a test. */
			uint16_t origin_moved;
			/* Non-zero while this thread runs recorder code:
			 * nested allocations (from libunwind,
			 * dl_iterate_phdr, a signal handler) are passed
			 * through unrecorded. A nesting count. */
			uint16_t busy;
			/* Non-zero while an interposed C++ operator forwards
			 * to the real one (whose own malloc and free must not
			 * be recorded twice), and while the recorder itself
			 * calls libc functions that allocate (pthread_create,
			 * setenv, dlsym): such calls pass through unrecorded
			 * and uncounted. A nesting count. */
			uint16_t forwarding;
		};
		uint64_t common;
	};
	/* Slow paths left before this thread looks at the clock again
	 * (hp_trigger_tick: a countdown; 0 or 1 = at the next one), and the
	 * period it is set back to after a look, which adapts to how often
	 * this thread allocates (hp_trigger_tick_due): 1 while its looks are
	 * a time series' period or more apart, doubling up to the recorder's
	 * most while they come fast. The first slow path looks. */
	uint32_t ticks, every;
	uint64_t last_look_ns;
	/* The last block this thread's slow path saw allocated (see
	 * last_mark), complemented: a pointer to it here would make a leak
	 * look reachable to a scan of the memory (heapprof core, a leak
	 * checker). 0: none. */
	uintptr_t last_alloc;
	/* The stack this thread's last recorded allocation interned, and its
	 * hash: a walk with the same hash is compared with that stack's
	 * frames first, and when equal skips the table (a loop allocating at
	 * one site). 0: none yet. */
	uint32_t last_stack;
	uint64_t last_stack_hash;
	uint64_t rng;                   /* xorshift64* state for sampling */
	uintptr_t stack_lo, stack_hi;   /* for the frame-pointer walk */
	/* The common allocation's stack-room test in one compare (recorder.c,
	 * record_alloc_common): room_floor < sp <= stack_hi, that is sp -
	 * room_floor - 1 < room_span, when sp is on this thread's stack with
	 * HP_RECORD_STACK_BYTES or more below it; both 0 (no sp passes)
	 * while the bounds are unknown or the stack is smaller. */
	uintptr_t room_floor, room_span;
	/* Bytes allocated by this thread not yet added to the byte triggers'
	 * shared count (hp_trigger_allocated flushes them in chunks). */
	uint64_t unflushed_bytes;
	/* Births this thread counted but has not yet added to the shared
	 * clock of lifetimes (live.c, birth), in a threaded process. */
	uint32_t births_unadded;
	/* The thread's credit slot (aggregate.c) plus one; 0: none yet,
	 * UINT32_MAX: none from now on. */
	uint32_t credit_slot;
	/* Set while this thread looks up the real allocator with dlsym, whose
	 * own allocations the bootstrap buffer answers (interpose.c). */
	uint32_t resolving;
	/* The thread's DWARF rule cache (cfa_cache.c): NULL until its first
	 * DWARF walk maps it, (void *)1 once it has none (unmapped at the
	 * thread's exit, or could not be mapped); and the flush generation
	 * its contents belong to. */
	void *cfa_cache;
	uint32_t cfa_generation;
	/* The remembered walk (in cfa_cache) the thread's last DWARF walk was
	 * or filled, for hp_cfa_remember; NULL: none. */
	void *cfa_memo;
	/* The block whose free this thread has counted and the real free is
	 * running on (interpose.c, hp_free_slow), complemented as last_alloc
	 * is; 0: none. A fatal signal in between (glibc aborting on a damaged
	 * heap) finds it set: that free never happened, and the fatal
	 * snapshot (writer.c) and heapprof core (through heapprof_root) count
	 * the block in use. Its bucket, size, and how its free was counted
	 * (temporary, lifetime class) with it, written before it. */
	uintptr_t freeing;
	uint64_t freeing_size;
	uint32_t freeing_bucket;
	int8_t freeing_temp, freeing_life;
};

extern __thread struct hp_thread hp_self __attribute__((tls_model("initial-exec")));

#endif
