/*
 * live.h - following the capture of a running program, for the live
 * endpoints (serve.c): ask the recorder for a snapshot, wait for it, and
 * turn it into a symbolized model, without a thread in the program.
 *
 * The model:
 *
 *   - The program's recorder writes its capture as it runs. A follower
 *     reads the file incrementally, record by record with the format's
 *     reader (decode.h), from where it stopped: it keeps the records of the
 *     current image that every snapshot needs (META, MODULES, STACKS: the
 *     raw frames, as written), the last SNAPSHOT and the last TIMESERIES.
 *     A record still being written (truncated at the end of the file) is
 *     read again on the next poll, never skipped.
 *   - A snapshot is asked for with the recorder's dump signal (SIGUSR2 by
 *     default), sent through a pidfd, never to a reused pid, and only when
 *     /proc/PID/status says the signal is caught (before the recorder has
 *     installed its handler, after an exec, the default action would kill
 *     the program). The recorder's handler writes the snapshot at once when
 *     it interrupted the program outside the recorder, which an idle
 *     program always is; when it interrupted the recorder itself, the
 *     snapshot is deferred to the next allocation. So the signal is sent
 *     again every HP_LIVE_RESEND_MS until a new SNAPSHOT record appears:
 *     a program that went idle right after a deferred request is
 *     interrupted outside the recorder by the next signal and answers.
 *     A recorder attached to a running program has no handler: it is
 *     asked by a call into the program instead (struct hp_live_asker).
 *   - A snapshot is made a model from a small capture assembled in memory:
 *     the file header, the image's META, MODULES and STACKS frames, the
 *     snapshot's frame (two for a delta), its TIMESERIES, and a SYMBOLS
 *     record of the follower's own. The symbols come from one symbolizer
 *     kept across requests, with a cache of every frame address it has
 *     resolved: a request costs symbolization only for the addresses it
 *     is the first to see, and the model reads them as embedded symbols.
 *     The symbolizer and its cache start again when the program loads or
 *     unloads a module or execs (a new image).
 *
 * Memory: what the follower keeps grows with the image's distinct stacks,
 * modules and frame addresses, never with the number of snapshots or
 * requests.
 *
 * Not thread-safe: the server calls it under one lock.
 */
#ifndef HP_LIVE_LIVE_H
#define HP_LIVE_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "../format/capture.h"
#include "../analyzer/model/model.h"

#define HP_LIVE_RESEND_MS 200

struct hp_live;

/* One snapshot as read from the file. */
struct hp_live_snap {
	uint8_t *frame; /* the SNAPSHOT record as written: frame and payload */
	size_t len;
	uint8_t *ts; /* the last TIMESERIES record before it, or NULL */
	size_t ts_len;
	size_t image;      /* the image of the file it belongs to (0 = the first) */
	uint64_t end;      /* the file offset just past it */
	uint64_t asked_ns; /* CLOCK_MONOTONIC when the signal that asked for it was sent */
};

void hp_live_snap_free(struct hp_live_snap *s);

/* Copies *src into *dst, its frame and time series too (free with
 * hp_live_snap_free). Returns 0, or -ENOMEM with *dst empty. */
int hp_live_snap_copy(struct hp_live_snap *dst, const struct hp_live_snap *src);

/* How a snapshot is asked for when not with a signal: a recorder attached
 * to a running program (heapprof attach) has no handler of its own (the
 * program's signals are the program's), so the heapprof process calls its
 * heapprof_dump() in the program (src/attach/inject.h), which writes the
 * snapshot before it returns. ask returns 1 when it asked, 0 when not now
 * (tried again HP_LIVE_RESEND_MS later), -ESRCH when the program is gone,
 * or another -errno, which ends the wait with err set from why. Called
 * under the server's lock, one call at a time. */
struct hp_live_asker {
	int (*ask)(void *ctx, char *why, size_t whylen);
	void *ctx;
};

/* A follower of the capture at path (opened on first use: the recorder
 * may not have created it yet) of process pid, asked with signal sig, or
 * by asker when not NULL (it must outlive the follower). stop, when not
 * NULL, is polled while waiting: non-zero ends a wait. Returns 0 or
 * -ENOMEM. */
int hp_live_new(struct hp_live **out, const char *path, pid_t pid, int sig,
		const struct hp_live_asker *asker, const int *stop);
void hp_live_free(struct hp_live *l);

/* Asks for a snapshot and waits for it until deadline_ns (CLOCK_MONOTONIC).
 * Returns 0 with *out (free with hp_live_snap_free), or -errno with err
 * set to one line: -ETIMEDOUT (no snapshot came), -ESRCH (the program is
 * gone), -ENOENT (no capture yet), -ECANCELED (stopped). */
int hp_live_snapshot(struct hp_live *l, uint64_t deadline_ns, struct hp_live_snap *out, char *err,
		     size_t errlen);

/* Builds snap's capture and model, symbolized. With base (an earlier
 * snapshot of the same image), the model is the delta: each bucket's
 * allocations, frees and temporaries between the two (so in use is the
 * change), peaks zero. Returns 0 (free both with hp_model_free and
 * hp_capture_free), or -errno with err set: -ESTALE when a snapshot is of
 * an earlier image (the program exec'd). */
int hp_live_build(struct hp_live *l, const struct hp_live_snap *base,
		  const struct hp_live_snap *snap, struct hp_capture *cap, struct hp_model *model,
		  char *err, size_t errlen);

/* The capture file as of snap is its bytes up to snap->end, then a
 * SYMBOLS record of snap's image, so that it can be analysed anywhere:
 * hp_live_symbols makes that record (after hp_live_build of snap; free
 * *data), and hp_live_read reads the file's bytes. hp_live_read may be
 * called without the server's lock (pread on a descriptor that lives as
 * long as l); it returns the bytes read (at most n, and at most INT_MAX)
 * or -errno. hp_live_symbols returns 0, -ESTALE (snap is not of the image
 * followed) or -ENOMEM. */
int hp_live_symbols(struct hp_live *l, const struct hp_live_snap *snap, uint8_t **data,
		    size_t *len);
int hp_live_read(struct hp_live *l, void *buf, size_t n, uint64_t off);

#endif
