/*
 * legacy.h - a model as a gperftools heap profile: the text format of
 * gperftools' heap profiler, read by gperftools' pprof (google-pprof), by
 * jeprof and by `go tool pprof`.
 *
 *   heap profile: <inuse objs>: <inuse bytes> [<alloc objs>: <alloc bytes>] @ heapprofile
 *   <inuse objs>: <inuse bytes> [<alloc objs>: <alloc bytes>] @ 0x<ret> 0x<ret> ...
 *   ...
 *   (blank line)
 *   MAPPED_LIBRARIES:
 *   <start>-<end> <perms> <offset> 00:00 0 <path>      (/proc/self/maps lines)
 *
 * One line per capture stack (its buckets summed), frames innermost first
 * as return addresses, the allocator's own frames left out; the readers
 * subtract 1 themselves. Values are unbiased (docs/internals/sampling.md)
 * and rounded, and the header says "heapprofile", which tells every reader
 * not to scale them again. The maps lines are rebuilt from the capture's
 * module segments as the kernel mapped them (whole pages), so the readers
 * symbolize the addresses from the binaries on this machine.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_LEGACY_H
#define HP_ANALYZER_LEGACY_H

#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

/* Custom heaps: the format has neither labels nor frames that are not
 * addresses, so when the model holds a custom heap's blocks
 * (hp_model_heap_marked) each heap's lines follow a comment line, which
 * every reader skips:
 *
 *   # heap: malloc
 *   ...
 *   # heap: arena
 *   ...
 *
 * and one_heap writes one heap's lines alone (under its comment line). */
struct hp_legacy_options {
	int at_peak;   /* the in-use pair is the one at the global peak, not at the snapshot */
	int one_heap;  /* heap's blocks alone; 0: every heap's (the default) */
	uint64_t heap; /* with one_heap: the heap (0: malloc's) */
};

/* Writes m to out (o may be NULL: defaults). Returns 0, -ENOMEM, or -EIO
 * when a write failed. out is not closed. */
int hp_legacy_write(FILE *out, const struct hp_model *m, const struct hp_legacy_options *o);

#endif
