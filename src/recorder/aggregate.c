/*
 * aggregate.c - bucket counters, the global peak and lost counts (see
 * aggregate.h for the model and the at-peak bookkeeping).
 */
#include "aggregate.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "intern.h"
#include "live.h"
#include "os.h"
#include "root.h"
#include "sampler.h"
#include "spin.h"
#include "thread.h"

#define ORIGIN_MASK 0xffffffu
#define HEAP_SHIFT 24
_Static_assert(HP_AGG_MAX_HEAPS < 1u << (32 - HEAP_SHIFT), "heap ids fit a bucket's tag");

/* Keyed buckets are at most this many; later keys count as lost. With the
 * stacks' 2^21 default buckets, ids fill the live register's 22 bits. */
#define MAX_KEYED ((1u << 21) - 1)
#define MAX_BUCKETS (HP_AGG_KEYED_FIRST + MAX_KEYED)
_Static_assert(MAX_BUCKETS <= 1u << HP_LIVE_BUCKET_BITS, "bucket ids fit a live-register entry");

/* A bucket is 96 bytes in two parts: its head, the 64 bytes that every
 * allocation and free reads and writes (the lock, the tag, the epoch, the
 * four counters, the timeline's counts and the histograms' word), a cache
 * line of its own; and its tail, the counters of temporaries and at the
 * peak, which a free of a temporary and the first change after a new peak
 * write. A chunk holds its buckets' heads, then their tails (at a 96-byte
 * stride, every other bucket's 64 bytes would cross a line). root.h
 * describes both groups of counters. */
struct bucket {
	struct hp_spin lock;
	/* Two fields in one atomic word (the struct keeps its size):
	 * bits 0..23, in a stack's default bucket (id stack + 1), the origin
	 * it counts for, claimed by the first allocation at that stack (a CAS
	 * from 0), so that a program with one thread and no contexts never
	 * looks a bucket up (other origins get keyed buckets; 0 in keyed
	 * buckets); bits 24..31 the custom heap of the bucket's blocks (0:
	 * malloc's), whose peak epoch its at-peak values follow, set by its
	 * first count (a bucket never mixes heaps: the heap is in its origin). */
	uint32_t tag;
	uint64_t epoch; /* peak epoch at the last change; under lock */
	/* Counters: written under lock with relaxed atomic stores so that the
	 * writer may read them without the lock. */
	uint64_t alloc_count, alloc_bytes, free_count, free_bytes;
	/* The per-site timeline (hp_agg_take_change): changes counts the
	 * bucket's changes, stored with release after its counters, under
	 * lock. */
	uint32_t changes;
	/* The value of changes at the last timeline entry written, written
	 * and read by the writer only, under its lock. A bucket has changed
	 * since its last entry when the two differ (a wrap needs 2^32 changes
	 * between two ticks). */
	uint32_t taken;
	/* The histograms (hp_rec_hist), sparse ("Histograms" below): the
	 * allocations by size class and the frees by lifetime class, inline
	 * while the bucket has one class of each, else the address of its
	 * spill. Under lock, atomic stores. */
	uint64_t hist;
};
struct bucket_tail {
	uint64_t temp_count, temp_bytes, peak_count, peak_bytes; /* as the counters */
};
_Static_assert(sizeof(struct bucket) == 64, "a bucket's head is a cache line");
_Static_assert(sizeof(struct bucket_tail) == 32, "a bucket is 96 bytes");
_Static_assert(offsetof(struct bucket, free_bytes) == offsetof(struct bucket, alloc_count) + 24,
	       "each group of counters is four words in a row (root.h)");

/* Histograms. Most stacks allocate one size class and free in one
 * lifetime class, so a bucket keeps its histograms in one word (hist)
 * while it has one class of each, and moves them to a spill (an entry of
 * a side table: every class of both) on a second class of either:
 *
 * Even: inline, 0 when no class yet (every class 0); bits 1..5 the size
 * class + 1 (0: none), bits 6..10 the lifetime class + 1 (0: none), bits
 * 32..63 the lifetime class's count (u32, wrapping as a spill's class
 * does). The size class's count
 * is alloc_count (u32): each change of alloc_count (an allocation, a
 * move, a zero) changes one size class by the same amount, so the
 * classes always sum to alloc_count modulo 2^32. Frees of no known
 * lifetime count in no class, so the lifetime class needs a count.
 * Odd (HIST_SPILLED): the address of the bucket's spill, plus 1 (so that
 * a spilled bucket's count is one test, and its add takes the 1 off in
 * its displacement).
 *
 * A spill is taken under the bucket's lock, filled with the bucket's
 * inline classes, and its address published with a release store, so a
 * reader without the lock (hp_agg_hist, in a signal handler too) finds
 * either the inline classes or a complete spill; a spilled bucket counts
 * a class with one add through the address. Spills are never given back
 * (hp_agg_zero zeroes them in place). When a spill's memory cannot be
 * mapped, the bucket keeps its inline classes and counts the new class's
 * allocations or frees in them: its histograms alone are then off, never
 * its counters. */
#define HIST_SPILLED 1u
#define HIST_SIZE_SHIFT 1
#define HIST_LIFE_SHIFT 6
#define HIST_CLASS_MASK 31u
#define HIST_COUNT_SHIFT 32
_Static_assert(HP_HIST_SIZE_CLASSES < HIST_CLASS_MASK && HP_HIST_LIFE_CLASSES < HIST_CLASS_MASK,
	       "a class + 1 fits its bits");

struct spill {
	uint32_t size[HP_HIST_SIZE_CLASSES];
	uint32_t life[HP_HIST_LIFE_CLASSES];
	uint32_t pad; /* 8-byte aligned: an address is even */
};
_Static_assert(sizeof(struct spill) % 8 == 0, "spills are 8-byte aligned");

/* The spill of a spilled histogram word w. */
static inline struct spill *spill_of(uint64_t w)
{
	return (struct spill *)(uintptr_t)(w - HIST_SPILLED);
}

/* Buckets live in chunks of 4096 (384 KiB: 256 KiB of heads, then 128
 * KiB of tails), each mapped when a bucket in
 * it is first handed out: mapping the whole table (3 Mi buckets, 288 MiB)
 * up front would take that much of a program's address-space limit. A
 * chunk is published with a release store and read with an acquire load,
 * so a reader sees either no chunk or a zeroed, complete one; a bucket id
 * is only handed out once its chunk exists, so the counting paths (which
 * get ids from hp_agg_bucket or the live register) always find it. */
#define CHUNK_BITS 12
#define CHUNK_BUCKETS (1u << CHUNK_BITS)
#define CHUNKS ((MAX_BUCKETS + CHUNK_BUCKETS - 1) / CHUNK_BUCKETS)

/* The key table (set up at init; see intern.h for its locking) and the
 * counters, indexed by the same id. chunks[i]: written once, under
 * chunks_lock, with release; read by anyone with acquire. */
static struct hp_intern keys;
static struct bucket *chunks[CHUNKS];
static struct hp_spin chunks_lock;

/* The spills (above, "Histograms"): handed out in order from chunks of
 * SPILL_CHUNK, each mapped when the last is used up, under spills.lock
 * (taken under a bucket's lock). A bucket takes at most one; the chunks
 * are never unmapped. */
#define SPILL_CHUNK 1024u
static struct {
	struct hp_spin lock;
	struct spill *next, *end; /* what is left of the chunk in use */
	uint64_t taken;           /* spills handed out */
} spills;

/* A new spill, zeroed; NULL when its chunk cannot be mapped. Call under
 * the taking bucket's lock. Takes spills.lock and may call mmap. No
 * allocation. */
