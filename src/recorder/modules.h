/*
 * modules.h - the module map: every object loaded in the process, with its
 * path, build-id, load bias and segments, and when it was loaded and
 * unloaded.
 *
 * Model: a table of modules (never shrinks; an unloaded module keeps its
 * row) and an append-only event log (load, unload) that the writer turns
 * into HP_REC_MODULES records. A refresh walks dl_iterate_phdr and compares
 * with the table: new objects are loads, missing ones unloads. The recorder
 * refreshes at init, before each snapshot and around dlclose, so a library
 * dlopen'd and dlclose'd between two snapshots is still in the map.
 *
 * Locking: a spinlock guards the table and the log. A refresh calls
 * dl_iterate_phdr (which takes the loader's lock) and so must not run in a
 * signal handler; reading the log is lock-free up to the published count.
 * Nothing here calls the target's malloc.
 */
#ifndef HP_RECORDER_MODULES_H
#define HP_RECORDER_MODULES_H

#include <stdint.h>

#include "../format/encode.h"
#include "config.h"

/* Maps the tables. Events are timed from c->start_ns; c must stay valid.
 * Returns 0 or -ENOMEM. Once, at init: not thread-safe; no allocation
 * (mmap), no lock. */
int hp_modules_init(const struct hp_config *c);

/* Compares the loaded objects with the table and logs the differences.
 * With wait 0, gives up when another thread is refreshing: that thread
 * may be waiting for the loader's lock, which the caller may hold (a
 * program's dl_iterate_phdr callback that allocates). Takes the table's
 * spinlock, then the loader's lock (dl_iterate_phdr), which may allocate:
 * call with the forwarding or busy flag set; not async-signal-safe. */
void hp_modules_refresh(int wait);

/* The number of events logged so far. Lock-free, async-signal-safe, no
 * allocation. */
uint32_t hp_modules_events(void);

/* Encodes events [from, to) as the payload of an HP_REC_MODULES record.
 * Lock-free, async-signal-safe (reads published events only); allocates
 * nothing but b's own growth, through b's grow function (mmap). */
void hp_modules_encode(struct hp_buf *b, uint32_t from, uint32_t to);

/* A mapped segment of a loaded module: [lo, hi). */
struct hp_modules_range {
	uintptr_t lo, hi;
};

/* Fills out[0..cap) with the segments of the loaded modules, sorted by
 * start, and returns how many. Call with the table lock held
 * (hp_modules_lock). No allocation. */
uint32_t hp_modules_ranges(struct hp_modules_range *out, uint32_t cap);

/* Takes the table lock if it is free: returns whether it did (then
 * hp_modules_unlock). For a caller that may hold the loader's lock, which
 * a refreshing thread holding the table lock may be waiting for. */
int hp_modules_trylock(void);

/* For fork: take and release the table lock. No allocation; not
 * async-signal-safe. */
void hp_modules_lock(void);
void hp_modules_unlock(void);

#endif
