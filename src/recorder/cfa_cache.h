/*
 * cfa_cache.h - a per-thread cache of DWARF unwind rules, walked in place
 * of libunwind's unw_backtrace where it can give the same stack.
 *
 * For each return address seen, the cache keeps what libunwind's own fast
 * trace (x86_64/Gtrace.c) would keep for it: the frame's CFA as rsp or rbp
 * plus a constant, the return address at CFA - 8, and rbp saved at CFA +
 * a constant or left alone; or that the frame is the last one; or that
 * libunwind must do the walk (a signal frame, a frame without .eh_frame
 * information, a DWARF expression, anything else). A walk that meets only
 * the first two kinds gives exactly the frames unw_backtrace gives; any
 * other walk is left to unw_backtrace (docs/internals/recorder.md, "The
 * DWARF rule cache"). x86-64 only.
 */
#ifndef HP_RECORDER_CFA_CACHE_H
#define HP_RECORDER_CFA_CACHE_H

#include <stdint.h>

#include "thread.h"

/* Creates the key whose destructor unmaps each thread's table at its
 * exit. Call once, at init, before any walk (so that the key's index is
 * low: see hp_os_thread_key_create); without it no thread gets a table
 * and every walk returns -1. Returns 0 or -errno. Not thread-safe. */
int hp_cfa_init(void);

/* Where the program called into the recorder: its rsp once the
 * recorder's outermost frame returns, the return address just below it,
 * the program's rbp below that (saved by that frame's prologue). Taken in
 * a recorder function with a frame pointer that the program's call
 * reached with nothing on the stack above it but the return address (a
 * tail call from the interposed function). */
#define HP_CFA_ENTRY() ((uintptr_t)__builtin_frame_address(0) + 16)

/* Walks the calling thread's stack through its rule cache as
 * hp_unwind does (unwind.h): fills frames[0..max) with the frames
 * unw_backtrace((void **)f, max + HP_UNWIND_SLACK) would give when called
 * from the same caller, the recorder's own frames at their start dropped,
 * and puts their hp_hash_stack in *hash. Must be called from a recorder
 * function with a frame of its own (built with frame pointers), fewer
 * than HP_UNWIND_SLACK recorder frames above the program's: then the
 * frames kept are the program's that unw_backtrace would give from any
 * such caller (hp_unwind's check calls both from one frame, and compares
 * them). Returns the number of frames written,
 * or -1 when the walk met a frame only libunwind can step through
 * (frames[] then holds garbage): call unw_backtrace instead. Call with
 * t->busy set: a miss reads .eh_frame under dl_iterate_phdr (the loader's
 * lock; it may allocate) and may grow the thread's table (hp_os_map, to at
 * most 1 MiB of rules: cfa_cache.c), and a thread's first walk maps its
 * cache (hp_os_map) and sets it as its key's value (pthread_setspecific).
 * Lock-free and allocation-free on hits; not async-signal-safe (a signal
 * handler's allocation during a walk is not recorded: t->busy).
 *
 * The thread's last walks are remembered (cfa_cache.c, struct memo):
 * with stack non-NULL, a walk that is one of them and whose stack id was
 * given to hp_cfa_remember puts that id in *stack and returns the number
 * of frames without writing frames[] (*hash is set); otherwise *stack is
 * 0 and frames[] is written.
 *
 * entry (or 0): the program's rsp where the recorder's frames end
 * (HP_CFA_ENTRY). Walks are then remembered from there, so that the
 * recorder's own frames are neither walked nor compared again; a walk
 * that finds other registers where the recorder's frames end makes every
 * later walk ignore its entry (correct stacks either way). */
int hp_cfa_walk(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
		uint32_t *stack, uintptr_t entry);

