/*
 * pprof.h - a model as a pprof profile: gzipped profile.proto, read by
 * `go tool pprof` and the rest of the pprof ecosystem.
 *
 * The profile mirrors what Go's own heap profiles hold, so every pprof view
 * works as it does for Go programs:
 *
 *   sample types   alloc_objects/count, alloc_space/bytes,
 *                  inuse_objects/count, inuse_space/bytes (Go's order;
 *                  inuse_space is the default, alloc_space with
 *                  alloc_default), then peak_objects/count,
 *                  peak_space/bytes: in use at the global peak
 *   period         space/bytes, the capture's sample rate (1 = every
 *                  allocation was recorded)
 *   samples        one per model bucket that has a non-zero figure, values
 *                  already unbiased (docs/internals/sampling.md) and rounded
 *                  to integers, with a numeric label "bytes" = the
 *                  allocation size
 *   locations      one per model location, with one Line per symbolic
 *                  frame (inlined callees first) and the address of the
 *                  call instruction (the return address - 1)
 *   mappings       the executable segments of the capture's modules, with
 *                  file offsets and build ids, so pprof can re-symbolize;
 *                  the program's own comes first (pprof's main binary,
 *                  which titles the profile)
 *
 * A diff (diff.h) is written the same way with the change NEW - BASE as
 * values (pprof allows negative values) and the locations of both runs;
 * pprof merges the two runs' mappings across ASLR by size, offset and
 * build id.
 *
 * Ordinary analyzer C: allocates with malloc, frees everything it
 * allocated, not thread-safe.
 */
#ifndef HP_ANALYZER_PPROF_H
#define HP_ANALYZER_PPROF_H

#include <stdio.h>

#include "model/model.h"

struct hp_diff;

struct hp_pprof_options {
	int at_peak; /* inuse_* are the figures at the global peak, not at the snapshot */
	/* A delta's window (/debug/pprof/heap?seconds=N): the snapshot it
	 * starts at, or NULL. The profile's time is then the window's start
	 * and its duration the window's length, as Go's delta profiles say;
	 * without one, the time is the snapshot's and the duration the time
	 * since the program started. */
	const struct hp_cap_snapshot *since;
	/* Every heap's samples, each labelled "heap" (the default), or with
	 * one_heap the blocks of heap alone (0: malloc's); the comment names
	 * the heap shown when the model has a custom heap's blocks. */
	int one_heap;
	uint64_t heap;
	/* alloc_space is the default sample type instead of inuse_space, as
	 * in Go's /debug/pprof/allocs (the same profile otherwise). */
	int alloc_default;
};

/* Writes m as a gzipped profile.proto to out (o may be NULL: defaults).
 * Returns 0, -ENOMEM, or -EIO when a write to out failed. out is not
 * closed; the caller checks fclose. */
int hp_pprof_write(FILE *out, const struct hp_model *m, const struct hp_pprof_options *o);

/* Writes a diff as a gzipped profile.proto: sample types alloc_*, inuse_*,
 * peak_* and temp_* (objects/count and space/bytes each), each the change
 * NEW - BASE; the default sample type follows the diff's metric. Returns
 * as hp_pprof_write. */
int hp_pprof_write_diff(FILE *out, const struct hp_diff *d);

#endif
