/*
 * recorder.h - where the interposer meets the recorder.
 *
 * The interposer (interpose.c, interpose_cxx.c) forwards every call to the
 * real allocator and does only the fast-path arithmetic itself; everything
 * else happens behind these functions. All of them run on the thread that
 * allocates, never allocate through the target's malloc, and never take a
 * lock while t->busy is already set (they count the event as lost
 * instead), so a signal handler that allocates on top of the recorder cannot
 * deadlock it.
 */
#ifndef HP_RECORDER_RECORDER_H
#define HP_RECORDER_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#include "cfa_cache.h"
#include "live.h"
#include "thread.h"

enum hp_state {
	HP_STATE_OFF = 0,    /* not started, stopped in a fork child, or after exit */
	HP_STATE_ACTIVE = 1, /* recording */
};

/* Written at init, at fork and at exit; read by every slow path. */
extern int hp_state;
/* Sampled mode (rate > 1): set at init, read-only afterwards. */
extern int hp_sampled;

/* The recorder's rare global states in one word, so that the slow paths'
 * common case (a full recording, on: recorder.c, record_alloc_common)
 * tests them in one load: 0 while hp_state is HP_STATE_ACTIVE, in a full
 * recording, with no byte trigger set, no exit handler to arm again and
 * no snapshot request pending.
 * Set and cleared wherever one of those states changes (hp_rare_refresh,
 * recorder.c; the fatal signal's handler sets HP_RARE_OFF itself). */
#define HP_RARE_OFF 1u     /* hp_state is not HP_STATE_ACTIVE */
#define HP_RARE_SAMPLED 2u /* hp_sampled */
#define HP_RARE_BYTES 4u   /* a byte trigger is set (dump every, high water) */
#define HP_RARE_EXIT 8u    /* a vfork child consumed the exit handlers */
/* A snapshot request may be pending (hp_trigger_pending): raised by
 * hp_trigger_request after the request, lowered by hp_trigger_tick_due
 * before it reads the requests (so never lowered over one not taken). */
#define HP_RARE_PENDING 16u
extern unsigned hp_rare;

/* Stack budgets: the most the slow path of an allocation (unwinding
 * included, libunwind's DWARF parsing on a cache miss too) and the writing
 * of a snapshot (zstd included) use of the stack they run on, with margin
 * (docs/internals/recorder.md, "Stack budgets"). With less room left, an
 * allocation is passed through and counted as lost (HP_LOST_STACK_ROOM),
 * and a snapshot is not written from there. */
#define HP_RECORD_STACK_BYTES (6 * 1024)
#define HP_WRITE_STACK_BYTES (6 * 1024)

/* The bytes of stack left below the caller's frame, on the thread's stack
 * or the signal stack it runs on; UINTPTR_MAX when unknown (a stack the
 * program made itself). Async-signal-safe, no allocation, no lock. The
 * thread's own stack is looked at inline (every allocation asks), the
 * signal stack out of line. */
uintptr_t hp_stack_room_off_stack(const struct hp_thread *t, uintptr_t sp);

static inline __attribute__((always_inline)) uintptr_t hp_stack_room(const struct hp_thread *t)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0), lo = t->stack_lo;

	/* lo < sp <= hi in one compare: the bounds are lo < hi, or lo == hi
	 * (0 before the thread's first slow path, 1 when unknown), which no
	 * sp passes. */
	if (__builtin_expect(sp - lo - 1 < t->stack_hi - lo, 1))
		return sp - lo;
	return hp_stack_room_off_stack(t, sp);
}

/* Starts the recorder: configuration, tables, capture file, threads,
 * signals. Called once by the interposer after the real functions are
 * known, with the thread's forwarding flag set: it calls what allocates
 * (dlsym, pthread_atfork, dl_iterate_phdr) and takes every recorder lock
 * in turn. Not thread-safe (the interposer runs it once), not
 * async-signal-safe. */
void hp_recorder_start(void);

/* The slow path of an allocation of size bytes at p (p != NULL), whose
 * countdown went negative. Decides about sampling, unwinds, records.
 * Takes the table, shard and bucket locks in turn, only with t->busy
 * clear (nested in the recorder it counts the allocation as lost and
 * returns), so a signal handler's allocation never deadlocks it; not
 * async-signal-safe otherwise (libunwind's caches, the snapshot it may
 * write through hp_trigger_tick). May mmap; the program's malloc only
 * through libunwind's first use in a thread, with busy set. entry: the
 * program's rsp where it called the recorder, or 0 (hp_unwind). */