static __attribute__((noinline, cold)) struct spill *spill_take(void)
{
	struct spill *e = NULL;

	hp_spin_lock(&spills.lock);
	if (spills.next == spills.end) {
		struct spill *c = hp_os_map(SPILL_CHUNK * sizeof *c);
		if (c) {
			spills.next = c;
			spills.end = c + SPILL_CHUNK;
		}
	}
	if (spills.next != spills.end) {
		e = spills.next++;
		__atomic_store_n(&spills.taken, spills.taken + 1, __ATOMIC_RELAXED);
	}
	hp_spin_unlock(&spills.lock);
	return e;
}

/* The sampling rate, for the weights (1 = full recording). Written once
 * by hp_agg_set_sample_rate before recording starts; read-only after. */
static uint64_t sample_rate_bytes = 1;

/* Bytes in use over all buckets (raw: sampled blocks only, at their size)
 * and their estimate (each block at its unbiased weight, hp_sampler_weight;
 * sampled mode only, the raw value is the estimate in a full recording).
 * The peak is the largest estimate (peak.weight), peak.bytes the raw bytes
 * in use at that moment (docs/internals/sampling.md, "The peak"). Atomics,
 * any thread. The epoch moves after every new peak; peak.time_ns and
 * peak.bytes go with it. Each group has a cache line of its own: every
 * allocation and free of a threaded program writes in_use, every one
 * reads peak, and the bucket chunks' pointers are read as often (on
 * in_use's line, each of those reads would fetch the line from the core
 * that last wrote in_use). */
static struct __attribute__((aligned(64))) {
	uint64_t bytes, weight;
} in_use;
static struct __attribute__((aligned(64))) {
	uint64_t weight, bytes, epoch, time_ns;
} peak = {.epoch = 1};

/* Credit: how a full recording of a threaded program counts most
 * allocations and frees without a locked add on in_use.bytes, whose line
 * every core would otherwise take in turn, and still finds the exact peak
 * (docs/internals/recorder.md, "Bytes in use on many threads").
 *
 * A thread holds credit: bytes counted in in_use.bytes but not allocated.
 * An allocation of size bytes that its credit covers takes them from the
 * credit (a CAS on the thread's own line) and a free gives its bytes to
 * the credit, neither touching in_use.bytes; so in_use.bytes is the bytes
 * in use plus every thread's credit, never less than the bytes in use.
 * Credit is handed out (a grant, under credit.lock) only while
 * in_use.bytes plus the grant stays at or below the peak, so no
 * allocation from credit can make a new peak: while credit exists
 * ("far" from the peak), in_use.bytes never passes the peak. An
 * allocation credit cannot cover and that would pass the peak if granted
 * turns the process "near": under the lock, turn.near is set and every
 * thread's credit is taken back (an exchange of each slot, subtracted from
 * in_use.bytes), after which every count goes to in_use.bytes as on one
 * thread and the peak is found exactly as there. A free whose bytes went
 * to a credit just taken back sees near set (its add and the taker's
 * exchange are both locked instructions: one sees the other) and takes
 * them back itself. The process turns far again when a free leaves the
 * bytes in use CREDIT_FAR below the peak. One thread, or a sampled
 * recording (whose slow paths are rare): in_use.bytes alone, no credit.
 *
 * Slots: one cache line each, claimed by a thread's first count in a
 * threaded process and given back at its exit (a pthread key's
 * destructor, which returns the credit); a thread without one (more than
 * CREDIT_SLOTS at once, or after its destructor ran) counts on
 * in_use.bytes, taking credit.lock while far. */
#define CREDIT_SLOTS 256u
#define CREDIT_GRANT (2u << 10) /* bytes of credit a grant gives */
#define CREDIT_KEEP (4u << 10)  /* credit above this goes back */
#define CREDIT_FAR (16u << 10)  /* bytes below the peak to turn far */
#define SLOT_NONE UINT32_MAX     /* hp_thread.credit_slot: never again */

static struct __attribute__((aligned(64))) credit_slot {
	uint64_t credit; /* atomics: the owner's CAS and add, anyone's exchange */
	uint32_t owned;  /* claimed by a thread (CAS), given back at its exit */
} slots[CREDIT_SLOTS];

static struct __attribute__((aligned(64))) {
	struct hp_spin lock; /* grants, turning near or far */
	uint32_t slots_seen; /* slots claimed at least once: 0..seen-1 */
	uint32_t have_key;
	unsigned key;    /* the destructor's pthread key */
} credit;

/* Near or far, on a line apart from credit.lock: every free of a threaded
 * full recording reads near, and every grant (about one allocation in a
 * hundred on churn, from any thread) writes the lock; on one line, each
 * grant would take the line from every core that frees. Written only
 * when the process turns. */
static struct __attribute__((aligned(64))) {
	uint32_t near;      /* 1: no credit anywhere (and at start); 2: turning near */
	uint64_t far_turns; /* times the process turned far */
} turn = {.near = 1};

/* Each custom heap's own figures (index 0 unused: malloc's are the
 * globals above): bytes and blocks in use, the peak of the bytes (raw,
 * sampled blocks only in a sampled recording) with the blocks in use and
 * the time at that moment, its epoch (the at-peak scheme above, per
 * heap), and its resets. Atomics, any thread. */
static struct heap_stat {
	uint64_t in_use_bytes, in_use_count;
	uint64_t peak_bytes, peak_count, peak_time_ns;
	uint64_t epoch, resets;
} heaps[HP_AGG_MAX_HEAPS + 1];

/* Lost allocations per reason: atomics, any thread or signal handler. */
static uint64_t lost_count[HP_LOST_KINDS];
static uint64_t lost_bytes[HP_LOST_KINDS];

/* in_use.bytes or .weight += delta (a two's-complement delta
 * subtracts), returning the new value: a plain load and store while the
 * process has one thread (no locked instruction; this thread's signal
 * handlers never count a block while it is inside the recorder: they see
 * t->busy and count it lost), an atomic add otherwise; alone is
 * hp_os_single_threaded(), read once by the caller. */
static inline uint64_t in_use_add(uint64_t *v, uint64_t delta, int alone)
{
	if (alone) {
		uint64_t n = __atomic_load_n(v, __ATOMIC_RELAXED) + delta;
		__atomic_store_n(v, n, __ATOMIC_RELAXED);
		return n;
	}
	return __atomic_add_fetch(v, delta, __ATOMIC_ACQ_REL);
}

#define SEQ __ATOMIC_SEQ_CST

/* The credit's race windows, named for the unit tests, which pause a
 * thread in one to play a race out step by step (test_rec_aggregate);
 * nothing in libheapprof. */
#ifdef HP_OS_MUTABLE
void (*hp_agg_pause)(int window);
#define PAUSE(window)                                                          \
	do {                                                                   \
		if (hp_agg_pause)                                              \
			hp_agg_pause(window);                                  \
	} while (0)
#else
#define PAUSE(window) ((void)0)
#endif

/* Gives the calling thread a slot; NULL when none is free or the
 * destructor's key could not be made (it counts on in_use.bytes). A CAS
 * per slot tried; hp_os_thread_key_set (forwarded: glibc allocates nothing
 * for a low key, os.h). Not async-signal-safe. */
