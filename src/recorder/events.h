/*
 * events.h - the event log (heapprof run --events, HEAPPROF_EVENTS=1):
 * every recorded allocation and free with its time, thread and block,
 * appended to the capture in encoded chunks (format.h, HP_REC_EVENTS_BITS).
 *
 * The hot path (hp_events_log, inline) writes one fixed-size entry into
 * the thread's own buffer, mapped with hp_os_map: one test of the next
 * entry's address (a thread with no buffer points at a head that reads
 * full), a counter read (rdtsc), five stores and a release store of the
 * next address; no lock, no allocation, no system call. The thread encodes its buffer into a chunk when it is
 * full (hp_events_slow), which the writer gets with others in one record
 * once they take 60 KiB, before each snapshot and at a thread's exit;
 * each snapshot flushes
 * every thread's buffer up to the events written so far (a thread keeps
 * appending meanwhile: the flusher takes [flushed, n) under the events
 * lock, and only the owner, under the same lock, starts its buffer over);
 * a thread's exit flushes its own and frees the buffer for the next thread.
 *
 * Locks: the events lock (a spinlock of this module), then the writer's;
 * both only in the flush paths, never with t->busy raised by code this
 * thread interrupted (hp_events_slow runs inside a recorder slow path
 * that raised busy itself, so a signal handler's allocation on top of it
 * passes through unrecorded). What cannot be logged is counted lost:
 * HP_LOST_EVENTS_NO_MEMORY (no buffer), HP_LOST_EVENTS_WRITE (a chunk not
 * written).
 */
#ifndef HP_RECORDER_EVENTS_H
#define HP_RECORDER_EVENTS_H

#include <stdint.h>

#include "../format/events.h"
#include "config.h"
#include "os.h"

/* Events a thread's buffer holds: 128 KiB, touched as it fills. */
#define HP_EV_BUF_EVENTS 4096u

/* A thread's buffer: this head (32 bytes), then HP_EV_BUF_EVENTS entries
 * (HP_EV_BUF_BYTES mapped). The hot path keeps the next entry's address,
 * not a count: one load, one compare with limit, no index to scale. */
struct hp_ev_buf {
	/* The next entry: ev + the events written. Stored (release) by the
	 * owner after each entry; set back to ev by the owner only, under
	 * the events lock. */
	struct hp_ev *next;
	struct hp_ev *limit; /* ev + HP_EV_BUF_EVENTS; NULL in hp_ev_none's */
	/* Events [0, flushed) are in the capture already (a snapshot's
	 * flush); under the events lock. */
	uint32_t flushed;
	uint32_t owned;  /* 1 while a thread owns it (CAS from 0 to take it) */
	uint32_t thread; /* the owner's thread tag id (tags.h), 0: unknown */
	uint32_t pad;
	struct hp_ev ev[];
};
#define HP_EV_BUF_BYTES (sizeof(struct hp_ev_buf) + HP_EV_BUF_EVENTS * sizeof(struct hp_ev))

/* Whether the log is on: set at start (hp_events_init), read-only after.
 * Declared hidden, as it is defined (the library is built with
 * -fvisibility=hidden, which marks definitions only): the slow paths read
 * it on every allocation and free, PC-relative in one load, where a plain
 * extern takes its address from the GOT first. */
extern int hp_events_on __attribute__((visibility("hidden")));
/* The thread's buffer: &hp_ev_none until its first event, &hp_ev_done
 * after its exit's flush, two heads of no entries that read full (next
 * and limit NULL), so that the hot path's one test sends them to
 * hp_events_slow. Written by its thread only. */
extern __thread struct hp_ev_buf *hp_ev_self __attribute__((tls_model("initial-exec")));
extern struct hp_ev_buf hp_ev_none __attribute__((visibility("hidden")));
extern struct hp_ev_buf hp_ev_done __attribute__((visibility("hidden")));

/* The counter an event's time is read from: the CPU's time-stamp counter
 * on x86-64 (constant and synchronised across CPUs where the kernel's
 * clock source is tsc; about 20 cycles, where CLOCK_MONOTONIC costs 93 ns
 * on the VM of docs/internals/recorder.md), else the monotonic clock.
 * HP_EV_SHIFT: the units of the chunks' times, 2^6 ticks (16 to 32 ns at
 * 2 to 4 GHz, less than a recorded allocation takes), so that the time
 * column's low bits, noise, are not kept (churn: 0.67 -> 0.43 bytes an
 * event).
 * Async-signal-safe, no allocation, no lock. */