void hp_record_alloc(struct hp_thread *t, void *p, size_t size, uintptr_t entry)
	__attribute__((noinline));

/* Removes p from the live register before the real free; returns 1 with
 * *blk filled when p was a recorded block. Takes the shard's lock, or
 * only tries it when nested in the recorder (a signal handler's free):
 * async-signal-safe. No allocation. */
int hp_record_take(struct hp_thread *t, void *p, struct hp_live_block *blk)
	__attribute__((noinline));

/* Counts the free of a block taken with hp_record_take. Takes the
 * bucket's lock only with t->busy clear (else counts the free as lost),
 * so it never waits for the interrupted code; no allocation; may write a
 * snapshot (hp_trigger_tick), so not async-signal-safe as a whole. */
void hp_record_release(struct hp_thread *t, void *p, const struct hp_live_block *blk);

/* hp_record_take, then hp_record_release when p was a recorded block: a
 * free's whole slow path in one call. Properties of both. */
void hp_record_free(struct hp_thread *t, void *p) __attribute__((noinline));

/* Puts back a block taken with hp_record_take (a realloc that failed).
 * Same locks and properties as hp_record_take and hp_record_release. */
void hp_record_untake(struct hp_thread *t, void *p, const struct hp_live_block *blk);

/* The program calls _exit or _Exit: the exit snapshot, now, and the end of
 * recording (exit() is seen by the library's destructor instead). Nothing
 * in a process that does not own the capture (a vfork child). Does not
 * wait for locks when called over the recorder (a signal handler). May
 * allocate nothing; takes the writer's lock. */
void hp_record_exit_now(void);

/* heapprof_heap_alloc and heapprof_heap_free (attr.h: keys, heaps): a
 * block of custom heap heap at p, recorded with the caller's stack (the
 * recorder's own frames skipped) and the thread's context, apart from
 * malloc's. Returns 0, -ENODEV (not recording, or inside the recorder),
 * -EINVAL (no such heap), -ENOSPC or -ENOMEM (counted lost). Locks as
 * hp_record_alloc; not async-signal-safe (it unwinds). */
int hp_record_heap_alloc(struct hp_thread *t, const void *p, size_t size, uint32_t heap);
void hp_record_heap_free(struct hp_thread *t, const void *p, uint32_t heap);

/* The program is about to exec: a snapshot of the image that ends here,
 * written into its capture if it has one (the new image appends to it).
 * Recording goes on: the exec may fail. No allocation; takes the
 * writer's lock (only tries it over the recorder: async-signal-safe as
 * exec is, without the module refresh). */
void hp_record_exec(void);

/* The environment an exec passes on: envp, or in a fork child the
 * recorder does not follow, envp without the recorder's variables and
 * library (hp_os_env_without), so that what it execs sees the environment
 * it would see bare. No allocation through malloc, no lock. */
char *const *hp_record_exec_env(char *const envp[]);
/* Ends the recording now, as the exit would: a last snapshot with reason
 * (HP_SNAP_*), the triggers' signals put back, the capture closed (heapprof
 * detach). Nothing when not recording. Takes the writer's lock; no
 * allocation; not async-signal-safe. */
void hp_recorder_stop(unsigned reason);
/* Starts a new recording in a process whose recording was stopped by
 * hp_recorder_stop (heapprof attach again): the options read again (the
 * sampling rate, the unwinder and the depth must be the first
 * recording's: -EINVAL otherwise), the register and the counters emptied
 * (stacks, types and contexts keep their ids), a new capture. Returns 0,
 * -EINVAL, or -EIO when the capture cannot be written. Takes every lock in
 * turn; no allocation; not async-signal-safe. A thread still inside a
 * slow path of the previous recording (it passed the state check before
 * the stop) may add its one allocation to the new one. */
int hp_recorder_restart(void);

/* The program is about to install a seccomp filter (strict: seccomp's
 * strict mode), from the prctl and syscall interposers: the capture file
 * is created now if it was not, an RSS sample taken, and from then on
 * the recorder opens nothing and asks the kernel nothing new
 * (hp_os_sandboxed); in strict mode it writes its last snapshot and
 * stops. Once; called by the thread installing the filter, outside the
 * recorder; takes the writer's lock. */
void hp_recorder_sandbox(int strict);

#endif
