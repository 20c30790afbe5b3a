/*
 * trigger.h - when snapshots are written, besides exit: on fatal signals, on
 * the dump signal, every interval, every N bytes allocated, on each rise of
 * the peak by N bytes; and the sampling thread that records the time series
 * and does the deferred work.
 *
 * Signal handlers do no more than set a flag, except for fatal signals,
 * whose handler writes the final snapshot itself (with HP_WRITE_FATAL) and
 * then lets the signal do what it would have done. Triggers met inside an
 * allocation only set a flag too: the sampling thread writes, so no
 * snapshot ever runs with a recorder lock held by the allocating thread.
 */
#ifndef HP_RECORDER_TRIGGER_H
#define HP_RECORDER_TRIGGER_H

#include <stdint.h>

#include "config.h"

/* Installs the fatal-signal and dump-signal handlers, each only where the
 * program left the default disposition. */
void hp_trigger_init(const struct hp_config *c);

/* Starts the sampling thread (at start and in a followed fork child). */
void hp_trigger_start_thread(const struct hp_config *c);

/* Asks the sampling thread to stop and waits for it briefly. */
void hp_trigger_stop_thread(void);

/* Counts bytes allocated for the byte triggers; called from the slow path.
 * Lock-free; no allocation. */
void hp_trigger_allocated(uint64_t bytes);

/* Asks for a snapshot with the given HP_SNAP_* reason (async-signal-safe). */
void hp_trigger_request(unsigned reason);

#endif
