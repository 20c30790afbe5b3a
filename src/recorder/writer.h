/*
 * writer.h - the capture file: created at init, appended to at every
 * snapshot, closed at exit.
 *
 * A snapshot appends, in order: the module events, stacks (in records of
 * at most 1 MiB of payload) and time-series samples not yet in the file,
 * the timeline's ticks not yet in the file and one more, then an
 * HP_REC_SNAPSHOT with every bucket.
 * Each record is written with write(2) as soon as it is built, so a process
 * killed with SIGKILL leaves a file that is whole up to its last record.
 *
 * Memory comes from mmap (buffers and zstd's workspace); nothing here calls
 * the target's malloc or stdio. Locking: one spinlock serialises writers,
 * held with the thread's cancellation disabled (the writer calls write and
 * open, cancellation points). The descriptor is kept at a high number and
 * checked before every write: a program that closes or reuses it never
 * gets a record written into its own files.
 * hp_writer_snapshot with HP_WRITE_FATAL or HP_WRITE_SIGNAL gives up on
 * the lock (after a bounded wait, or at once: the holder may be the code
 * the signal interrupted) and does not refresh the module map, which would
 * call dl_iterate_phdr; it is then async-signal-safe.
 */
#ifndef HP_RECORDER_WRITER_H
#define HP_RECORDER_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

enum {
	HP_WRITE_FATAL = 1,  /* in a fatal signal handler: wait for the lock briefly */
	HP_WRITE_SIGNAL = 2, /* in a signal handler: do not wait for the lock */
	/* With FATAL or SIGNAL: the handler interrupted code outside the
	 * recorder (neither busy nor forwarding), so this thread holds none of
	 * its table locks and the live blocks' vtables may be read (other
	 * threads hold those locks only for a few stores). */
	HP_WRITE_OUTSIDE = 4,
};

/* Who this process is in a recorded run; decides the capture's name. */
enum hp_role {
	HP_ROLE_ROOT,       /* the process the run started: HEAPPROF_OUTPUT, or
			     * heapprof.PROGRAM.PID.hpf never replacing a file */
	HP_ROLE_ROOT_EXEC,  /* the same process after an exec (a shell wrapper
			     * that execs the real program): appends a new
			     * image to the pre-exec image's HEAPPROF_OUTPUT */
	HP_ROLE_DESCENDANT, /* another process, exec'd under --follow-fork */
	HP_ROLE_FORKED,     /* a fork of a recorded process, under --follow-fork */
};

/* Starts the capture file for this process: creates it and writes its
 * header and META record, or, for forks and descendants, leaves that to its
 * first snapshot or time-series record (one that only execs leaves no file).
 * Descendants and forks get the root's name with ".PID" before ".hpf".
 * Times in the capture count from c->start_ns.
 * Returns 0 or -errno (and logs why). c must stay valid. Takes the
 * writer's lock; maps its buffers (no allocation from malloc); not
 * async-signal-safe. At start and in a fork child. */
int hp_writer_open(const struct hp_config *c, enum hp_role role);

/* Whether the calling process is the one the capture belongs to: not a
 * vfork child sharing our memory, nor a raw clone that ran no fork
 * handler. One getpid system call. Async-signal-safe. */
int hp_writer_owned(void);

/* Creates the capture file now if it is wanted and not yet there (it is
 * otherwise created at the first snapshot), in the process that owns the
 * capture. Takes the writer's lock; no allocation; a cancellation point
 * (open, write). Returns 0 or -errno. */
int hp_writer_ensure(void);

/* Whether the capture file has been created (forks and descendants create
 * theirs lazily). Lock-free, async-signal-safe, no allocation. */
int hp_writer_has_file(void);

/* Appends a snapshot. Returns 0 or -errno (counted as lost writes);
 * -ESRCH, writing nothing, in a process that does not own the capture;
 * -EDEADLK when the lock was not taken (flags). Takes the writer's lock
 * (flags above) after the module refresh (its lock and the loader's,
 * without flags); no allocation from malloc (buffers grow with mmap);
 * async-signal-safe with HP_WRITE_FATAL or HP_WRITE_SIGNAL only. */
int hp_writer_snapshot(unsigned reason, int signo, unsigned flags);

/* Queues one time-series sample (bytes in use and RSS), flushing a record
 * every 100 samples. Takes the writer's lock; no allocation from malloc;
 * not async-signal-safe. */
void hp_writer_sample(uint64_t heap_bytes, uint64_t rss_bytes);

/* Owes a sample: the heap at now_ns (monotonic), seen by a look too soon
 * after the last sample to take one; the next sample (or snapshot) writes
 * it first, at its own time, so that a program allocating rarely has a
 * point at each change. Two atomic stores: async-signal-safe, no lock, no
 * allocation. */
void hp_writer_sample_owed(uint64_t now_ns, uint64_t heap_bytes);

/* Takes a tick of the per-site timeline (format.h, HP_REC_TIMELINE): the
 * buckets changed since the last tick, with what they hold in use now,
 * flushing a record every 10 ticks (fewer when they are large); each
 * snapshot takes one too. Returns how many buckets the tick lists. Takes
 * the writer's lock; no allocation from malloc (buffers grow with mmap);
 * not async-signal-safe. */
uint32_t hp_writer_timeline(void);

/* Appends one record of type whose payload, rec[HP_FORMAT_FRAME_BYTES ..
 * HP_FORMAT_FRAME_BYTES + len), is written as it is (not compressed: the
 * event log's chunks, events.c, compress their columns themselves), its
 * frame into rec[0 .. HP_FORMAT_FRAME_BYTES) and the whole in one write,
 * without a copy; creates the file first if it is not there. Returns 0 or
 * -errno; -ESRCH in a process that does not own the capture, -EDEADLK when
 * the lock was not taken (flags as hp_writer_snapshot's). Takes the
 * writer's lock; no allocation from malloc; async-signal-safe with
 * HP_WRITE_FATAL or HP_WRITE_SIGNAL. */
int hp_writer_put(unsigned type, uint8_t *rec, size_t len, unsigned flags);

/* Closes the file (when the descriptor is still ours). Later snapshots are
 * dropped. Takes the writer's lock; no allocation; not async-signal-safe. */
void hp_writer_close(void);


/* Bytes of the buffers records are built in (the payload and its
 * compressed form): their size at open, 2 MiB and 16 KiB, however many
 * stacks or buckets a snapshot writes (larger ones are written in several
 * records or in pieces). For accounting and tests. Lock-free (a racy
 * read), async-signal-safe, no allocation. */
size_t hp_writer_record_bytes(void);

/* For fork: take and release the writer's lock. No allocation; not
 * async-signal-safe. */
void hp_writer_lock(void);
void hp_writer_unlock(void);

#endif