#if defined(__x86_64__)
#define HP_EV_SHIFT 6u
static inline uint64_t hp_ev_tick(void)
{
	return __builtin_ia32_rdtsc();
}

/* Stores the counter at *at: rdtsc's two halves as they come (edx:eax),
 * two stores, not a shift and an or first. */
static inline __attribute__((always_inline)) void hp_ev_tick_store(uint64_t *at)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	__builtin_memcpy((char *)at, &lo, 4);
	__builtin_memcpy((char *)at + 4, &hi, 4);
}
#else
#define HP_EV_SHIFT 0u
static inline uint64_t hp_ev_tick(void)
{
	return hp_os_now_ns();
}

static inline void hp_ev_tick_store(uint64_t *at)
{
	*at = hp_ev_tick();
}
#endif

/* Sets the log up when c->events: its counter's origin, the thread-exit
 * key, the flusher's memory. At start, with forwarding set (the key).
 * Not thread-safe; no allocation from malloc (glibc's first 32 keys
 * allocate nothing). Returns 0 or -errno (the log is then off, said). */
int hp_events_init(const struct hp_config *c);

/* The slow path of hp_events_log: the thread's first event (a buffer
 * taken or mapped), or a full buffer (flushed). Runs inside a recorder
 * slow path with t->busy raised by it. Takes the events lock and the
 * writer's; maps memory; not async-signal-safe. */
void hp_events_slow(uint64_t addr, uint64_t size, uint32_t bucket, uint32_t kind)
	__attribute__((noinline, cold));

/* Logs an event of kind (HP_EV_*) at addr, now: an allocation of size in
 * bucket, a free (bucket 0), a retype into bucket. Inline, lock-free,
 * allocation-free while the buffer has room. A retype (under a live
 * shard's lock) never flushes: a full buffer counts it lost. */
static inline __attribute__((always_inline)) void hp_events_log(uint64_t addr, uint64_t size,
								uint32_t bucket, uint32_t kind)
{
	struct hp_ev_buf *b = hp_ev_self;
	struct hp_ev *e = b->next;

	if (__builtin_expect((uintptr_t)e >= (uintptr_t)b->limit, 0)) {
		hp_events_slow(addr, size, bucket, kind);
		return;
	}
	hp_ev_tick_store(&e->tick);
	e->addr = addr;
	e->size = size;
	e->bucket = bucket;
	e->kind = kind;
	__atomic_store_n(&b->next, e + 1, __ATOMIC_RELEASE);
}

/* The hooks of the slow paths: one load and a branch when the log is off. */
#define HP_EVENTS_ALLOC(p, size, bucket)                                              \
	do {                                                                          \
		if (__builtin_expect(hp_events_on, 0))                                \
			hp_events_log((uintptr_t)(p), (size), (bucket), HP_EV_ALLOC); \
	} while (0)
#define HP_EVENTS_FREE(p)                                                \
	do {                                                             \
		if (__builtin_expect(hp_events_on, 0))                   \
			hp_events_log((uintptr_t)(p), 0, 0, HP_EV_FREE); \
	} while (0)

/* A live block's type named (attr.c retype, under its shard's lock). */
#define HP_EVENTS_RETYPE(addr, bucket)                                    \
	do {                                                              \
		if (__builtin_expect(hp_events_on, 0))                    \
			hp_events_log((addr), 0, (bucket), HP_EV_RETYPE); \
	} while (0)

/* Writes every thread's events so far, each thread's as a chunk (from a
 * snapshot, before the writer's lock). flags as hp_writer_snapshot's:
 * with HP_WRITE_SIGNAL or HP_WRITE_FATAL the events lock is only tried.
 * No allocation from malloc; takes the events lock, then the writer's. */
void hp_events_flush_all(unsigned flags);

/* The memory the log holds (buffers, the flusher's tables, zstd's
 * workspace), for the snapshot's recorder_bytes. Lock-free, no
 * allocation. */
uint64_t hp_events_bytes(void);

/* In a fork child (one thread): every other thread's buffer is freed and
 * this thread's emptied (the parent writes those events), the lock
 * reset. No allocation, no lock. */
void hp_events_fork_child(void);

#endif
