/*
 * spin.h - the recorder's only lock: a test-and-test-and-set spinlock.
 *
 * Recorder locks are held for a few hundred instructions at most, never
 * across a call into the target's allocator or a system call other than
 * mmap, and never by a signal handler except through hp_spin_trylock_for
 * (which gives up instead of deadlocking). They are not pthread mutexes
 * because those may not be used from a signal handler.
 */
#ifndef HP_RECORDER_SPIN_H
#define HP_RECORDER_SPIN_H

#include <stdint.h>

#include "os.h"

struct hp_spin {
	uint32_t locked; /* accessed only through __atomic builtins */
};

/* Waits for and takes l (hp_spin_lock, below, with alone =
 * hp_os_single_threaded() read by a caller that uses it more than once):
 * spins, then yields every 256 tries. While the
 * process has one thread (alone) a free lock is taken
 * with a plain store, no locked instruction: no other thread can race for
 * it, and a signal handler of this thread that meets it free between the
 * load and the store takes it with hp_spin_trylock and gives it back
 * before it returns. No allocation; async-signal-safe only where no
 * holder can be the code the signal interrupted (use hp_spin_trylock_for
 * there). */
/* The wait of hp_spin_lock_as for a lock found taken: out of line, so
 * that every lock's free case is inlined where it is taken (unused: in the
 * files that take no lock). */
static __attribute__((noinline, cold, unused)) void hp_spin_wait(struct hp_spin *l)
{
	unsigned spins = 0;

	do {
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
			if (++spins > 256) {
				hp_os_yield();
				spins = 0;
			} else {
				hp_os_cpu_relax();
			}
		}
	} while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE));
}

static inline __attribute__((always_inline)) void hp_spin_lock_as(struct hp_spin *l, int alone)
{
	if (alone && !__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
		__atomic_store_n(&l->locked, 1, __ATOMIC_RELAXED);
		/* Nothing of the critical section moves above the store, as
		 * seen from this thread's signal handlers. */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return;
	}
	if (__builtin_expect(__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) != 0, 0))
		hp_spin_wait(l);
}

/* hp_spin_lock_as for a caller that runs with its thread's busy flag set
 * (the slow paths' register and bucket: live.c, aggregate.c): while the
 * process has one thread (alone) the lock is taken with a plain store and
 * no test, since it cannot be held then: no other thread exists, and this
 * thread's signal handlers, which run over busy code, take locks only
 * with hp_spin_trylock (which then fails), or, over code that was not
 * busy, give them back before they return. Same properties as
 * hp_spin_lock_as. */
static inline __attribute__((always_inline)) void hp_spin_lock_busy_as(struct hp_spin *l,
									 int alone)
{
	if (__builtin_expect(alone, 1)) { /* laid out first: no jump back */
		__atomic_store_n(&l->locked, 1, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST); /* as in hp_spin_lock_as */
		return;
	}
	if (__builtin_expect(__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) != 0, 0))
		hp_spin_wait(l);
}

/* hp_spin_lock_as for the process as it is now. Same properties. */
static inline __attribute__((always_inline)) void hp_spin_lock(struct hp_spin *l)
{
	hp_spin_lock_as(l, hp_os_single_threaded());
}

/* Takes l if free; returns 1 when taken. Async-signal-safe, no
 * allocation, never waits. */
static inline int hp_spin_trylock(struct hp_spin *l)
{
	return !__atomic_load_n(&l->locked, __ATOMIC_RELAXED) &&
	       !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

/* Tries for about tries x 1 microsecond; returns 1 when locked. For signal
 * handlers and fork: the holder may be the interrupted code itself.
 * Async-signal-safe, no allocation, bounded wait. */
static inline int hp_spin_trylock_for(struct hp_spin *l, unsigned tries)
{
	for (unsigned i = 0; i < tries; i++) {
		if (hp_spin_trylock(l))
			return 1;
		for (int k = 0; k < 100; k++)
			hp_os_cpu_relax();
	}
	return 0;
}

/* Releases l (held by the caller). Async-signal-safe, no allocation. */
static inline void hp_spin_unlock(struct hp_spin *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