static __attribute__((noinline, cold)) struct credit_slot *claim_slot(void)
{
	struct hp_thread *t = &hp_self;
	int saved_errno = errno; /* a free's slow path does not save it */

	for (uint32_t i = 0; credit.have_key && i < CREDIT_SLOTS; i++) {
		uint32_t none = 0, seen;
		int r;

		if (__atomic_load_n(&slots[i].owned, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&slots[i].owned, &none, 1, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		t->forwarding++;
		r = hp_os_thread_key_set(credit.key, &slots[i]);
		t->forwarding--;
		if (r < 0) {
			__atomic_store_n(&slots[i].owned, 0, __ATOMIC_RELEASE);
			break;
		}
		/* seq_cst, as the slot's counts after it: a turn near that
		 * reads slots_seen after its exchange of near sees this slot
		 * or the slot's first free sees near (take_back_all). */
		seen = __atomic_load_n(&credit.slots_seen, SEQ);
		while (seen <= i && !__atomic_compare_exchange_n(&credit.slots_seen, &seen, i + 1, 0,
								 SEQ, SEQ))
			;
		t->credit_slot = i + 1;
		errno = saved_errno;
		return &slots[i];
	}
	t->credit_slot = SLOT_NONE;
	errno = saved_errno;
	return NULL;
}

/* The calling thread's slot, or NULL. */
static inline struct credit_slot *my_slot(void)
{
	uint32_t i = hp_self.credit_slot;

	if (__builtin_expect(i - 1 < CREDIT_SLOTS, 1))
		return &slots[i - 1];
	return i ? NULL : claim_slot();
}

/* The key's destructor at a thread's exit: its credit back, its slot
 * free; the thread's later counts (other destructors') go to in_use. The
 * thread lets go of the slot before taking its credit back, with a signal
 * fence between: a signal handler's count on this thread, at any
 * instruction here, goes either to the slot before its credit is taken
 * back or to in_use, never to a slot given up. Async-signal-safe; no
 * allocation, no lock. */
static void slot_exit(void *arg)
{
	struct credit_slot *sl = arg;
	uint64_t x;

	hp_self.credit_slot = SLOT_NONE;
	__atomic_signal_fence(SEQ);
	x = __atomic_exchange_n(&sl->credit, 0, SEQ);
	if (x)
		__atomic_sub_fetch(&in_use.bytes, x, SEQ);
	__atomic_store_n(&sl->owned, 0, __ATOMIC_RELEASE);
}

/* Takes every slot's credit back into in_use.bytes. A slot read as empty
 * after near was set is skipped: a free adding to it later sees near
 * (both sides' locked instructions order their stores before their
 * loads). */
static void take_back_all(void)
{
	uint32_t n = __atomic_load_n(&credit.slots_seen, SEQ);
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		if (__atomic_load_n(&slots[i].credit, SEQ))
			sum += __atomic_exchange_n(&slots[i].credit, 0, SEQ);
	if (sum)
		__atomic_sub_fetch(&in_use.bytes, sum, SEQ);
}

/* Under credit.lock: no credit anywhere from now until the next turn far.
 * near is 2 while the credit is being taken back, 1 once it is: an
 * allocation that reads 2 waits for the lock (grant), and only 1 tells a
 * new peak that no credit is in the counter (new_peak; with 1 set first,
 * a peak found meanwhile would count credit not yet taken back). Frees
 * take any non-zero near as near. */
static void turn_near(void)
{
	__atomic_exchange_n(&turn.near, 2, SEQ);
	PAUSE(HP_AGG_PAUSE_TURNING);
	take_back_all();
	__atomic_store_n(&turn.near, 1, SEQ);
}

/* Credit for an allocation of size bytes (with CREDIT_GRANT more for a
 * thread with a slot) when in_use.bytes stays at or below the peak with
 * it; else turns the process near. Returns 1 when granted (size counted).
 * Takes credit.lock. */
static __attribute__((noinline)) int grant(struct credit_slot *sl, uint64_t size)
{
	int granted = 0;

	hp_spin_lock(&credit.lock);
	if (!turn.near) {
		uint64_t more = sl ? CREDIT_GRANT : 0;
		uint64_t cur = __atomic_load_n(&in_use.bytes, SEQ);
		uint64_t top = __atomic_load_n(&peak.weight, __ATOMIC_RELAXED);

		/* A compare-and-swap, not a test then an add: a thread that
		 * read near before the last turn far adds without the lock,
		 * and a grant tested before that add and made after it would
		 * pass the peak unseen (the late add, had it come second,
		 * sees the total and finds the peak under the lock). */
		for (;;) {
			if (cur + size + more > top) {
				turn_near();
				break;
			}
			PAUSE(HP_AGG_PAUSE_GRANTING);
			if (__atomic_compare_exchange_n(&in_use.bytes, &cur, cur + size + more, 0, SEQ,
							SEQ)) {
				if (more)
					__atomic_add_fetch(&sl->credit, more, SEQ);
				granted = 1;
				break;
			}
		}
	}
	hp_spin_unlock(&credit.lock);
	return granted;
}

/* A new peak of now bytes in use: the peak moves, with its time and
 * epoch. Lock-free (a CAS). */
static void peak_moves(uint64_t now, uint64_t raw)
{
	uint64_t top = __atomic_load_n(&peak.weight, __ATOMIC_RELAXED);

	while (now > top) {
		if (__atomic_compare_exchange_n(&peak.weight, &top, now, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&peak.bytes, raw, __ATOMIC_RELAXED);
			__atomic_store_n(&peak.time_ns, hp_os_now_ns(), __ATOMIC_RELAXED);
			__atomic_add_fetch(&peak.epoch, 1, __ATOMIC_RELEASE);
			break;
		}
	}
}

/* in_use.bytes passed the peak (now, after an add made while the process
 * was near, whose far turns were turns before it). When it is still near
 * and has not turned far since, no credit existed at the add: now is
 * bytes in use, and the peak moves lock-free (a program growing on many
 * threads, every allocation a new peak, takes no lock). Else, under
 * credit.lock, with every credit taken back, so that the peak is bytes in
 * use and not credit: when the process turned far since (a straggler's
 * add, read near before the turn), now may hold credit granted meanwhile,
 * and in_use.bytes is read again, exact with the credit back. */
static __attribute__((noinline)) void new_peak(uint64_t now, uint64_t turns)
{
	if (__atomic_load_n(&turn.near, SEQ) == 1 &&
	    __atomic_load_n(&turn.far_turns, SEQ) == turns) {
		peak_moves(now, now);
		return;
	}
	hp_spin_lock(&credit.lock);
	if (!turn.near)
		turn_near();
	if (__atomic_load_n(&turn.far_turns, __ATOMIC_RELAXED) != turns)
		now = __atomic_load_n(&in_use.bytes, SEQ);
	peak_moves(now, now);
	hp_spin_unlock(&credit.lock);
}

/* Counts size bytes allocated in a full recording of a threaded process:
 * from the thread's credit, a grant, or in_use.bytes (and then the peak).
 * Lock-free but for a grant, a turn or a new peak (credit.lock). */
static inline void count_alloc_threaded(uint64_t size)
{
	struct credit_slot *sl = my_slot();

	if (sl) {
		uint64_t c = __atomic_load_n(&sl->credit, __ATOMIC_RELAXED);
		if (size <= c && __atomic_compare_exchange_n(&sl->credit, &c, c - size, 0, SEQ,
							     __ATOMIC_RELAXED))
			return;
	}
	for (;;) {
		uint64_t turns = __atomic_load_n(&turn.far_turns, SEQ), now;

		if (__atomic_load_n(&turn.near, SEQ) != 1) { /* far, or turning near */
			if (grant(sl, size))
				return;
			continue; /* near now */
		}
		PAUSE(HP_AGG_PAUSE_ADDING);
		now = __atomic_add_fetch(&in_use.bytes, size, SEQ);
		if (now > __atomic_load_n(&peak.weight, __ATOMIC_RELAXED))
			new_peak(now, turns);
		return;
	}
}

/* Under credit.lock: far again (credit may be granted) when the bytes in
 * use are CREDIT_FAR below the peak. */
static __attribute__((noinline)) void turn_far(void)
{
	hp_spin_lock(&credit.lock);
	if (turn.near && __atomic_load_n(&in_use.bytes, SEQ) + CREDIT_FAR <=
				   __atomic_load_n(&peak.weight, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&turn.far_turns, 1, SEQ);
		__atomic_store_n(&turn.near, 0, SEQ);
	}
	hp_spin_unlock(&credit.lock);
}

/* Counts size bytes freed, as count_alloc_threaded. */
static inline void count_free_threaded(uint64_t size)
{
	struct credit_slot *sl = my_slot();
	uint64_t now;

	if (sl && !__atomic_load_n(&turn.near, __ATOMIC_RELAXED)) {
		uint64_t c = __atomic_add_fetch(&sl->credit, size, SEQ);

		if (__atomic_load_n(&turn.near, SEQ)) {
			/* Taken back before this add, or about to be: back now. */
			c = __atomic_exchange_n(&sl->credit, 0, SEQ);
			if (c)
				__atomic_sub_fetch(&in_use.bytes, c, SEQ);
		} else if (c > CREDIT_KEEP &&
			   __atomic_compare_exchange_n(&sl->credit, &c, CREDIT_GRANT, 0, SEQ,
						       __ATOMIC_RELAXED)) {
			__atomic_sub_fetch(&in_use.bytes, c - CREDIT_GRANT, SEQ);
		}
		return;
	}
	now = __atomic_sub_fetch(&in_use.bytes, size, SEQ);
	if (sl && now + CREDIT_FAR <= __atomic_load_n(&peak.weight, __ATOMIC_RELAXED))
		turn_far();
}

/* The credit held now, summed over the slots (a reader's estimate while
 * threads count). Lock-free. */
static uint64_t credit_held(void)
{
	uint32_t n = __atomic_load_n(&credit.slots_seen, __ATOMIC_ACQUIRE);
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++)
		sum += __atomic_load_n(&slots[i].credit, __ATOMIC_RELAXED);
	return sum;
}

/* Every credit back, the process near (a new recording, a fork child); in
 * a fork child (child) the slots of the threads that did not follow are
 * free again. Takes credit.lock. */
static void credit_reset(int child)
{
	hp_spin_lock(&credit.lock);
	turn_near();
	if (child)
		for (uint32_t i = 0; i < CREDIT_SLOTS; i++)
			if (i + 1 != hp_self.credit_slot)
				__atomic_store_n(&slots[i].owned, 0, __ATOMIC_RELEASE);
	hp_spin_unlock(&credit.lock);
}

int hp_agg_init(void)
{
	credit.have_key = hp_os_thread_key_create(&credit.key, slot_exit) == 0;
	for (unsigned i = 0; i <= HP_AGG_MAX_HEAPS; i++)
		heaps[i] = (struct heap_stat){.epoch = 1};
	return hp_intern_init(&keys, MAX_KEYED, 3 * (uint64_t)MAX_KEYED);
}

/* The chunk holding bucket id, or NULL when none is mapped yet. */
static inline struct bucket *chunk_of(uint32_t id)
{
	return __atomic_load_n(&chunks[id >> CHUNK_BITS], __ATOMIC_ACQUIRE);
}

/* Bucket id, whose chunk exists. */
static inline struct bucket *bucket_at(uint32_t id)
{
	return chunk_of(id) + (id & (CHUNK_BUCKETS - 1));
}

/* Bucket id's tail, whose chunk exists. */
static inline struct bucket_tail *tail_at(uint32_t id)
{
	return (struct bucket_tail *)(chunk_of(id) + CHUNK_BUCKETS) + (id & (CHUNK_BUCKETS - 1));
}

/* tail_at(id) for b = bucket_at(id), from b's address (the chunk's
 * pointer not read again): b's chunk starts id's index heads before b. */
static inline struct bucket_tail *tail_of(struct bucket *b, uint32_t id)
{
	uint32_t i = id & (CHUNK_BUCKETS - 1);

	return (struct bucket_tail *)((char *)(b - i + CHUNK_BUCKETS) + i * sizeof(struct bucket_tail));
}

/* Maps the chunk of bucket id if no thread has yet. Returns whether it
 * exists now. Takes chunks_lock; calls mmap. */
static __attribute__((noinline, cold)) int map_chunk(uint32_t id)
{
	struct bucket **slot = &chunks[id >> CHUNK_BITS];
	struct bucket *c;

	hp_spin_lock(&chunks_lock);
	c = *slot;
	if (!c) {
		c = hp_os_map(CHUNK_BUCKETS * (sizeof *c + sizeof(struct bucket_tail)));
		/* Past the first chunk, a program with many stacks: each
		 * bucket is read before it is written (hp_agg_bucket's claim),
		 * and the chunk fills (hp_os_populate). */
		if (c && id >= CHUNK_BUCKETS)
			hp_os_populate(c, CHUNK_BUCKETS * (sizeof *c + sizeof(struct bucket_tail)));
		if (c)
			__atomic_store_n(slot, c, __ATOMIC_RELEASE);
	}
	hp_spin_unlock(&chunks_lock);
	return c != NULL;
}

void hp_agg_set_sample_rate(uint64_t rate_bytes)
{
	sample_rate_bytes = rate_bytes ? rate_bytes : 1;
}

uint32_t hp_agg_bucket(uint32_t stack_id, uint32_t type_tag, uint32_t origin_tag, uint64_t size)
{
	uint64_t key[3] = {stack_id, (uint64_t)type_tag << 32 | origin_tag, size};
	uint32_t id;

	if (!type_tag && !size) {
		/* The stack's default bucket, when its origin is this one or
		 * none yet (claimed now). */
		id = stack_id + 1;
		if (chunk_of(id) || map_chunk(id)) {
			uint32_t *o = &bucket_at(id)->tag, seen = __atomic_load_n(o, __ATOMIC_ACQUIRE);
			if ((seen & ORIGIN_MASK) == origin_tag ||
			    (!seen && (__atomic_compare_exchange_n(o, &seen, origin_tag, 0,
								   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||
				       (seen & ORIGIN_MASK) == origin_tag)))
				return id;
		} else if (!origin_tag) {
			return 0;
		}
	}
	id = hp_intern_put(&keys, key, 3);
	if (!id)
		return 0;
	id = HP_AGG_KEYED_FIRST + id - 1;
	return chunk_of(id) || map_chunk(id) ? id : 0;
}

#define SET(field, value) __atomic_store_n(&(field), (value), __ATOMIC_RELAXED)
#define GET(field) __atomic_load_n(&(field), __ATOMIC_RELAXED)

/* Before a change: on the first change since the peak moved, the current
 * in-use value is the bucket's value at that peak. Under the bucket lock. */
/* The heap of b's blocks. */
static inline uint32_t heap_of(const struct bucket *b)
{
	return __atomic_load_n(&b->tag, __ATOMIC_RELAXED) >> HEAP_SHIFT;
}

/* Marks b as heap's, if not yet. */
static inline void set_heap(struct bucket *b, uint32_t heap)
{
	if (heap && heap_of(b) != heap)
		__atomic_or_fetch(&b->tag, heap << HEAP_SHIFT, __ATOMIC_RELAXED);
}

static inline uint64_t *epoch_of(uint32_t heap)
{
	return heap ? &heaps[heap].epoch : &peak.epoch;
}

/* After a change, before the unlock: the timeline sees it. Under the
 * bucket lock (one writer), so a plain add; release, so that a reader that
 * sees the new count sees the counters it counts. */
static inline void touched(struct bucket *b)
{
	__atomic_store_n(&b->changes, b->changes + 1, __ATOMIC_RELEASE);
}

static inline __attribute__((always_inline)) void catch_up_to(struct bucket *b, uint32_t id,
							      uint64_t epoch)
{
	if (b->epoch != epoch) {
		struct bucket_tail *t = tail_of(b, id);
		SET(t->peak_count, b->alloc_count - b->free_count);
		SET(t->peak_bytes, b->alloc_bytes - b->free_bytes);
		SET(b->epoch, epoch);
	}
}

static inline __attribute__((always_inline)) void catch_up(struct bucket *b, uint32_t id)
{
	catch_up_to(b, id, __atomic_load_n(epoch_of(heap_of(b)), __ATOMIC_ACQUIRE));
}

/* catch_up for a bucket of malloc's blocks (heap 0: every bucket that
 * hp_agg_alloc and hp_agg_free count), without reading its tag. */
static inline __attribute__((always_inline)) void catch_up_malloc(struct bucket *b, uint32_t id)
{
	catch_up_to(b, id, __atomic_load_n(&peak.epoch, __ATOMIC_ACQUIRE));
}

/* Moves b's inline classes (w) to a spill and counts there from now
 * on; 0, or -ENOMEM when no spill can be mapped (nothing changed).
 * Under b's lock. */
static int spill(struct bucket *b, uint64_t w)
{
	struct spill *e = spill_take();
	unsigned sc = w >> HIST_SIZE_SHIFT & HIST_CLASS_MASK;
	unsigned lc = w >> HIST_LIFE_SHIFT & HIST_CLASS_MASK;

	if (!e)
		return -ENOMEM;
	if (sc)
		e->size[sc - 1] = (uint32_t)b->alloc_count;
	if (lc)
		e->life[lc - 1] = (uint32_t)(w >> HIST_COUNT_SHIFT);
	__atomic_store_n(&b->hist, (uint64_t)(uintptr_t)e + HIST_SPILLED, __ATOMIC_RELEASE);
	return 0;
}

/* size_count's slow path: the bucket's first size class, or its second
 * (a spill; on no memory the bucket keeps its one class, which
 * alloc_count counts). Under b's lock. */
static __attribute__((noinline, cold)) void size_slow(struct bucket *b, unsigned c,
						      uint32_t delta)
{
	uint64_t w = b->hist;
	struct spill *e;

	if (!(w >> HIST_SIZE_SHIFT & HIST_CLASS_MASK)) {
		/* no size class yet: every one is 0, and so is alloc_count */
		SET(b->hist, w | (uint64_t)(c + 1) << HIST_SIZE_SHIFT);
		return;
	}
	if (spill(b, w) < 0)
		return;
	e = spill_of(b->hist);
	SET(e->size[c], e->size[c] + delta);
}

/* Size class c of bucket b changes by delta (1, or -1 as a u32): before
 * alloc_count changes by the same. Under b's lock. */
static inline __attribute__((always_inline)) void size_count(struct bucket *b, unsigned c,
							     uint32_t delta)
{
	uint64_t w = b->hist;

	if (w & HIST_SPILLED) {
		struct spill *e = spill_of(w);
		SET(e->size[c], e->size[c] + delta);
	} else if (__builtin_expect((w >> HIST_SIZE_SHIFT & HIST_CLASS_MASK) != c + 1, 0)) {
		size_slow(b, c, delta);
	} /* else the one class, which alloc_count counts */
}

/* life_count's slow path: the bucket's first lifetime class, or its
 * second (a spill; on no memory its one class counts the free). Under b's
 * lock. */
static __attribute__((noinline, cold)) void life_slow(struct bucket *b, unsigned c)
{
	uint64_t w = b->hist;
	struct spill *e;

	if (!(w >> HIST_LIFE_SHIFT & HIST_CLASS_MASK)) {
		/* no lifetime class yet: its count is 0 */
		SET(b->hist, w | (uint64_t)(c + 1) << HIST_LIFE_SHIFT | (uint64_t)1 << HIST_COUNT_SHIFT);
		return;
	}
	if (spill(b, w) < 0) {
		SET(b->hist, w + ((uint64_t)1 << HIST_COUNT_SHIFT));
		return;
	}
	e = spill_of(b->hist);
	SET(e->life[c], e->life[c] + 1);
}

/* A free of lifetime class c in bucket b. Under b's lock. */
static inline __attribute__((always_inline)) void life_count(struct bucket *b, unsigned c)
{
	uint64_t w = b->hist;

	if (w & HIST_SPILLED) {
		struct spill *e = spill_of(w);
		SET(e->life[c], e->life[c] + 1);
	} else if (__builtin_expect((w >> HIST_LIFE_SHIFT & HIST_CLASS_MASK) == c + 1, 1)) {
		SET(b->hist, w + ((uint64_t)1 << HIST_COUNT_SHIFT));
	} else {
		life_slow(b, c);
	}
}

/* hp_agg_alloc's body for bucket id at b (bucket_at(id): the common
 * allocation path remembers it with the walk), for a caller that has
 * read the thread count (alone: hp_os_single_threaded(), read once for
 * the register and the bucket: no thread starts in between) and knows
 * whether the recording is a full one (full 1; 0: unknown, the rate is
 * read): record_path.c's allocation path inlines it. Properties of
 * hp_agg_alloc. */
static inline __attribute__((always_inline)) void agg_alloc_at(struct bucket *b, uint32_t id,
							       uint64_t size, int alone, int full)
{
	/* Read once (the atomics below keep the compiler from reading it
	 * once for us): the rate is set before recording starts. */
	uint64_t rate = full ? 1 : sample_rate_bytes, raw, now;

	hp_spin_lock_busy_as(&b->lock, alone);
	catch_up_malloc(b, id);
	size_count(b, hp_hist_size_class(size), 1);
	SET(b->alloc_count, b->alloc_count + 1);
	SET(b->alloc_bytes, b->alloc_bytes + size);
	touched(b);
	hp_spin_unlock(&b->lock);

	if (rate == 1) { /* a full recording: the bytes in use are the estimate */
		if (!alone) {
			count_alloc_threaded(size);
			return;
		}
		now = in_use_add(&in_use.bytes, size, 1);
		if (now > __atomic_load_n(&peak.weight, __ATOMIC_RELAXED))
			peak_moves(now, now);
		return;
	}
	/* The peak is found on the estimate, not on the raw bytes: raw bytes
	 * over-weight big blocks, which are sampled nearly always, against
	 * small ones, which stand for up to rate bytes each. */
	raw = in_use_add(&in_use.bytes, size, alone);
	now = in_use_add(&in_use.weight, hp_sampler_weight(size, rate), alone);
	if (now > __atomic_load_n(&peak.weight, __ATOMIC_RELAXED))
		peak_moves(now, raw);
}

/* agg_alloc_at for bucket id (0: none, nothing counted). */
static inline __attribute__((always_inline)) void agg_alloc_as(uint32_t id, uint64_t size,
							       int alone, int full)
{
	if (id)
		agg_alloc_at(bucket_at(id), id, size, alone, full);
}

/* hp_agg_alloc's body for any caller (no thread starts in here). */
static inline __attribute__((always_inline)) void agg_alloc(uint32_t id, uint64_t size)
{
	agg_alloc_as(id, size, hp_os_single_threaded(), 0);
}

void hp_agg_alloc(uint32_t id, uint64_t size)
{
	agg_alloc(id, size);
}

/* hp_agg_free's body, for a caller that has read the thread count
 * (alone) and may know the recording full (full), as for agg_alloc_as:
 * record_path.c's free path inlines it. Properties of hp_agg_free. */
static inline __attribute__((always_inline)) void agg_free_as(uint32_t id, uint64_t size,
							      int temporary, int life_class,
							      int alone, int full)
{
	uint64_t rate = full ? 1 : sample_rate_bytes; /* as in agg_alloc_as */
	struct bucket *b;

	if (!id)
		return;
	b = bucket_at(id);
	hp_spin_lock_busy_as(&b->lock, alone);
	catch_up_malloc(b, id);
	SET(b->free_count, b->free_count + 1);
	SET(b->free_bytes, b->free_bytes + size);
	if (temporary) {
		struct bucket_tail *t = tail_of(b, id);
		SET(t->temp_count, t->temp_count + 1);
		SET(t->temp_bytes, t->temp_bytes + size);
	}
	if ((unsigned)life_class < HP_HIST_LIFE_CLASSES)
		life_count(b, (unsigned)life_class);
	touched(b);
	hp_spin_unlock(&b->lock);
	if (rate == 1 && !alone) {
		count_free_threaded(size);
		return;
	}
	in_use_add(&in_use.bytes, -size, alone);
	if (rate > 1)
		in_use_add(&in_use.weight, -hp_sampler_weight(size, rate), alone);
}

/* hp_agg_free's body for any caller (no thread starts in here). */
static inline __attribute__((always_inline)) void agg_free(uint32_t id, uint64_t size,
							    int temporary, int life_class)
{
	agg_free_as(id, size, temporary, life_class, hp_os_single_threaded(), 0);
}

void hp_agg_free(uint32_t id, uint64_t size, int temporary, int life_class)
{
	agg_free(id, size, temporary, life_class);
}

void hp_agg_heap_alloc(uint32_t id, uint64_t size, uint32_t heap)
{
	struct heap_stat *h = &heaps[heap];
	struct bucket *b;
	uint64_t now, count, peak;

	if (!id || !heap || heap > HP_AGG_MAX_HEAPS)
		return;
	b = bucket_at(id);
	hp_spin_lock(&b->lock);
	set_heap(b, heap);
	catch_up(b, id);
	size_count(b, hp_hist_size_class(size), 1);
	SET(b->alloc_count, b->alloc_count + 1);
	SET(b->alloc_bytes, b->alloc_bytes + size);
	touched(b);
	hp_spin_unlock(&b->lock);
	now = __atomic_add_fetch(&h->in_use_bytes, size, __ATOMIC_ACQ_REL);
	count = __atomic_add_fetch(&h->in_use_count, 1, __ATOMIC_ACQ_REL);
	peak = __atomic_load_n(&h->peak_bytes, __ATOMIC_RELAXED);
	while (now > peak) {
		if (__atomic_compare_exchange_n(&h->peak_bytes, &peak, now, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&h->peak_count, count, __ATOMIC_RELAXED);
			__atomic_store_n(&h->peak_time_ns, hp_os_now_ns(), __ATOMIC_RELAXED);
			__atomic_add_fetch(&h->epoch, 1, __ATOMIC_RELEASE);
			break;
		}
	}
}

void hp_agg_heap_free(uint32_t id, uint64_t size, uint32_t heap)
{
	struct bucket *b;

	if (!id || !heap || heap > HP_AGG_MAX_HEAPS)
		return;
	b = bucket_at(id);
	hp_spin_lock(&b->lock);
	catch_up(b, id);
	SET(b->free_count, b->free_count + 1);
	SET(b->free_bytes, b->free_bytes + size);
	touched(b);
	hp_spin_unlock(&b->lock);
	__atomic_sub_fetch(&heaps[heap].in_use_bytes, size, __ATOMIC_ACQ_REL);
	__atomic_sub_fetch(&heaps[heap].in_use_count, 1, __ATOMIC_ACQ_REL);
}

void hp_agg_heap_reset_counted(uint32_t heap)
{
	if (heap && heap <= HP_AGG_MAX_HEAPS)
		__atomic_add_fetch(&heaps[heap].resets, 1, __ATOMIC_RELAXED);
}

void hp_agg_heap_peak(uint32_t heap, struct hp_rec_heap_peak *out)
{
	const struct heap_stat *h = &heaps[heap];

	out->heap = heap;
	out->peak_bytes = __atomic_load_n(&h->peak_bytes, __ATOMIC_RELAXED);
	out->peak_count = __atomic_load_n(&h->peak_count, __ATOMIC_RELAXED);
	out->peak_time_ns = __atomic_load_n(&h->peak_time_ns, __ATOMIC_RELAXED);
	out->resets = __atomic_load_n(&h->resets, __ATOMIC_RELAXED);
}

uint32_t hp_agg_heap_of(uint32_t id)
{
	return id ? heap_of(bucket_at(id)) : 0;
}

void hp_agg_move(uint32_t from, uint32_t to, uint64_t size)
{
	struct bucket *a, *b;
	struct bucket_tail *ta, *tb;
	uint32_t heap;
	int at_peak;

	if (!from || !to || from == to)
		return;
	a = bucket_at(from);
	ta = tail_at(from);
	hp_spin_lock(&a->lock);
	heap = heap_of(a);
	catch_up(a, from);
	/* Was the block in use at the peak? When the bucket held at the peak
	 * at least as many blocks as it holds now (it has only freed since,
	 * or not changed), every block it holds now was: count it there
	 * (docs/internals/recorder.md, "Moving a block"). */
	at_peak = ta->peak_count && ta->peak_count >= a->alloc_count - a->free_count &&
		  ta->peak_bytes >= size;
	size_count(a, hp_hist_size_class(size), (uint32_t)-1);
	SET(a->alloc_count, a->alloc_count - 1);
	SET(a->alloc_bytes, a->alloc_bytes - size);
	if (at_peak) {
		SET(ta->peak_count, ta->peak_count - 1);
		SET(ta->peak_bytes, ta->peak_bytes - size);
	}
	touched(a);
	hp_spin_unlock(&a->lock);
	b = bucket_at(to);
	tb = tail_at(to);
	hp_spin_lock(&b->lock);
	set_heap(b, heap);
	catch_up(b, to);
	size_count(b, hp_hist_size_class(size), 1);
	SET(b->alloc_count, b->alloc_count + 1);
	SET(b->alloc_bytes, b->alloc_bytes + size);
	if (at_peak) {
		SET(tb->peak_count, tb->peak_count + 1);
		SET(tb->peak_bytes, tb->peak_bytes + size);
	}
	touched(b);
	hp_spin_unlock(&b->lock);
}

void hp_agg_key(uint32_t id, uint32_t *stack_id, uint32_t *type_tag, uint32_t *origin_tag,
		uint64_t *size)
{
	if (id < HP_AGG_KEYED_FIRST) {
		*stack_id = id - 1;
		*type_tag = 0;
		*origin_tag = __atomic_load_n(&bucket_at(id)->tag, __ATOMIC_ACQUIRE) & ORIGIN_MASK;
		*size = 0;
	} else {
		uint32_t len;
		const uint64_t *key = hp_intern_key(&keys, id - HP_AGG_KEYED_FIRST + 1, &len);
		*stack_id = (uint32_t)key[0];
		*type_tag = (uint32_t)(key[1] >> 32);
		*origin_tag = (uint32_t)key[1];
		*size = key[2];
	}
}

uint32_t hp_agg_type(uint32_t id)
{
	uint32_t len;

	if (id < HP_AGG_KEYED_FIRST)
		return 0;
	return (uint32_t)(hp_intern_key(&keys, id - HP_AGG_KEYED_FIRST + 1, &len)[1] >> 32);
}

void hp_agg_lost(enum hp_lost_reason why, uint64_t count, uint64_t bytes)
{
	if ((unsigned)why >= HP_LOST_KINDS)
		return;
	__atomic_add_fetch(&lost_count[why], count, __ATOMIC_RELAXED);
	__atomic_add_fetch(&lost_bytes[why], bytes, __ATOMIC_RELAXED);
}

void hp_agg_zero(void)
{
	for (uint32_t id = hp_agg_next(0); id; id = hp_agg_next(id)) {
		struct bucket *b = bucket_at(id);
		struct bucket_tail *t = tail_at(id);
		hp_spin_lock(&b->lock);
		b->epoch = 0;
		__atomic_store_n(&b->alloc_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->alloc_bytes, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->free_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->free_bytes, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&t->temp_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&t->temp_bytes, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&t->peak_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&t->peak_bytes, 0, __ATOMIC_RELAXED);
		/* A spill stays the bucket's, zeroed; inline classes go. */
		if (!(b->hist & HIST_SPILLED)) {
			__atomic_store_n(&b->hist, 0, __ATOMIC_RELAXED);
		} else {
			struct spill *e = spill_of(b->hist);
			for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
				__atomic_store_n(&e->size[c], 0, __ATOMIC_RELAXED);
			for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
				__atomic_store_n(&e->life[c], 0, __ATOMIC_RELAXED);
		}
		hp_spin_unlock(&b->lock);
	}
	credit_reset(0);
	__atomic_store_n(&in_use.bytes, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&in_use.weight, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&peak.weight, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&peak.bytes, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&peak.time_ns, 0, __ATOMIC_RELAXED);
	__atomic_add_fetch(&peak.epoch, 1, __ATOMIC_RELEASE);
	for (unsigned i = 1; i <= HP_AGG_MAX_HEAPS; i++) {
		struct heap_stat *h = &heaps[i];
		__atomic_store_n(&h->in_use_bytes, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h->in_use_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h->peak_bytes, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h->peak_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h->peak_time_ns, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&h->resets, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&h->epoch, 1, __ATOMIC_RELEASE);
	}
	for (unsigned i = 0; i < HP_LOST_KINDS; i++) {
		__atomic_store_n(&lost_count[i], 0, __ATOMIC_RELAXED);
		__atomic_store_n(&lost_bytes[i], 0, __ATOMIC_RELAXED);
	}
}

void hp_agg_restart_peak(void)
{
	uint64_t raw;

	credit_reset(1);
	raw = __atomic_load_n(&in_use.bytes, __ATOMIC_RELAXED);

	__atomic_store_n(&peak.weight,
			 sample_rate_bytes > 1 ? __atomic_load_n(&in_use.weight, __ATOMIC_RELAXED)
					       : raw,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&peak.bytes, raw, __ATOMIC_RELAXED);
	__atomic_store_n(&peak.time_ns, hp_os_now_ns(), __ATOMIC_RELAXED);
	/* Every bucket's at-peak value is now its current one. */
	__atomic_add_fetch(&peak.epoch, 1, __ATOMIC_RELEASE);
	for (unsigned i = 1; i <= HP_AGG_MAX_HEAPS; i++) {
		struct heap_stat *h = &heaps[i];
		__atomic_store_n(&h->peak_bytes, __atomic_load_n(&h->in_use_bytes, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&h->peak_count, __atomic_load_n(&h->in_use_count, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
		__atomic_store_n(&h->peak_time_ns, hp_os_now_ns(), __ATOMIC_RELAXED);
		__atomic_add_fetch(&h->epoch, 1, __ATOMIC_RELEASE);
	}
}

uint32_t hp_agg_next(uint32_t id)
{
	uint32_t stacks = hp_stacks_count(); /* default buckets 1..stacks */
	uint32_t keyed_end = HP_AGG_KEYED_FIRST + hp_intern_count(&keys) - 1;

	/* A missing chunk holds no counts: its ids are skipped (the last id
	 * of a chunk, then ++, is the next chunk's first). A keyed bucket
	 * whose chunk could not be mapped was never handed out. */
	for (id++; id <= stacks; id++) {
		if (!chunk_of(id))
			id |= CHUNK_BUCKETS - 1;
		else if (__atomic_load_n(&bucket_at(id)->alloc_count, __ATOMIC_RELAXED))
			return id;
	}
	if (id < HP_AGG_KEYED_FIRST)
		id = HP_AGG_KEYED_FIRST;
	for (; id < keyed_end; id++) {
		if (chunk_of(id))
			return id;
		id |= CHUNK_BUCKETS - 1;
	}
	return 0;
}

uint32_t hp_agg_next_tick(uint32_t id)
{
	uint32_t stacks = hp_stacks_count();

	for (id++; id <= stacks; id++) {
		struct bucket *b;
		if (!chunk_of(id)) {
			id |= CHUNK_BUCKETS - 1;
			continue;
		}
		b = bucket_at(id);
		if (__atomic_load_n(&b->alloc_count, __ATOMIC_RELAXED) ||
		    __atomic_load_n(&b->changes, __ATOMIC_RELAXED) != b->taken)
			return id;
	}
	return hp_agg_next(id - 1); /* the keyed buckets, as hp_agg_next's */
}

void hp_agg_read(uint32_t id, struct hp_rec_bucket *out)
{
	const struct bucket *b = bucket_at(id);
	const struct bucket_tail *t = tail_at(id);
	uint64_t epoch = __atomic_load_n(epoch_of(heap_of(b)), __ATOMIC_ACQUIRE);

	hp_agg_key(id, &out->stack_id, &out->type_tag, &out->origin_tag, &out->size);
	out->alloc_count = GET(b->alloc_count);
	out->alloc_bytes = GET(b->alloc_bytes);
	out->free_count = GET(b->free_count);
	out->free_bytes = GET(b->free_bytes);
	out->temp_count = GET(t->temp_count);
	out->temp_bytes = GET(t->temp_bytes);
	if (GET(b->epoch) == epoch) {
		out->peak_count = GET(t->peak_count);
		out->peak_bytes = GET(t->peak_bytes);
	} else {
		out->peak_count = out->alloc_count - out->free_count;
		out->peak_bytes = out->alloc_bytes - out->free_bytes;
	}
}

void hp_agg_hist(uint32_t id, struct hp_rec_hist *out)
{
	const struct bucket *b = bucket_at(id);
	uint64_t w = __atomic_load_n(&b->hist, __ATOMIC_ACQUIRE);

	memset(out, 0, sizeof *out);
	if (w & HIST_SPILLED) {
		const struct spill *e = spill_of(w);
		for (unsigned c = 0; c < HP_HIST_SIZE_CLASSES; c++)
			out->size[c] = GET(e->size[c]);
		for (unsigned c = 0; c < HP_HIST_LIFE_CLASSES; c++)
			out->life[c] = GET(e->life[c]);
	} else {
		unsigned sc = w >> HIST_SIZE_SHIFT & HIST_CLASS_MASK;
		unsigned lc = w >> HIST_LIFE_SHIFT & HIST_CLASS_MASK;
		if (sc)
			out->size[sc - 1] = (uint32_t)GET(b->alloc_count);
		if (lc)
			out->life[lc - 1] = (uint32_t)(w >> HIST_COUNT_SHIFT);
	}
}

int hp_agg_hist_one(uint32_t id, unsigned *size_class, uint64_t *size_count,
		    unsigned *life_class, uint64_t *life_count)
{
	const struct bucket *b = bucket_at(id);
	uint64_t w = __atomic_load_n(&b->hist, __ATOMIC_ACQUIRE);

	if (w & HIST_SPILLED)
		return 0;
	*size_class = w >> HIST_SIZE_SHIFT & HIST_CLASS_MASK;
	*size_count = *size_class ? (uint32_t)GET(b->alloc_count) : 0;
	*life_class = w >> HIST_LIFE_SHIFT & HIST_CLASS_MASK;
	*life_count = *life_class ? (uint32_t)(w >> HIST_COUNT_SHIFT) : 0;
	return 1;
}

int hp_agg_take_change(uint32_t id, int force, struct hp_rec_site *out)
{
	struct bucket *b = bucket_at(id);
	uint32_t changes = __atomic_load_n(&b->changes, __ATOMIC_ACQUIRE);
	uint32_t stack_id, type_tag, origin_tag;
	uint64_t free_count, free_bytes;

	if (changes == b->taken && !force)
		return 0;
	b->taken = changes;
	hp_agg_key(id, &stack_id, &type_tag, &origin_tag, &out->size);
	out->type_tag = type_tag;
	out->origin_tag = origin_tag;
	/* The frees first: a block is counted allocated before it is freed,
	 * so reads that straddle changes (shown again at the next tick) never
	 * make in use negative. */
	free_count = __atomic_load_n(&b->free_count, __ATOMIC_ACQUIRE);
	free_bytes = __atomic_load_n(&b->free_bytes, __ATOMIC_ACQUIRE);
	out->bucket = id;
	out->stack_id = stack_id;
	out->in_use_count = GET(b->alloc_count) - free_count;
	out->in_use_bytes = GET(b->alloc_bytes) - free_bytes;
	return 1;
}

void hp_agg_totals(struct hp_totals *out)
{
	memset(out, 0, sizeof *out);
	/* Less the credit: its bytes are counted in use but not allocated.
	 * While threads count, the two reads straddle grants and take-backs:
	 * the difference may read high by a grant or low by the credit a
	 * take-back moved between them (never below 0). The timeline's
	 * samples and the byte triggers read it; the peak never does. */
	uint64_t held = credit_held(), counted = __atomic_load_n(&in_use.bytes, __ATOMIC_RELAXED);
	out->in_use_bytes = counted > held ? counted - held : 0;
	out->peak_estimate_bytes = __atomic_load_n(&peak.weight, __ATOMIC_RELAXED);
	if (sample_rate_bytes > 1) {
		out->in_use_estimate_bytes = __atomic_load_n(&in_use.weight, __ATOMIC_RELAXED);
		out->peak_bytes = __atomic_load_n(&peak.bytes, __ATOMIC_RELAXED);
	} else {
		/* One counter: a racing thread's store of peak.bytes cannot lag. */
		out->in_use_estimate_bytes = out->in_use_bytes;
		out->peak_bytes = out->peak_estimate_bytes;
	}
	out->peak_time_ns = __atomic_load_n(&peak.time_ns, __ATOMIC_RELAXED);
	for (int i = 0; i < HP_LOST_KINDS; i++) {
		out->lost_count[i] = __atomic_load_n(&lost_count[i], __ATOMIC_RELAXED);
		out->lost_bytes[i] = __atomic_load_n(&lost_bytes[i], __ATOMIC_RELAXED);
	}
}

uint64_t hp_agg_bytes(void)
{
	return hp_intern_bytes(&keys) +
	       (uint64_t)(hp_stacks_count() + hp_intern_count(&keys)) *
		       (sizeof(struct bucket) + sizeof(struct bucket_tail)) +
	       __atomic_load_n(&spills.taken, __ATOMIC_RELAXED) * sizeof(struct spill);
}

/* For fork handlers, with the stack table, the keys and chunks_lock held
 * so that the set of buckets cannot grow in between: the defaults of
 * existing stacks, then the keyed ones, in the chunks that exist. */
static void for_each_bucket(void (*fn)(struct hp_spin *))
{
	uint32_t stacks = hp_stacks_count();
	uint32_t keyed_end = HP_AGG_KEYED_FIRST + hp_intern_count(&keys) - 1;

	for (uint32_t id = 1; id <= stacks; id++) {
		if (chunk_of(id))
			fn(&bucket_at(id)->lock);
		else
			id |= CHUNK_BUCKETS - 1;
	}
	for (uint32_t id = HP_AGG_KEYED_FIRST; id < keyed_end; id++) {
		if (chunk_of(id))
			fn(&bucket_at(id)->lock);
		else
			id |= CHUNK_BUCKETS - 1;
	}
}

void hp_agg_lock_all(void)
{
	hp_spin_lock(&keys.lock);
	hp_spin_lock(&chunks_lock);
	for_each_bucket(hp_spin_lock);
	/* After the buckets': a spill's chunk is mapped under its bucket's
	 * lock. */
	hp_spin_lock(&spills.lock);
	hp_spin_lock(&credit.lock);
}

void hp_agg_unlock_all(void)
{
	hp_spin_unlock(&credit.lock);
	hp_spin_unlock(&spills.lock);
	for_each_bucket(hp_spin_unlock);
	hp_spin_unlock(&chunks_lock);
	hp_spin_unlock(&keys.lock);
}

void hp_agg_root(struct hp_root *r)
{
	hp_intern_root(&keys, &r->keys);
	r->keyed_first = HP_AGG_KEYED_FIRST;
	r->bucket_chunks = CHUNKS;
	r->bucket_chunk_addr = (uintptr_t)chunks;
	r->bucket_chunk_bits = CHUNK_BITS;
	r->bucket_bytes = sizeof(struct bucket);
	r->bucket_lock_off = offsetof(struct bucket, lock);
	r->bucket_epoch_off = offsetof(struct bucket, epoch);
	r->bucket_counters_off = offsetof(struct bucket, alloc_count);
	r->bucket_counters2_off = offsetof(struct bucket_tail, temp_count);
	r->bucket_tail_off = CHUNK_BUCKETS * sizeof(struct bucket);
	r->bucket_tail_bytes = sizeof(struct bucket_tail);
	r->bucket_tag_off = offsetof(struct bucket, tag);
	r->tag_origin_bits = HEAP_SHIFT;
	r->heap_stats_addr = (uintptr_t)heaps;
	r->heap_stat_bytes = sizeof heaps[0];
	r->heap_peak_bytes_off = offsetof(struct heap_stat, peak_bytes);
	r->heap_peak_count_off = offsetof(struct heap_stat, peak_count);
	r->heap_resets_off = offsetof(struct heap_stat, resets);
	r->peak_epoch_addr = (uintptr_t)&peak.epoch;
	r->in_use_bytes_addr = (uintptr_t)&in_use.bytes;
	r->peak_weight_addr = (uintptr_t)&peak.weight;
	r->peak_bytes_addr = (uintptr_t)&peak.bytes;
	r->sample_rate_addr = (uintptr_t)&sample_rate_bytes;
	r->credit_addr = (uintptr_t)slots;
	r->credit_slots = CREDIT_SLOTS;
	r->credit_bytes = sizeof slots[0];
}
