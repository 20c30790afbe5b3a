/*
 * trigger.h - when snapshots are written, besides exit: on fatal signals, on
 * the dump signal, every interval, every N bytes allocated, on each rise of
 * the peak by N bytes; and when the time series takes a sample.
 *
 * The recorder has no thread of its own: a second thread would switch
 * glibc's malloc off its single-threaded fast path (no atomics) for good,
 * a cost every allocation of a sampled run would pay. Periodic work is done
 * by the threads that allocate, at the end of a slow path, once every few
 * slow paths look at the clock: with no recorder lock held, so a snapshot
 * never waits on its own thread. An idle program takes no samples, and its
 * heap does not change meanwhile either.
 *
 * The fatal-signal handler writes the final snapshot itself (with
 * HP_WRITE_FATAL) and then lets the signal do what it would have done. The
 * dump-signal handler writes at once when it interrupted code outside the
 * recorder, and otherwise leaves a request for the next slow path.
 */
#ifndef HP_RECORDER_TRIGGER_H
#define HP_RECORDER_TRIGGER_H

#include <stdint.h>

#include "config.h"
#include "thread.h"

/* Installs the fatal-signal and dump-signal handlers, each only where the
 * program left the default disposition. At start, once: not thread-safe;
 * no allocation, no lock. c must stay valid. */
void hp_trigger_init(const struct hp_config *c);

/* Gives back the default action of every signal whose handler is still the
 * recorder's (a fork child that stops recording). Async-signal-safe, no
 * allocation, no lock. */
void hp_trigger_stop(void);

/* Snapshot requests for the next slow path: a bit per HP_SNAP_* reason,
 * set with atomic OR by any thread or signal handler (hp_trigger_request),
 * taken with an atomic exchange by the thread that writes them. Exposed
 * for the inline test of hp_trigger_tick only. */
extern unsigned hp_trigger_pending;

/* The work of hp_trigger_tick once it is due; same properties. Resets
 * t->ticks to every. */
void hp_trigger_tick_due(struct hp_thread *t, uint32_t every) __attribute__((noinline));

/* Periodic work, at the end of a slow path with no recorder lock held and
 * t->busy clear: pending snapshot requests at once; the clock (time-series
 * sample, interval snapshot) once every `every` calls on this thread. The
 * test is inline and a countdown (t->ticks: calls left before the next
 * look; a `%` would be a division on every slow path): one load of the
 * pending requests, one decrement. When due it takes the writer's lock
 * and the module table's (dl_iterate_phdr) if it writes; no allocation
 * from the program's malloc; not async-signal-safe. */
static inline void hp_trigger_tick(struct hp_thread *t, uint32_t every)
{
	if (__builtin_expect(!__atomic_load_n(&hp_trigger_pending, __ATOMIC_ACQUIRE) && t->ticks > 1,
			     1))
		t->ticks--;
	else
		hp_trigger_tick_due(t, every);
}

/* Counts bytes allocated for the byte triggers; called from the slow path.
 * Lock-free, no allocation, async-signal-safe (this thread's count and
 * atomics). */
void hp_trigger_allocated(uint64_t bytes);

/* Whether handler is one the recorder installed (the signal interposer
 * shows those to the program as SIG_DFL). Pure: async-signal-safe, no
 * allocation, no lock. */
int hp_trigger_owns(void (*handler)(int));

/* The program puts back the default action of sig: where sig is one of
 * the fatal set the recorder catches (not attached, recording, not the
 * dump signal), installs the recorder's handler in its place and returns
 * 1, so that a program that handles SIGPIPE or SIGTERM itself and then
 * re-raises it with the default action (sort, many servers) still leaves
 * its fatal snapshot; the interposer shows SIG_DFL. Returns 0 otherwise
 * (the caller sets SIG_DFL itself). Async-signal-safe (sigaction), no
 * allocation, no lock. */
int hp_trigger_keep_default(int sig);

/* Asks for a snapshot with the given HP_SNAP_* reason. Async-signal-safe
 * (an atomic OR), no allocation, no lock. */
void hp_trigger_request(unsigned reason);

#endif
