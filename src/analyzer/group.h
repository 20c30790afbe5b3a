/*
 * group.h - a model's figures summed by one dimension (issue 9): by
 * function, line or module of the allocating frame, by type, context,
 * thread or heap.
 *
 * Keys per bucket (hp_group_key):
 *   function  the innermost frame's function (allocator frames hidden),
 *   line      that frame's "function file:line" (or module+offset),
 *   module    that frame's module file name,
 *   type      the bucket's type (hp_model.types) with its source,
 *   context   the path of its context, "outer > inner" ("(no context)"),
 *   thread    its thread's name, else "tid N" ("(no thread)"),
 *   heap      "malloc" or the custom heap's name.
 * Every dimension but heap sums malloc's buckets only (custom heaps are
 * kept apart, model.h); heap lists malloc's and each custom heap's, with
 * a custom heap's own peak from the snapshot (hp_rec_heap_peak).
 * A context's row sums its own buckets and its descendants' (self holds
 * its own only), so each parent's figures include its children's.
 *
 * Rows come sorted by bytes at the peak, then bytes allocated, then key
 * (descending, descending, ascending): a capture reads the same each time.
 *
 * Ordinary analyzer C: allocates, not thread-safe.
 */
#ifndef HP_ANALYZER_GROUP_H
#define HP_ANALYZER_GROUP_H

#include <stddef.h>
#include <stdint.h>

#include "../common/strtab.h"
#include "model/model.h"

enum hp_dim {
	HP_BY_STACK,
	HP_BY_FUNCTION,
	HP_BY_LINE,
	HP_BY_MODULE,
	HP_BY_TYPE,
	HP_BY_CONTEXT,
	HP_BY_THREAD,
	HP_BY_HEAP,
	HP_BY_COUNT
};

/* Parses "stack", "function", ..., "heap"; 0 or -EINVAL. */
int hp_dim_parse(const char *name, enum hp_dim *out);
const char *hp_dim_name(enum hp_dim d);

struct hp_group_row {
	const char *key;       /* owned by the groups; raw (escape to show it) */
	const char *source;    /* type: hp_type_origin_name; else NULL */
	struct hp_values v;    /* context: its own and its descendants' */
	struct hp_values self; /* context: its own buckets only; else = v */
	/* Its figures in elements (hp_mbucket_elements: *_objects count
	 * elements), and whether any of its buckets' elements are known (an
	 * array type: heapprof_set_type_array, typed_new.hpp, a string's
	 * characters, a new-expression's T). */
	struct hp_values elems;
	int has_elems;
	int has_heap_peak;     /* heap: a custom heap's own peak follows */
	uint64_t heap_peak_bytes, heap_peak_count, heap_peak_time_ns, heap_resets;
};

struct hp_groups {
	enum hp_dim dim;
	size_t n;
	struct hp_group_row *rows;
	struct hp_strtab keys; /* row i's key is keys' string i, before sorting */
	size_t cap;
};

/* Sums m's buckets by dim (not HP_BY_STACK). Returns 0 or -ENOMEM (g
 * empty). Free with hp_groups_free. */
int hp_groups_build(struct hp_groups *g, const struct hp_model *m, enum hp_dim dim);
void hp_groups_free(struct hp_groups *g);

/* The key of bucket b in dim (not HP_BY_STACK), in buf[0..cap) or a
 * string of the model's; source (may be NULL) gets a type's source. */
const char *hp_group_key(const struct hp_model *m, const struct hp_mbucket *b, enum hp_dim dim,
			 char *buf, size_t cap, const char **source);

/* Context tag context and its enclosing contexts, outermost first, into
 * out[0..max): the frames a flame graph by context nests (`frame` holding
 * `frame > layout`, as Chromium's pseudo-stacks). Returns how many (0 for
 * no context). */
#define HP_GROUP_MAX_CONTEXT_DEPTH 64
int hp_group_context_chain(const struct hp_model *m, uint64_t context, uint64_t *out, int max);

/* The share of malloc's heap of known type (not "unknown"): bytes in use
 * at the snapshot and at the peak. */
/* The totals of the heap the views show (m->view_heap): its buckets'
 * sums, the runtime's suppressed allocations left out (a custom heap's
 * peak: its own). */
void hp_group_heap_total(const struct hp_model *m, struct hp_values *out);
void hp_group_typed(const struct hp_model *m, double *inuse_bytes, double *peak_bytes);
/* The same by the source of the type (enum hp_type_origin): bytes in use
 * and at the peak of each, HP_TYPESRC_UNKNOWN's the untyped. */
void hp_group_typed_by_source(const struct hp_model *m, double inuse_bytes[HP_TYPESRC_COUNT],
			      double peak_bytes[HP_TYPESRC_COUNT]);

#endif