/* The frame-pointer walk of unwind.c (every frame inside the thread's
 * stack bounds, above the previous one, aligned; the recorder's own frames
 * at its start dropped, at most max kept), through the same remembered
 * walks: a walk from this function's frame whose every word (two a frame)
 * is unchanged is not walked again. Call directly from hp_unwind, with
 * t->busy set (a thread's first walk maps its table). Returns as
 * hp_cfa_walk does: the frames (or the stack id in *stack), or -1 when
 * the thread has no table or its stack bounds are unknown (walk without
 * it). Lock-free, no allocation but the table's mapping. */
int hp_cfa_walk_fp(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
		   uint32_t *stack, uintptr_t entry);

/* hp_cfa_walk and hp_cfa_walk_fp after the caller looked for a
 * remembered walk from entry (a usable one: cfa_cache.c,
 * hp_cfa_recall_entry, inlined in the slow path) and found none, this
 * thread's table set up: the walk stepped and remembered, from this
 * function's frame (called from the slow path, as hp_cfa_walk is). Same
 * properties. */
int hp_cfa_walk_stepped(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
			uintptr_t entry) __attribute__((visibility("hidden"), noinline));
int hp_cfa_walk_fp_stepped(struct hp_thread *t, uint64_t *frames, uint32_t max, uint64_t *hash,
			   uintptr_t entry) __attribute__((visibility("hidden"), noinline));

/* Gives the thread's last hp_cfa_walk or hp_cfa_walk_fp, when it was remembered, the id the
 * stack table gave its frames (ids are never reused), so that the next
 * walk equal to it skips the table. Call right after that walk, with
 * t->busy set. No allocation, no lock. */
void hp_cfa_remember(struct hp_thread *t, uint32_t stack);

/* The bucket given by hp_cfa_remember_bucket for origin to the thread's
 * last walk, when that walk was remembered with its stack id, or 0: the
 * walk's stack in origin's bucket without a lookup (a stack's default
 * bucket belongs to one origin, so every other thread's allocations there
 * look their bucket up in the keyed table). No allocation, no lock. */
struct hp_cfa_memo_head { /* the first member of a remembered walk */
	uint32_t stack;          /* its id in the stack table; 0: not known yet */
	uint32_t origin, bucket; /* the bucket (0: none yet) of stack for origin */
	void *bucket_at;         /* its counters' address (aggregate.c), with bucket */
};

static inline uint32_t hp_cfa_bucket(const struct hp_thread *t, uint32_t origin)
{
	const struct hp_cfa_memo_head *m = t->cfa_memo;

	/* (a memo without a stack has no bucket: each place that sets
	 * stack sets bucket 0 with it) */
	return m && m->origin == origin ? m->bucket : 0;
}
/* The address of the bucket hp_cfa_bucket gave (when not 0): a bucket's
 * address is a function of its id (aggregate.c maps each chunk of
 * buckets once), remembered so that an allocation does not work it out. */
static inline void *hp_cfa_bucket_at(const struct hp_thread *t)
{
	return ((const struct hp_cfa_memo_head *)t->cfa_memo)->bucket_at;
}
/* Remembers bucket (at address at) as the bucket of origin (and size 0,
 * type 0) for the thread's last walk, when it was remembered with its
 * stack id. No allocation, no lock. */
void hp_cfa_remember_bucket(struct hp_thread *t, uint32_t origin, uint32_t bucket, void *at);

/* The rules read from .eh_frame by every thread so far (each a miss of
 * a thread's table: a rule met first, or met again after its eviction or
 * a flush), and the most rules a thread's table has held room for (it
 * grows from 1,024 to at most 65,536: cfa_cache.c). For
 * HEAPPROF_UNWIND_CHECK's line. Async-signal-safe, no allocation, no
 * lock. */
void hp_cfa_rule_stats(uint64_t *read, uint64_t *largest);

/* Invalidates every thread's cache (each clears its own at its next
 * walk): call after a dlclose, since other code may later be mapped where
 * the closed library's was. Async-signal-safe, no allocation, no lock. */
void hp_cfa_flush(void);

#endif
