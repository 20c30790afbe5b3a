/*
 * folded.h - a model as folded stacks, the input of flamegraph.pl,
 * inferno, speedscope and friends:
 *
 *   main;leak_path;leak_leaf 1000
 *
 * One line per distinct stack, root first (the outermost function first,
 * the allocating one last), every symbolic frame as its function name,
 * inlined callees included after the function they were inlined into.
 * The value is one metric (model.h), unbiased and rounded: bytes for
 * peak, leaked and allocated, a count for allocations and temporary.
 * Stacks that read the same are merged into one line, lines whose value
 * rounds to 0 are left out, and lines come sorted by their text, so the
 * output of a capture is reproducible. A ';' inside a function name
 * (rare, in some C++ templates) is written as ':' so that it cannot split
 * a frame.
 *
 * Ordinary analyzer C: allocates with malloc, not thread-safe.
 */
#ifndef HP_ANALYZER_FOLDED_H
#define HP_ANALYZER_FOLDED_H

#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

/* Writes m's stacks with their value of metric to out. Returns 0, -ENOMEM,
 * or -EIO when a write failed. out is not closed. */
int hp_folded_write(FILE *out, const struct hp_model *m, enum hp_metric metric);

/* The same with each stack under a root frame of its bucket's key in dim
 * (group.h: HP_BY_TYPE, "std::string;main;f 64", or HP_BY_CONTEXT;
 * HP_BY_STACK: none, as hp_folded_write). */
int hp_folded_write_by(FILE *out, const struct hp_model *m, enum hp_metric metric, int dim);

/* The same for the blocks of heap (model.h: HP_HEAP_ALL or a heap id;
 * hp_folded_write_by shows malloc's, 0), functions named as every view
 * names them (frames.h: no parameter lists unless overloads need them) or,
 * with full_names, as they are; the runtime's frames below main left out
 * as every view leaves them out (frames.h), unless all_frames. When the
 * model has a custom
 * heap's blocks (hp_model_heap_marked), each stack sits under a root frame
 * naming its heap, above the key of dim: "[heap arena];main;make_node
 * 5280", "[heap malloc];main;f 64". */
int hp_folded_write_heap(FILE *out, const struct hp_model *m, enum hp_metric metric, int dim,
			 int64_t heap, int full_names, int all_frames);

#endif
