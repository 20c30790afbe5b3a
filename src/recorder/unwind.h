/*
 * unwind.h - capturing the call stack of an allocation.
 *
 * Two unwinders: DWARF, the default, through a per-thread cache of frame
 * rules (cfa_cache.h) that gives exactly libunwind's stacks, and through
 * libunwind's unw_backtrace for any walk the cache cannot finish (its
 * per-thread cache, no signal masking; its memory validation kept off the
 * program's descriptors, see unwind.c); and a frame-pointer walk that checks every frame against the
 * thread's stack bounds. Both drop the recorder's own frames, so frame 0 is
 * the return address in the caller of malloc (or new, or ...).
 */
#ifndef HP_RECORDER_UNWIND_H
#define HP_RECORDER_UNWIND_H

#include <stdint.h>

#include "cfa_cache.h"
#include "thread.h"

/* Chooses the unwinder and finds the recorder's own code range. With
 * cache, DWARF walks go through the per-thread rule cache (cfa_cache.h)
 * first, unw_backtrace doing those it cannot finish, and frame-pointer
 * walks through its remembered walks; with check, every walk the cache
 * finished is done again by unw_backtrace (or a fresh frame-pointer
 * walk) and compared
 * (hp_unwind_report gives the counts). Call once, at init, with the
 * reentrancy flag set: dl_iterate_phdr takes the loader's lock and may
 * allocate. Not thread-safe, not async-signal-safe. Returns 0 or -errno. */
int hp_unwind_init(unsigned mode, int cache, int check);

/* With check: logs one line, the walks, those the rule cache finished and
 * those that differed from unw_backtrace's ("unwind check: N walks, N by
 * the rule cache, N differed from libunwind"). No allocation, no lock
 * (hp_log); call at the end of recording. */
void hp_unwind_report(void);

/* Room an unwinder needs past max in frames[] for the recorder's own
 * frames, which it drops. */
#define HP_UNWIND_SLACK 8

/* Fills frames[0..max) with return addresses, innermost first; frames must
 * have room for max + HP_UNWIND_SLACK entries. A stack deeper than max is
 * walked on (to HP_ROOTS_WALK_FRAMES) and keeps its outermost frames
 * after a gap frame (roots.h), in every unwinder alike. Returns the number written
 * (0 when unwinding failed), and their hp_hash_stack in *hash (the
 * walks fold each frame in as they read it). With stack non-NULL, the
 * thread's remembered walks (cfa_cache.h; both unwinders, unless
 * HEAPPROF_UNWIND_CACHE=0) may know the walk's stack id already: then *stack is that id and frames[]
 * is not written (the return value and *hash are); otherwise *stack is 0,
 * frames[] is written, and the caller, once it has interned them, passes
 * their id to hp_unwind_remember. Call with t->busy set: libunwind may
 * allocate on its first use in a thread. Allocation-free afterwards,
 * lock-free, not async-signal-safe in DWARF mode (libunwind's caches).
 * entry: the program's rsp where it called the recorder (HP_CFA_ENTRY
 * in the interposed function's slow path), or 0: the remembered walks
 * start there (cfa_cache.h). */
uint32_t hp_unwind(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
		   uint32_t *stack, uintptr_t entry);

/* hp_unwind with the walks it would try first called from the caller's
 * frame, not through hp_unwind's (one call and its checks fewer an
 * allocation): hp_cfa_walk (the rule cache), hp_cfa_walk_fp (the
 * remembered frame-pointer walks), or (HEAPPROF_UNWIND_CHECK, no cache)
 * hp_unwind itself, through a function that returns its result as an
 * int. The walk is the same either way: the recorder's own frames are
 * dropped, and there are fewer of them than HP_UNWIND_SLACK from either
 * caller. One indirect call: no test of the mode an allocation. Written
 * once by hp_unwind_init (hp_unwind until then). */
typedef int hp_unwind_walk_fn(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
			      uint32_t *stack, uintptr_t entry);
extern hp_unwind_walk_fn *hp_unwind_direct
	__attribute__((visibility("hidden"))); /* one load: events.h, hp_events_on */

/* Whether hp_unwind_direct is hp_cfa_walk (1) or hp_cfa_walk_fp (2), for
 * the common allocation path, which then looks for a remembered walk
 * itself first (cfa_cache.c, hp_cfa_recall_entry: record_path.c's unit);
 * 0 otherwise. Written once by hp_unwind_init. */
extern int hp_unwind_recall __attribute__((visibility("hidden")));

/* What hp_unwind falls back to when the walk it tries first gives up:
 * unw_backtrace, or the plain frame-pointer walk. Same properties. */
uint32_t hp_unwind_fallback(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash);

static inline uint32_t hp_unwind_fast(struct hp_thread *t, uint64_t *frames, uint32_t max,
				      uint64_t *hash, uint32_t *stack, uintptr_t entry)
{
	int got = hp_unwind_direct(t, frames, max, hash, stack, entry);

	return got >= 0 ? (uint32_t)got : hp_unwind_fallback(t, frames, max, hash);
}

/* The stack id of the frames the thread's last hp_unwind wrote,
 * for the walks equal to it later (cfa_cache.h). No allocation, no lock. */
void hp_unwind_remember(struct hp_thread *t, uint32_t stack);

/* With t->cfa_memo set (the last walk was a remembered one): the bucket
 * remembered for origin with it, or 0 (cfa_cache.h, hp_cfa_bucket); and
 * remembering one. No allocation, no lock. */
static inline uint32_t hp_unwind_bucket(const struct hp_thread *t, uint32_t origin)
{
	return hp_cfa_bucket(t, origin);
}
/* The address remembered with the bucket hp_unwind_bucket gave (not 0). */
static inline void *hp_unwind_bucket_at(const struct hp_thread *t)
{
	return hp_cfa_bucket_at(t);
}
void hp_unwind_remember_bucket(struct hp_thread *t, uint32_t origin, uint32_t bucket, void *at);

/* Whether addr is inside the recorder's own code. Pure after init:
 * async-signal-safe, no allocation, no lock. */
int hp_unwind_is_own(uintptr_t addr);

#endif
